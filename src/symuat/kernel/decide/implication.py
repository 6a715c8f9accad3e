r"""Real implications (A1) and vanishing contributions (A2).

:func:`check_real_implication` decides ``∀ vars: H_1 ∧ … ∧ H_k ⇒ C`` whose atoms are
(strict or non-strict) inequalities between linear expressions with rational coefficients,
possibly under (nested) absolute values. Soundness: the statement is false iff
``H_1 ∧ … ∧ H_k ∧ ¬C`` has a real solution; every ``|e|`` splits into the cases ``e ≥ 0`` and
``e < 0``; each case is a conjunction of linear inequalities, decided exactly by Fourier–Motzkin
elimination over ℚ, which also returns a rational model (back-substitution). Both steps are
complete for linear real arithmetic: ``proved`` means no case is satisfiable; ``refuted`` comes
with a rational model, re-checked *exactly* on the original formulas (absolute values and all).
The float64 re-check is reported, not required: a model on the boundary (``x = 7`` against
``x > 7``) is exact and float64 may round either way there. Atoms SymPy has already evaluated
(a hypothesis that is ``True``; a constant atom) are accepted as truth values; anything outside
the fragment is an error naming the atom. When the certify tier listens
(:func:`symuat.kernel.certificates.listened`) it records the statement it decided — an
``implication`` certificate, or an ``implication_refutation`` with the rational model — which
:mod:`symuat.certify.implication` states in Coq.

:func:`check_vanishing` decides "parameters bounded by δ ⇒ contribution → 0": refuted by a
witness family whose contribution has a nonzero limit as δ → 0⁺ (SymPy limit, confirmed at
30 digits and in float64), proved by a bound whose facts are all proved and whose limit is 0;
it records the bound or the family (``vanishing``, ``vanishing_refutation``) with the reading,
which the certify tier states over ℚ for ReLU units and lists as unsupported, with the reason,
otherwise (:mod:`symuat.certify.vanishing`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np
import sympy as sp
from sympy.core.relational import Relational

from symuat.errors import (
    KernelInconsistencyError,
    KernelInputError,
)
from symuat.kernel import certificates
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    NumericWitness,
    Status,
    Verdict,
)
from symuat.text.printing import latex

from symuat.kernel.decide.instances import (
    TOLERANCE,
)


# --------------------------------------------------------------------------------------------
# real arithmetic with absolute values (A1): sign cases + Fourier–Motzkin, exact rationals
# --------------------------------------------------------------------------------------------
#
# A statement ``∀ vars: H_1 ∧ … ∧ H_k ⇒ C`` whose atoms are (strict or non-strict) inequalities
# between linear expressions, possibly under (nested) absolute values. It is false iff
# ``H_1 ∧ … ∧ H_k ∧ ¬C`` has a real solution. Every ``|e|`` splits into the cases ``e ≥ 0`` (it
# is ``e``) and ``e < 0`` (it is ``−e``); each case is a conjunction of linear inequalities,
# decided exactly by Fourier–Motzkin elimination over the rationals, which also returns a
# solution (back-substitution). Both steps are complete for linear real arithmetic, so the
# procedure is a decision procedure: ``proved`` means no case is satisfiable, ``refuted`` comes
# with a rational model, re-checked exactly on the original formulas (absolute values and all)
# and in float64.


def _linear_coeffs(expr, variables) -> tuple[dict, Fraction]:
    """``expr`` (linear in ``variables``, rational coefficients) as ({var: coeff}, constant)."""
    terms = sp.expand(sp.sympify(expr)).as_coefficients_dict()
    allowed = set(variables)
    coeffs, c0 = {}, Fraction(0)
    for mono, c in terms.items():
        if not c.is_Rational:
            raise KernelInputError(f"non-rational coefficient {c} in the atom {expr}: outside linear real arithmetic")
        value = Fraction(int(c.p), int(c.q))
        if mono == 1:
            c0 += value
        elif mono in allowed:
            coeffs[mono] = coeffs.get(mono, Fraction(0)) + value
        else:
            raise KernelInputError(f"the atom {expr} is not linear in {variables} (term {mono}): outside linear real arithmetic")
    return {k: v for k, v in coeffs.items() if v != 0}, c0


def _as_constraints(rel) -> list[tuple[sp.Expr, bool]]:
    """A relational as ``(e, strict)`` meaning ``e > 0`` (strict) or ``e ≥ 0``; an atom SymPy has
    already evaluated is a truth value (``True``: no constraint; ``False``: ``−1 ≥ 0``)."""
    if rel is sp.true or rel is True:
        return []
    if rel is sp.false or rel is False:
        return [(sp.Integer(-1), False)]
    if isinstance(rel, sp.And):
        return [c for a in rel.args for c in _as_constraints(a)]
    if isinstance(rel, (sp.StrictLessThan, sp.StrictGreaterThan)):
        big, small = (rel.rhs, rel.lhs) if isinstance(rel, sp.StrictLessThan) else (rel.lhs, rel.rhs)
        return [(big - small, True)]
    if isinstance(rel, (sp.LessThan, sp.GreaterThan)):
        big, small = (rel.rhs, rel.lhs) if isinstance(rel, sp.LessThan) else (rel.lhs, rel.rhs)
        return [(big - small, False)]
    if isinstance(rel, sp.Equality):
        return [(rel.lhs - rel.rhs, False), (rel.rhs - rel.lhs, False)]
    raise KernelInputError(f"not an inequality: {rel} ({type(rel).__name__}); the atoms must be linear "
                           "inequalities or equations, possibly under absolute values")


def _negate(rel):
    """``¬rel`` for one inequality (a conclusion); ``¬True`` is ``False`` and vice versa."""
    if rel is sp.true or rel is True:
        return sp.false
    if rel is sp.false or rel is False:
        return sp.true
    table = {sp.StrictLessThan: sp.GreaterThan, sp.LessThan: sp.StrictGreaterThan,
             sp.StrictGreaterThan: sp.LessThan, sp.GreaterThan: sp.StrictLessThan}
    for cls, neg in table.items():
        if isinstance(rel, cls):
            return neg(rel.lhs, rel.rhs, evaluate=False)
    raise KernelInputError(f"the conclusion must be one inequality (<, ≤, >, ≥), not {rel}")


def _sign_cases(constraints: list[tuple[sp.Expr, bool]]):
    """Every sign case: (linear constraints, the case split made)."""
    def inner_abs(exprs):
        for e in exprs:
            for node in sp.preorder_traversal(e):
                if isinstance(node, sp.Abs) and not node.args[0].has(sp.Abs):
                    return node
        return None

    stack = [(constraints, [])]
    while stack:
        cons, split = stack.pop()
        atom = inner_abs([e for e, _ in cons])
        if atom is None:
            yield cons, split
            continue
        arg = atom.args[0]
        for sign, extra in ((1, (arg, False)), (-1, (-arg, True))):
            new = [(e.xreplace({atom: sign * arg}), s) for e, s in cons] + [extra]
            stack.append((new, split + [(sign, arg)]))


def fourier_motzkin(constraints: list[tuple[dict, Fraction, bool]], variables: list):
    """A rational solution of ``Σ a_v v + c > 0`` / ``≥ 0`` (strict flag), or None.

    Exact Fourier–Motzkin elimination, then back-substitution choosing an integer inside each
    interval when there is one (else the midpoint).
    """
    levels = []  # constraints still containing variables[k] when it is eliminated
    cons = [(dict(a), Fraction(c), s) for a, c, s in constraints]
    for v in variables:
        with_v = [x for x in cons if x[0].get(v, 0) != 0]
        rest = [x for x in cons if x[0].get(v, 0) == 0]
        levels.append(with_v)
        lower = [x for x in with_v if x[0][v] > 0]
        upper = [x for x in with_v if x[0][v] < 0]
        new = []
        for la, lc, ls in lower:
            for ua, uc, us in upper:
                p, q = -ua[v], la[v]  # p·(lower) + q·(upper) eliminates v
                a = {k: p * la.get(k, 0) + q * ua.get(k, 0) for k in set(la) | set(ua) if k != v}
                a = {k: x for k, x in a.items() if x != 0}
                new.append((a, p * lc + q * uc, ls or us))
        seen, cons = set(), []
        for a, c, s in rest + new:
            key = (frozenset(a.items()), c, s)
            if key not in seen:
                seen.add(key)
                cons.append((a, c, s))
    for a, c, s in cons:  # no variables left
        if (c <= 0) if s else (c < 0):
            return None
    model: dict = {}
    for v, with_v in reversed(list(zip(variables, levels))):
        lo = hi = None
        lo_strict = hi_strict = False
        for a, c, s in with_v:
            rest = c + sum(x * model.get(k, Fraction(0)) for k, x in a.items() if k != v)
            bound = -rest / a[v]
            if a[v] > 0:  # v > bound
                if lo is None or bound > lo or (bound == lo and s):
                    lo, lo_strict = bound, s
            else:
                if hi is None or bound < hi or (bound == hi and s):
                    hi, hi_strict = bound, s
        model[v] = _pick(lo, lo_strict, hi, hi_strict)
    return model


def _pick(lo, lo_strict, hi, hi_strict) -> Fraction:
    import math

    if lo is None and hi is None:
        return Fraction(0)
    if lo is None:
        cand = Fraction(math.floor(hi))
        return cand if cand < hi or (cand == hi and not hi_strict) else cand - 1
    if hi is None:
        cand = Fraction(math.ceil(lo))
        return cand if cand > lo or (cand == lo and not lo_strict) else cand + 1
    if lo == hi:
        if lo_strict or hi_strict:
            raise KernelInconsistencyError("Fourier–Motzkin: empty interval after elimination")
        return lo
    for cand in (Fraction(0), Fraction(math.ceil(lo)), Fraction(math.floor(hi))):
        if (cand > lo or (cand == lo and not lo_strict)) and (cand < hi or (cand == hi and not hi_strict)):
            return cand
    return (lo + hi) / 2


def _truth(rel, subs: dict):
    """The truth value of ``rel`` (relationals, And, truth values) at ``subs``, evaluated afresh
    (an atom built with ``evaluate=False`` is rebuilt, so it evaluates); None if it does not."""
    if rel in (sp.true, sp.false, True, False):
        return bool(rel)
    if isinstance(rel, sp.And):
        parts = [_truth(a, subs) for a in rel.args]
        return None if None in parts else all(parts)
    if isinstance(rel, Relational):
        out = type(rel)(sp.sympify(rel.lhs).xreplace(subs), sp.sympify(rel.rhs).xreplace(subs))
        return bool(out) if out in (sp.true, sp.false) else None
    out = sp.sympify(rel).xreplace(subs)
    return bool(out) if out in (sp.true, sp.false) else None


def _holds_exact(rel, values: dict) -> bool:
    out = _truth(rel, {k: sp.Rational(v.numerator, v.denominator) for k, v in values.items()})
    if out is None:
        raise KernelInputError(f"the atom {rel} does not evaluate to a truth value at rational values")
    return out


def _holds_float(rel, values: dict) -> bool | None:
    """The float64 re-check (reported, not required: a model on a boundary may round either way)."""
    return _truth(rel, {k: sp.Float(float(v)) for k, v in values.items()})


def check_real_implication(variables: list, hypotheses: list, conclusion, *, realise: Callable | None = None,
                           corrected: tuple[str, Callable[[], Verdict]] | None = None,
                           sample: Callable | None = None, samples: int = 200) -> Verdict:
    """Decide ``∀ variables: ∧ hypotheses ⇒ conclusion`` over the reals (atoms: linear
    inequalities under absolute values); see the comment above.

    ``realise(model)`` turns a rational model into a concrete object (e.g. a network) and
    re-checks it there, returning a description; ``sample(rng)`` draws float values for the
    variables (numeric confirmation of a proved statement: every draw that satisfies the
    hypotheses satisfies the conclusion); ``corrected`` is ``(latex, procedure)``.
    """
    variables = list(variables)
    hypotheses = [sp.sympify(h) for h in hypotheses]
    conclusion = sp.sympify(conclusion)
    base = [c for h in hypotheses for c in _as_constraints(h)]
    negated = _as_constraints(_negate(conclusion))
    cases = 0
    for cons, split in _sign_cases(base + negated):
        cases += 1
        linear = [(*_linear_coeffs(e, variables), s) for e, s in cons]
        model = fourier_motzkin(linear, variables)
        if model is None:
            continue
        model = {v: model.get(v, Fraction(0)) for v in variables}
        if not all(_holds_exact(h, model) for h in hypotheses) or _holds_exact(conclusion, model):
            raise KernelInconsistencyError("Fourier–Motzkin model does not re-check exactly")
        floats = [_holds_float(h, model) for h in hypotheses] + [_holds_float(conclusion, model)]
        if all(f is True for f in floats[:-1]) and floats[-1] is False:
            numeric_recheck = "float64: hypotheses true, conclusion false"
        else:  # on a boundary (x = 7 against x > 7) float64 may round either way: reported only
            numeric_recheck = ("float64 cannot confirm it: the model lies on a boundary of an atom, where "
                               "rounding decides; the exact (rational) re-check stands")
        exact_model = {k: sp.Rational(v.numerator, v.denominator) for k, v in model.items()}
        lhs = sp.sympify(getattr(conclusion, "lhs", conclusion)).xreplace(exact_model)
        rhs = sp.sympify(getattr(conclusion, "rhs", conclusion)).xreplace(exact_model)
        cex = Counterexample(
            {}, {str(k): v for k, v in model.items()}, lhs=lhs, rhs=rhs,
            reason=f"the hypotheses hold and {latex(conclusion)} fails (sign case "
                   f"{'; '.join(('≥0: ' if sg > 0 else '<0: ') + str(a) for sg, a in split) or 'none'})",
            exact_recheck=f"exact (rationals): hypotheses true, conclusion {lhs} vs {rhs} false",
            numeric_recheck=numeric_recheck,
        )
        if realise is not None:
            cex.exact_recheck += "; " + realise(model)
        if certificates.listened():  # the statement and the model it is refuted at (certify/implication.py)
            certificates.record("implication_refutation", variables=variables, hypotheses=hypotheses,
                                conclusion=conclusion, model=dict(exact_model))
        corr = None
        if corrected is not None:
            corr = Corrected(corrected[0], corrected[1]())
        return Verdict(Status.REFUTED, "sign-case split + Fourier–Motzkin elimination over the rationals "
                       "(a decision procedure for linear real arithmetic); rational model",
                       counterexample=cex, corrected=corr)
    if certificates.listened():  # the statement proved, for every sign case (certify/implication.py)
        certificates.record("implication", variables=variables, hypotheses=hypotheses, conclusion=conclusion)
    numeric = None
    if sample is not None:
        rng = np.random.default_rng(0)
        tried = 0
        for _ in range(samples):
            vals = sample(rng)
            at = dict(zip(variables, (sp.Float(float(v)) for v in vals)))
            if all(_truth(h, at) for h in hypotheses):
                tried += 1
                if _truth(conclusion, at) is False:
                    # a float64 draw is not exact: decide it exactly before calling it a disagreement
                    exact = {k: sp.Rational(float(v)) for k, v in at.items()}
                    if all(_truth(h, exact) for h in hypotheses) and _truth(conclusion, exact) is False:
                        raise KernelInconsistencyError(f"proved, but an exact sample violates it: {vals}")
        numeric = NumericWitness([{"draws satisfying the hypotheses": tried}], [0], 0.0, 0.0,
                                 "inequalities evaluated in float64 at random draws")
    return Verdict(Status.PROVED, f"sign-case split ({cases} cases) + Fourier–Motzkin elimination over the "
                   "rationals: hypotheses ∧ ¬conclusion unsatisfiable in every case (for all real values)"
                   + (f"; float64: the conclusion holds at all {numeric.sizes[0]['draws satisfying the hypotheses']} "
                      "random draws satisfying the hypotheses" if numeric else ""),
                   numeric=numeric)


# --------------------------------------------------------------------------------------------
# "small parameters ⇒ small contribution" (A2): a vanishing bound, or a witness family
# --------------------------------------------------------------------------------------------


import functools  # noqa: E402  (kept with the procedure that uses it, for clean merges)


@functools.lru_cache(maxsize=256)
def _limit_right(expr, var):
    """``lim_{var→0⁺} expr`` (SymPy), memoised: several readings share one witness family."""
    return sp.limit(expr, var, 0, "+")


def check_vanishing(delta: sp.Symbol, *, witness: dict | None = None, bound: dict | None = None,
                    what: str = "", corrected: tuple[str, Callable[[], Verdict]] | None = None,
                    sigma=None, reading: dict | None = None) -> Verdict:
    r"""Decide ":math:`\forall\eta>0\ \exists\delta>0`: parameters bounded by δ ⇒ contribution ≤ η".

    ``witness``: ``{"value": c(δ), "constrained": {name: p(δ)}, "free": {…}, "point": …}`` — a
    family of parameters, the constrained ones within δ (checked exactly at δ = 1/10, 1/1000), and
    the contribution :math:`c(\delta)` at a point of :math:`\mathbf I_n`; it refutes the claim when
    :math:`\lim_{\delta\to0^+}c(\delta)>0` (SymPy limit), confirmed by 30-digit and float64
    evaluation at δ = 1/10, 1/1000.
    ``bound``: ``{"expr": B(δ, …), "facts": [(text, proof)], "confirm": f(rng) → [(|c|, B)]}`` —
    proves the claim when every fact's proof returns True and :math:`\lim_{\delta\to0^+}B=0`;
    float64 draws must respect the bound (else the bound is wrong: a kernel error). A bound
    whose facts are not all proved gives ``numeric-only``.
    ``sigma``: the activation, a SymPy expression in one variable, named in the certificate the
    certify tier reads (``vanishing``, ``vanishing_refutation``: :mod:`symuat.certify.vanishing`);
    ``reading``: what the contribution is and which parameters are constrained (``part``,
    ``params``, ``rest``), recorded with it, and — for a family — its parameters.
    """
    refutation = proof = lim_witness = None
    facts, facts_ok = [], False
    if witness is not None:
        for name, p in witness["constrained"].items():
            for dv in (sp.Rational(1, 10), sp.Rational(1, 1000)):
                val = sp.sympify(p).subs(delta, dv)
                if not bool(sp.Abs(val) <= dv):
                    raise KernelInconsistencyError(f"witness parameter {name} = {val} exceeds δ = {dv}")
        c = sp.sympify(witness["value"])
        lim = lim_witness = _limit_right(c, delta)
        if lim in (sp.oo, -sp.oo) or (lim.is_real and lim.is_nonzero):
            at = {}
            for dv in (sp.Rational(1, 10), sp.Rational(1, 1000)):
                hi = sp.N(c.subs(delta, dv), 30)
                fl = float(sp.lambdify(delta, c, "mpmath")(float(dv)))
                if not (abs(hi) > 0 and abs(fl) > 0 and np.isfinite(fl)):
                    raise KernelInconsistencyError(f"witness value at δ = {dv} not positive: {hi}, {fl}")
                at[f"δ = {dv}"] = f"{sp.N(hi, 12)}"
            refutation = Counterexample(
                {}, {k: str(v) for k, v in {**witness["constrained"], **witness.get("free", {})}.items()},
                lhs=str(c), rhs=str(lim),
                reason=f"constrained parameters within δ, yet the contribution at {witness.get('point', 'x')} "
                       f"tends to {lim} as δ → 0⁺",
                exact_recheck=f"exact: lim_(δ→0⁺) {sp.sstr(c)} = {lim} (SymPy limit); values {at}",
                numeric_recheck="float64 at δ = 1/10, 1/1000: nonzero")
    if bound is not None:
        B = sp.sympify(bound["expr"])
        facts = [(text, bool(prove())) for text, prove in bound.get("facts", [])]
        lim = _limit_right(B, delta)
        if lim != 0:
            raise KernelInconsistencyError(f"bound {B} does not vanish as δ → 0⁺ (limit {lim})")
        rng = np.random.default_rng(0)
        pairs = bound["confirm"](rng)
        worst = max((lhs - rhs) / max(1.0, abs(rhs)) for lhs, rhs in pairs)
        if not all(np.isfinite([x for pr in pairs for x in pr])):
            raise KernelInconsistencyError("non-finite value in the bound's confirmation")
        if worst > TOLERANCE:
            raise KernelInconsistencyError(f"bound {B} violated in float64 (excess {worst:.3g})")
        facts_ok = all(ok for _, ok in facts)
        numeric = NumericWitness([{"draws": len(pairs)}], [0], max(worst, 0.0), TOLERANCE,
                                 "|contribution| ≤ bound at random parameters within δ and points of I_n")
        proof = Verdict(Status.PROVED if facts_ok else Status.NUMERIC_ONLY,
                        ("bound proved: " if facts_ok else "bound confirmed in float64 only (unproved facts: "
                         + "; ".join(t for t, ok in facts if not ok) + "): ")
                        + f"|contribution| ≤ {sp.sstr(B)} → 0 as δ → 0⁺",
                        numeric=numeric, quantities={"bound": str(B), "facts": [t for t, _ in facts]})
    if refutation is not None and proof is not None and facts_ok:
        raise KernelInconsistencyError(f"{what}: both a proved bound and a witness")
    if certificates.listened():  # what the conclusion rests on (certify/vanishing.py states it or says why not)
        if refutation is not None:
            certificates.record("vanishing_refutation", delta=delta, value=sp.sympify(witness["value"]),
                                limit=lim_witness, sigma=sigma, what=what, reading=reading,
                                family={**witness["constrained"], **witness.get("free", {})},
                                constrained=tuple(witness["constrained"]), point=witness.get("point"))
        elif proof is not None:
            certificates.record("vanishing", delta=delta, bound=sp.sympify(bound["expr"]),
                                facts=[t for t, _ in facts], sigma=sigma, what=what, reading=reading)
    if refutation is not None:
        return Verdict(Status.REFUTED, f"{what}: a witness family within δ whose contribution does not vanish",
                       counterexample=refutation,
                       corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
    if proof is not None:
        return proof
    raise KernelInputError(f"{what}: check_vanishing needs a witness family or a bound to decide with")
