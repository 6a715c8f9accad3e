r"""The matrix-vector method for Linear layers, FFNs and 1-D convolutions (spec M1–M5).

A layer acting on a token matrix :math:`X\in\mathbb R^{N\times M}` by left multiplication
(:math:`X\mapsto WX`, the papers' Eq. 5) or right multiplication (:math:`X\mapsto XW`, the
feature axis) becomes one matrix–vector product on :math:`x'=\operatorname{vec}(X)`:

======================  ================================  ================================
map                     ``row``                           ``col``
======================  ================================  ================================
:math:`X\mapsto WX`     :math:`W\otimes I_M`              :math:`I_M\otimes W`
:math:`X\mapsto XW`     :math:`I_N\otimes W^\top`         :math:`W^\top\otimes I_N`
:math:`b1_M^\top`       :math:`b\otimes 1_M`              :math:`1_M\otimes b`
:math:`1_Nb^\top`       :math:`1_N\otimes b`              :math:`b\otimes 1_N`
======================  ================================  ================================

These are the lifts in the ``duat`` sense (:math:`y'=W'x'`); the ``dia`` sense of UAT/AAAI
(:math:`y'=W'\diamond x'=(W')^\top x'`) uses the transpose, :func:`in_sense`. SymPy builders
return unevaluated Kronecker products (for the proofs); NumPy builders return
:class:`~symuat.expr.kron.KroneckerOperator` objects applied with the vec trick.

>>> import numpy as np
>>> from symuat.expr.vec import vec
>>> W, X = np.array([[1., 2.], [3., 4.]]), np.arange(6.).reshape(2, 3)
>>> L = linear_lift(W, 3, "row")
>>> L
KroneckerOperator(W(2, 2) ⊗ I(3, 3))
>>> np.allclose(L @ vec(X, "row"), vec(W @ X, "row"))
True
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from sympy import Identity, OneMatrix

from symuat.expr.algebra import T, kron
from symuat.errors import ShapeMismatchError
from symuat.expr.kron import KroneckerOperator, KroneckerSum
from symuat.expr.vec import check_order

SENSES = ("dia", "duat")
SIDES = ("left", "right")

# --------------------------------------------------------------------------------------------
# SymPy builders (unevaluated; for proofs)
# --------------------------------------------------------------------------------------------


def lift_left(W, M, order: str):
    """Lift of :math:`X\\mapsto WX` (``duat`` sense) for :math:`X` with ``M`` columns."""
    return kron(W, Identity(M)) if check_order(order) == "row" else kron(Identity(M), W)


def lift_right(W, N, order: str):
    """Lift of :math:`X\\mapsto XW` (``duat`` sense) for :math:`X` with ``N`` rows."""
    return kron(Identity(N), T(W)) if check_order(order) == "row" else kron(T(W), Identity(N))


def lift_bias_left(b, M, order: str):
    """:math:`\\operatorname{vec}(b1_M^\\top)`: a column bias added to every token column."""
    return kron(b, OneMatrix(M, 1)) if check_order(order) == "row" else kron(OneMatrix(M, 1), b)


def lift_bias_right(b, N, order: str):
    """:math:`\\operatorname{vec}(1_Nb^\\top)`: a feature bias added to every token."""
    return kron(OneMatrix(N, 1), b) if check_order(order) == "row" else kron(b, OneMatrix(N, 1))


def in_sense(lifted, sense: str):
    """The matrix the papers call :math:`W'` in ``sense``: itself (``duat``) or its transpose (``dia``)."""
    if sense not in SENSES:
        raise ValueError(f"sense must be one of {SENSES}, not {sense!r}")
    return lifted if sense == "duat" else T(lifted)


# --------------------------------------------------------------------------------------------
# NumPy (structured, matrix-free)
# --------------------------------------------------------------------------------------------


def _matrix(name: str, A) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim != 2:
        raise ShapeMismatchError(name, name, A.shape, "a matrix", ("rows", "cols"), f"{name} must be 2-D")
    return A


def linear_lift(W, M: int, order: str = "row", side: str = "left") -> KroneckerOperator:
    """The lift of :math:`X\\mapsto WX` (``side="left"``, ``M`` = columns of X) or
    :math:`X\\mapsto XW` (``side="right"``, ``M`` = rows of X), as a factored operator."""
    W = _matrix("W", W)
    eye = np.eye(M)
    if side == "left":
        return (KroneckerOperator(W, eye, names=("W", "I")) if check_order(order) == "row"
                else KroneckerOperator(eye, W, names=("I", "W")))
    if side == "right":
        return (KroneckerOperator(eye, W.T, names=("I", "Wᵀ")) if check_order(order) == "row"
                else KroneckerOperator(W.T, eye, names=("Wᵀ", "I")))
    raise ValueError(f"side must be one of {SIDES}, not {side!r}")


def bias_lift(b, count: int, order: str = "row", side: str = "left") -> np.ndarray:
    """:math:`\\operatorname{vec}(b1^\\top)` (``left``) or :math:`\\operatorname{vec}(1b^\\top)` (``right``) as a vector."""
    b = np.asarray(b).reshape(-1)
    ones = np.ones(count)
    first_b = (side == "left") == (check_order(order) == "row")
    return np.kron(b, ones) if first_b else np.kron(ones, b)


def ffn(X, W1, b1, W2, b2, sigma: Callable = np.tanh, side: str = "right") -> np.ndarray:
    """The FFN on a token matrix: ``right``: σ(XW₁+1b₁ᵀ)W₂+1b₂ᵀ; ``left``: W₂σ(W₁X+b₁1ᵀ)+b₂1ᵀ."""
    X, W1, W2 = _matrix("X", X), _matrix("W1", W1), _matrix("W2", W2)
    b1, b2 = np.asarray(b1).reshape(-1), np.asarray(b2).reshape(-1)
    if side == "right":
        _need(X.shape[1] == W1.shape[0], "FFN", "X", X.shape, "W1", W1.shape, "X W1 needs cols(X) == rows(W1)")
        _need(W1.shape[1] == W2.shape[0], "FFN", "W1", W1.shape, "W2", W2.shape, "cols(W1) == rows(W2)")
        _need(b1.size == W1.shape[1], "FFN", "b1", b1.shape, "W1", W1.shape, "len(b1) == cols(W1)")
        _need(b2.size == W2.shape[1], "FFN", "b2", b2.shape, "W2", W2.shape, "len(b2) == cols(W2)")
        return sigma(X @ W1 + b1[None, :]) @ W2 + b2[None, :]
    _need(W1.shape[1] == X.shape[0], "FFN", "W1", W1.shape, "X", X.shape, "W1 X needs cols(W1) == rows(X)")
    _need(W2.shape[1] == W1.shape[0], "FFN", "W2", W2.shape, "W1", W1.shape, "cols(W2) == rows(W1)")
    _need(b1.size == W1.shape[0], "FFN", "b1", b1.shape, "W1", W1.shape, "len(b1) == rows(W1)")
    _need(b2.size == W2.shape[0], "FFN", "b2", b2.shape, "W2", W2.shape, "len(b2) == rows(W2)")
    return W2 @ sigma(W1 @ X + b1[:, None]) + b2[:, None]


def ffn_lifted(x_flat, shape, W1, b1, W2, b2, sigma: Callable = np.tanh, side: str = "right",
               order: str = "row") -> np.ndarray:
    """The FFN in matrix-vector form, :math:`W_2'\\sigma(W_1'x'+b_1')+b_2'`, matrix-free."""
    N, M = shape
    x_flat = np.asarray(x_flat).reshape(-1)
    if x_flat.size != N * M:
        raise ShapeMismatchError("FFN (lifted)", "x'", x_flat.shape, "token matrix", shape,
                                 "x' must have N·M entries")
    count = M if side == "left" else N
    W1, W2 = _matrix("W1", W1), _matrix("W2", W2)
    L1 = linear_lift(W1, count, order, side)
    L2 = linear_lift(W2, count, order, side)
    h = sigma(L1 @ x_flat + bias_lift(b1, count, order, side))
    return L2 @ h + bias_lift(b2, count, order, side)


def _need(ok: bool, op, a, ashape, b, bshape, need):
    if not ok:
        raise ShapeMismatchError(op, a, ashape, b, bshape, need)


# --------------------------------------------------------------------------------------------
# 1-D convolution along the token axis (M5)
# --------------------------------------------------------------------------------------------


def conv1d(X, kernels) -> np.ndarray:
    """:math:`Y_n=\\sum_{t=-r}^{r}X_{n+t}K_t` with zero padding; ``kernels`` has shape ``(2r+1, M, M)``."""
    X = _matrix("X", X)
    kernels = np.asarray(kernels)
    if kernels.ndim != 3 or kernels.shape[0] % 2 != 1 or kernels.shape[1:] != (X.shape[1], X.shape[1]):
        raise ShapeMismatchError("conv1d", "X", X.shape, "kernels", kernels.shape,
                                 "kernels must have shape (2r+1, M, M) with M = cols(X)")
    N = X.shape[0]
    r = kernels.shape[0] // 2
    Y = np.zeros((N, X.shape[1]), dtype=np.result_type(X, kernels))
    if X.dtype == object or kernels.dtype == object:
        Y = np.zeros((N, X.shape[1]), dtype=object)
        Y[...] = 0
    for n in range(N):
        for t in range(-r, r + 1):
            if 0 <= n + t < N:
                Y[n] = Y[n] + X[n + t] @ kernels[t + r]
    return Y


def shift_matrix(N: int, t: int, dtype=float) -> np.ndarray:
    """:math:`(S_t)_{n,n'}=\\delta_{n',n+t}`, so :math:`(S_tX)_n=X_{n+t}` (zero outside)."""
    S = np.zeros((N, N), dtype=dtype)
    if dtype is object:
        S[...] = 0
    for n in range(N):
        if 0 <= n + t < N:
            S[n, n + t] = 1
    return S


def conv1d_lift(kernels, N: int, order: str = "row") -> KroneckerSum:
    """:math:`W'=\\sum_tS_t\\otimes K_t^\\top` (``row``) or :math:`\\sum_tK_t^\\top\\otimes S_t` (``col``)."""
    kernels = np.asarray(kernels)
    r = kernels.shape[0] // 2
    dtype = object if kernels.dtype == object else float
    terms = []
    for t in range(-r, r + 1):
        S, K = shift_matrix(N, t, dtype), kernels[t + r].T
        terms.append(KroneckerOperator(S, K, names=(f"S{t}", f"K{t}ᵀ")) if check_order(order) == "row"
                     else KroneckerOperator(K, S, names=(f"K{t}ᵀ", f"S{t}")))
    return KroneckerSum(terms)


def token_blocks(W_dense: np.ndarray, N: int, M: int, order: str = "row") -> np.ndarray:
    """Which input token each output token depends on: ``B[n, n'] = (block (n, n') of W' ≠ 0)``."""
    W = np.asarray(W_dense)
    if order == "row":
        blocks = W.reshape(N, M, N, M).transpose(0, 2, 1, 3)
    else:
        blocks = W.reshape(M, N, M, N).transpose(1, 3, 0, 2)
    return np.array([[any(v != 0 for v in blocks[a, b].flat) for b in range(N)] for a in range(N)])


