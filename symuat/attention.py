r"""Multi-head attention as the papers define it (spec H0, the ``split`` formalisation).

The input :math:`X\in\mathbb R^{N\times M}` is split column-wise into :math:`h` head slices
:math:`x_i=XS_i` of width :math:`d=M/h`; head :math:`i` has :math:`H_i=\operatorname{softmax}_{\rm row}
(x_iW_{Qi}(x_iW_{Ki})^\top/\sqrt M)`, :math:`\hat H_i=H_ix_iW_{Vi}`, and
:math:`\mathring H=[\hat H_1,\dots,\hat H_h]W_O`. With every :math:`H_i` held fixed the map
:math:`X\mapsto\mathring H` is linear (:func:`mha_fixed_pattern`).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((4, 6))
>>> H = attention_patterns(X, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), 2)
>>> H.shape, np.allclose(H.sum(axis=2), 1)
((2, 4, 4), True)
"""

from __future__ import annotations

import numpy as np

from symuat.errors import ShapeMismatchError

MASKS = ("bidir", "causal")


def _per_head(W, h: int, name: str) -> np.ndarray:
    W = np.asarray(W, dtype=float)
    if W.ndim == 2:
        return np.broadcast_to(W, (h,) + W.shape)  # one matrix shared by every head, on purpose
    if W.ndim == 3 and W.shape[0] == h:
        return W
    raise ShapeMismatchError("attention", name, W.shape, "heads", (h,),
                             f"{name} must be (d, k) or (h, d, k)")


def head_slices(X, h: int) -> np.ndarray:
    """:math:`x_i=XS_i`, stacked: shape ``(h, N, M/h)``."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] % h:
        raise ShapeMismatchError("head split", "X", X.shape, "heads", (h,),
                                 "X must be 2-D with a number of columns divisible by h")
    N, M = X.shape
    return X.reshape(N, h, M // h).transpose(1, 0, 2)


def softmax_rows(S: np.ndarray) -> np.ndarray:
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def attention_patterns(X, WQ, WK, h: int, mask: str = "bidir") -> np.ndarray:
    """The :math:`H_i` of every head, shape ``(h, N, N)`` (paper's split; scale :math:`1/\\sqrt M`)."""
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {MASKS}, not {mask!r}")
    x = head_slices(X, h)
    WQ, WK = _per_head(WQ, h, "W_Q"), _per_head(WK, h, "W_K")
    if WQ.shape[1] != x.shape[2] or WK.shape[1] != x.shape[2]:
        raise ShapeMismatchError("attention", "W_Q", WQ.shape, "x_i", x.shape,
                                 "rows of W_Q and W_K must equal the head width M/h")
    Q = np.einsum("hnd,hdk->hnk", x, WQ)
    K = np.einsum("hnd,hdk->hnk", x, WK)
    S = np.einsum("hnk,hmk->hnm", Q, K) / np.sqrt(np.asarray(X).shape[1])
    if mask == "causal":
        N = S.shape[1]
        S = np.where(np.tril(np.ones((N, N), dtype=bool)), S, -np.inf)
    return softmax_rows(S)


def mha_fixed_pattern(X, H, WV, WO) -> np.ndarray:
    """:math:`\\mathring H=[H_1x_1W_{V1},\\dots,H_hx_hW_{Vh}]W_O` for given patterns ``H`` (h, N, N)."""
    H = np.asarray(H)
    h = H.shape[0]
    x = head_slices(X, h)
    if H.shape[1:] != (x.shape[1], x.shape[1]):
        raise ShapeMismatchError("MHA", "H", H.shape, "X", np.asarray(X).shape,
                                 "each H_i must be N×N for N tokens")
    WV = _per_head(WV, h, "W_V")
    heads = np.einsum("hnm,hmd,hdv->hnv", H, x, WV)
    concat = heads.transpose(1, 0, 2).reshape(x.shape[1], -1)
    WO = np.asarray(WO)
    if WO.shape[0] != concat.shape[1]:
        raise ShapeMismatchError("MHA output projection", "concat", concat.shape, "W_O", WO.shape,
                                 "rows of W_O must equal h·d_v")
    return concat @ WO
