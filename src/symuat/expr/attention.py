r"""Multi-head attention and its matrix-vector form (spec H0–H9).

**As the papers define it** (``split``, spec H0): the input :math:`X\in\mathbb R^{N\times M}` is
split column-wise into :math:`h` head slices :math:`x_i=XS_i`, :math:`S_i=e_i\otimes I_d`,
:math:`d=M/h`; head :math:`i` computes :math:`\hat H_i=H_ix_iW_{Vi}` with
:math:`H_i=\operatorname{softmax}_{\rm row}(x_iW_{Qi}(x_iW_{Ki})^\top/\sqrt M)`; the heads are
concatenated, :math:`\hat H=\sum_i\hat H_iE_i^\top` with :math:`E_i=e_i\otimes I_{d_v}`, and
:math:`\mathring H=\hat HW_O`. **As practice defines it** (``std``, PyTorch's
``nn.MultiheadAttention``, BERT): every head projects the full :math:`X`
(:math:`S_i=I_M`, :math:`W_{Vi}\in\mathbb R^{M\times d_v}`) and scores are scaled by
:math:`1/\sqrt{d_k}`.

**The construction** the papers assert but never write down. With :math:`H_i` held fixed,
:math:`\mathring H=\sum_iH_iXB_i` where :math:`B_i=S_iW_{Vi}E_i^\top W_O=S_iW_{Vi}W_{O,i}`, so by
the vec lemma

.. math::

   \operatorname{vec}_r(\mathring H)=\Big(\sum_iH_i\otimes B_i^\top\Big)\operatorname{vec}_r(X),\qquad
   \operatorname{vec}_c(\mathring H)=\Big(\sum_iB_i^\top\otimes H_i\Big)\operatorname{vec}_c(X),

and likewise :math:`W'_{HV}=\sum_iH_i\otimes(S_iW_{Vi}E_i^\top)^\top`,
:math:`W'_O=I_N\otimes W_O^\top` (row; ``duat`` sense, :math:`y'=W'x'`). The paper's
:math:`W'_{HVO}` (``dia`` sense, :math:`\mathring H'=(W'_{HVO})^\top x'`) is the transpose.

:class:`MHAOperator` applies it matrix-free with memory :math:`O(N^2h+M^2)`; ``dense()``
materialises the :math:`NM\times NM` matrix only when asked.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> N, M, h = 4, 6, 2
>>> X = rng.standard_normal((N, M))
>>> W = {k: rng.standard_normal((h, M // h, M // h)) for k in "QKV"}
>>> WO = rng.standard_normal((M, M))
>>> out, H = mha_forward(X, W["Q"], W["K"], W["V"], WO, heads=h)
>>> op = MHAOperator(H, W["V"], WO)
>>> np.allclose(op @ X.reshape(-1), out.reshape(-1))
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import sympy as sp
from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import T, kron, mul
from symuat.errors import NonFiniteError, ShapeMismatchError
from symuat.expr.heads import BlockSymbol, HeadMatrix, HeadSum, Selector
from symuat.expr.vec import check_order

MASKS = ("bidir", "causal")
PROJECTIONS = ("split", "std")

# --------------------------------------------------------------------------------------------
# SymPy constructions (for the proofs)
# --------------------------------------------------------------------------------------------

HEAD = sp.Symbol("i", integer=True)


class CausalHeadMatrix(HeadMatrix):
    """A family member masked causally: entry :math:`(a,b)` is zero for :math:`b>a`."""

    def _symuat_entry(self, ctx, I, J):
        terms = super()._symuat_entry(ctx, I, J)
        return [t.__class__(t.coeff, t.factors + (("T", I[0], J[0]),), t.bound) for t in terms]

    def _symuat_evaluate(self, ev):
        value = super()._symuat_evaluate(ev)
        mask = np.tril(np.ones(value.shape, dtype=bool))
        out = value.copy()
        out[~mask] = 0
        return out


@dataclass
class MHASymbols:
    """The objects of one MHA statement, for one reading (``split``/``std``, ``bidir``/``causal``)."""

    projection: str
    mask: str
    N: sp.Symbol
    h: sp.Symbol
    d: sp.Expr  # head width of the input slice (split) or the full width M (std)
    dv: sp.Symbol
    X: object
    H: object  # H_i (inside a head sum)
    WV: object  # W_Vi (inside a head sum)
    WO: object
    S: object  # S_i
    E: object  # E_i

    @property
    def M(self):
        return self.X.shape[1]

    def head_output(self):
        """:math:`\\hat H_i=H_i(XS_i)W_{Vi}` (inside a head sum)."""
        return mul(self.H, self.X, self.S, self.WV)

    def concat(self):
        """:math:`\\hat H=\\sum_i\\hat H_iE_i^\\top` (the column concatenation)."""
        return HeadSum(HEAD, self.h, mul(self.head_output(), T(self.E)))

    def mha(self):
        """:math:`\\mathring H=\\hat HW_O` — the definition H0 (with :math:`H_i` fixed)."""
        return mul(self.concat(), self.WO)

    def B(self):
        """:math:`B_i=S_iW_{Vi}E_i^\\top W_O` (so that :math:`\\mathring H=\\sum_iH_iXB_i`)."""
        return mul(self.S, self.WV, T(self.E), self.WO)

    def W_HV(self, order: str):
        """:math:`W'_{HV}` (``duat`` sense): :math:`\\operatorname{vec}(\\hat H)=W'_{HV}\\operatorname{vec}(X)`."""
        C = mul(self.S, self.WV, T(self.E))
        body = kron(self.H, T(C)) if check_order(order) == "row" else kron(T(C), self.H)
        return HeadSum(HEAD, self.h, body)

    def W_O(self, order: str):
        """:math:`W'_O` (``duat`` sense): :math:`\\operatorname{vec}(\\hat HW_O)=W'_O\\operatorname{vec}(\\hat H)`."""
        return kron(Identity(self.N), T(self.WO)) if check_order(order) == "row" else kron(T(self.WO), Identity(self.N))

    def W_HVO(self, order: str):
        """:math:`(W'_{HVO})^\\top` (``duat`` sense): :math:`\\mathring H'=\\sum_iH_i\\otimes B_i^\\top\\,x'` (row)."""
        body = kron(self.H, T(self.B())) if check_order(order) == "row" else kron(T(self.B()), self.H)
        return HeadSum(HEAD, self.h, body)


def mha_symbols(projection: str = "split", mask: str = "bidir") -> MHASymbols:
    """Symbolic MHA objects with symbolic :math:`N,h,d,d_v` (``split``: :math:`M=hd`)."""
    from symuat.expr.algebra import dims

    if projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {PROJECTIONS}, not {projection!r}")
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {MASKS}, not {mask!r}")
    N, h, d, dv = dims("N h d d_v")
    Hcls = CausalHeadMatrix if mask == "causal" else HeadMatrix
    H = Hcls("H", HEAD, h, N, N)
    E = kron(Selector(HEAD, h), Identity(dv))
    if projection == "split":
        X = BlockSymbol("X", (N,), (h, d))
        S = kron(Selector(HEAD, h), Identity(d))
        WV = HeadMatrix("W_V", HEAD, h, d, dv)
        WO = BlockSymbol("W_O", (h, dv), (h, d))
        width = d
    else:
        Mdim = dims("M")
        X = MatrixSymbol("X", N, Mdim)
        S = Identity(Mdim)
        WV = HeadMatrix("W_V", HEAD, h, Mdim, dv)
        WO = BlockSymbol("W_O", (h, dv), (Mdim,))
        width = Mdim
    return MHASymbols(projection, mask, N, h, width, dv, X, H, WV, WO, S, E)


# --------------------------------------------------------------------------------------------
# NumPy: the forward pass
# --------------------------------------------------------------------------------------------


def _need(ok, op, a, ashape, b, bshape, need):
    if not ok:
        raise ShapeMismatchError(op, a, ashape, b, bshape, need)


def _family(W, h: int, name: str, rows: int) -> np.ndarray:
    W = np.asarray(W, dtype=float)
    if W.ndim == 2:
        W = np.broadcast_to(W, (h,) + W.shape)  # one matrix for every head, on request
    if W.ndim != 3 or W.shape[0] != h:
        raise ShapeMismatchError("attention", name, W.shape, "heads", (h,),
                                 f"{name} must have shape (h, rows, cols) or (rows, cols)")
    _need(W.shape[1] == rows, "attention", name, W.shape, "the head input", (rows,),
          f"rows of each {name}_i must equal the head input width {rows}")
    return W


def head_slices(X, h: int) -> np.ndarray:
    """:math:`x_i=XS_i`, stacked: shape ``(h, N, M/h)``."""
    X = np.asarray(X)
    _check_heads(h)
    if X.ndim != 2 or X.shape[1] % h:
        raise ShapeMismatchError("head split", "X", X.shape, "heads", (h,),
                                 "X must be 2-D with a number of columns divisible by h")
    N, M = X.shape
    return X.reshape(N, h, M // h).transpose(1, 0, 2)


def softmax_rows(S: np.ndarray) -> np.ndarray:
    E = S - S.max(axis=-1, keepdims=True)
    np.exp(E, out=E)
    E /= E.sum(axis=-1, keepdims=True)
    return E


def head_products(X, W, h: int, projection: str) -> np.ndarray:
    """:math:`x_iW_i` for every head, shape ``(h, N, k)``, as BLAS products: ``std`` multiplies
    the whole ``X`` by each :math:`W_i` (``X`` is never copied per head), ``split`` each slice."""
    if projection == "std":
        return np.matmul(X, W)
    return np.matmul(head_slices(X, h), W)


def patterns_from(Q, K, scale: float, mask="bidir") -> np.ndarray:
    r""":math:`H_i=\operatorname{softmax}(Q_iK_i^\top\cdot\text{scale})` (masked), shape ``(h, N, N)``.

    Computed a few heads at a time, in place, so the scores being normalised stay in cache
    (at 512 tokens one head's scores are 2 MiB; all twelve, 24 MiB).
    """
    h, N, Nk = Q.shape[0], Q.shape[1], K.shape[1]
    allowed = _mask_bool(mask, N)
    H = np.empty((h, N, Nk))
    step = max(1, (1 << 18) // (N * Nk))  # heads per block: about 2 MiB of scores
    for i in range(0, h, step):
        S = H[i:i + step]
        np.matmul(Q[i:i + step], K[i:i + step].transpose(0, 2, 1), out=S)
        S *= scale
        if allowed is not None:
            np.copyto(S, -np.inf, where=~allowed[None])
        S -= S.max(axis=-1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=-1, keepdims=True)
    return H


def _mask_bool(mask, N: int) -> np.ndarray | None:
    """Allowed (query, key) pairs, shape (N, N); None for no mask."""
    if mask is None or (isinstance(mask, str) and mask == "bidir"):
        return None
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"mask must be 'bidir', 'causal' or a boolean key-padding array, not {mask!r}")
        return np.tril(np.ones((N, N), dtype=bool))
    keep = np.asarray(mask, dtype=bool)
    if keep.shape == (N,):
        if not keep.any():
            raise ValueError("the padding mask masks every token")
        return np.broadcast_to(keep[None, :], (N, N))
    _need(keep.shape == (N, N), "attention mask", "mask", keep.shape, "tokens", (N,),
          "a mask is (N,) key padding or (N, N) allowed pairs")
    return keep


def _check_heads(h) -> int:
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1:
        raise ValueError(f"heads must be a positive integer, not {h!r}")
    return int(h)


def _inputs(X, h, projection):
    X = np.asarray(X, dtype=float)
    _check_heads(h)
    if X.ndim != 2:
        raise ShapeMismatchError("attention", "X", X.shape, "a token matrix", ("N", "M"), "X must be 2-D")
    if X.shape[0] == 0:
        raise ValueError("X has no tokens (N = 0): attention needs at least one token")
    if not np.isfinite(X).all():
        raise NonFiniteError("X has a non-finite entry (NaN or inf): attention of an overflowed input")
    if projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {PROJECTIONS}, not {projection!r}")
    if projection == "split":
        return head_slices(X, h)
    return np.broadcast_to(X, (h,) + X.shape)


def attention_patterns(X, WQ, WK, h: int, mask="bidir", *, projection: str = "split",
                       bQ=None, bK=None, scale: float | None = None) -> np.ndarray:
    """The :math:`H_i` of every head, shape ``(h, N, N)``.

    ``split`` scales by :math:`1/\\sqrt M` (the papers' Eq. 7), ``std`` by :math:`1/\\sqrt{d_k}`
    (the usual convention), unless ``scale`` is given. ``mask`` is ``"bidir"``, ``"causal"``, a
    boolean key-padding vector ``(N,)`` (True = real token) or an ``(N, N)`` boolean array.
    """
    x = _inputs(X, h, projection)
    X = np.asarray(X, dtype=float)
    WQ = _family(WQ, h, "W_Q", x.shape[2])
    WK = _family(WK, h, "W_K", x.shape[2])
    _need(WQ.shape[2] == WK.shape[2], "attention", "W_Q", WQ.shape, "W_K", WK.shape,
          "queries and keys need the same width d_k")
    Q = head_products(X, WQ, h, projection)
    K = head_products(X, WK, h, projection)
    if bQ is not None:
        Q += np.asarray(bQ, dtype=float).reshape(h, 1, -1)
    if bK is not None:
        K += np.asarray(bK, dtype=float).reshape(h, 1, -1)
    if scale is None:
        scale = 1 / np.sqrt(X.shape[1] if projection == "split" else WQ.shape[2])
    return patterns_from(Q, K, scale, mask)


def output_blocks(WV, WO, h: int, M: int, projection: str = "split") -> np.ndarray:
    """:math:`B_i=S_iW_{Vi}W_{O,i}`, shape ``(h, M, M_out)`` (dense :math:`M\\times M` per head)."""
    width = M // h if projection == "split" else M
    WV = _family(WV, h, "W_V", width)
    WO = np.asarray(WO, dtype=float)
    dv = WV.shape[2]
    _need(WO.ndim == 2 and WO.shape[0] == h * dv, "MHA output projection", "W_O", WO.shape,
          "concat", (h * dv,), "rows of W_O must equal h·d_v")
    WOi = WO.reshape(h, dv, WO.shape[1])
    core = np.einsum("hdv,hvo->hdo", WV, WOi)  # W_Vi W_O,i : (h, width, M_out)
    if projection == "std":
        return core
    B = np.zeros((h, M, WO.shape[1]))
    for i in range(h):
        B[i, i * width:(i + 1) * width] = core[i]
    return B


def mha_forward(X, WQ, WK, WV, WO, *, heads: int, projection: str = "split", mask="bidir",
                bQ=None, bK=None, bV=None, bO=None, scale=None):
    """The MHA forward pass; returns ``(output (N, M_out), H (h, N, N))``."""
    h = heads
    H = attention_patterns(X, WQ, WK, h, mask, projection=projection, bQ=bQ, bK=bK, scale=scale)
    x = _inputs(X, h, projection)
    WV = _family(WV, h, "W_V", x.shape[2])
    V = head_products(np.asarray(X, dtype=float), WV, h, projection)
    if bV is not None:
        V += np.asarray(bV, dtype=float).reshape(h, 1, -1)
    heads_out = np.matmul(H, V)
    concat = heads_out.transpose(1, 0, 2).reshape(x.shape[1], -1)
    WO = np.asarray(WO, dtype=float)
    _need(WO.ndim == 2 and WO.shape[0] == concat.shape[1], "MHA output projection", "concat",
          concat.shape, "W_O", WO.shape, "rows of W_O must equal h·d_v")
    out = concat @ WO
    if bO is not None:
        out = out + np.asarray(bO, dtype=float).reshape(1, -1)
    return out, H


def mha_fixed_pattern(X, H, WV, WO, projection: str = "split") -> np.ndarray:
    """:math:`\\mathring H=\\sum_iH_iXB_i` for given patterns ``H`` (h, N, N): linear in ``X``."""
    H = np.asarray(H)
    X = np.asarray(X)
    _need(H.ndim == 3 and H.shape[1:] == (X.shape[0], X.shape[0]), "MHA", "H", H.shape, "X", X.shape,
          "each H_i must be N×N for N tokens")
    B = output_blocks(WV, WO, H.shape[0], X.shape[1], projection)
    return np.einsum("hnm,mk,hko->no", H, X, B, optimize=True)


# --------------------------------------------------------------------------------------------
# NumPy: the matrix-vector operator, kept factored
# --------------------------------------------------------------------------------------------


class MHAOperator:
    r"""The matrix :math:`\sum_iH_i\otimes B_i^\top` (row) / :math:`\sum_iB_i^\top\otimes H_i`
    (col) with :math:`\mathring H'=W'x'` (``duat`` sense), never materialised.

    Memory :math:`O(N^2h+M^2)`: the :math:`h` patterns :math:`H_i`, and the blocks
    :math:`B_i` kept in factored form — with ``split`` each :math:`B_i` has only :math:`d`
    nonzero rows (one :math:`M\times M_{out}` array in all); with ``std`` each has rank
    :math:`d_v` and is kept as :math:`W_{Vi}` and :math:`W_{O,i}`.
    """

    def __init__(self, H, WV, WO, *, projection: str = "split", order: str = "row", WV_all=None):
        H = np.asarray(H, dtype=float)
        if H.ndim != 3 or H.shape[1] != H.shape[2]:
            raise ShapeMismatchError("MHAOperator", "H", H.shape, "patterns", ("h", "N", "N"),
                                     "H must have shape (h, N, N)")
        self.H = H
        self.h, self.N = H.shape[0], H.shape[1]
        WO = np.asarray(WO, dtype=float)
        self.M_out = WO.shape[1] if WO.ndim == 2 else None
        WV = np.asarray(WV, dtype=float)
        width = WV.shape[-2]
        self.M = width * self.h if projection == "split" else width
        self.projection = projection
        self.order = check_order(order)
        WVf = _family(WV, self.h, "W_V", width)
        dv = WVf.shape[2]
        _need(WO.ndim == 2 and WO.shape[0] == self.h * dv, "MHA output projection", "W_O", WO.shape, "concat",
              (self.h * dv,), "rows of W_O must equal h·d_v")
        if projection == "split":
            # B_i is nonzero only on the rows of head i: keep C_i = W_Vi W_O,i, (h, d, M_out) = M×M_out in all
            self.C = np.einsum("hdv,hvo->hdo", WVf, WO.reshape(self.h, dv, -1))
        else:
            # B_i = W_Vi W_O,i has rank d_v: keep the factors, (h, M, d_v) and (h, d_v, M_out) — O(M²) in all
            self.WV, self.WOi = WVf, WO.reshape(self.h, dv, -1)
            # the same factors side by side, [W_V1 … W_Vh] (M, h·d_v) and W_O (h·d_v, M_out): one
            # BLAS product each for all heads
            if WV_all is None:
                WV_all = np.ascontiguousarray(WVf.transpose(1, 0, 2)).reshape(self.M, self.h * dv)
            _need(WV_all.shape == (self.M, self.h * dv), "MHAOperator", "WV_all", WV_all.shape, "W_V",
                  WVf.shape, "WV_all must be the per-head W_Vi side by side")
            self._WV_all = WV_all
            self._WO_all = WO

    @property
    def shape(self) -> tuple[int, int]:
        return (self.N * self.M_out, self.N * self.M)

    def _apply(self, X: np.ndarray) -> np.ndarray:
        return self.apply_many(X[None])[0]

    def apply_many(self, Xs: np.ndarray) -> np.ndarray:
        r""":math:`\sum_iH_iX_kB_i` for a stack of token matrices ``Xs`` (k, N, M) at once: the
        operator applied to k vectors :math:`\operatorname{vec}_r(X_k)`, with one BLAS product
        per factor for the whole stack. Returns (k, N, M_out)."""
        Xs = np.asarray(Xs, dtype=float)
        nonzero = [j for j in range(Xs.shape[0]) if Xs[j].any()]
        if 0 < len(nonzero) < Xs.shape[0]:  # an all-zero part (c = R = 0 at the first layer) maps to zero
            out = self.apply_many(Xs[nonzero])
            full = np.zeros((Xs.shape[0],) + out.shape[1:])
            full[nonzero] = out
            return full
        k, N, h = Xs.shape[0], self.N, self.h
        if self.projection == "split":
            x = Xs.reshape(k, N, h, -1).transpose(0, 2, 1, 3)  # x_i = X S_i per head: (k, h, N, d)
            return np.matmul(np.matmul(self.H, x), self.C).sum(axis=1)  # Σ_i H_i x_i C_i
        dv = self.WOi.shape[1]
        # every matrix's values side by side per head, (h, N, k·d_v): each H_i is read once for all k
        V = (Xs.reshape(k * N, self.M) @ self._WV_all).reshape(k, N, h, dv).transpose(2, 1, 0, 3).reshape(h, N, -1)
        heads = np.matmul(self.H, V)  # H_i X_k W_Vi for every k: (h, N, k·d_v)
        concat = heads.reshape(h, N, k, dv).transpose(2, 1, 0, 3).reshape(k * N, h * dv)
        return (concat @ self._WO_all).reshape(k, N, -1)  # Σ_i H_i X_k W_Vi W_O,i

    def matvec(self, v) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        if v.ndim != 1 or v.size != self.N * self.M:
            raise ShapeMismatchError("MHAOperator matvec", "W'", self.shape, "x'", v.shape,
                                     "x' must be a vector of length N·M")
        X = v.reshape(self.N, self.M) if self.order == "row" else v.reshape(self.N, self.M, order="F")
        Y = self._apply(X)
        return Y.reshape(-1) if self.order == "row" else Y.reshape(-1, order="F")

    __matmul__ = matvec

    def blocks(self) -> np.ndarray:
        """:math:`B_i` as a dense ``(h, M, M_out)`` array."""
        if self.projection == "std":
            return np.einsum("hkv,hvo->hko", self.WV, self.WOi)
        d = self.M // self.h
        B = np.zeros((self.h, self.M, self.C.shape[2]))
        for i in range(self.h):
            B[i, i * d:(i + 1) * d] = self.C[i]
        return B

    def dense(self) -> np.ndarray:
        """Materialise the :math:`NM_{out}\\times NM` matrix (only when asked)."""
        B = self.blocks()
        # h >= 1 heads: the sum is an array, never the start value 0
        if self.order == "row":
            return cast(np.ndarray, sum(np.kron(self.H[i], B[i].T) for i in range(self.h)))
        return cast(np.ndarray, sum(np.kron(B[i].T, self.H[i]) for i in range(self.h)))

    def token_block(self, n: int, n2: int) -> np.ndarray:
        """The :math:`M_{out}\\times M` block mapping input token ``n2`` to output token ``n``."""
        return np.einsum("h,hko->ok", self.H[:, n, n2], self.blocks())
