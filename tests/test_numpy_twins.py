"""Property tests of the NumPy twins on random shapes, degenerate ones included (1×1, one column)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from symuat.expr.diamond import diamond
from symuat.errors import DiamondUndefinedError, ShapeMismatchError
from symuat.expr.kron import KroneckerOperator
from symuat.expr.linear import conv1d, conv1d_lift, ffn, ffn_lifted, linear_lift
from symuat.expr.vec import commutation_matrix, unvec, vec

dim = st.integers(1, 5)
floats = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def mat(rows, cols):
    return arrays(np.float64, (rows, cols), elements=floats)


@st.composite
def matrix_and_vector(draw):
    m, n = draw(dim), draw(dim)
    return draw(mat(m, n)), draw(mat(m, 1))


@given(matrix_and_vector())
def test_diamond_is_transpose_product_and_swaps(pair):
    W, x = pair
    np.testing.assert_allclose(diamond(W, x), W.T @ x, rtol=1e-12, atol=1e-12)
    if W.shape[1] != 1 or x.shape[0] == 1:  # x ⋄ W detection needs W to be a matrix
        np.testing.assert_array_equal(diamond(x, W, vector_side="left"), diamond(W, x))


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_diamond_matrix_matrix_readings(m, n, p, data):
    A = data.draw(mat(m, n))
    B = data.draw(mat(m, p + 1))
    np.testing.assert_allclose(diamond(A, B, "C-col", vector_side="neither"), A.T @ B, atol=1e-12)
    C = data.draw(mat(n, p + 1))
    np.testing.assert_allclose(diamond(A, C, "C-prod", vector_side="neither"), A @ C, atol=1e-12)


@given(dim, dim, st.sampled_from(["row", "col"]), st.data())
def test_vec_unvec_roundtrip(n, m, order, data):
    X = data.draw(mat(n, m))
    v = vec(X, order)
    assert v.shape == (n * m, 1)
    np.testing.assert_array_equal(unvec(v, (n, m), order), X)
    np.testing.assert_array_equal(vec(X, "row"), commutation_matrix(n, m) @ vec(X, "col"))


@given(dim, dim, dim, dim, st.data())
def test_kronecker_operator_matches_dense(p, r, q, s, data):
    A, B = data.draw(mat(p, r)), data.draw(mat(q, s))
    K = KroneckerOperator(A, B)
    v = data.draw(arrays(np.float64, (r * s,), elements=floats))
    np.testing.assert_allclose(K @ v, np.kron(A, B) @ v, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(K.T @ (K @ v), np.kron(A, B).T @ (np.kron(A, B) @ v), rtol=1e-9, atol=1e-6)
    # nnz(A⊗B) = nnz(A)·nnz(B) is exact over the reals; integer entries avoid float underflow
    Ai, Bi = data.draw(arrays(np.int64, (p, r), elements=st.integers(-2, 2))), data.draw(
        arrays(np.int64, (q, s), elements=st.integers(-2, 2)))
    assert KroneckerOperator(Ai, Bi).nnz() == np.count_nonzero(np.kron(Ai, Bi))
    V = data.draw(arrays(np.float64, (r * s, 2), elements=floats))
    np.testing.assert_allclose(K @ V, np.kron(A, B) @ V, rtol=1e-10, atol=1e-9)


@given(dim, dim, st.sampled_from(["row", "col"]), st.sampled_from(["left", "right"]), st.data())
def test_linear_lift_is_the_layer(n, m, order, side, data):
    X = data.draw(mat(n, m))
    W = data.draw(mat(n, n) if side == "left" else mat(m, m))
    L = linear_lift(W, m if side == "left" else n, order, side)
    want = W @ X if side == "left" else X @ W
    np.testing.assert_allclose(L @ vec(X, order).ravel(), vec(want, order).ravel(), rtol=1e-10, atol=1e-9)


@settings(deadline=None)
@given(dim, dim, dim, st.sampled_from(["row", "col"]), st.sampled_from(["left", "right"]), st.data())
def test_ffn_lifted_is_the_ffn(n, m, f, order, side, data):
    X = data.draw(mat(n, m))
    if side == "right":
        W1, b1, W2, b2 = data.draw(mat(m, f)), data.draw(mat(f, 1)), data.draw(mat(f, m)), data.draw(mat(m, 1))
    else:
        W1, b1, W2, b2 = data.draw(mat(f, n)), data.draw(mat(f, 1)), data.draw(mat(n, f)), data.draw(mat(n, 1))
    plain = ffn(X, W1, b1, W2, b2, side=side)
    lifted = ffn_lifted(vec(X, order), X.shape, W1, b1, W2, b2, side=side, order=order)
    np.testing.assert_allclose(lifted, vec(plain, order).ravel(), rtol=1e-9, atol=1e-8)


@given(dim, dim, st.integers(0, 2), st.sampled_from(["row", "col"]), st.data())
def test_conv_lift_is_the_convolution(n, m, r, order, data):
    X = data.draw(mat(n, m))
    K = data.draw(arrays(np.float64, (2 * r + 1, m, m), elements=floats))
    lifted = conv1d_lift(K, n, order)
    np.testing.assert_allclose(lifted @ vec(X, order).ravel(), vec(conv1d(X, K), order).ravel(),
                               rtol=1e-9, atol=1e-8)


def test_shape_errors_name_operands_and_shapes():
    with pytest.raises(ShapeMismatchError, match=r"W has shape \(2, 3\) and x has shape \(4, 1\)"):
        diamond(np.ones((2, 3)), np.ones((4, 1)), names=("W", "x"))
    with pytest.raises(DiamondUndefinedError, match="D5"):
        diamond(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ShapeMismatchError, match="operands must be 2-D"):
        diamond(np.ones(3), np.ones((3, 1)))
    with pytest.raises(ShapeMismatchError, match=r"v has shape \(5,\)"):
        KroneckerOperator(np.ones((2, 2)), np.ones((2, 2))) @ np.ones(5)
    with pytest.raises(ShapeMismatchError, match="unvec"):
        unvec(np.ones(5), (2, 3), "row")
    with pytest.raises(ShapeMismatchError, match=r"X has shape \(2, 3\) and W1 has shape \(4, 5\)"):
        ffn(np.ones((2, 3)), np.ones((4, 5)), np.ones(5), np.ones((5, 3)), np.ones(3))
    with pytest.raises(ValueError, match="'row' or 'col'"):
        vec(np.ones((2, 2)), "diag")