# --------------------------------------------------------------------------------------------
# the convolution and its lift as SymPy nodes (symbolic N, M and kernel radius r)
# --------------------------------------------------------------------------------------------

import sympy as _sp  # noqa: E402
from sympy import Basic as _Basic  # noqa: E402
from sympy.core.symbol import Str as _Str  # noqa: E402
from sympy.matrices.expressions import MatrixExpr as _MatrixExpr  # noqa: E402


class ShiftMatrix(_MatrixExpr):
    r""":math:`S_{t-r}\in\mathbb R^{N\times N}`, :math:`(S_{t-r})_{nn'}=\delta_{n',\,n+t-r}` — zero where
    :math:`n+t-r` leaves :math:`[0,N)` (zero padding); ``t`` the kernel tap (a head index, bound by a
    ``HeadSum`` over :math:`2r+1` taps).

    >>> from symuat.expr.algebra import dims
    >>> N, r = dims("N r")
    >>> ShiftMatrix(N, _sp.Symbol("t", integer=True), r).shape
    (N, N)
    """

    def __new__(cls, N, tap, r):
        return _Basic.__new__(cls, _sp.sympify(N), _sp.sympify(tap), _sp.sympify(r))

    @property
    def shape(self):
        return (self.args[0], self.args[0])

    def _symuat_entry(self, ctx, I, J):
        from symuat.kernel.index_calculus import Term

        tap = ctx.env.get(self.args[1])
        if tap is None:
            raise ValueError(f"tap {self.args[1]} outside a sum over the taps")
        return [Term(_sp.Integer(1), (("S", J[0], I[0], tap, -self.args[2]),), ())]

    def _symuat_evaluate(self, ev):
        N, r = ev.size(self.args[0]), ev.size(self.args[2])
        return shift_matrix(N, ev.env[self.args[1]] - r, float if ev.mode == "float" else object)

    def _latex(self, printer):
        return rf"S_{{{printer._print(self.args[1])}-{printer._print(self.args[2])}}}"


