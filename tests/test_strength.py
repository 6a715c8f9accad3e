"""#19 strength: every check upgraded to `proved` for symbolic sizes is decided by a procedure that
refutes (or declines to prove) a false variant. One block per upgraded check."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from symuat.kernel import decide
from symuat.kernel.decide.rank_family import BlockWitness, WitnessCase, nonneg, rank_lower_bound
from symuat.errors import KernelInputError
from symuat.kernel.status import Status


# --------------------------------------------------------------------------------------------
# H8.rank — a parametric witness family gives the lower bound for symbolic sizes
# --------------------------------------------------------------------------------------------


def _att():
    from symuat.claims import attention as att

    return att


def test_h8_rank_is_proved_for_symbolic_sizes():
    att = _att()
    v = att.h8_rank()
    assert v.status is Status.PROVED, v.method
    assert "every case" in v.method


@pytest.mark.parametrize("claimed", ["plus1", "minus1", "dk"])
def test_h8_rank_refutes_a_wrong_rank(claimed):
    att = _att()
    bound = sp.Min(att._dq, att._dk)
    c = {"plus1": bound + 1, "minus1": bound - 1, "dk": att._dk}[claimed]
    v = att.h8_rank(claimed=c)
    assert v.status is Status.REFUTED
    assert v.counterexample is not None


def _cases(tall_blocks, wide_blocks):
    att = _att()
    p = nonneg("p")
    tall = BlockWitness((att._dk, p), (att._dk,), tall_blocks)
    wide = BlockWitness((att._dq,), (att._dq, p), wide_blocks)
    return [WitnessCase({att._dq: att._dk + p}, {"W_Qi": tall, "W_Ki": tall}),
            WitnessCase({att._dk: att._dq + p}, {"W_Qi": wide, "W_Ki": wide})]


def test_a_witness_family_that_does_not_attain_the_bound_proves_nothing():
    att = _att()
    zero = _cases({}, {})  # W_Q = W_K = 0: rank 0 < min(d, d_k)
    assert rank_lower_bound(att.mul(att._WQ, att.T(att._WK)), sp.Min(att._dq, att._dk), zero).status is Status.NUMERIC_ONLY
    assert att.h8_rank(family=zero).status is Status.PROVED_AT_SIZES  # the grid witnesses still attain it
    # only the square part of the wide case: [I_d 0] Eᵀ with W_K = 0 in that case
    half = _cases({(0, 0): 1}, {})
    assert att.h8_rank(family=half).status is Status.PROVED_AT_SIZES


def test_cases_must_cover_every_size():
    att = _att()
    one = _cases({(0, 0): 1}, {(0, 0): 1})[:1]  # only d ≥ d_k
    v = rank_lower_bound(att.mul(att._WQ, att.T(att._WK)), sp.Min(att._dq, att._dk), one)
    assert v.status is Status.NUMERIC_ONLY and "do not cover" in v.method
    assert att.h8_rank(family=one).status is Status.PROVED_AT_SIZES


def test_no_rank_rule_for_two_blocks_in_one_block_row():
    d, k = sp.symbols("d k", positive=True, integer=True)
    W = BlockWitness((d,), (d, d), {(0, 0): 1, (0, 1): 1})  # [I I]: rank d, but no rule claims it
    assert W.structural_rank() is None
    # and a product that creates 2·I is fine: ([I I][I; I]) = 2I
    assert (W @ W.T()).blocks == {(0, 0): 2}
    assert (W @ W.T()).structural_rank() == d


def test_a_witness_of_the_wrong_shape_is_an_error():
    att = _att()
    p = nonneg("p")
    bad = BlockWitness((att._dk,), (att._dk,), {(0, 0): 1})  # d_k × d_k, the leaf is d × d_k
    with pytest.raises(KernelInputError):
        rank_lower_bound(att.mul(att._WQ, att.T(att._WK)), sp.Min(att._dq, att._dk),
                         [WitnessCase({att._dq: att._dk + p}, {"W_Qi": bad, "W_Ki": bad})])


def test_block_algebra_agrees_with_materialised_products():
    a, b, c = sp.symbols("a b c", positive=True, integer=True)
    rng = np.random.default_rng(0)
    for _ in range(20):
        parts = (a, b, c)
        A = BlockWitness(parts, parts, {(i, j): int(rng.integers(-2, 3)) for i in range(3) for j in range(3)
                                        if parts[i] == parts[j] and rng.random() < 0.5})
        B = BlockWitness(parts, parts, {(i, i): int(rng.integers(-2, 3)) for i in range(3)})
        at = {a: 2, b: 3, c: 1}
        assert np.array_equal((A @ B).materialise(at), A.materialise(at).dot(B.materialise(at)))
        assert np.array_equal(A.T().materialise(at), A.materialise(at).T)
        r = (A @ B).structural_rank()
        if r is not None:
            assert decide.exact_rank((A @ B).materialise(at)) == int(r.subs(at))


# --------------------------------------------------------------------------------------------
# X6 — the σ-split proved for symbolic sizes; the float64 run is a confirmation beside it
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mutant", ["no-bias", "no-slope"])
def test_x6_split_refutes_its_mutants(mutant):
    from symuat.claims.attribution import sigma_split_statement

    assert decide.check_identity(*sigma_split_statement()).status is Status.PROVED
    v = decide.check_identity(*sigma_split_statement(mutant))
    assert v.status is Status.REFUTED and v.counterexample is not None


def test_x6_sigma_split_is_a_confirmation_beside_the_proof():
    import symuat.claims  # noqa: F401  (registration)
    from symuat.kernel.registry import REGISTRY

    checks = {c.id: c for c in REGISTRY.claims["X6"].checks}
    assert checks["X6.sigma-split"].role == "confirmation"
    assert checks["X6.split"].role == "extension"


# --------------------------------------------------------------------------------------------
# X4.recursion, X5.combined — the composition stated symbolically and decided by the index calculus
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mutant", ["gate-before-attention", "up-before-attention", "no-skip"])
def test_x4_gated_layer_is_eq20_and_its_mutants_are_refuted(mutant):
    from symuat.claims import decoder as dc

    assert decide.check_identity(*dc.gated_layer_statement()).status is Status.PROVED
    v = decide.check_identity(*dc.gated_layer_statement(mutant))
    assert v.status is Status.REFUTED and v.counterexample is not None


@pytest.mark.parametrize("mutant", ["no-bias", "unmapped-U"])
def test_x5_combined_refutes_its_mutants(mutant):
    from symuat.claims import decoder as dc

    assert decide.check_identity(*dc.combined_logits_statement()).status is Status.PROVED
    v = decide.check_identity(*dc.combined_logits_statement(mutant))
    assert v.status is Status.REFUTED and v.counterexample is not None


def test_recursion_checks_rest_on_the_induction_and_are_proved():
    import symuat.claims  # noqa: F401  (registration)
    from symuat.kernel.registry import REGISTRY

    for key in ("X4.recursion[alpha(x)]", "X5.combined"):
        v = REGISTRY.verdict(key)
        assert v.status is Status.PROVED, (key, v.method)
        assert "L2.main.exact[induction]" in v.method
    roles = {c.key: c.role for c in REGISTRY.claims["X4"].checks + REGISTRY.claims["X5"].checks}
    assert roles["X4.recursion[numeric]"] == roles["X5.combined[numeric]"] == "confirmation"


def test_many_summed_indices_get_a_canonical_name_under_renaming():
    """More than 6 summed indices: colour refinement names them canonically (the gated layer needs 7)."""
    import random

    from symuat.kernel.index_calculus import Term, normal_form

    dims = {f"k{i}": sp.Symbol("M") for i in range(8)}
    dims["i0"] = sp.Symbol("N")
    chain = tuple(("E", f"A{i % 3}", (f"k{i}",), (f"k{i + 1}",)) for i in range(7)) + (("E", "x", ("i0",), ("k0",)),)
    base = normal_form([Term(sp.Integer(1), chain, tuple(f"k{i}" for i in range(8)))], dims)
    rng = random.Random(0)
    for _ in range(5):
        perm = list(range(8))
        rng.shuffle(perm)
        ren = {f"k{i}": f"k{perm[i]}" for i in range(8)}
        fs = tuple(("E", f[1], tuple(ren.get(x, x) for x in f[2]), tuple(ren.get(x, x) for x in f[3])) for f in chain)
        order = list(ren.values())
        rng.shuffle(order)
        assert normal_form([Term(sp.Integer(1), fs[::-1], tuple(order))], dims) == base


# --------------------------------------------------------------------------------------------
# D4.rows — the printed rows for every m ≥ 3 (and n)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["row2", "rown"])
def test_d4_rows_proved_for_symbolic_sizes(label):
    from symuat.claims import diamond as dm

    assert dm._eq4_row_symbolic(label).status is Status.PROVED


@pytest.mark.parametrize("which", ["second-term", "last-term", "position"])
def test_d4_rows_mutants_are_refuted(which):
    from symuat.claims import diamond as dm

    m, w, x = dm.m, dm._wi, dm._xi
    printed = {
        "second-term": [(1, w[1, 2] * x[1]), (2, w[3, 2] * x[2]), (m, w[m, 2] * x[m])],  # row 1's w_{31} typo
        "last-term": [(1, w[1, 2] * x[1]), (2, w[2, 2] * x[2]), (m, w[m, 1] * x[m])],
        "position": [(1, w[1, 2] * x[1]), (2, w[2, 2] * x[2]), (m, w[m - 1, 2] * x[m - 1])],
    }[which]
    v = dm._eq4_row_symbolic("row2", printed=printed)
    assert v.status is Status.REFUTED and v.counterexample is not None
    assert "w" not in v.counterexample.values  # entries are named, not the base


# --------------------------------------------------------------------------------------------
# M5.cmp — token-dependence patterns for symbolic sizes
# --------------------------------------------------------------------------------------------


def _conv_lift():
    from symuat.expr.linear import conv1d_symbols

    _, lift, _ = conv1d_symbols()
    syms = {s.name: s for s in lift("row").free_symbols}
    return lift, syms["N"], syms["r"]


@pytest.mark.parametrize("order", ["row", "col"])
def test_m5_conv_band_and_a_wider_band_is_refuted(order):
    from symuat.kernel.decide.token_pattern import check_token_pattern, n_in, n_out

    lift, N, r = _conv_lift()
    d = n_out - n_in
    assert check_token_pattern("conv", lift(order), N, [r - d, r + d]).status is Status.PROVED
    for wrong in ([r + 1 - d, r + 1 + d], [r - 1 - d, r - 1 + d], [r - d, r + d, d]):
        v = check_token_pattern("conv", lift(order), N, wrong)
        assert v.status is Status.REFUTED and v.counterexample is not None, wrong
        assert v.counterexample.sizes["N"] <= 4  # small, readable


@pytest.mark.parametrize("mask,right,wrong", [("bidir", [], ["n-n'"]), ("causal", ["n-n'"], [])])
def test_m5_mha_patterns_and_the_swapped_ones(mask, right, wrong):
    from symuat.expr.attention import mha_symbols
    from symuat.kernel.decide.token_pattern import check_token_pattern, n_in, n_out

    s = mha_symbols("std", mask)
    conv = lambda cl: [n_out - n_in for _ in cl]
    assert check_token_pattern("mha", s.W_HVO("row"), s.N, conv(right)).status is Status.PROVED
    v = check_token_pattern("mha", s.W_HVO("row"), s.N, conv(wrong))
    assert v.status is Status.REFUTED and v.counterexample is not None
    # the other direction of causality is refuted too
    if mask == "causal":
        assert check_token_pattern("mha", s.W_HVO("row"), s.N, [n_in - n_out]).status is Status.REFUTED


def test_m5_cmp_is_proved():
    import symuat.claims  # noqa: F401  (registration)
    from symuat.kernel.registry import REGISTRY

    assert REGISTRY.verdict("M5.cmp").status is Status.PROVED


# --------------------------------------------------------------------------------------------
# M1.pic — the picture for symbolic N and M ≥ 2 (row flattening)
# --------------------------------------------------------------------------------------------


def test_m1_pic_proved_and_its_mutants_refuted():
    from symuat.claims import linear as ln

    assert ln.m1_pic_symbolic("dia").status is Status.PROVED
    for kw in ({"shift": 2}, {"shift": 0}, {"first_row": 1}):
        v = ln.m1_pic_symbolic("dia", **kw)
        assert v.status is Status.REFUTED and v.counterexample is not None, kw
    v = ln.m1_pic_symbolic("duat")  # the duat sense: W' = W ⊗ I_M, whose column 1 is w_{k,1}, not w_{1,k}
    assert v.status is Status.REFUTED and v.counterexample is not None


def test_basis_vector_is_a_fixed_position_and_undefined_beyond_its_length():
    from sympy import MatrixSymbol

    from symuat.expr.algebra import dims, mul
    from symuat.expr.basis import Basis

    N = dims("N")
    W = MatrixSymbol("W", N, N)
    # W e_1 is column 1, not column 2: refuted
    assert decide.check_identity(mul(W, Basis(0, N)), mul(W, Basis(1, N))).status is Status.REFUTED
    assert decide.check_identity(mul(W, Basis(1, N)), mul(W, Basis(1, N))).status is Status.PROVED


# --------------------------------------------------------------------------------------------
# A4.eq20 — the holding reading for every depth
# --------------------------------------------------------------------------------------------


def test_a4_eq20_holding_reading_is_proved_and_its_mutants_refuted():
    import symuat.claims  # noqa: F401  (registration)
    from symuat.claims import applications as ap
    from symuat.kernel.registry import REGISTRY

    assert REGISTRY.verdict("A4.eq20[Δ=induced,b2=recomputed,idx=j,op=times]").status is Status.PROVED
    for mutant in ("b2=kept", "idx=j+1"):
        v = decide.check_identity(*ap.a4_eq20_statement(mutant))
        assert v.status is Status.REFUTED and v.counterexample is not None, mutant


def test_a4_eq20_independence_step_can_fail():
    """The step 'A_L, c_L involve no W2' is a dependence check that refutes when they do (V_L = W2_L A_{L-1})."""
    from sympy import MatrixSymbol

    from symuat.expr.algebra import dims, mul

    D, F = dims("D F")
    W2, Ap = MatrixSymbol("W2_L", F, D), MatrixSymbol("A_{L-1}", D, D)
    assert decide.check_dependence(mul(W2, Ap), "W2_L", depends=False).status is Status.REFUTED


@pytest.mark.parametrize("mutant", ["no-post", "gate-before-attention"])
def test_x3_sandwich_layer_is_eq20_and_its_mutants_are_refuted(mutant):
    from symuat.claims import decoder as dc

    assert decide.check_identity(*dc.gated_layer_statement(sandwich=True)).status is Status.PROVED
    v = decide.check_identity(*dc.gated_layer_statement(mutant, sandwich=True))
    assert v.status is Status.REFUTED and v.counterexample is not None


def test_a_dependence_under_hypotheses_needs_a_witness_on_them():
    """H·1 (row sums of H) is constant when the rows of H sum to 1: under that hypothesis no
    witness may show it depends on H (a witness off the hypothesis would), and without it one does;
    H·1 + H·v (v a fixed leaf) still depends on H under the hypothesis."""
    from sympy import MatrixSymbol, OneMatrix

    from symuat.claims.attention import rows_sum_to_one
    from symuat.expr.algebra import add, dims, mul

    N = dims("N")
    H, v = MatrixSymbol("H", N, N), MatrixSymbol("v", N, 1)
    rows = mul(H, OneMatrix(N, 1))
    on = decide.check_dependence(rows, "H", depends=True, hypotheses=[rows_sum_to_one("bidir")])
    assert on.status is not Status.PROVED
    assert decide.check_dependence(rows, "H", depends=True).status is Status.PROVED
    both = decide.check_dependence(add(rows, mul(H, v)), "H", depends=True, hypotheses=[rows_sum_to_one("bidir")])
    assert both.status is Status.PROVED
    witness = both.quantities["witness"]
    for H_value in (witness["values"]["first"]["H"], witness["values"]["second H"]):
        assert all(sum(row) == 1 for row in np.asarray(H_value, dtype=object).tolist())
