"""The index-level normal form is sound: whenever it says two expressions are equal, exact
evaluation agrees on random integer instances. And it is complete for the rewrite rules the
claims rely on (transpose of a product, Kronecker mixed product, identities)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.index_calculus import compare_entries

n, k = dims("n k")
LEAVES = [MatrixSymbol("A", n, n), MatrixSymbol("B", n, n), MatrixSymbol("C", n, n), Identity(n)]


def expressions(depth=3):
    leaf = st.sampled_from(LEAVES)
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            st.builds(T, sub),
            st.builds(lambda a, b: mul(a, b), sub, sub),
            st.builds(lambda a, b: add(a, b), sub, sub),
            st.builds(lambda a, c: mul(a, c), sub, st.sampled_from([2, -1, 3])),
        ),
        max_leaves=6,
    )


def _exact_equal(lhs, rhs, size, seed):
    rng = np.random.default_rng(seed)
    values = {name: rng.integers(-4, 5, (size, size)).astype(object) for name in "ABC"}
    left = Evaluator({n: size}, values, "exact")(lhs)
    right = Evaluator({n: size}, values, "exact")(rhs)
    return all(a == b for a, b in zip(left.flat, right.flat))


@settings(max_examples=150, deadline=None)
@given(expressions(), expressions(), st.integers(0, 10_000))
def test_equal_normal_forms_imply_equal_values(lhs, rhs, seed):
    if compare_entries(lhs, rhs).equal:
        for size in (1, 2, 3):
            assert _exact_equal(lhs, rhs, size, seed)


@settings(max_examples=100, deadline=None)
@given(expressions(), st.integers(0, 10_000))
def test_normal_form_sees_transpose_of_transpose_and_products(expr, seed):
    assert compare_entries(expr, T(T(expr))).equal
    assert compare_entries(T(mul(expr, LEAVES[0])), mul(T(LEAVES[0]), T(expr))).equal


def test_kronecker_rules_are_recognised():
    A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", k, k)
    C, D = MatrixSymbol("C", n, n), MatrixSymbol("D", k, k)
    assert compare_entries(mul(kron(A, B), kron(C, D)), kron(mul(A, C), mul(B, D))).equal
    assert compare_entries(T(kron(A, B)), kron(T(A), T(B))).equal
    # SymPy's constructor itself merges I_n ⊗ I_k into I_{nk} (a true rewrite)
    assert compare_entries(kron(Identity(n), Identity(k)), Identity(n * k)).equal
    assert not compare_entries(kron(A, B), kron(T(A), B)).equal


def test_sum_over_an_unused_index_counts_its_range():
    from sympy import OneMatrix

    # 1ᵀ1 = n (a 1×1 matrix whose entry is a sum of n ones)
    ones = OneMatrix(n, 1)
    from symuat.kernel.index_calculus import entry_normal_form

    form, _, _ = entry_normal_form(mul(T(ones), ones))
    assert form.key[0][0] == n


# ----------------------------------------------------------------------------------------------
# Issue 30: the decision procedures return a verdict or a clear error — never a wrong verdict, a
# crash or a hang — on printed sums, sliding-window bands, soft-capping, closed-form constants and
# sizes beyond what can be materialised. Each case below failed on 0a5d9a0.
# ----------------------------------------------------------------------------------------------

import signal  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402
import sympy as sp  # noqa: E402
from sympy import OneMatrix  # noqa: E402

from symuat.errors import KernelInputError, UnsupportedExpressionError  # noqa: E402
from symuat.kernel import decide  # noqa: E402
from symuat.kernel.decide import bands, softcap  # noqa: E402
from symuat.kernel.decide.printed_sums import check_printed_sum, check_printed_terms  # noqa: E402
from symuat.kernel.status import Status, Verdict  # noqa: E402

_k, _m = sp.symbols("k m", integer=True, positive=True)
_w = sp.IndexedBase("w")
_GENERAL = sp.Lambda(_k, _w[_k])


def _printed_sum(explicit, general=_GENERAL):
    """The printed row against Σ_{k=1}^{m} general(k), the definition's sum taken as proved."""
    return check_printed_sum(
        explicit, general, (1, _m), {_m: 3}, definition=Verdict(Status.PROVED, "the definition"),
        entry=lambda s: sum(general(j) for j in range(1, s[_m] + 1)), sizes_list=[{_m: 3}, {_m: 4}])


