r"""QK-norm: an RMSNorm of the queries and the keys before RoPE, the two widths current decoders use.

* **per head** (Gemma 3, Qwen 3): each head's :math:`d` coordinates normed on their own, one
  weight :math:`\gamma\in\mathbb R^d` shared by the heads — :class:`~symuat.models.causal_lm.DecoderLayer`
  applies it (``q_norm``/``k_norm`` of shape ``(d,)``) when it splits the heads;
* **over the full projection** (OLMo 2): the :math:`hd` (keys: :math:`gd`) outputs of
  :math:`W_Q` (:math:`W_K`) normed together, one scale per token, a weight of width :math:`hd`
  (:math:`gd`) — :func:`full_width`, before the split into heads.

Either way the norm lives only inside the attention patterns :math:`H_i` (frozen in the DUAT
form); :func:`take_norms` reads the weights of every layer from a checkpoint's tensors.

>>> import numpy as np
>>> P = np.array([[3.0, 4.0, 0.0, 0.0]])
>>> full_width(P, np.ones(4), 0.0).round(6).tolist()  # one scale over the 4 outputs: sqrt(mean) = 2.5
[[1.2, 1.6, 0.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from symuat.models.formats import Tensors
from symuat.models.lifts import rms_scales

#: the tensor names of a layer's QK-norm weights (HF)
Q_NORM, K_NORM = "self_attn.q_norm.weight", "self_attn.k_norm.weight"


def full_width(P: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm of each token's whole projection ``P`` ``(N, n·d)`` (OLMo 2's ``q_norm``/``k_norm``)."""
    return P * rms_scales(P, eps)[:, None] * gamma


def take_norms(layers, t: Tensors, prefix: str = "model.layers.{k}.", *, width: str = "head") -> None:
    """Set ``q_norm``/``k_norm`` of every layer from ``t``: shape ``(d,)`` (``width="head"``) or
    ``(h·d,)``/``(g·d,)`` (``"full"``); a missing or mis-shaped weight is refused by name."""
    for k, layer in enumerate(layers):
        c, p = layer.config, prefix.format(k=k)
        q, kk = (c.head_dim, c.head_dim) if width == "head" else (c.heads * c.head_dim, c.kv_heads * c.head_dim)
        layer.q_norm, layer.k_norm = t.take(p + Q_NORM, (q,)), t.take(p + K_NORM, (kk,))
