r"""Logit shifts under softmax, with and without soft-capping, decided exactly.

* :func:`softmax_shift_invariance` — :math:`\operatorname{softmax}(z+k\mathbf 1^T)=\operatorname{softmax}(z)`
  for a row of symbolic length :math:`V` (SymPy, ``Sum`` with symbolic bounds; the exponential
  of a sum split by ``expand_power_exp``).
* :func:`check_capped_shift` — soft-capping :math:`\mathrm{cap}_c(z)=c\tanh(z/c)` before the
  softmax: the probabilities are unchanged by a shift :math:`k` iff
  :math:`\mathrm{cap}_c(z_i-k)-\mathrm{cap}_c(z_i)` is the same for every entry of the row
  (softmax(a) = softmax(b) iff a − b is constant). With integer :math:`z_i,k` and :math:`c`,
  every :math:`\tanh(m/c)=(u^{2m}-1)/(u^{2m}+1)` is a rational function of :math:`u=e^{1/c}`;
  :math:`u` is transcendental (Lindemann–Weierstrass), so a difference that is a nonzero rational
  function of :math:`u` with rational coefficients is a nonzero number: an *exact* witness.
* :func:`refute_with_sigmoid` — the same device for σ the logistic sigmoid (silu's gate): at
  integer arguments :math:`\sigma(t)=e^t/(1+e^t)` is a rational function of :math:`e`, so a
  statement about silu is refuted exactly, not through a stand-in polynomial σ.

>>> v = check_capped_shift([2, 0], 1, 1)
>>> v.status, v.counterexample.reason[:40]
(<Status.REFUTED: 'refuted'>, 'cap(z−k)−cap(z) is not constant on the r')
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from symuat.errors import KernelInconsistencyError
from symuat.kernel import certificates
from symuat.kernel.decide.instances import TOLERANCE
from symuat.kernel.status import Counterexample, NumericWitness, Status, Verdict

U = sp.Symbol("u", positive=True)  # u = e^{1/c}


#: the certificate :func:`softmax_shift_invariance` records (no data: its statement is fixed)
SOFTMAX_SHIFT = "softmax_shift"


def softmax_shift_invariance() -> Verdict:
    """:math:`e^{z_i+k}/\\sum_{j<V}e^{z_j+k}=e^{z_i}/\\sum_{j<V}e^{z_j}` for symbolic :math:`V`."""
    V = sp.Symbol("V", positive=True, integer=True)
    i, j = sp.symbols("i j", integer=True)
    z, k = sp.IndexedBase("z"), sp.Symbol("k", real=True)
    lhs = sp.exp(z[i] + k) / sp.Sum(sp.exp(z[j] + k), (j, 0, V - 1))
    rhs = sp.exp(z[i]) / sp.Sum(sp.exp(z[j]), (j, 0, V - 1))
    if sp.simplify(sp.expand_power_exp(lhs) - rhs) != 0:
        raise KernelInconsistencyError("softmax shift invariance not recovered by SymPy")
    # the same at explicit lengths, by cancellation in u_j = e^{z_j}, t = e^{k}: a cross-check
    for n in (1, 2, 3, 5):
        u, t = sp.symbols(f"u0:{n}", positive=True), sp.Symbol("t", positive=True)
        for a in range(n):
            if sp.cancel(u[a] * t / sum(x * t for x in u) - u[a] / sum(u)) != 0:
                raise KernelInconsistencyError(f"softmax shift invariance fails at V={n}")
    # the certify tier states this identity with exp a function of the field with e^{a+b} = e^a e^b, e^a ≠ 0
    certificates.record(SOFTMAX_SHIFT)
    return Verdict(Status.PROVED, "SymPy: exp(z_i+k)/Σ_{j<V} exp(z_j+k) − exp(z_i)/Σ_{j<V} exp(z_j) simplifies to 0 "
                   "for symbolic V (e^{z+k} = e^z e^k, factored out of the sum); cross-checked by cancellation at "
                   "V ∈ {1, 2, 3, 5}")


def _tanh_u(m: int, c: int) -> sp.Expr:
    """:math:`\\tanh(m/c)` as a rational function of :math:`u=e^{1/c}`."""
    return (U ** (2 * m) - 1) / (U ** (2 * m) + 1)


def capped_shift_differences(z: list[int], k: int, c: int) -> list[sp.Expr]:
    """:math:`\\mathrm{cap}_c(z_i-k)-\\mathrm{cap}_c(z_i)` for each entry, exactly (in :math:`u=e^{1/c}`)."""
    return [sp.cancel(c * (_tanh_u(zi - k, c) - _tanh_u(zi, c))) for zi in z]


def _sparse_mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            out[ea + eb] = out.get(ea + eb, 0) + ca * cb
    return {e: v for e, v in out.items() if v}


def gap_numerator(m: list[int]) -> dict:
    """The numerator, a sparse integer polynomial ``{exponent: coefficient}`` in :math:`u=e^{1/c}`, of
    :math:`\\tanh(m_0/c)-\\tanh(m_1/c)-\\tanh(m_2/c)+\\tanh(m_3/c)` over the positive denominator
    :math:`\\prod_j(u^{2|m_j|}+1)` (:math:`\\tanh(m/c)=\\operatorname{sgn}(m)\\,(u^{2|m|}-1)/(u^{2|m|}+1)`).
    Sparse: four binomials, never a dense polynomial of degree :math:`\\sum 2|m_j|` (``z = [2000, 0]``).

    >>> gap_numerator([1, 2, 1, 2])
    {}
    >>> gap_numerator([2, 0, 1, 0]) != {}
    True
    """
    signs = (1, -1, -1, 1)
    total: dict = {}
    for i, mi in enumerate(m):
        if mi == 0:
            continue
        e = 2 * abs(mi)
        term = {e: 1, 0: -1}
        for j, mj in enumerate(m):
            if j != i:
                term = _sparse_mul(term, {2 * abs(mj): 1, 0: 1})
        scale = signs[i] * (1 if mi > 0 else -1)
        for ex, co in term.items():
            total[ex] = total.get(ex, 0) + scale * co
    return {e: v for e, v in total.items() if v}


#: precisions (bits) of the interval re-check of a gap below what float64 resolves, rising
RECHECK_PRECISIONS = tuple(53 * 2 ** j for j in range(9))


def _interval_recheck(gap: sp.Expr) -> str:
    """The gap enclosed by interval arithmetic (outward rounding) at rising precision until 0 is
    excluded: a second, numeric certificate of its sign; the exact argument stands without it."""
    from symuat.kernel.constants import _show, enclose

    for prec in RECHECK_PRECISIONS:
        box = enclose(gap, prec)
        if box is not None and (box[0] > 0 or box[1] < 0):
            return (f"interval arithmetic at {prec} bits: gap ∈ [{_show(box[0])}, {_show(box[1])}], "
                    "0 excluded")
    return f"interval arithmetic up to {RECHECK_PRECISIONS[-1]} bits does not resolve the gap"


def _integer(value, what: str) -> int:
    from symuat.errors import KernelInputError

    if isinstance(value, bool) or not isinstance(value, (int, np.integer, sp.Integer)):
        raise KernelInputError(f"check_capped_shift: {what} = {value!r} is not an integer (the exact "
                               "method needs integer logits, shift and cap)")
    return int(value)


def check_capped_shift(z: list[int], k: int, c: int | None) -> Verdict:
    """Decide, at one exact instance, whether shifting the logits ``z`` by ``k`` leaves the softmax
    of the (capped, when ``c``) logits unchanged.

    Entries ``a`` and ``0`` get the same change iff the numerator of the gap in :math:`u=e^{1/c}`
    (:func:`gap_numerator`, exact integer arithmetic) is the zero polynomial; a nonzero one is a
    nonzero number whatever its size (:math:`u` is transcendental), so a gap below what float64
    resolves is still a refutation, re-checked by interval arithmetic. ``c = 0`` has no cap
    (:math:`c\\tanh(z/c)` is undefined there): a :class:`~symuat.errors.KernelInputError`."""
    from symuat.errors import KernelInputError

    z = [_integer(t, f"z[{i}]") for i, t in enumerate(z)]
    k = _integer(k, "k")
    if c is not None:
        c = _integer(c, "c")
        if c == 0:
            raise KernelInputError("check_capped_shift: c = 0 is not a cap (c·tanh(z/c) is undefined at c = 0; "
                                   "pass c=None for no cap)")
    if not z:
        raise KernelInputError("check_capped_shift: z is empty (a row of logits needs an entry)")
    for a in range(1, len(z)):
        if c is None or gap_numerator([z[a] - k, z[a], z[0] - k, z[0]]) == {}:
            continue  # no cap: the change is −k on every entry; capped: the same change exactly
        change = lambda t: c * (sp.tanh(sp.Rational(t - k, c)) - sp.tanh(sp.Rational(t, c)))
        gap = change(z[a]) - change(z[0])
        res = abs(c * ((math.tanh((z[a] - k) / c) - math.tanh(z[a] / c))
                       - (math.tanh((z[0] - k) / c) - math.tanh(z[0] / c))))
        numeric = (f"float64: |gap| = {res:.6g} > {TOLERANCE}" if res > TOLERANCE else
                   f"float64: |gap| = {res:.3g} does not resolve it; " + _interval_recheck(gap))
        cex = Counterexample(
            {"V": len(z)}, {"z": list(z), "k": k, "c": c},
            lhs=str(change(z[0])), rhs=str(change(z[a])),
            reason=f"cap(z−k)−cap(z) is not constant on the row: entries 0 and {a} differ by {gap} "
                   f"(u = e^(1/{c}))",
            exact_recheck=f"exact: the gap's numerator in u = e^(1/{c}) is a nonzero integer polynomial over a "
                          "positive denominator, and u is transcendental (Lindemann–Weierstrass), so the gap is "
                          "a nonzero number",
            numeric_recheck=numeric)
        return Verdict(Status.REFUTED, "exact: tanh of integers/c as rational functions of e^(1/c)",
                       counterexample=cex)
    return Verdict(Status.NUMERIC_ONLY, "the shift is constant on the row at this instance (exact)",
                   numeric=NumericWitness([{"V": len(z)}], [0], 0.0, 0.0, "exact instance"))


# --------------------------------------------------------------------------------------------
# exact instances for σ = the logistic sigmoid (silu's gate): rational functions of e
# --------------------------------------------------------------------------------------------

E = sp.Symbol("e", positive=True)  # Euler's number, kept as a transcendental symbol


def sigmoid_in_e(t):
    """The logistic sigmoid at an integer ``t`` as a rational function of :math:`e`:
    :math:`e^t/(1+e^t)` (so :math:`t\\,\\sigma(t)` is silu)."""
    t = int(t)
    return E ** t / (1 + E ** t) if t >= 0 else 1 / (1 + E ** (-t))


def refute_with_sigmoid(lhs, rhs, sizes_list: list[dict], seeds=range(4)):
    """A counterexample to ``lhs = rhs`` with σ the logistic sigmoid (not a stand-in polynomial):
    integer leaves, every σ value :math:`e^t/(1+e^t)` a rational function of :math:`e`; a difference
    that is a nonzero rational function of :math:`e` (rational coefficients) is a nonzero number since
    :math:`e` is transcendental. Returns ``refuted`` with the witness, or ``numeric-only`` when no
    instance differs (evidence only)."""
    from symuat.kernel import decide

    syms = decide.leaf_shapes(lhs, rhs)
    for sizes in sizes_list:
        for seed in seeds:
            rng = np.random.default_rng(seed)
            values = decide.random_values(syms, sizes, rng, "exact")
            left, err_l = decide.evaluate_at(lhs, sizes, values, "exact", sigma=sigmoid_in_e)
            right, err_r = decide.evaluate_at(rhs, sizes, values, "exact", sigma=sigmoid_in_e)
            if err_l or err_r or left.shape != right.shape:
                continue
            for idx, (a, b) in enumerate(zip(left.flat, right.flat)):
                gap = sp.cancel(sp.sympify(a) - sp.sympify(b))
                if gap != 0:
                    fa, fb = (float(sp.sympify(x).subs(E, math.e)) for x in (a, b))
                    res = abs(fa - fb) / max(1.0, abs(fa), abs(fb))
                    if not res > TOLERANCE:
                        raise KernelInconsistencyError("sigmoid witness not confirmed in float64")
                    where = tuple(int(i) for i in np.unravel_index(idx, left.shape))
                    cex = Counterexample(
                        {str(k): int(v) for k, v in sizes.items()}, values, lhs=str(sp.factor(a)), rhs=str(sp.factor(b)),
                        reason=f"entry {where} differs with σ the logistic sigmoid (silu = t·σ(t))",
                        exact_recheck="exact: the difference is a nonzero rational function of e, which is "
                                      "transcendental (Lindemann), so a nonzero number",
                        numeric_recheck=f"float64: relative residual {res:.3g} > {TOLERANCE}")
                    return Verdict(Status.REFUTED, "exact counterexample with σ the logistic sigmoid (values "
                                   "rational in e), integer weights; re-checked in float64", counterexample=cex)
    return Verdict(Status.NUMERIC_ONLY, "no instance with σ the sigmoid differs (exact)")


def check_differs_with_sigmoid(lhs, rhs, largest: dict) -> Verdict:
    """Decide “``lhs`` and ``rhs`` differ for σ the logistic sigmoid” (silu(t) = tσ(t) itself, not a
    stand-in): ``proved`` with an exact witness, ``refuted`` when they agree for every σ.

    The identity is first decided with σ opaque (:func:`~symuat.kernel.decide.check_negation`): if
    it held for every σ, the claim that the sides differ is refuted. Otherwise the smallest instances
    (:func:`~symuat.kernel.minimise.small_instances`, sizes up to ``largest``, entries 0/1 first) are
    evaluated with σ(t) = eᵗ/(1+eᵗ), exactly as rational functions of e; a nonzero difference of
    rational functions of e with rational coefficients is a nonzero number since e is transcendental
    (Lindemann), and float64 confirms it (a disagreement is a
    :class:`~symuat.errors.KernelInconsistencyError`). No witness found: ``numeric-only``, evidence
    only.

    >>> from sympy import MatrixSymbol
    >>> from symuat.expr.algebra import dims
    >>> from symuat.expr.elementwise import Sigma
    >>> n = dims("n")
    >>> X = MatrixSymbol("X", n, n)
    >>> check_differs_with_sigmoid(Sigma(X), Sigma(X), {n: 2}).status
    <Status.REFUTED: 'refuted'>
    """
    from symuat.kernel import certificates, decide, minimise

    # the witness with σ opaque is not what this check concludes (σ the sigmoid): not recorded for it
    with certificates.listening(lambda kind, data: None):
        opaque = decide.check_negation(lhs, rhs)
    if opaque.status is not Status.PROVED:
        return opaque  # the identity holds for every σ (refuted), or is undecided
    logistic = lambda t: 1.0 / (1.0 + np.exp(-np.asarray(t, dtype=float)))
    sigmoid = np.vectorize(sigmoid_in_e, otypes=[object])  # elementwise, exact: a rational function of e
    for sizes, values in minimise.small_instances(lhs, rhs, largest=largest):
        left, err_l = decide.evaluate_at(lhs, sizes, values, "exact", sigma=sigmoid)
        right, err_r = decide.evaluate_at(rhs, sizes, values, "exact", sigma=sigmoid)
        if err_l or err_r or left.shape != right.shape:
            continue
        for idx, a, b in ((i, x, y) for (i, x), y in zip(np.ndenumerate(left), right.flat)):
            if sp.cancel(sp.sympify(a) - sp.sympify(b)) == 0:
                continue
            floats = {k: np.asarray(v, dtype=float) for k, v in values.items()}
            fl, _ = decide.evaluate_at(lhs, sizes, floats, "float", sigma=logistic)
            fr, _ = decide.evaluate_at(rhs, sizes, floats, "float", sigma=logistic)
            fa, fb = (float(sp.sympify(x).subs(E, math.e)) for x in (a, b))
            if (abs(float(fl[idx]) - fa) > TOLERANCE * max(1, abs(fa))
                    or abs(float(fr[idx]) - fb) > TOLERANCE * max(1, abs(fb))):
                raise KernelInconsistencyError("the exact sigmoid witness disagrees with float64")
            res = abs(fa - fb) / max(1.0, abs(fa), abs(fb))
            cex = Counterexample(
                {str(k): int(v) for k, v in sizes.items()}, values, lhs=str(sp.factor(a)), rhs=str(sp.factor(b)),
                reason=f"entry {idx} differs with silu itself (σ the logistic sigmoid, σ(t) = eᵗ/(1+eᵗ))",
                exact_recheck="exact: the difference is a nonzero rational function of e, which is transcendental "
                              "(Lindemann), so a nonzero number",
                numeric_recheck=f"float64 (σ by numpy.exp): relative residual {res:.3g} > {TOLERANCE}")
            return Verdict(Status.PROVED, "exact witness with silu itself (σ the logistic sigmoid; values rational "
                           "in e), smallest sizes and entries first; re-checked in float64",
                           quantities={"witness": cex.as_dict()})
    return Verdict(Status.NUMERIC_ONLY, "no instance with silu itself differs at the sizes tried (the identity "
                   "fails for some σ: " + opaque.method + ")", quantities=dict(opaque.quantities))


# --------------------------------------------------------------------------------------------
# a soft-capped logit as a sum of terms (X10): proved for a symbolic number of terms, or refuted exactly
# --------------------------------------------------------------------------------------------

#: the exact instances tried for a refutation: (number of terms n, integer terms t_1..t_n, integer c)
CAPPED_SUM_INSTANCES = ((2, (1, 1), 1), (2, (2, -1), 1), (3, (1, 2, -1), 2), (1, (1,), 1))


def _u_rational(expr: sp.Expr, c: int) -> sp.Expr:
    """``expr`` with every :math:`\\tanh(a)` (:math:`ac` an integer) written as a rational function of
    :math:`u=e^{1/c}`: :math:`\\tanh(m/c)=(u^{2m}-1)/(u^{2m}+1)`."""
    def to_u(arg):
        m = sp.nsimplify(arg * c)
        if not m.is_integer:
            raise KernelInconsistencyError(f"tanh({arg}) is not tanh(integer/{c})")
        return _tanh_u(int(m), c)

    return expr.replace(lambda e: isinstance(e, sp.tanh), lambda e: to_u(e.args[0]))


#: the certificate a proved :func:`check_capped_sum` records: the two sides and their symbols
CAPPED_SUM = "capped_sum"


def check_capped_sum(lhs_build, rhs_build, *, instances=CAPPED_SUM_INSTANCES) -> Verdict:
    """Decide an identity about a soft-capped sum of terms, :math:`\\ell=\\sum_{k=1}^{n}t_k`,
    :math:`\\mathrm{cap}_c(\\ell)=c\\tanh(\\ell/c)`, for a symbolic number ``n`` of real terms and
    :math:`c>0`.

    ``lhs_build(t, k, n, c)`` / ``rhs_build`` give each side as a SymPy expression (``t`` an
    ``IndexedBase``, ``k`` the summation index, sums written ``Sum(…, (k, 1, n))``). Proved when the
    difference, constant factors taken out of the sums (``factor_terms``), simplifies to 0 for symbolic
    ``n`` and ``c``; otherwise each instance of :data:`CAPPED_SUM_INSTANCES` (integer terms and ``c``) is
    evaluated exactly — every tanh a rational function of the transcendental :math:`u=e^{1/c}` — and
    the first nonzero difference is an exact counterexample, re-checked in float64. Neither: an error
    (never a silent verdict)."""
    n = sp.Symbol("n", positive=True, integer=True)
    c = sp.Symbol("c", positive=True)
    t, k = sp.IndexedBase("t"), sp.Symbol("k", integer=True)
    lhs, rhs = lhs_build(t, k, n, c), rhs_build(t, k, n, c)
    diff = sp.simplify(sp.factor_terms(lhs) - sp.factor_terms(rhs))
    if diff == 0:
        # the certify tier states the identity it recognises (symuat.certify.exponential), else none
        certificates.record(CAPPED_SUM, lhs=lhs, rhs=rhs, t=t, k=k, n=n, c=c)
        return Verdict(Status.PROVED, f"SymPy: ({sp.sstr(lhs)}) − ({sp.sstr(rhs)}) simplifies to 0 for a symbolic "
                       "number n of terms and c > 0 (the constant factor taken out of the sum; ℓ ≠ 0 where a side "
                       "divides by it)")
    for nn, values, cc in instances:
        vals = {t[i + 1]: sp.Integer(v) for i, v in enumerate(values)}
        inst = [sp.sympify(side).subs({n: nn, c: cc}).doit().subs(vals) for side in (lhs, rhs)]
        left, right = (sp.cancel(_u_rational(s, cc)) for s in inst)
        gap = sp.cancel(left - right)
        if gap == 0:
            continue
        u = math.exp(1.0 / cc)
        fl, fr = (float(s.subs(U, u)) for s in (left, right))
        res = abs(fl - fr) / max(1.0, abs(fl), abs(fr))
        if not res > TOLERANCE:
            raise KernelInconsistencyError("capped sum: a nonzero exact gap that float64 does not see")
        cex = Counterexample({"n": nn}, {"t": list(values), "c": cc}, lhs=str(sp.factor(left)),
                             rhs=str(sp.factor(right)),
                             reason=f"the sides differ by {sp.factor(gap)} with u = e^(1/{cc})",
                             exact_recheck=f"exact: a nonzero rational function of u = e^(1/{cc}), which is "
                                           "transcendental (Lindemann–Weierstrass), so a nonzero number",
                             numeric_recheck=f"float64: {fl:.15g} vs {fr:.15g}, relative residual {res:.3g} > {TOLERANCE}")
        return Verdict(Status.REFUTED, "exact counterexample: integer terms, tanh of integers/c as rational "
                       "functions of e^(1/c); re-checked in float64", counterexample=cex)
    raise KernelInconsistencyError(f"capped sum: {sp.sstr(diff)} is not 0 and no listed instance differs")