_OUT_OF_RANGE = {
    "w_{m+1} as the last term": [(1, _w[1]), (2, _w[2]), (_m + 1, _w[_m + 1])],
    "a w_0 in front": [(0, _w[0]), (1, _w[1]), (2, _w[2]), (_m, _w[_m])],
    "a trailing w_{m+5}": [(1, _w[1]), (2, _w[2]), (_m, _w[_m]), (_m + 5, _w[_m + 5])],
}


@pytest.mark.parametrize("label", list(_OUT_OF_RANGE))
def test_a_printed_term_outside_the_summation_range_is_refuted_with_a_counterexample(label):
    explicit = _OUT_OF_RANGE[label]
    assert check_printed_terms(explicit, _GENERAL, (1, _m), {_m: 3}).status is Status.REFUTED
    v = _printed_sum(explicit)
    assert v.status is Status.REFUTED, (label, v.status, v.method)
    cex = v.counterexample
    assert cex is not None and cex.exact_recheck and cex.sizes["m"] in (3, 4)
    # re-check by hand: the printed row and the sum differ at the counterexample's entries
    values = {sp.Symbol(k): val for k, val in cex.values.items()}
    row = sum(t for p, t in explicit if True).subs(_m, cex.sizes["m"])
    row += sum(_w[j] for j in range(1, cex.sizes["m"] + 1) if j not in
               {int(sp.sympify(p).subs(_m, cex.sizes["m"])) for p, _ in explicit})
    want = sum(_w[j] for j in range(1, cex.sizes["m"] + 1))
    plain = lambda e: e.replace(lambda a: isinstance(a, sp.Indexed), lambda a: sp.Symbol(f"w[{a.indices[0]}]"))
    assert (plain(row) - plain(want)).subs(values) != 0


_TRUE_UNEXPANDED = {  # (explicit, general): true printed terms that sp.expand does not reduce
    "m(m−1)/2 vs binomial(m, 2)": ([(1, _w[0]), (2, _w[1]), (_m, _w[_m * (_m - 1) / 2])],
                                   sp.Lambda(_k, _w[sp.binomial(_k, 2)])),
    "m!/(m−1)! vs m": ([(1, _w[1]), (2, _w[2]), (_m, _w[sp.factorial(_m) / sp.factorial(_m - 1)])], _GENERAL),
    "(m+1)!/m! − 1 vs m": ([(1, _w[1]), (2, _w[2]), (_m, _w[sp.factorial(_m + 1) / sp.factorial(_m) - 1])],
                           _GENERAL),
}


@pytest.mark.parametrize("label", list(_TRUE_UNEXPANDED))
def test_a_true_but_unexpanded_printed_term_is_proved_never_refuted(label):
    explicit, general = _TRUE_UNEXPANDED[label]
    assert check_printed_terms(explicit, general, (1, _m), {_m: 3}).status is Status.PROVED
    assert _printed_sum(explicit, general).status is Status.PROVED


def test_a_printed_term_equal_at_every_size_tried_but_not_rewritten_is_not_refuted():
    j = sp.Symbol("j", integer=True)
    explicit = [(1, _w[1]), (2, _w[2]), (_m, _w[sp.Sum(1, (j, 1, _m))])]  # Σ_{j≤m} 1 = m, left unevaluated
    terms = check_printed_terms(explicit, _GENERAL, (1, _m), {_m: 3})
    assert terms.status is Status.NUMERIC_ONLY and "not decided for every size" in terms.method
    assert _printed_sum(explicit).status is Status.PROVED_AT_SIZES


def test_a_wrong_printed_term_is_refuted_at_the_size_where_it_differs_with_a_counterexample():
    explicit = [(1, _w[1]), (2, _w[2]), (_m, _w[sp.factorial(_m) / sp.factorial(_m - 2)])]  # m(m−1) ≠ m
    terms = check_printed_terms(explicit, _GENERAL, (1, _m), {_m: 3})
    assert terms.status is Status.REFUTED and terms.sizes == [{"m": 3}]
    v = _printed_sum(explicit)
    assert v.status is Status.REFUTED and v.counterexample is not None


