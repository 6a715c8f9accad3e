r"""The pieces of a decoder layer as matrix-free operators on :math:`\operatorname{vec}_r`, and the
elementwise functions they freeze: shared by every decoder family.

* :class:`TokenDiag` — RMSNorm's linear part frozen at its input (X3), a diagonal lift;
* :class:`Diagonal` — :math:`\operatorname{diag}(d)` (the frozen up-projection of a gated MLP, X4);
* :class:`GQAOperator` — grouped-query attention at fixed patterns, :math:`\sum_iH_i\otimes B_i^\top` (X1);
* :func:`rope_inv_freq`, :func:`rope_angles`, :func:`apply_rope` — RoPE (X2), both layouts;
* :func:`rms_scales`, :func:`softmax_causal`;
* :data:`ACTIVATIONS` — the activations a family may name (``silu``, ``gelu``, ``gelu_tanh``, ``relu``);
* :func:`adjoint` — :math:`op^\top v` through sums and compositions (the transposed chains of X6).
"""

from __future__ import annotations

import functools

from typing import Callable

import numpy as np

from symuat.numeric.operators import Composed, Identity, Operator, RowMap, Sum
from symuat.numeric.transformer import gelu, gelu_tanh, silu


def relu(x):
    return np.maximum(np.asarray(x, dtype=float), 0.0)


#: σ of a layer by name (symuat's names; a family maps its config's names onto these)
ACTIVATIONS: dict[str, Callable] = {"silu": silu, "gelu": gelu, "gelu_tanh": gelu_tanh, "relu": relu}


RowLinear = RowMap  # Z ↦ ZW on vec_r(Z), with its adjoint (symuat.numeric.operators)


class TokenDiag(Operator):
    r"""RMSNorm's linear part frozen at its input: :math:`\operatorname{diag}(s)\otimes\operatorname{diag}(\gamma)`
    on :math:`\operatorname{vec}_r(Z)` — a *diagonal* lift (no centring, unlike LayerNorm's T12)."""

    def __init__(self, scales, gamma):
        self.scales = np.asarray(scales, dtype=float)
        self.gamma = np.asarray(gamma, dtype=float)
        self.N, self.M = self.scales.size, self.gamma.size
        self.shape = (self.N * self.M, self.N * self.M)

    def diagonal(self) -> np.ndarray:
        return np.outer(self.scales, self.gamma).reshape(-1)

    def rows(self, Z: np.ndarray) -> np.ndarray:
        """The lift applied to token matrices (…, N, M) at once."""
        return self.scales[:, None] * Z * self.gamma

    def matvec(self, v):
        return self.rows(v.reshape(self.N, self.M)).reshape(-1)

    rmatvec = matvec


class Diagonal(Operator):
    """:math:`\\operatorname{diag}(d)`."""

    def __init__(self, d):
        self.d = np.asarray(d, dtype=float)
        self.shape = (self.d.size, self.d.size)

    def matvec(self, v):
        return self.d * v

    rmatvec = matvec


