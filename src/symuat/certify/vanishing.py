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
  setting, ``coq/SymuatSmall.v``) a **unit**'s bound is stated (:func:`export_vanishing`), for
  every ``n`` — the check's ``n`` is symbolic —, with ``w x : nat -> Q`` and
  :math:`\mathbf w^T\mathbf x` the sum ``qsum n (fun i => w i * x i)`` over the coordinates
  ``i < n`` (a recursion on ``n``; its lemmas proved by induction once in the library), ReLU as
  ``Qmax 0``: two theorems, ``…_bound`` (for every δ > 0, every parameter within δ and every
  point of :math:`\mathbf I_n`, ``|α·Qmax 0 (wᵀx + θ)| ≤ B(δ)``: the bound the check proved)
  and the check's own statement (``forall n`` [the fixed parameters, for ``rest=fixed``] ``eta,
  0 < eta -> exists delta, 0 < delta /\\ forall`` [the other parameters] ``x, … -> |…| <= eta``,
  δ := η/(C + 1 + η) for a coefficient ``C`` with ``B(δ) ≤ C·δ`` on ``(0, 1]``). Over ℚ, not ℝ:
  the statements are first order over an ordered field with rational coefficients (ReLU a
  case split), so they hold over ℝ iff over ℚ, as for A1 (the module :mod:`symuat.certify.implication`
  says why). A refuting family (``α = 1/δ``, ``δ·max(1/δ², 0)``, residual layers with ``K = 1/δ``)
  needs field reasoning and the negated ∀η ∃δ over the network; not exported yet.

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


#: the library file the ReLU theorems need (after the section: :attr:`Exported.requires`)
LIBRARY = "SymuatSmall"

#: a unit's parameters: Coq binder, its smallness hypothesis (``delta`` the bound)
_PARAMETERS = {"alpha": ("(alpha : Q)", "(Qabs alpha <= delta)%Q"),
               "w": ("(w : nat -> Q)", "(forall i, lt i n -> (Qabs (w i) <= delta)%Q)"),
               "theta": ("(theta : Q)", "(Qabs theta <= delta)%Q")}
#: the parameters each reading constrains (``smallness.unit_bound``: ``inner`` = w, θ; ``outer`` = α)
_CONSTRAINED = {"inner": ("w", "theta"), "outer": ("alpha",), "all": ("alpha", "w", "theta")}
_UNIT = "Qabs (alpha * Qmax 0 (qsum n (fun i => w i * x i) + theta))"
_POINT = "(forall i, lt i n -> (0 <= x i <= 1)%Q)"


def _is_relu(sigma) -> bool:
    t = next(iter(sp.sympify(sigma).free_symbols), None) if sigma is not None else None
    return t is not None and sp.simplify(sp.sympify(sigma) - sp.Max(t, 0)) == 0


def _bound_names(bound) -> dict:
    """The bound's symbols (``smallness``: δ, n, α, W = ‖w‖₁ + |θ|) → their ``Q`` terms."""
    from symuat.expr import smallness

    return {smallness.delta: "delta", smallness.n: "qnat n", smallness.alpha: "alpha",
            smallness.Wn: "(qsum n (fun i => Qabs (w i)) + Qabs theta)"}


def q_poly(e, written: dict) -> str:
    """A polynomial in the bound's symbols (and ``|·|`` of them) with rational coefficients as a
    ``Q`` term; anything else is :class:`Unsupported`.

    >>> from symuat.expr import smallness as s
    >>> q_poly(s.delta ** 2 * (s.n + 1), _bound_names(None))
    'delta ^ 2 * (qnat n + 1)'
    """
    from symuat.certify.implication import rational

    e = sp.sympify(e)
    if e in written:
        return written[e]
    if e.is_Rational and e >= 0:
        return rational(e)
    if isinstance(e, sp.Abs) and e.args[0] in written:
        return f"Qabs {written[e.args[0]]}"
    if isinstance(e, sp.Add):
        return " + ".join(q_poly(a, written) for a in sorted(e.args, key=lambda a: (a.is_Number, sp.default_sort_key(a))))
    if isinstance(e, sp.Mul):
        parts = sorted(e.args, key=lambda a: (not a.is_Number, sp.default_sort_key(a)))
        return " * ".join(f"({q_poly(a, written)})" if isinstance(a, sp.Add) else q_poly(a, written) for a in parts)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 0 and e.base in written:
        return f"{written[e.base]} ^ {e.exp}"
    raise Unsupported(f"the bound's term {sp.sstr(e)} is not a polynomial of δ, n, α, W with nonnegative rational coefficients")