def _own_mask(N, lo, hi, w):
    """Written from the definition, independently of bands.mask: n attends to n′ iff lo ≤ n−n′ ≤ hi."""
    at = lambda b: None if b is None else int(sp.sympify(b).subs(bands.WINDOW, w))
    lo, hi = at(lo), at(hi)
    return [[int((lo is None or a - b >= lo) and (hi is None or a - b <= hi)) for b in range(N)] for a in range(N)]


_W = bands.WINDOW


@pytest.mark.parametrize("a,b", [((1, 0), (3, 2)), ((_W, _W - 1), (2 * _W, _W)), ((5, -5), (_W + 1, _W))],
                         ids=["constant", "in w", "mixed"])
def test_two_empty_bands_are_the_same_mask(a, b):
    v = bands.check_same_mask(bands.Band(*a, "a"), bands.Band(*b, "b"))
    assert v.status is Status.PROVED
    assert all(not any(map(any, _own_mask(N, *a, w))) and not any(map(any, _own_mask(N, *b, w)))
               for N in range(1, 12) for w in range(1, 5))


@pytest.mark.parametrize("a,b", [((0, _W + 20), (0, _W + 21)), ((0, 100), (0, 101)), ((-_W - 30, 0), (-_W - 31, 0)),
                                 ((0, 40), (0, 40 + _W)), ((5, -5), (None, -1 - 10 * _W))],
                         ids=["w+20/w+21", "100/101", "below", "40/40+w", "empty/unbounded"])
def test_bands_that_differ_only_past_the_sizes_tried_are_refuted_at_the_first_size_they_differ(a, b):
    """Also an empty band against an unbounded one whose offsets start far out (n − n′ ≤ −1 − 10w)."""
    v = bands.check_same_mask(bands.Band(*a, "a"), bands.Band(*b, "b"))
    assert v.status is Status.REFUTED
    N, w = v.counterexample.sizes["N"], v.counterexample.sizes["w"]
    assert _own_mask(N, *a, w) != _own_mask(N, *b, w)
    assert _own_mask(N - 1, *a, w) == _own_mask(N - 1, *b, w)  # the smallest N at this w
    bound = sp.sympify(v.quantities["agree iff"].split("<=")[1])
    assert int(bound.subs({s: w for s in bound.free_symbols})) == N - 1


@pytest.mark.parametrize("lo,hi", [(0, bands.N_TOKENS - 1), (0, sp.Symbol("N")), (sp.Symbol("h"), 3),
                                   (0, sp.Rational(1, 2)), (0, _W ** 2)])
def test_a_band_bound_outside_a_w_plus_b_is_a_clear_error_naming_it(lo, hi):
    with pytest.raises(KernelInputError, match="bound"):
        bands.check_same_mask(bands.Band(lo, hi, "odd"), bands.Band(0, None, "causal"))


@pytest.mark.parametrize("z,k,c", [([40, 41], 1, 1), ([2000, 1999], 1, 1), ([30, 0], 1, 1), ([-50, 3], 2, 2)])
def test_a_softcap_gap_below_float64_is_refuted_exactly_and_rechecked_by_intervals(z, k, c):
    v = softcap.check_capped_shift(z, k, c)
    assert v.status is Status.REFUTED
    assert "transcendental" in v.counterexample.exact_recheck
    import mpmath

    with mpmath.workdps(3000):  # an independent evaluation: the gap is not zero
        change = lambda t: c * (mpmath.tanh(mpmath.mpf(t - k) / c) - mpmath.tanh(mpmath.mpf(t) / c))
        assert change(z[1]) - change(z[0]) != 0


def test_softcap_refuses_a_zero_cap_and_non_integer_inputs():
    with pytest.raises(KernelInputError, match="c = 0"):
        softcap.check_capped_shift([2, 0], 1, 0)
    with pytest.raises(KernelInputError, match="k"):
        softcap.check_capped_shift([2, 0], 0.5, 1)


def test_softcap_with_large_logits_is_decided_in_well_under_a_second():
    start = time.perf_counter()
    assert softcap.check_capped_shift([2000, 0], 1, 1).status is Status.REFUTED
    assert softcap.check_capped_shift([2000, -1999], 1, 3).status is Status.NUMERIC_ONLY  # symmetric about k/2
    assert time.perf_counter() - start < 1.0