class Conv1d(_MatrixExpr):
    r"""The convolution :math:`Y_n=\sum_{t=-r}^{r}X_{n+t}K_t` (zero padding) of an ``N×M`` matrix
    symbol with a family of :math:`2r+1` kernels ``K`` (``M×M``). Its entry rule is the definition,
    :math:`Y_{nm}=\sum_{t<2r+1}\sum_{n',m'}\delta_{n',n+t-r}X_{n'm'}(K_t)_{m'm}`; its evaluation is
    :func:`conv1d` (an independent implementation the kernel cross-checks it against)."""

    def __new__(cls, X, kernels: str, r):
        return _Basic.__new__(cls, X, _Str(kernels), _sp.sympify(r))

    @property
    def X(self):
        return self.args[0]

    @property
    def shape(self):
        return self.X.shape

    def _symuat_leaf(self):
        M = self.X.shape[1]
        return self.args[1].name, (2 * self.args[2] + 1, M, M)

    def _symuat_entry(self, ctx, I, J):
        from symuat.kernel.index_calculus import Term

        N, M = self.X.shape
        tap, n2, m2 = ctx.fresh(2 * self.args[2] + 1), ctx.fresh(N), ctx.fresh(M)
        x_terms = ctx.entry(self.X, (n2,), (m2,))
        extra = (("E", self.args[1].name, (tap, m2), tuple(J)), ("S", n2, I[0], tap, -self.args[2]))
        return [Term(t.coeff, t.factors + extra, t.bound + (tap, n2, m2)) for t in x_terms]

    def _symuat_evaluate(self, ev):
        from symuat.expr.heads import _leaf_value

        M = ev.size(self.X.shape[1])
        K = _leaf_value(ev, self.args[1].name, (2 * ev.size(self.args[2]) + 1, M, M))
        return conv1d(ev(self.X), K)

    def _latex(self, printer):
        return rf"\operatorname{{conv}}_{{{printer._print(self.args[2])}}}({printer._print(self.X)})"


def conv1d_symbols(shift_error: int = 0, transposed: bool = False):
    """``(Conv1d(X, K, r), W', X)`` with :math:`W'=\\sum_tS_{t-r}\\otimes K_t^\\top` (row;
    col: :math:`K_t^\\top\\otimes S_{t-r}`) for symbolic N, M, r; ``shift_error``/``transposed``
    build wrong lifts (mutants)."""
    from sympy import MatrixSymbol

    from symuat.expr.algebra import dims
    from symuat.expr.heads import HeadMatrix, HeadSum

    N, M, r = dims("N M r")
    tap = _sp.Symbol("t", integer=True)
    X = MatrixSymbol("X", N, M)
    K = HeadMatrix("K", tap, 2 * r + 1, M, M)
    S = ShiftMatrix(N, tap, r - shift_error)
    if transposed:
        S = T(S)

    def lift(order):
        body = kron(S, T(K)) if check_order(order) == "row" else kron(T(K), S)
        return HeadSum(tap, 2 * r + 1, body)

    return Conv1d(X, "K", r), lift, X
