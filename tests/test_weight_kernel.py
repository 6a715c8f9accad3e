"""Soundness of the kernel pieces behind spec §9: each proves what is true and refutes a false
variant (head-axis maps, RoPE blocks and the converter's permutation, fused layouts, banded masks,
soft-capping, diagonal scalings, the row-stochastic hypothesis)."""

import numpy as np
import pytest
import sympy as sp
from sympy import Identity, MatrixSymbol, OneMatrix

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.decoder import Diag
from symuat.expr.heads import BlockSymbol, HeadMatrix, HeadSum
from symuat.kernel import decide
from symuat.kernel.decide import bands, softcap
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.head_maps import (fused_column_order, fused_to_separate, llama_cpp_permute, llama_cpp_unpermute,
                                     repeat_interleave_index, repeat_interleave_map, rope_permutation, tile_index,
                                     tile_map)
from symuat.kernel.hypotheses import LineSums
from symuat.kernel.decide.rotations import refute_with_rotations
from symuat.kernel.rotary import PairRotation, rotation_blocks
from symuat.kernel.status import Status

g, r, e, h, c, d, M, N = dims("g r e h c d M N")


def _eval(expr, sizes, values=None):
    return Evaluator(sizes, values or {}, "float")(expr)


@pytest.mark.parametrize("G,R", [(1, 1), (2, 3), (3, 2), (4, 1)])
def test_head_maps_are_the_index_maps(G, R):
    ri = _eval(repeat_interleave_map(g, r), {g: G, r: R})
    ti = _eval(tile_map(g, r), {g: G, r: R})
    assert ri.argmax(axis=1).tolist() == repeat_interleave_index(G * R, G).tolist() == [i // R for i in range(G * R)]
    assert ti.argmax(axis=1).tolist() == tile_index(G * R, G).tolist() == [i % G for i in range(G * R)]
    assert (ri.sum(axis=1) == 1).all() and (ti.sum(axis=1) == 1).all()


def test_repeat_interleave_is_not_tiling_and_agrees_only_when_one_axis_is_trivial():
    v = decide.check_identity(repeat_interleave_map(g, r), tile_map(g, r))
    assert v.status is Status.REFUTED and v.counterexample.sizes["g"] >= 2 and v.counterexample.sizes["r"] >= 2
    for G, R in [(1, 3), (3, 1)]:
        assert np.array_equal(_eval(repeat_interleave_map(g, r), {g: G, r: R}), _eval(tile_map(g, r), {g: G, r: R}))
    with pytest.raises(ValueError):
        repeat_interleave_index(6, 4)


def test_rope_permutation_is_llama_cpp_permute_and_unpermute_inverts_it():
    rng = np.random.default_rng(0)
    for H, E in [(1, 2), (3, 2), (2, 4)]:
        W = rng.standard_normal((5, H * 2 * E))  # y = x W: columns are the stored weight's rows
        P = _eval(rope_permutation(h, e), {h: H, e: E})
        assert np.array_equal(W @ P, llama_cpp_permute(W.T, H).T)
        assert np.array_equal(llama_cpp_unpermute(llama_cpp_permute(W.T, H), H), W.T)
    # GQA: the converter's own switch to n_head_kv
    K = rng.standard_normal((2 * 8, 3))
    assert np.array_equal(llama_cpp_permute(K, 6, 2), llama_cpp_permute(K, 2))
    assert not np.array_equal(llama_cpp_permute(K, 4), llama_cpp_permute(K, 2))


def test_pair_rotation_layouts_and_the_permutation():
    rho = rotation_blocks(np.array([0.3, 1.1]))
    Rh = _eval(PairRotation("rho", e, "half"), {e: 2}, {"rho": rho})
    Ri = _eval(PairRotation("rho", e, "interleaved"), {e: 2}, {"rho": rho})
    q = np.arange(1.0, 5.0)
    # half-split: pairs (k, k+e); interleaved: (2k, 2k+1); rows rotate as (a cos − b sin, a sin + b cos)
    c0, s0 = np.cos(0.3), np.sin(0.3)
    assert np.allclose((q @ Rh)[[0, 2]], [q[0] * c0 - q[2] * s0, q[0] * s0 + q[2] * c0])
    assert np.allclose((q @ Ri)[[0, 1]], [q[0] * c0 - q[1] * s0, q[0] * s0 + q[1] * c0])
    P = rope_permutation(1, e)
    assert decide.check_identity(mul(T(P), PairRotation("rho", e, "half"), P),
                                 PairRotation("rho", e, "interleaved")).status is Status.PROVED
    # false variants: the layouts themselves, and the permutation the wrong way round (K_{e,2})
    assert decide.check_identity(PairRotation("rho", e, "half"),
                                 PairRotation("rho", e, "interleaved")).status is Status.REFUTED
    wrong = kron(Identity(1), T(rope_permutation(1, e).args[1]))
    assert decide.check_identity(mul(T(wrong), PairRotation("rho", e, "half"), wrong),
                                 PairRotation("rho", e, "interleaved")).status is Status.REFUTED


def test_refutation_on_true_rotations_is_exact_and_never_refutes_a_true_statement():
    q = BlockSymbol("q", (1,), (2, e))
    R1, R2 = PairRotation("rho", e, "half"), PairRotation("rho2", e, "half")
    true = refute_with_rotations(mul(q, R1, T(R1)), q, [{e: 1}, {e: 2}])  # RRᵀ = I holds for rotations only
    assert true.status is Status.NUMERIC_ONLY
    assert decide.check_identity(mul(q, R1, T(R1)), q).status is Status.REFUTED  # not for generic blocks
    false = refute_with_rotations(mul(q, R1, R2), mul(q, R2), [{e: 1}, {e: 2}])
    assert false.status is Status.REFUTED and "rational" in false.counterexample.reason
    blocks = false.counterexample.values["rho"].reshape(-1, 2, 2)
    for b in blocks:  # every block of the witness is a rotation, exactly
        assert b[0, 0] ** 2 + b[0, 1] ** 2 == 1 and b[0, 0] == b[1, 1] and b[0, 1] == -b[1, 0]


def test_fused_layout_permutation():
    P = _eval(fused_to_separate(h, c, d), {h: 3, c: 3, d: 2})
    F = np.arange(18.0)[None, :]
    assert np.array_equal(F @ P, F[:, fused_column_order(3, 3, 2)])
    assert (F @ P)[0, :2].tolist() == [0.0, 1.0] and (F @ P)[0, 2:4].tolist() == [6.0, 7.0]  # q_1, then q_2
    Fs = BlockSymbol("F", (M,), (h, c, d))
    # the flat split reads (h, c, d) as (c, h, d): refuted, with h ≥ 2 in the witness
    v = decide.check_identity(mul(Fs, fused_to_separate(h, c, d)), BlockSymbol("F", (M,), (h, c, d)))
    assert v.status is Status.REFUTED and v.counterexample.sizes["h"] >= 2


def test_bands_decide_the_condition_and_refute_a_false_equality():
    w = bands.WINDOW
    lt, le = bands.Band(0, w - 1, "lt"), bands.Band(0, w, "le")
    assert bands.agreement_bound(lt, le) == w
    assert bands.check_same_mask(lt, bands.Band(0, w - 1, "same")).status is Status.PROVED
    v = bands.check_same_mask(lt, le)
    assert v.status is Status.REFUTED and v.corrected.verdict.status is Status.PROVED
    N, W = v.counterexample.sizes["N"], v.counterexample.sizes["w"]
    assert N == W + 1  # the smallest N past the window
    assert not np.array_equal(bands.mask(N, lt, {w: W}), bands.mask(N, le, {w: W}))
    for W in range(1, 5):  # the condition, exhaustively
        for N in range(1, 8):
            same = np.array_equal(bands.mask(N, lt, {w: W}), bands.mask(N, le, {w: W}))
            assert same == (N <= W)
    two = bands.Band(-w, w, "two-sided")
    assert bands.agreement_bound(le, two) == 1


def test_softcap_shift_is_refuted_exactly_and_the_plain_shift_is_not():
    assert softcap.softmax_shift_invariance().status is Status.PROVED
    assert softcap.check_capped_shift([2, 0, -1], 3, None).status is Status.NUMERIC_ONLY
    v = softcap.check_capped_shift([2, 0], 1, 1)
    assert v.status is Status.REFUTED and "transcendental" in v.counterexample.exact_recheck
    # symmetric logits around the shift: the gap vanishes (tanh is odd), and the procedure says so
    assert softcap.check_capped_shift([1, 1], 1, 2).status is Status.NUMERIC_ONLY
    # float64 agrees with the exact verdict: the probabilities differ
    z, k, cap = np.array([2.0, 0.0]), 1.0, 1.0
    p = lambda x: np.exp(cap * np.tanh(x / cap)) / np.exp(cap * np.tanh(x / cap)).sum()
    assert abs(p(z - k) - p(z)).max() > 1e-3


def test_diagonal_scaling_sides():
    s, X, gam = MatrixSymbol("s", N, 1), MatrixSymbol("X", N, M), MatrixSymbol("gamma", M, 1)
    W = MatrixSymbol("W", M, M)
    assert decide.check_identity(mul(Diag(s), X, Diag(gam), W), mul(Diag(s), X, mul(Diag(gam), W))).status \
        is Status.PROVED
    assert decide.check_identity(mul(Diag(s), X, Diag(gam), W), mul(Diag(s), X, W, Diag(gam))).status \
        is Status.REFUTED
    # a left (per-token) scale is not a right (per-feature) one
    assert decide.check_identity(mul(Diag(s), X), mul(X, Diag(gam))).status is Status.REFUTED


def test_row_stochastic_hypothesis_is_needed_and_columns_do_not_do():
    i = sp.Symbol("i", integer=True)
    H = HeadMatrix("H", i, h, N, N)
    b = MatrixSymbol("b", 1, M)
    one = OneMatrix(N, 1)
    lhs, rhs = HeadSum(i, h, mul(H, one, b)), mul(h, one, b)
    assert decide.check_identity(lhs, rhs, hypotheses=[LineSums("H")]).status is Status.PROVED
    assert decide.check_identity(lhs, rhs).status is Status.REFUTED
    assert decide.check_identity(lhs, rhs, hypotheses=[LineSums("H", "columns")]).status is Status.REFUTED


def test_sigmoid_instances_are_exact_and_never_refute_a_true_statement():
    from symuat.expr.decoder import Hadamard
    from symuat.expr.elementwise import Sigma

    X, W, G = MatrixSymbol("X", N, M), MatrixSymbol("W", M, d), MatrixSymbol("gamma", M, 1)
    silu = lambda P: Hadamard(P, Sigma(P))
    folded = silu(mul(X, mul(Diag(G), W)))
    sizes = [{N: 1, M: 2, d: 1}, {N: 2, M: 2, d: 2}]
    assert softcap.refute_with_sigmoid(silu(mul(X, Diag(G), W)), folded, sizes).status is Status.NUMERIC_ONLY
    v = softcap.refute_with_sigmoid(silu(mul(X, W)), folded, sizes)
    assert v.status is Status.REFUTED and "transcendental" in v.counterexample.exact_recheck
    assert softcap.sigmoid_in_e(0) == sp.Rational(1, 2)


# -- a block of one axis (AxisBlock): WP6's per-group layout, WP8's partial rotary ------------------


def test_axis_block_is_the_block_embedding_and_refuses_a_block_that_does_not_fit():
    from symuat.kernel.head_maps import AxisBlock, per_group_split

    E = _eval(AxisBlock(r + 2, r, 1), {r: 3})
    assert E.shape == (5, 1) and E[:, 0].tolist() == [0, 0, 0, 1, 0]
    E = _eval(AxisBlock(2 * e + d, 0, (2, e)), {e: 2, d: 1})  # a (2, e) block, row-major j = t·e + k
    assert np.array_equal(E, np.eye(5)[:, :4])
    for bad in ((r, 1, r), (r + 1, r, 2), (r, r - 1, 2)):
        with pytest.raises(ValueError, match="does not fit|must be"):
            AxisBlock(*bad)
    # the per-group split: W_Q, W_K, W_V columns of [q_{j,1..r} k_j v_j]_{j<g}, against NumPy's reshape
    G, R, D = 2, 3, 2
    F = np.arange(4 * G * (R + 2) * D, dtype=float).reshape(4, -1)
    F4 = F.reshape(4, G, R + 2, D)
    sizes = {g: G, r: R, d: D}
    assert np.array_equal(F @ _eval(per_group_split(g, r, d, "q"), sizes), F4[:, :, :R].reshape(4, -1))
    assert np.array_equal(F @ _eval(per_group_split(g, r, d, "k"), sizes), F4[:, :, R].reshape(4, -1))
    assert np.array_equal(F @ _eval(per_group_split(g, r, d, "v"), sizes), F4[:, :, R + 1].reshape(4, -1))


def test_axis_block_rules_prove_the_split_and_refute_every_wrong_block():
    from symuat.kernel.head_maps import AxisBlock, per_group_split

    Q, K, V = (BlockSymbol(n, (M,), s) for n, s in (("W_Q", (g, r, d)), ("W_K", (g, d)), ("W_V", (g, d))))
    P = {t: per_group_split(g, r, d, t) for t in "qkv"}
    F = add(*(mul(W, T(P[t])) for t, W in zip("qkv", (Q, K, V))))
    for t, W in zip("qkv", (Q, K, V)):
        assert decide.check_identity(mul(F, P[t]), W).status is Status.PROVED
    wrong = {"K read one block early (the last query head)": (kron(Identity(g), AxisBlock(r + 2, r - 1, 1), Identity(d)), K),
             "V read for K": (P["v"], K),
             "Q shifted by one block": (kron(Identity(g), AxisBlock(r + 2, 1, r), Identity(d)), Q)}
    for what, (sel, want) in wrong.items():
        v = decide.check_identity(mul(F, sel), want)
        assert v.status is Status.REFUTED and v.counterexample.exact_recheck, what
    # overlapping but different blocks are left alone by the rule (not zero, not a delta): refuted by instances
    A = AxisBlock(r + 2, 0, r)
    B = AxisBlock(r + 2, 1, r)
    X = MatrixSymbol("X", r, r)
    assert decide.check_identity(mul(T(A), B, X), X).status is Status.REFUTED
    assert decide.check_identity(mul(T(A), A, X), X).status is Status.PROVED
    assert decide.check_identity(mul(T(B), A), mul(T(A), B)).status is Status.REFUTED  # a shift, not symmetric


def test_completeness_of_blocks_is_not_claimed():
    """E_qE_qᵀ + E_kE_kᵀ + E_vE_vᵀ = I holds, but the engine has no rule for it: it must not claim a
    proof it cannot give, nor refute a true statement (instances find no counterexample)."""
    from symuat.kernel.head_maps import AxisBlock

    Eq, Ek, Ev = AxisBlock(r + 2, 0, r), AxisBlock(r + 2, r, 1), AxisBlock(r + 2, r + 1, 1)
    v = decide.check_identity(add(mul(Eq, T(Eq)), mul(Ek, T(Ek)), mul(Ev, T(Ev))), Identity(r + 2))
    assert v.status is not Status.REFUTED


def test_block_lemma_for_symbolic_angles():
    from symuat.kernel.decide.rotations import block, check_block_lemma

    a, b = sp.symbols("alpha beta", real=True)
    assert check_block_lemma(block(a).T * block(b), block(b - a), (a, b)).status is Status.PROVED
    assert check_block_lemma(block(a) * block(b), block(a + b), (a, b)).status is Status.PROVED
    v = check_block_lemma(block(a).T * block(b), block(a - b), (a, b))  # the wrong direction
    assert v.status is Status.REFUTED and v.counterexample.exact_recheck
    # needs cos²+sin²=1, which the procedure does not use: not proved (and never refuted)
    assert check_block_lemma(block(a).T * block(a), sp.eye(2), (a,)).status is Status.NUMERIC_ONLY


def test_partial_rotary_structure_is_proved_and_a_wrong_split_refuted():
    from symuat.kernel.head_maps import AxisBlock

    p = dims("p")
    J, Jp = AxisBlock(2 * e + p, 0, (2, e)), AxisBlock(2 * e + p, 2 * e, p)
    A, B = PairRotation("rho", e, "half"), PairRotation("rho2", e, "half")
    part = lambda X: add(mul(J, X, T(J)), mul(Jp, T(Jp)))
    assert decide.check_identity(mul(T(part(A)), part(B)), part(mul(T(A), B))).status is Status.PROVED
    v = decide.check_identity(mul(T(part(A)), part(B)), part(mul(A, T(B))))  # the product in the wrong order
    assert v.status is Status.REFUTED
    Jw = AxisBlock(2 * e + p, p, (2, e))  # rotating the last r coordinates instead of the first
    Jpw = AxisBlock(2 * e + p, 0, p)
    assert decide.check_identity(add(mul(Jw, A, T(Jw)), mul(Jpw, T(Jpw))), part(A)).status is Status.REFUTED