def _coefficient(bound, delta):
    """``C`` with ``B(δ) ≤ C·δ`` for ``0 < δ ≤ 1``: ``B = δ·P(δ)`` with ``P`` a polynomial in δ
    whose coefficients are nonnegative, ``C = P(1)`` (Coq checks the inequality, :coq:`nra`)."""
    P = sp.cancel(bound / delta)
    if not P.is_polynomial(delta) or sp.simplify(bound.subs(delta, 0)) != 0:
        raise Unsupported(f"the bound {sp.sstr(bound)} is not δ times a polynomial in δ")
    coefficients = sp.Poly(sp.expand(P), delta).all_coeffs()
    if not all(c.is_nonnegative for c in coefficients):
        raise Unsupported(f"the bound {sp.sstr(bound)} has a coefficient in δ not known to be nonnegative")
    return sp.factor(P.subs(delta, 1))


def relu_unit_theorems(name: str, data: dict) -> list[Exported]:
    """A ReLU unit's ``vanishing`` certificate over ℚ: ``name_bound`` (the bound for every δ > 0)
    and ``name`` (the check's ∀η ∃δ statement); see the module."""
    reading, bound, delta = data.get("reading") or {}, sp.sympify(data["bound"]), data["delta"]
    if reading.get("part") != "units" or reading.get("params") not in _CONSTRAINED:
        raise Unsupported(f"a ReLU bound on a {reading.get('part', 'part the certificate does not name')} "
                          "contribution: only a unit's is stated")
    constrained = _CONSTRAINED[reading["params"]]
    free = [p for p in _PARAMETERS if p not in constrained]
    written = _bound_names(bound)
    b = q_poly(bound, written)
    c = q_poly(_coefficient(bound, delta), written)
    small = [_PARAMETERS[p][1] for p in constrained]
    every = " ".join(_PARAMETERS[p][0] for p in _PARAMETERS)
    statement = (f"Theorem {name}_bound :\n  forall (n : nat) (delta : Q) {every} (x : nat -> Q),\n  (0 < delta)%Q -> "
                 + " -> ".join(small) + f" ->\n  {_POINT} ->\n  ({_UNIT} <= {b})%Q.")
    fixed = free if reading.get("rest") == "fixed" else []
    uniform = [p for p in _PARAMETERS if p not in fixed]
    limit = (f"Theorem {name} :\n  forall (n : nat) " + "".join(f"{_PARAMETERS[p][0]} " for p in fixed)
             + "(eta : Q), (0 < eta)%Q -> exists delta : Q, (0 < delta)%Q /\\\n  forall "
             + " ".join(_PARAMETERS[p][0] for p in uniform) + " (x : nat -> Q),\n  "
             + " -> ".join(small) + f" ->\n  {_POINT} ->\n  ({_UNIT} <= eta)%Q.")
    proof = f"intros n {' '.join(fixed)}{' ' if fixed else ''}eta He; symuat_relu_limit ({c})%Q (fun delta => {b})%Q."
    return [Exported(f"{name}_bound", statement, "symuat_relu.", requires=LIBRARY),
            Exported(name, limit, proof, requires=LIBRARY)]


def export_vanishing(name: str, data: dict) -> list[Exported]:
    """The ``vanishing`` certificate: a ReLU unit's bound and limit over ℚ
    (:func:`relu_unit_theorems`); any other σ is not stated (:class:`Unsupported`, :func:`reason`)."""
    if _is_relu(data.get("sigma")):
        return relu_unit_theorems(name, data)
    raise Unsupported(reason(data))


def export_vanishing_refutation(name: str, data: dict) -> list[Exported]:
    """The ``vanishing_refutation`` certificate: not stated (:class:`Unsupported`, :func:`reason`)."""
    raise Unsupported(reason(data))
