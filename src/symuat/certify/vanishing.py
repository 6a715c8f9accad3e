r"""A2's vanishing contributions: why the certify tier does not state them in Coq (the reason).

:func:`symuat.kernel.decide.check_vanishing` decides ":math:`\forall\eta>0\ \exists\delta>0`:
parameters within δ ⇒ :math:`\sup_{\mathbf I_n}|\text{contribution}|\le\eta`" for one activation
σ: ``proved`` by a bound :math:`B(\delta)\to0` resting on an envelope
:math:`|\sigma(t)|\le c_0+c_1|t|` of the real function σ, ``refuted`` by a family of parameters
within δ whose contribution tends (SymPy limit) to a nonzero value or ∞. It records a
``vanishing`` / ``vanishing_refutation`` certificate (the bound and its facts, or the family's
value and limit, and σ). Neither is stated in Coq; :func:`reason` says what a statement would
need, per σ:

* logistic and tanh are the real exponential's: Coq's ``Reals`` define ``exp`` and limits, but
  rest on axioms (classical logic, the Dedekind reals' ``sig_forall_dec``), and the tier admits
  none (``Print Assumptions``, coqchk); MathComp 1.15 has neither ``exp`` nor limits;
* GELU is ``erf``'s, in neither library;
* ReLU (``max(t, 0)``) is piecewise linear, so over ℚ (:mod:`symuat.certify.implication`'s
  setting) the statement is within reach, but it is not the linear fragment that module states:
  a bound quantifies over ``n`` weights and sums over the ``n`` coordinates of **x** (symbolic
  ``n``), multiplies parameters (``α·(wᵀx + θ)``: nonlinear, ``nra``), and alternates ∀η ∃δ (δ
  chosen from η and n); a refuting family (``α = 1/δ``, ``δ·max(1/δ², 0)``, residual layers with
  ``K = 1/δ``) needs field reasoning and the negated ∀η ∃δ over the network; not exported yet.

>>> import sympy as sp
>>> t = sp.Symbol("t")
>>> print(reason({"sigma": 1 / (1 + sp.exp(-t)), "bound": sp.Symbol("delta")}))  # doctest: +NORMALIZE_WHITESPACE
a limit as δ → 0⁺ of the bound delta on a contribution through σ(t) = 1/(1 + exp(-t)), which uses the
real exponential: Coq's Reals define it but rest on axioms (the tier admits none), MathComp 1.15 has
neither exp nor limits
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported


def _why_sigma(sigma, family: bool = False) -> str:
    """What stating σ in Coq would need (see the module); ``family``: for a refuting family."""
    if sigma is None:
        return "an activation the certificate does not name"
    sigma = sp.sympify(sigma)
    kinds = {type(f).__name__ for f in sigma.atoms(sp.Function)} | (
        {"Max"} if sigma.has(sp.Max) else set())
    if kinds & {"exp", "tanh"}:
        return ("uses the real exponential: Coq's Reals define it but rest on axioms (the tier admits none), "
                "MathComp 1.15 has neither exp nor limits")
    if "erf" in kinds:
        return "uses erf, in neither Coq's standard library nor MathComp 1.15"
    if kinds <= {"Max"} and family:
        return ("is piecewise linear, within reach over ℚ (Qmax, and field reasoning for the family's 1/δ), but the "
                "negated statement — ∀η > 0 ∃δ > 0 over the network's parameters, its layers for a deep reading — "
                "is not exported yet")
    if kinds <= {"Max"}:
        return ("is piecewise linear, within reach over ℚ, but the statement sums over the n coordinates of x "
                "(symbolic n), multiplies parameters (α·(wᵀx + θ): nonlinear) and alternates ∀η ∃δ; not exported yet")
    return f"uses {', '.join(sorted(kinds))}, which the Coq library does not define"


def reason(data: dict) -> str:
    """Why the ``vanishing`` (bound) or ``vanishing_refutation`` (family) certificate ``data`` is
    not stated in Coq: the limit, and what σ would need."""
    sigma = data.get("sigma")
    through = f"σ(t) = {sp.sstr(sp.sympify(sigma))}" if sigma is not None else "σ"
    if "bound" in data:
        head = f"a limit as δ → 0⁺ of the bound {sp.sstr(data['bound'])} on a contribution through {through}"
    else:
        head = (f"a family within δ whose contribution {sp.sstr(data['value'])} tends to {data['limit']} as δ → 0⁺ "
                f"(SymPy limit), through {through}")
    return f"{head}, which {_why_sigma(sigma, family='bound' not in data)}"


def export_vanishing(name: str, data: dict) -> list[Exported]:
    """The ``vanishing`` certificate: not stated (:class:`Unsupported`, :func:`reason`)."""
    raise Unsupported(reason(data))


def export_vanishing_refutation(name: str, data: dict) -> list[Exported]:
    """The ``vanishing_refutation`` certificate: not stated (:class:`Unsupported`, :func:`reason`)."""
    raise Unsupported(reason(data))
