r"""Identities with the exponential → Coq, with exp a function of the field that has the one
property the identity uses.

MathComp 1.15 has no exponential (and Coq.Reals rests on axioms a certified proof may not use).
An identity that SymPy proves only through :math:`e^{a+b}=e^ae^b` (and :math:`e^a\ne0`, to
cancel it) is stated for every field ``F`` and every function ``expF : F -> F`` with those two
properties, as explicit hypotheses of the theorem: the real exponential has both, so the theorem
over ℝ is the check's statement. Without the second hypothesis the statement is false (``expF =
0``: the left side is ``0 / 0 = 0`` in MathComp) and the proof does not go through
(``tests/test_certify_units.py``).

* :func:`export_softmax_shift` — WP3.softmax, :math:`\operatorname{softmax}(z+k\mathbf 1^T)=
  \operatorname{softmax}(z)` for a row of symbolic length ``V``
  (:func:`~symuat.kernel.decide.softcap.softmax_shift_invariance`, certificate ``softmax_shift``).

* :func:`export_capped_sum` — X10.logit, :math:`\sum_{k=1}^n\kappa t_k=c\tanh(\ell/c)`,
  :math:`\kappa=c\tanh(\ell/c)/\ell`, :math:`\ell=\sum_kt_k`
  (:func:`~symuat.kernel.decide.softcap.check_capped_sum`, certificate ``capped_sum``): the
  identity uses no property of tanh (any function ``F -> F``), only :math:`\ell\ne0` (the
  check's premise where a side divides by it); the recorded sides must be exactly that identity's,
  any other is :class:`~symuat.certify.coq_terms.Unsupported`.

>>> (t,) = export_softmax_shift("s", {})
>>> print(t.statement)  # doctest: +ELLIPSIS
Theorem s :
  (* softmax(z + k 1ᵀ) = softmax(z), entry i, for a row z of any length V: over any field F, ...
  forall (F : fieldType) (expF : F -> F),
  (forall a b, expF (a + b) = expF a * expF b) -> (forall a, expF a != 0) ->
  forall (V : nat) (z : 'I_V -> F) (k : F) (i : 'I_V),
  expF (z i + k) / (\sum_(j < V) expF (z j + k)) = expF (z i) / (\sum_(j < V) expF (z j)).
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

#: the hypotheses on ``expF`` (the real exponential has both)
EXP_HYPOTHESES = "(forall a b, expF (a + b) = expF a * expF b) -> (forall a, expF a != 0)"


def export_softmax_shift(name: str, data: dict, hypotheses: str = EXP_HYPOTHESES) -> list[Exported]:
    """WP3.softmax's identity, entry ``i`` of the row (``hypotheses``: the tests drop one)."""
    statement = (
        f"Theorem {name} :\n"
        "  (* softmax(z + k 1ᵀ) = softmax(z), entry i, for a row z of any length V: over any field F, "
        "with expF any function with e^(a+b) = e^a e^b and e^a ≠ 0, as the real exp *)\n"
        "  forall (F : fieldType) (expF : F -> F),\n"
        f"  {hypotheses} ->\n"
        "  forall (V : nat) (z : 'I_V -> F) (k : F) (i : 'I_V),\n"
        "  expF (z i + k) / (\\sum_(j < V) expF (z j + k)) = expF (z i) / (\\sum_(j < V) expF (z j)).")
    # e^{z_i+k} = e^{z_i} e^k in every term; e^k out of the sum; e^k / e^k = 1
    proof = ("move=> F expF Hadd Hnz V z k i.\n"
             "rewrite Hadd (eq_bigr (fun j => expF (z j) * expF k)) => [|j _]; last exact: Hadd.\n"
             "by rewrite -big_distrl /= invfM mulrACA divff // mulr1.")
    return [Exported(name, statement, proof)]


#: the premise of X10.logit's theorem: the sum of the terms is not 0 (the tests drop it)
NONZERO_SUM = "\\sum_(k < n) t k != 0"


def _secant_sides(t, k, n, c):
    """X10.logit's two sides as the claim builds them (``symuat.claims.softcapping``)."""
    ell = sp.Sum(t[k], (k, 1, n))
    capped = c * sp.tanh(ell / c)
    return sp.Sum(capped / ell * t[k], (k, 1, n)), capped


def export_capped_sum(name: str, data: dict, premise: str = NONZERO_SUM) -> list[Exported]:
    """X10.logit's identity over any field (the terms ``t_1 … t_n`` as ``t 0 … t (n-1)``), if the
    recorded sides are exactly it."""
    want = _secant_sides(data["t"], data["k"], data["n"], data["c"])
    if (data["lhs"], data["rhs"]) != want:
        raise Unsupported(f"a capped sum other than X10.logit's secant identity: {sp.sstr(data['lhs'])} = "
                          f"{sp.sstr(data['rhs'])}")
    ell = "(\\sum_(k0 < n) t k0)"
    statement = (
        f"Theorem {name} :\n"
        "  (* Σ_k κ t_k = c tanh(ℓ/c), κ = c tanh(ℓ/c)/ℓ, ℓ = Σ_k t_k, for n terms: over any field F, with tanh "
        "any function (the identity uses no property of it) and any c, for ℓ ≠ 0 *)\n"
        "  forall (F : fieldType) (tanh : F -> F) (c : F) (n : nat) (t : 'I_n -> F),\n"
        f"  {premise} ->\n"
        f"  \\sum_(k < n) c * tanh ({ell} / c) / {ell} * t k = c * tanh ({ell} / c).")
    # κ out of the sum (it does not depend on k), then κ ℓ = c tanh(ℓ/c) for ℓ ≠ 0
    proof = "move=> F tanh c n t Hl. by rewrite -big_distrr /= mulfVK."
    return [Exported(name, statement, proof)]
