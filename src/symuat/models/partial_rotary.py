r"""Partial rotary positions: RoPE on the first ``rotary_dim`` coordinates of every head only
(Phi-3's and GPT-NeoX's ``partial_rotary_factor`` / ``rotary_pct``), the rest passed through.

With :math:`r` the rotary width (even, :math:`\le d`), a query/key head :math:`q\in\mathbb R^d` is
rotated as :math:`[R_n\,q_{:r},\ q_{r:}]`, :math:`R_n` the rotate-half rotation of width :math:`r`
with the frequencies :math:`\theta^{-2j/r}` (HF: ``dim = int(head_dim · partial_rotary_factor)``) — WP8;
its mutant, the frequencies over the head width :math:`\theta^{-2j/d}`, fails against transformers
(``tests/test_family_gpt_neox.py``).
The scores stay a bilinear form in the frozen patterns, so nothing in the Eq. 20 form changes (X2
for the rotated block, the identity for the rest).

>>> import numpy as np
>>> from symuat.models.lifts import rope_angles
>>> Q = np.arange(12.0).reshape(1, 2, 6)
>>> out = apply_partial_rope(Q, rope_angles(2, 2, 10000.0), 2, "half")
>>> bool(np.array_equal(out[..., 2:], Q[..., 2:])), bool(np.array_equal(out[0, 0], Q[0, 0]))
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symuat.models.causal_lm import DecoderLayer, _affine
from symuat.models.lifts import apply_rope, rope_angles


def apply_partial_rope(Q: np.ndarray, angles: np.ndarray, rotary_dim: int, convention: str = "half") -> np.ndarray:
    """RoPE on ``Q[..., :rotary_dim]`` (``angles``: ``(N, rotary_dim/2)``), the rest unchanged."""
    if rotary_dim == Q.shape[-1]:
        return apply_rope(Q, angles, convention)
    return np.concatenate([apply_rope(Q[..., :rotary_dim], angles, convention), Q[..., rotary_dim:]], axis=-1)


def rotary_width(head_dim: int, factor: float) -> int:
    """HF's ``int(head_dim * partial_rotary_factor)``."""
    return int(head_dim * factor)


@dataclass
class PartialRotaryLayer(DecoderLayer):
    """A :class:`~symuat.models.causal_lm.DecoderLayer` whose RoPE turns the first ``rotary_dim``
    coordinates of each head (the frequencies in ``inv_freq`` or the config's have ``rotary_dim/2`` entries)."""

    rotary_dim: int = 0

    def queries_keys(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """As :meth:`DecoderLayer.queries_keys`, RoPE on the first ``rotary_dim`` coordinates of each head."""
        c = self.config
        N = U.shape[0]
        Q = self._heads(_affine(U, self.WQ, self.bq), c.heads, self.q_norm)
        K = self._heads(_affine(U, self.WK, self.bk), c.kv_heads, self.k_norm)
        ang = rope_angles(N, self.rotary_dim, inv_freq=self.inv_freq if self.inv_freq is not None else c.inv_freq)
        Q = apply_partial_rope(Q, ang, self.rotary_dim, c.rope)
        K = apply_partial_rope(K, ang, self.rotary_dim, c.rope)
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(c.head_dim)
        return Q, K, scale