_n = dims("n")
_x = MatrixSymbol("x", _n, 1)
_cr = lambda e: sp.root(e, 3)
_RAMANUJAN = (_cr(_cr(2) - 1), _cr(sp.Rational(1, 9)) - _cr(sp.Rational(2, 9)) + _cr(sp.Rational(4, 9)))


@pytest.mark.parametrize("c1,c2", [
    (sp.sqrt(2), sp.sqrt(2 + sp.Rational(1, 10 ** 600))),
    (sp.EulerGamma, sp.Rational(5772156649, 10 ** 10)),
    (_RAMANUJAN[0], _RAMANUJAN[1] + sp.Rational(1, 10 ** 30)),  # a variant, off far below float64
    (_RAMANUJAN[0], _cr(sp.Rational(1, 9)) - _cr(sp.Rational(2, 9)) + _cr(sp.Rational(5, 9))),
], ids=["sqrt2+1e-600", "EulerGamma", "ramanujan+1e-30", "ramanujan 5/9"])
def test_constants_that_differ_are_refuted_quickly_with_a_counterexample(c1, c2):
    start = time.perf_counter()
    v = decide.check_identity(mul(c1, _x), mul(c2, _x))
    assert v.status is Status.REFUTED and v.counterexample.exact_recheck
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("leaf", [OneMatrix(1, 1), _x], ids=["1x1", "leaf"])
def test_ramanujans_nested_cube_roots_are_never_refuted_and_decided_within_seconds(leaf):
    start = time.perf_counter()
    v = decide.check_identity(mul(_RAMANUJAN[0], leaf), mul(_RAMANUJAN[1], leaf))
    assert v.status is not Status.REFUTED
    assert v.status in (Status.PROVED, Status.PROVED_AT_SIZES) or "undecided" in v.method
    assert time.perf_counter() - start < 5


def test_a_complex_coefficient_is_a_clear_error_not_a_type_error():
    with pytest.raises(UnsupportedExpressionError, match="not real"):
        decide.check_identity(mul((-8) ** sp.Rational(1, 3), _x), mul(2, _x))


def test_an_undecided_constant_is_numeric_only_not_an_inconsistency():
    v = decide.check_identity(mul(sp.zeta(3), OneMatrix(1, 1)), mul(sp.Rational(1202056903, 10 ** 9), OneMatrix(1, 1)))
    assert v.status is Status.NUMERIC_ONLY and "undecided" in v.method


@pytest.mark.parametrize("lhs,rhs,size", [
    (mul(Identity(10 ** 6), MatrixSymbol("y", 10 ** 6, 1)), MatrixSymbol("y", 10 ** 6, 1), "1000000×1000000"),
    (mul(MatrixSymbol("y", 10 ** 6, 1), T(MatrixSymbol("y", 10 ** 6, 1))),
     mul(MatrixSymbol("y", 10 ** 6, 1), T(MatrixSymbol("y", 10 ** 6, 1))), "1000000×1 times 1×1000000"),
    (mul(MatrixSymbol("A", 3000, 3000), MatrixSymbol("B", 3000, 3000)),
     mul(MatrixSymbol("B", 3000, 3000), MatrixSymbol("A", 3000, 3000)), "3000×3000"),
], ids=["identity 1e6", "outer 1e6", "3000x3000"])
def test_sizes_beyond_the_budget_are_refused_before_anything_is_allocated(lhs, rhs, size):
    start = time.perf_counter()
    with pytest.raises(KernelInputError, match=size):
        decide.check_identity(lhs, rhs)
    assert time.perf_counter() - start < 5


def test_an_exact_product_honours_an_alarm():
    """NumPy's object matmul never checks for signals; the evaluator's row blocks do."""
    A = MatrixSymbol("A", 400, 400)
    values = {"A": np.random.default_rng(0).integers(-3, 4, (400, 400)).astype(object)}

    class Alarm(Exception):
        pass

    def ring(*_):
        raise Alarm

    old = signal.signal(signal.SIGALRM, ring)
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Alarm):
            Evaluator({}, values, "exact")(mul(A, A, A))  # 1.3e8 multiply-adds: seconds, in blocks
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.perf_counter() - start < 1.5
