r"""The post-norm decoder layer (OLMo 2): no norm before a sub-layer, an RMSNorm after it, inside
the residual — and the QK-norm over the full projection width (:func:`symuat.models.qknorm.full_width`).

.. math::

   Y = X + \mathrm{RMS}_a\big(\mathrm{GQA}(X)\big),\qquad
   X_{\rm next} = Y + \mathrm{RMS}_f\Big(\big(\sigma(YW_g)\odot YW_u\big)W_d\Big)

With the patterns :math:`H_i`, the two RMS scales and the up-projection :math:`YW_u` frozen at the
input, the layer is exactly the DUAT general term (Eq. 20) with

.. math:: W1=I+S_aA,\qquad W2=(I_N\otimes W_g^\top)\,W1,\qquad
          W3=S_f(I_N\otimes W_d^\top)\operatorname{diag}(\operatorname{vec}_r(YW_u)),

:math:`b3=S_a\mathbf 1b_{\rm att}^\top+S_f\mathbf 1b_d^\top`,
:math:`b2=(I_N\otimes W_g^\top)S_a\mathbf 1b_{\rm att}^\top`
— :class:`~symuat.models.causal_lm.DecoderLayer`'s form with the pre-norm lifts :math:`S_1, S_2`
the identity (the sub-layers read the stream itself). The post-norms sit inside :math:`W1` and
:math:`W3`; they do not fold into the next layer's maps (spec §9 WP2: the skip path carries the
un-normed stream).

>>> from symuat.models.families.olmo2 import random_olmo2
>>> from symuat.models.compare import relative_error
>>> from symuat.numeric.transformer import to_duat
>>> m = random_olmo2(np.random.default_rng(0))
>>> X0 = m.embed(np.array([1, 5, 7]))
>>> bool(relative_error(to_duat(m.layers, X0).parts[-1].sum(axis=0), m.hidden_states([1, 5, 7])[-1]) < 1e-12)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderLayer, _affine
from symuat.models.lifts import Diagonal, RowLinear, TokenDiag, apply_rope, pattern_matmul, rms_scales, rope_angles
from symuat.models.qknorm import full_width
from symuat.numeric.operators import Composed, Identity, Sum
from symuat.numeric.transformer import Eq20


@dataclass
class PostNormLayer(DecoderLayer):
    """A :class:`DecoderLayer` without pre-norms (``g1``, ``g2`` unused, ``None``), with the
    post-norms ``post_attn``, ``post_ffn`` required and the QK-norm ``q_norm``/``k_norm`` over the
    full projection (``qk_width="full"``) or per head (``"head"``)."""

    qk_width: str = "full"

    def queries_keys(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """As :meth:`DecoderLayer.queries_keys`, the QK-norm over the full projection (``qk_width="full"``)."""
        c = self.config
        if self.qk_width == "head":
            return super().queries_keys(U)
        N, d = U.shape[0], c.head_dim
        Q, K = _affine(U, self.WQ, self.bq), _affine(U, self.WK, self.bk)
        if self.q_norm is not None:
            Q, K = full_width(Q, self.q_norm, c.eps), full_width(K, self.k_norm, c.eps)
        Q = Q.reshape(N, c.heads, d).transpose(1, 0, 2)
        K = K.reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        ang = rope_angles(N, d, inv_freq=self.inv_freq if self.inv_freq is not None else c.frequencies())
        Q, K = apply_rope(Q, ang, c.rope), apply_rope(K, ang, c.rope)
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(d)
        return Q, K, scale

    def forward(self, X: np.ndarray) -> np.ndarray:
        c = self.config
        N, d = X.shape[0], c.head_dim
        H = self.patterns(X)
        V = _affine(X, self.WV, self.bv).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        att = _affine(pattern_matmul(H, V[c.group], self.window).transpose(1, 0, 2).reshape(N, -1), self.WO, self.bo)
        Y = X + att * rms_scales(att, c.eps)[:, None] * self.post_attn
        m = _affine(self.sigma(_affine(Y, self.Wg, self.bg)) * _affine(Y, self.Wu, self.bu), self.Wd, self.bd)
        return Y + m * rms_scales(m, c.eps)[:, None] * self.post_ffn

    def duat_step(self, parts) -> tuple[Eq20, np.ndarray, np.ndarray]:
        """As :meth:`DecoderLayer.duat_step`, the pre-norm lifts the identity."""
        c = self.config
        T = np.asarray(parts, dtype=float)
        _, N, M = T.shape
        X = T.sum(axis=0)
        A = self._gqa(self.patterns(X))
        Au = A.apply_many(T)
        row = self.attention_bias_row()
        Sa = TokenDiag(rms_scales(Au.sum(axis=0) + row, c.eps), self.post_attn)
        Au, b_att = Sa.rows(Au), Sa.rows(np.broadcast_to(row, (N, M)))
        y = T + Au
        y[1] += b_att
        Y = y.sum(axis=0)
        pre = np.stack([y[0] @ self.Wg, (y[1] + y[2]) @ self.Wg])
        if self.bg is not None:
            pre[1] += self.bg
        gate = _affine(Y, self.Wu, self.bu)
        out = (gate * self.sigma(pre.sum(axis=0))) @ self.Wd
        b_ffn = np.broadcast_to(self.bd if self.bd is not None else np.zeros(M), (N, M))
        Sf = TokenDiag(rms_scales(out + b_ffn, c.eps), self.post_ffn)
        out, b_ffn = Sf.rows(out), Sf.rows(b_ffn)
        nxt = y
        nxt[1] += b_ffn
        nxt[2] += out
        Lg, Ld = RowLinear(self.Wg, N), RowLinear(self.Wd, N)
        W1 = Sum([Identity(N * M), Composed([Sa, A])])
        b_att_v = np.ascontiguousarray(b_att).reshape(-1)
        bg = self.bg
        W3 = Composed([Sf, Ld, Diagonal(gate.reshape(-1))])
        p = Eq20(W1=W1, W2=Composed([Lg, W1]), b2=lambda: Lg @ b_att_v + (np.tile(bg, N) if bg is not None else 0.0),
                 W3=W3, b3=b_att_v + np.ascontiguousarray(b_ffn).reshape(-1), sigma=self.sigma)
        p.parts = {"S1": None, "A": A, "Sa": Sa, "S2": None, "Lg": Lg, "gate": W3.ops[-1], "Ld": Ld, "Sf": Sf}
        return p, nxt, pre


class PostNormLM(CausalLM):
    """A :class:`CausalLM` of :class:`PostNormLayer` s (its own class: the attribution views, which
    read a pre-norm layer's ``s1, g1, s2, g2``, have no adapter for it and refuse it by name)."""
