"""Multi-head attention: mutants of the constructions are refuted; the matrix-free operator equals
the forward pass on random shapes (h=1, d_head=1, N=1 included); masks and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Identity

from symuat.expr.algebra import T, kron, mul
from symuat.expr.attention import HEAD, MHAOperator, attention_patterns, mha_fixed_pattern, mha_forward, mha_symbols
from symuat.errors import ShapeMismatchError
from symuat.expr.heads import HeadSum, Selector
from symuat.kernel import decide
from symuat.kernel.status import Status
from symuat.expr.vec import Vec


def _whole(s, order, W):
    return decide.check_identity(Vec(s.mha(), order), mul(W, Vec(s.X, order)))


@pytest.mark.parametrize("projection", ["split", "std"])
@pytest.mark.parametrize("order", ["row", "col"])
def test_construction_is_proved(projection, order):
    s = mha_symbols(projection)
    assert _whole(s, order, s.W_HVO(order)).status is Status.PROVED


def _mutants(s):
    B = s.B()
    strided = kron(Identity(s.d), Selector(HEAD, s.h))  # head i takes features i, i+h, … (wrong slice)
    return {
        "Kronecker factors swapped": HeadSum(HEAD, s.h, kron(T(B), s.H)),
        "B_i not transposed": HeadSum(HEAD, s.h, kron(s.H, B)),
        "H_i transposed": HeadSum(HEAD, s.h, kron(T(s.H), T(B))),
        "W_O transposed": HeadSum(HEAD, s.h, kron(s.H, T(mul(s.S, s.WV, T(s.E), T(s.WO))))),
        "head slice strided instead of contiguous": HeadSum(HEAD, s.h, kron(s.H, T(mul(strided, s.WV, T(s.E), s.WO)))),
        "factors W'_HV W'_O in the other order": mul(s.W_HV("row"), s.W_O("row")),
    }


@pytest.mark.parametrize("label", list(_mutants(mha_symbols("split"))))
def test_mha_mutants_are_refuted(label):
    s = mha_symbols("split")
    verdict = _whole(s, "row", _mutants(s)[label])
    assert verdict.status is Status.REFUTED, label
    assert verdict.counterexample.exact_recheck


def test_other_flattening_is_refuted():
    s = mha_symbols("split")
    verdict = decide.check_identity(Vec(s.mha(), "row"), mul(s.W_HVO("row"), Vec(s.X, "col")))
    assert verdict.status is Status.REFUTED


shapes = st.tuples(st.integers(1, 5), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(shapes, st.sampled_from(["split", "std"]), st.sampled_from(["row", "col"]),
       st.sampled_from(["bidir", "causal"]), st.integers(0, 2**16))
def test_operator_equals_forward(shape, projection, order, mask, seed):
    N, h, d, dv = shape
    M = h * d
    rng = np.random.default_rng(seed)
    width = d if projection == "split" else M
    X = rng.standard_normal((N, M))
    WQ, WK = rng.standard_normal((h, width, 2)), rng.standard_normal((h, width, 2))
    WV, WO = rng.standard_normal((h, width, dv)), rng.standard_normal((h * dv, M))
    out, H = mha_forward(X, WQ, WK, WV, WO, heads=h, projection=projection, mask=mask)
    op = MHAOperator(H, WV, WO, projection=projection, order=order)
    x = X.reshape(-1) if order == "row" else X.reshape(-1, order="F")
    want = out.reshape(-1) if order == "row" else out.reshape(-1, order="F")
    np.testing.assert_allclose(op @ x, want, rtol=1e-10, atol=1e-10)
    if N * M <= 64:
        np.testing.assert_allclose(op.dense() @ x, want, rtol=1e-10, atol=1e-10)


def test_shifted_head_slice_breaks_the_operator():
    rng = np.random.default_rng(0)
    N, h, d = 4, 2, 3
    X = rng.standard_normal((N, h * d))
    WQ, WK, WV = (rng.standard_normal((h, d, d)) for _ in range(3))
    WO = rng.standard_normal((h * d, h * d))
    out, H = mha_forward(X, WQ, WK, WV, WO, heads=h)
    op = MHAOperator(H, WV, WO)
    shifted = np.roll(X, 1, axis=1)  # every head slice shifted by one feature
    assert not np.allclose(op @ shifted.reshape(-1), out.reshape(-1))


def test_masks():
    rng = np.random.default_rng(1)
    N, h, d = 5, 2, 2
    X = rng.standard_normal((N, h * d))
    WQ, WK = rng.standard_normal((h, d, d)), rng.standard_normal((h, d, d))
    H = attention_patterns(X, WQ, WK, h, "causal")
    assert np.all(np.triu(H, 1) == 0) and np.allclose(H.sum(-1), 1)
    keep = np.array([True, True, True, False, False])
    Hp = attention_patterns(X, WQ, WK, h, keep)
    assert np.all(Hp[:, :, ~keep] == 0) and np.allclose(Hp.sum(-1), 1)
    # padding: the real tokens' outputs do not depend on the padded tokens
    WV, WO = rng.standard_normal((h, d, d)), rng.standard_normal((h * d, h * d))
    Y = X.copy()
    Y[~keep] = 100.0
    a, _ = mha_forward(X, WQ, WK, WV, WO, heads=h, mask=keep)
    b, _ = mha_forward(Y, WQ, WK, WV, WO, heads=h, mask=keep)
    np.testing.assert_allclose(a[keep], b[keep], atol=1e-12)
    with pytest.raises(ValueError, match="masks every token"):
        attention_patterns(X, WQ, WK, h, np.zeros(N, dtype=bool))


def test_fixed_pattern_map_is_linear_and_matches_operator():
    rng = np.random.default_rng(2)
    N, h, d = 3, 3, 1
    H = rng.random((h, N, N))
    WV, WO = rng.standard_normal((h, d, 2)), rng.standard_normal((h * 2, h * d))
    X, Y = rng.standard_normal((N, h * d)), rng.standard_normal((N, h * d))
    f = lambda Z: mha_fixed_pattern(Z, H, WV, WO)
    np.testing.assert_allclose(f(X + Y), f(X) + f(Y), atol=1e-12)
    np.testing.assert_allclose(MHAOperator(H, WV, WO) @ X.reshape(-1), f(X).reshape(-1), atol=1e-12)


def test_attention_shape_errors_name_operands():
    X = np.ones((4, 6))
    with pytest.raises(ShapeMismatchError, match=r"X has shape \(4, 6\)"):
        attention_patterns(X, np.ones((2, 2, 2)), np.ones((2, 2, 2)), 4)
    with pytest.raises(ShapeMismatchError, match=r"W_Q has shape \(2, 2, 2\)"):
        attention_patterns(X, np.ones((2, 2, 2)), np.ones((2, 3, 2)), 2)
    with pytest.raises(ShapeMismatchError, match=r"W_O has shape \(5, 6\)"):
        mha_forward(X, np.ones((2, 3, 2)), np.ones((2, 3, 2)), np.ones((2, 3, 2)), np.ones((5, 6)), heads=2)
    with pytest.raises(ShapeMismatchError, match="x' must be a vector"):
        MHAOperator(np.ones((2, 4, 4)), np.ones((2, 3, 3)), np.ones((6, 6))) @ np.ones(5)


def test_explicit_size_strategies_prove_and_refute():
    from symuat.expr import attention_sizes as a

    assert a.prove_index()
    assert a.prove_poly(3, 2, 2, 1) and a.check_pit(3, 2, 2, 1) and a.prove_naive(2, 2, 1, 1)

    def swapped_heads(WV, WO, h, M):  # a mutant: head i's block uses head (i+1)'s rows of W_O
        B = a._blocks(WV, WO, h, M)
        return B[1:] + B[:1]

    def transposed_blocks(WV, WO, h, M):
        return [b.T.copy() for b in a._blocks(WV, WO, h, M)]

    for mutant in (swapped_heads, transposed_blocks):
        assert not a.prove_poly(3, 2, 2, 2, blocks=mutant)
        assert not a.check_pit(3, 2, 2, 2, blocks=mutant)


def test_std_apply_many_is_each_matrix_applied_alone():
    """``std`` MHA on a stack: the matrices' values go side by side through each H_i at once; each
    result is the operator on that matrix alone (and not on its neighbour's)."""
    rng = np.random.default_rng(2)
    h, N, M, dv = 3, 5, 6, 2
    H = rng.random((h, N, N))
    WV, WO = rng.standard_normal((h, M, dv)), rng.standard_normal((h * dv, M))
    op = MHAOperator(H, WV, WO, projection="std")
    Xs = rng.standard_normal((3, N, M))
    got = op.apply_many(Xs)
    dense = sum(np.kron(H[i], (WV[i] @ WO[i * dv:(i + 1) * dv]).T) for i in range(h))  # Σ_i H_i ⊗ B_iᵀ (H5)
    for k in range(3):
        np.testing.assert_allclose(got[k].reshape(-1), dense @ Xs[k].reshape(-1), rtol=1e-12, atol=1e-12)
    assert not np.allclose(got[0], got[1])