class GQAOperator(Operator):
    r"""Grouped-query attention at fixed patterns, :math:`\sum_iH_i\otimes B_i^\top` with
    :math:`B_i=W_{V,g(i)}W_{O,i}` (X1), never materialised.

    Query head :math:`i` reads the values of K/V group :math:`g(i)`; the shared
    :math:`XW_{V,g}` is computed once per group. ``H`` is ``(h, N, N)``, ``WV`` ``(g, M, d)``,
    ``WO`` ``(h·d, M)`` (``x @ W`` convention).
    """

    def __init__(self, H, WV, WO, group, window: int | None = None):
        self.H = H if isinstance(H, BandPattern) else np.asarray(H, dtype=float)
        self.window = window  # a sliding window: H is banded, applied by its blocks
        self.WV = np.asarray(WV, dtype=float)
        self.WO = np.asarray(WO, dtype=float)
        self.group = np.asarray(group)
        self.h, self.N = self.H.shape[0], self.H.shape[1]
        self.M, self.d = self.WV.shape[1], self.WV.shape[2]
        self.shape = (self.N * self.WO.shape[1], self.N * self.M)

    def apply(self, X: np.ndarray) -> np.ndarray:
        V = X @ self.WV  # (g, N, d): one value projection per K/V group
        O = pattern_matmul(self.H, V[self.group], self.window)  # (h, N, d)
        return O.transpose(1, 0, 2).reshape(self.N, -1) @ self.WO

    def apply_many(self, T: np.ndarray) -> np.ndarray:
        """The operator on a stack of token matrices ``(k, N, M)`` (an all-zero matrix maps to zero
        without being applied: a model without biases has :math:`c = 0`).

        The nonzero matrices go through together, one BLAS product per factor: their values side
        by side, ``(g, N, k·d)``, so each head's pattern is read once for all of them (the same
        sums as :meth:`apply` on each, to float64 rounding).

        >>> rng = np.random.default_rng(0)
        >>> H = np.tril(rng.random((4, 5, 5)))
        >>> op = GQAOperator(H, rng.standard_normal((2, 6, 3)), rng.standard_normal((12, 6)), [0, 0, 1, 1])
        >>> T = rng.standard_normal((3, 5, 6)); T[1] = 0
        >>> got = op.apply_many(T)
        >>> bool(np.allclose(got[0], op.apply(T[0])) and np.allclose(got[2], op.apply(T[2])) and not got[1].any())
        True
        """
        T = np.asarray(T, dtype=float)
        out = np.zeros((T.shape[0], self.N, self.WO.shape[1]))
        live = [j for j in range(T.shape[0]) if T[j].any()]
        if not live:
            return out
        k, N, g, d = len(live), self.N, self.WV.shape[0], self.d
        X = T[live].reshape(k * N, self.M)
        V = (X @ self._WV_all).reshape(k, N, g, d).transpose(2, 1, 0, 3).reshape(g, N, k * d)
        O = pattern_matmul(self.H, V[self.group], self.window)  # (h, N, k·d): every part at once
        concat = O.reshape(self.h, N, k, d).transpose(2, 1, 0, 3).reshape(k * N, self.h * d)
        out[live] = (concat @ self.WO).reshape(k, N, -1)
        return out

    @functools.cached_property
    def _WV_all(self) -> np.ndarray:
        """:math:`[W_{V,1}\\cdots W_{V,g}]` side by side, ``(M, g·d)``: one product for every group's values."""
        return np.ascontiguousarray(self.WV.transpose(1, 0, 2)).reshape(self.M, -1)

    def matvec(self, v):
        return self.apply(v.reshape(self.N, self.M)).reshape(-1)

    def rmatvec(self, v):
        G = (v.reshape(self.N, -1) @ self.WO.T).reshape(self.N, self.h, self.d).transpose(1, 0, 2)
        G = pattern_rmatmul(self.H, G, self.window)  # (h, N, d)
        Gg = np.zeros((self.WV.shape[0],) + G.shape[1:])
        np.add.at(Gg, self.group, G)
        return np.einsum("gnd,gmd->nm", Gg, self.WV).reshape(-1)

    def blocks(self) -> np.ndarray:
        """:math:`B_i=W_{V,g(i)}W_{O,i}`, ``(h, M, M)`` (dense, for small pictures and tests)."""
        WOi = self.WO.reshape(self.h, self.d, -1)
        return np.einsum("hmd,hdo->hmo", self.WV[self.group], WOi)

    def token_block(self, n: int, n2: int) -> np.ndarray:
        """The :math:`M\\times M` block of :math:`(W'_{HVO})` mapping input token ``n2`` to output token ``n``."""
        return np.einsum("h,hko->ok", self.H[:, n, n2], self.blocks())


def adjoint(op: Operator, v: np.ndarray) -> np.ndarray:
    """:math:`op^\\top v` for the operators a layer is built from (sums, compositions, identities,
    and any operator with ``rmatvec``)."""
    if isinstance(op, Identity):
        return v
    if isinstance(op, Composed):
        for o in op.ops:
            v = adjoint(o, v)
        return v
    if isinstance(op, Sum):
        out = adjoint(op.ops[0], v)
        for o in op.ops[1:]:
            out = out + adjoint(o, v)
        return out
    if not hasattr(op, "rmatvec"):
        raise TypeError(f"{op!r} has no adjoint (rmatvec)")
    return op.rmatvec(v)


# --------------------------------------------------------------------------------------------
# RoPE, RMSNorm, the causal softmax
# --------------------------------------------------------------------------------------------


def rope_inv_freq(d: int, theta: float) -> np.ndarray:
    """:math:`\\theta^{-2j/d}`, ``j = 0 … d/2 − 1``, in float64 (HF's formula, without its float32)."""
    return 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))


def rope_angles(N: int, d: int, theta: float | None = None, *, inv_freq=None) -> np.ndarray:
    """:math:`n\\,\\omega_j` in float64, shape ``(N, d/2)``; ``ω`` = ``inv_freq`` or :func:`rope_inv_freq`."""
    inv = rope_inv_freq(d, theta) if inv_freq is None else np.asarray(inv_freq, dtype=np.float64)
    return np.arange(N, dtype=np.float64)[:, None] * inv[None, :]


def apply_rope(Q: np.ndarray, angles: np.ndarray, convention: str) -> np.ndarray:
    """Rotate every head's query/key pairs by :math:`R_n` (``Q``: ``(heads, N, d)``).

    ``interleaved`` pairs :math:`(2j,2j+1)` (GGUF / Meta), ``half`` pairs :math:`(j,j+d/2)` (HF).
    """
    cos, sin = np.cos(angles), np.sin(angles)
    if convention == "interleaved":
        a, b = Q[..., 0::2], Q[..., 1::2]
        out = np.empty_like(Q)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out
    if convention == "half":
        h = Q.shape[-1] // 2
        a, b = Q[..., :h], Q[..., h:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
    raise ValueError(f"RoPE convention must be 'interleaved' or 'half', not {convention!r}")


def rms_scales(Z: np.ndarray, eps: float) -> np.ndarray:
    """:math:`s_n=1/\\sqrt{\\mathrm{mean}(z_n^2)+\\epsilon}` per row (last axis)."""
    return 1.0 / np.sqrt((Z * Z).mean(axis=-1) + eps)


def softmax_causal(S: np.ndarray, window: int | None = None, offset: int = 0) -> np.ndarray:
    """Row softmax of scores ``(…, N, N)`` over the keys :math:`n'\\le n` (and :math:`n-n'<` ``window``).

    The masked entries are never exponentiated: the row maximum and :math:`\\exp` run only where
    the mask keeps (NumPy's ``where=``), the rest is 0 — the same numbers, bit for bit, as
    :math:`\\exp(-\\infty)=0` after filling the mask with :math:`-\\infty`, at half the work
    (the causal mask keeps :math:`N(N+1)/2` of :math:`N^2` entries).

    ``S`` may be a block ``(…, R, C)`` of the scores: rows ``r0 + i`` against keys ``c0 + j`` with
    ``offset`` = ``r0 - c0`` (:func:`band_blocks`); every row's kept keys must lie in the block.

    >>> softmax_causal(np.zeros((3, 3)))
    array([[1.        , 0.        , 0.        ],
           [0.5       , 0.5       , 0.        ],
           [0.33333333, 0.33333333, 0.33333333]])
    >>> softmax_causal(np.zeros((2, 3)), window=2, offset=1)  # queries 1, 2 against keys 0, 1, 2
    array([[0.5, 0.5, 0. ],
           [0. , 0.5, 0.5]])
    """
    keep = _causal_keep(S.shape[-2], S.shape[-1], window, int(offset))
    keep_b = np.broadcast_to(keep, S.shape)
    top = np.max(S, axis=-1, keepdims=True, where=keep_b, initial=-np.inf)
    E = np.zeros(np.broadcast_shapes(S.shape, top.shape))
    np.subtract(S, top, out=E, where=keep_b)
    np.exp(E, out=E, where=keep_b)
    E /= E.sum(axis=-1, keepdims=True)
    return E


@functools.lru_cache(maxsize=8)
def _causal_keep(R: int, C: int, window: int | None, offset: int = 0) -> np.ndarray:
    r = np.arange(R)[:, None] + offset  # row i is query offset + i, relative to the block's first key
    c = np.arange(C)[None, :]
    keep = c <= r
    if window is not None:
        keep &= (r - c) < window
    keep.flags.writeable = False
    return keep


#: the query rows of one block of a banded (sliding-window) or causal pattern
BAND_BLOCK = 256
#: from this many tokens a pattern without a window is formed and applied by causal blocks too
#: (only keys :math:`\le` the block's last query: about half the work of the dense product)
CAUSAL_BLOCKED = 2048


def is_banded(N: int, window: int | None) -> bool:
    """Whether an ``N``-token causal pattern is formed and applied by blocks (:func:`band_blocks`):
    with a sliding window when most of every row is outside it (the blocks cost :math:`N(w+B)`
    of :math:`N^2`), without one from :data:`CAUSAL_BLOCKED` tokens (the causal half).

    >>> is_banded(8192, 512), is_banded(1024, 512), is_banded(1024, None), is_banded(4096, None)
    (True, False, False, True)
    """
    if window is None:
        return N >= CAUSAL_BLOCKED
    return N > 2 * window + BAND_BLOCK


def band_blocks(N: int, window: int | None, block: int | None = None):
    """``(r0, r1, c0)``: query rows ``r0:r1`` see only keys ``c0:r1`` under the causal mask and the
    ``window`` (``c0 = max(0, r0 - window + 1)``; 0 without a window) — blocks that cover every
    nonzero of a causal pattern.

    >>> list(band_blocks(5, 2, block=2))
    [(0, 2, 0), (2, 4, 1), (4, 5, 3)]
    >>> list(band_blocks(5, None, block=2))
    [(0, 2, 0), (2, 4, 0), (4, 5, 0)]
    """
    block = BAND_BLOCK if block is None else block
    for r0 in range(0, N, block):
        yield r0, min(N, r0 + block), 0 if window is None else max(0, r0 - window + 1)


class BandPattern:
    """A causal attention pattern on a long text, kept as the row blocks of :func:`band_blocks`:
    block ``(r0, r1, c0)`` holds rows ``r0:r1``, keys ``c0:r1`` (``(…, R, C)``, leading axes for
    heads); every entry outside the blocks is 0. A sliding window's band takes :math:`N(w+B)`
    numbers instead of :math:`N^2`, a causal pattern about half of them.

    :func:`pattern_matmul`, :func:`pattern_rmatmul` and :func:`pattern_weighted_colsum` work on
    the blocks; ``P[i]`` is head ``i``'s, ``P[..., -1, :]`` the last query's row, and anything
    else falls back to the dense array (``np.asarray(P)``), so a reader that needs the whole
    pattern still gets exactly its numbers.

    >>> S = np.arange(25.0).reshape(5, 5) % 3
    >>> P = BandPattern.from_scores(lambda r0, r1, c0: softmax_causal(S[r0:r1, c0:r1], 2, r0 - c0), 5, 2, block=2)
    >>> bool(np.array_equal(np.asarray(P), softmax_causal(S, 2))), P.shape
    (True, (5, 5))
    """

    def __init__(self, blocks: list, N: int):
        self.blocks = blocks  # [(r0, r1, c0, data (…, r1 - r0, r1 - c0))]
        lead = blocks[0][3].shape[:-2] if blocks else ()
        self.shape = tuple(lead) + (N, N)
        self.ndim = len(self.shape)
        self.dtype = np.dtype(float)

    @classmethod
    def from_scores(cls, block_pattern, N: int, window: int | None, block: int | None = None) -> BandPattern:
        """The pattern from ``block_pattern(r0, r1, c0)``: the softmaxed block of rows ``r0:r1``, keys ``c0:r1``."""
        return cls([(r0, r1, c0, block_pattern(r0, r1, c0)) for r0, r1, c0 in band_blocks(N, window, block)], N)

    @classmethod
    def of_dense(cls, H: np.ndarray, window: int | None) -> BandPattern:
        """The blocks of a dense causal pattern ``H`` (views, no copy): what the products read of it."""
        N = H.shape[-1]
        return cls([(r0, r1, c0, H[..., r0:r1, c0:r1]) for r0, r1, c0 in band_blocks(N, window)], N)

    @property
    def nbytes(self) -> int:
        return sum(b[3].nbytes for b in self.blocks)

    def __array__(self, dtype=None, copy=None):
        out = np.zeros(self.shape)
        for r0, r1, c0, D in self.blocks:
            out[..., r0:r1, c0:r1] = D
        return out if dtype is None else out.astype(dtype)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and self.ndim == 3:  # one head's pattern
            return BandPattern([(r0, r1, c0, D[key]) for r0, r1, c0, D in self.blocks], self.shape[-1])
        last = (isinstance(key, (int, np.integer)) and key == -1 and self.ndim == 2) or (
            isinstance(key, tuple) and len(key) == 3 and key[0] in (Ellipsis, slice(None)) and key[2] == slice(None)
            and isinstance(key[1], (int, np.integer)) and key[1] == -1 and (self.ndim == 3 or key[0] is Ellipsis))
        if last:  # the last query's row
            r0, r1, c0, D = self.blocks[-1]
            out = np.zeros(self.shape[:-2] + (self.shape[-1],))
            out[..., c0:r1] = D[..., -1, :]
            return out
        return np.asarray(self)[key]

    def sum(self, axis=None):
        return np.asarray(self).sum(axis=axis)


def pattern_matmul(H, V: np.ndarray, window: int | None = None) -> np.ndarray:
    """``H @ V`` for causal patterns ``H`` ``(…, N, N)`` and values ``V`` ``(…, N, d)``; on a long
    text (:func:`is_banded`) only the blocks of :func:`band_blocks` are multiplied (the rest of
    ``H`` is 0), so a windowed layer costs :math:`O(N(w+B)d)`, not :math:`O(N^2d)`.

    >>> H = softmax_causal(np.arange(36.0).reshape(6, 6) % 5, window=2)
    >>> V = np.arange(12.0).reshape(6, 2)
    >>> bool(np.allclose(pattern_matmul(H, V, 2), H @ V))
    True
    """
    N = H.shape[-1]
    if not isinstance(H, BandPattern):
        if not is_banded(N, window):
            return H @ V
        H = BandPattern.of_dense(H, window)
    out = np.empty(np.broadcast_shapes(H.shape[:-2], V.shape[:-2]) + (N, V.shape[-1]))
    for r0, r1, c0, D in H.blocks:
        out[..., r0:r1, :] = D @ V[..., c0:r1, :]
    return out


def pattern_rmatmul(H, G: np.ndarray, window: int | None = None) -> np.ndarray:
    """``Hᵀ @ G`` (over the last two axes of ``H``) for causal patterns, by blocks like
    :func:`pattern_matmul`: key column ``c`` is read only by queries ``c … c + window - 1``.

    >>> H = softmax_causal(np.arange(36.0).reshape(6, 6) % 5, window=2)
    >>> G = np.arange(12.0).reshape(6, 2)
    >>> bool(np.allclose(pattern_rmatmul(H, G, 2), H.T @ G))
    True
    """
    N = H.shape[-1]
    if not isinstance(H, BandPattern):
        if not is_banded(N, window):
            return np.swapaxes(H, -1, -2) @ G
        H = BandPattern.of_dense(H, window)
    out = np.zeros(np.broadcast_shapes(H.shape[:-2], G.shape[:-2]) + (N, G.shape[-1]))
    for r0, r1, c0, D in H.blocks:
        out[..., c0:r1, :] += np.swapaxes(D, -1, -2) @ G[..., r0:r1, :]
    return out


def pattern_weighted_colsum(H, G: np.ndarray, V: np.ndarray, window: int | None = None) -> np.ndarray:
    """:math:`\\sum_n H[n, m]\\,(G[n]\\cdot V[m])` for every key ``m``, ``(N,)``, from one head's
    causal pattern ``H`` ``(N, N)``, ``G`` ``(N, d)`` and ``V`` ``(N, d)`` — what a head's
    source-token split reads — without the dense :math:`N\\times N` product on a long text.

    >>> H = softmax_causal(np.arange(36.0).reshape(6, 6) % 5, window=2)
    >>> G, V = np.arange(12.0).reshape(6, 2), np.ones((6, 2))
    >>> bool(np.allclose(pattern_weighted_colsum(H, G, V, 2), (H * (G @ V.T)).sum(axis=0)))
    True
    """
    N = H.shape[-1]
    if not isinstance(H, BandPattern):
        if not is_banded(N, window):
            return (H * (G @ V.T)).sum(axis=0)
        H = BandPattern.of_dense(H, window)
    out = np.zeros(N)
    for r0, r1, c0, D in H.blocks:
        out[c0:r1] += (D * (G[r0:r1] @ V[c0:r1].T)).sum(axis=0)
    return out
