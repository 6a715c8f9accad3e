r"""The pre-norm causal decoder every decoder family builds (Llama, Qwen2, …): a float64 forward
and each layer's raw Eq. 20 parameters, applied matrix-free.

One layer at input :math:`X` (N tokens × M, rows are tokens, ``x @ W`` convention) is

.. math::

   Y = X + P_a\big(\mathrm{GQA}(\mathrm{RMS}_1(X))\big),\qquad
   X_{\rm next} = Y + P_f\Big(\big(\sigma(Z W_g + b_g)\odot(Z W_u + b_u)\big)W_d + b_d\Big),\ Z=\mathrm{RMS}_2(Y)

with optional biases on every projection, optional *sandwich* norms :math:`P_a, P_f` (RMSNorms on
the sublayer outputs; identity when absent), optional per-head QK-norms and a sliding window in
the patterns. With the input-dependent quantities frozen at the input — the attention patterns
:math:`H_i`, the RMSNorm scales, the up-projection :math:`ZW_u+b_u` — the layer is *exactly*
the DUAT general term (Eq. 20)

.. math:: x'_{\rm next}=W1\,x'+b3+W3\,\sigma(W2\,x'+b2)

with :math:`W1=I+S_aAS_1` (:math:`A=\sum_iH_i\otimes B_i^\top`, X1; :math:`S_1` the RMSNorm
diagonal lift, X3; :math:`S_a` the frozen sandwich norm), :math:`W2=(I_N\otimes W_g^\top)S_2W1`,
:math:`W3=S_f(I_N\otimes W_d^\top)\operatorname{diag}(\operatorname{vec}_r(ZW_u+b_u))` (X4),
:math:`b3=S_a\,\mathbf 1b_{\rm att}^\top+S_f\,\mathbf 1b_d^\top` (:math:`b_{\rm att}=\sum_ib_{V,g(i)}W_{O,i}+b_O`:
each row of :math:`H_i` sums to one, H7) and :math:`b2=(I_N\otimes W_g^\top)S_2\,S_a\mathbf 1b_{\rm att}^\top+\mathbf 1b_g^\top`.
The LM head is the final lift :math:`(I_N\otimes W_{\rm head})S_f` (X5).

Nothing of size :math:`(NM)\times(NM)` is built; a layer's patterns are formed one head's scores at a time
(:math:`(h+2)N^2`), and a streamed pass (:func:`symuat.models.rewrite.rewrite_states`) keeps one layer's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from symuat.models.formats import ModelError
from symuat.models.lifts import (
    ACTIVATIONS, BandPattern, Diagonal, GQAOperator, RowLinear, TokenDiag, apply_rope, is_banded, pattern_matmul,
    rms_scales, rope_angles, rope_inv_freq, softmax_causal,
)
from symuat.numeric.operators import Composed, Identity, Operator, Sum
from symuat.numeric.transformer import Eq20


@dataclass
class DecoderConfig:
    """The sizes and settings of a decoder, as a family parsed them from the checkpoint."""

    vocab: int
    M: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    F: int
    rope_theta: float
    eps: float  # as the file stores it (GGUF: a float32 value, read exactly)
    context: int
    rope: str = "interleaved"  # interleaved (GGUF layout) | half (HF layout)
    tied: bool = True
    activation: str = "silu"  # a key of lifts.ACTIVATIONS
    inv_freq: np.ndarray | None = None  # RoPE frequencies after scaling; None: rope_inv_freq(head_dim, rope_theta)
    family: str = "llama"
    features: list[str] = field(default_factory=list)  # what this checkpoint uses beyond the plain family

    @property
    def group(self) -> np.ndarray:
        """K/V group of each query head, :math:`g(i)=\\lfloor i\\,g/h\\rfloor` (HF's ``repeat_kv``)."""
        return np.arange(self.heads) * self.kv_heads // self.heads

    def frequencies(self) -> np.ndarray:
        return rope_inv_freq(self.head_dim, self.rope_theta) if self.inv_freq is None else self.inv_freq


@dataclass
class DecoderLayer:
    """One pre-norm decoder layer; weights in the ``(in, out)`` convention ``X @ W``.

    Optional parts (``None`` when the checkpoint has none): the biases ``bq bk bv bo bg bu bd``,
    the sandwich norms ``post_attn``/``post_ffn``, the per-head QK-norms ``q_norm``/``k_norm``,
    a sliding ``window``, the layer's own RoPE frequencies ``inv_freq`` and score ``scale``."""

    WQ: np.ndarray  # (M, h·d)
    WK: np.ndarray  # (M, g·d)
    WV: np.ndarray  # (M, g·d)
    WO: np.ndarray  # (h·d, M)
    Wg: np.ndarray  # (M, F)
    Wu: np.ndarray  # (M, F)
    Wd: np.ndarray  # (F, M)
    g1: np.ndarray
    g2: np.ndarray
    config: DecoderConfig
    bq: np.ndarray | None = None
    bk: np.ndarray | None = None
    bv: np.ndarray | None = None
    bo: np.ndarray | None = None
    bg: np.ndarray | None = None
    bu: np.ndarray | None = None
    bd: np.ndarray | None = None
    post_attn: np.ndarray | None = None
    post_ffn: np.ndarray | None = None
    q_norm: np.ndarray | None = None
    k_norm: np.ndarray | None = None
    window: int | None = None
    inv_freq: np.ndarray | None = None
    scale: float | None = None

    # -- pieces -------------------------------------------------------------------------------
    @property
    def sigma(self):
        return ACTIVATIONS[self.config.activation]

    def _heads(self, P: np.ndarray, n: int, gamma) -> np.ndarray:
        c = self.config
        P = P.reshape(P.shape[0], n, c.head_dim).transpose(1, 0, 2)
        if gamma is not None:  # per-head RMSNorm over the head width (QK-norm)
            P = P * rms_scales(P, c.eps)[..., None] * gamma
        return P

    def queries_keys(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """``(Q (h, N, d), K (g, N, d), scale)`` at the normed input ``U``: QK-norm and RoPE applied."""
        c = self.config
        N, d = U.shape[0], c.head_dim
        Q = self._heads(_affine(U, self.WQ, self.bq), c.heads, self.q_norm)
        K = self._heads(_affine(U, self.WK, self.bk), c.kv_heads, self.k_norm)
        ang = rope_angles(N, d, inv_freq=self.inv_freq if self.inv_freq is not None else c.frequencies())
        Q, K = apply_rope(Q, ang, c.rope), apply_rope(K, ang, c.rope)
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(d)
        return Q, K, scale

    def patterns(self, U: np.ndarray, heads=None, qk=None) -> np.ndarray:
        """The attention patterns :math:`H_i` at the normed input ``U``: RoPE, causal mask, softmax; ``(h, N, N)``
        (``heads``: only those query heads, in that order — each the same numbers as in the whole;
        ``qk``: :meth:`queries_keys` of ``U``, when the caller keeps them)."""
        c = self.config
        N = U.shape[0]
        Q, K, scale = self.queries_keys(U) if qk is None else qk
        heads = list(range(c.heads)) if heads is None else list(heads)
        if is_banded(N, self.window):  # a long text: only the blocks holding nonzeros are scored and kept
            Qh, Kh = Q[heads], K[np.asarray(c.group)[heads]]

            def block(r0, r1, c0):
                S = (Qh[:, r0:r1] @ Kh[:, c0:r1].transpose(0, 2, 1)) * scale
                return np.stack([self.head_pattern(Sk, r0 - c0) for Sk in S])

            return BandPattern.from_scores(block, N, self.window)
        H = np.empty((len(heads), N, N))
        for k, i in enumerate(heads):  # one head's scores at a time: peak (h + 2) N², not 3 h N²
            H[k] = self.head_pattern((Q[i] @ K[c.group[i]].T) * scale)
        return H

    def head_pattern(self, S: np.ndarray, offset: int = 0) -> np.ndarray:
        """One head's pattern from its scaled scores ``S`` ``(N, N)`` (or a block of them, rows
        ``offset`` ahead of its first key: :func:`~symuat.models.lifts.softmax_causal`): the causal
        (windowed) softmax (a family with more between the scores and the softmax — a soft-cap —
        overrides this)."""
        return softmax_causal(S, self.window, offset)

    def attention_bias_row(self) -> np.ndarray:
        r""":math:`\sum_ib_{V,g(i)}^\top W_{O,i}+b_O`: what every token gets from the biases (rows of H sum to 1)."""
        c = self.config
        row = np.zeros(self.WO.shape[1]) if self.bo is None else np.array(self.bo, dtype=float)
        if self.bv is not None:
            row += self.bv.reshape(c.kv_heads, c.head_dim)[c.group].reshape(-1) @ self.WO
        return row

    def _gqa(self, H) -> GQAOperator:
        c = self.config
        return GQAOperator(H, self.WV.reshape(self.WV.shape[0], c.kv_heads, c.head_dim).transpose(1, 0, 2),
                           self.WO, c.group, self.window)

    # -- the plain forward --------------------------------------------------------------------
    def forward(self, X: np.ndarray) -> np.ndarray:
        """The plain float64 forward pass (independent of the operators below)."""
        c = self.config
        N, d = X.shape[0], c.head_dim
        U = X * rms_scales(X, c.eps)[:, None] * self.g1
        H = self.patterns(U)
        V = _affine(U, self.WV, self.bv).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        att = _affine(pattern_matmul(H, V[c.group], self.window).transpose(1, 0, 2).reshape(N, -1), self.WO, self.bo)
        if self.post_attn is not None:
            att = att * rms_scales(att, c.eps)[:, None] * self.post_attn
        Y = X + att
        Z = Y * rms_scales(Y, c.eps)[:, None] * self.g2
        m = _affine(self.sigma(_affine(Z, self.Wg, self.bg)) * _affine(Z, self.Wu, self.bu), self.Wd, self.bd)
        if self.post_ffn is not None:
            m = m * rms_scales(m, c.eps)[:, None] * self.post_ffn
        return Y + m

    # -- the layer in the Eq. 20 form ---------------------------------------------------------
    def duat_step(self, parts) -> tuple[Eq20, np.ndarray, np.ndarray]:
        r"""One layer of the one-pass rewrite (:func:`symuat.numeric.transformer.to_duat`).

        ``parts`` = :math:`[A_{j-1}x'_0,\ c_{j-1},\ R_{j-1}]` (3, N, M), the layer's input their
        sum. Returns the Eq. 20 parameters frozen at that input, the next parts
        :math:`[W1\,a,\ W1\,c+b3,\ W1R+W3\sigma(V_jx'_0+e_j)]` and :math:`[V_jx'_0,\ e_j]` (2, N, F);
        every operator is applied once per part, and the FFN pre-activation *is* their sum.
        """
        c = self.config
        T = np.asarray(parts, dtype=float)
        _, N, M = T.shape
        X = T.sum(axis=0)
        S1 = TokenDiag(rms_scales(X, c.eps), self.g1)
        u = S1.rows(T)
        A = self._gqa(self.patterns(u.sum(axis=0)))
        Au = A.apply_many(u)
        row = self.attention_bias_row()
        if self.post_attn is not None:  # the sandwich norm, frozen at the attention output
            Sa = TokenDiag(rms_scales(Au.sum(axis=0) + row, c.eps), self.post_attn)
            Au, b_att = Sa.rows(Au), Sa.rows(np.broadcast_to(row, (N, M)))
        else:
            Sa, b_att = None, np.broadcast_to(row, (N, M))
        y = T + Au  # W1 = I + S_a A S_1 on each part
        y[1] += b_att
        S2 = TokenDiag(rms_scales(y.sum(axis=0), c.eps), self.g2)
        z = S2.rows(y)
        Z = z.sum(axis=0)
        z[1] += z[2]  # [S2 a, S2 (c + R)]: the two inputs of W_g
        pre = np.empty((2, N, self.Wg.shape[1]))  # [V_j x0, e_j]: one product for both, written in place
        np.matmul(z[:2].reshape(2 * N, M), self.Wg, out=pre.reshape(2 * N, -1))
        if self.bg is not None:
            pre[1] += self.bg
        gate = _affine(Z, self.Wu, self.bu)  # frozen: the up-projection, the dynamic α(x) of X4
        s = self.sigma(pre.sum(axis=0))
        out = (gate * s) @ self.Wd
        b_ffn = np.broadcast_to(self.bd if self.bd is not None else np.zeros(M), (N, M))
        Sf = None
        if self.post_ffn is not None:
            Sf = TokenDiag(rms_scales(out + b_ffn, c.eps), self.post_ffn)
            out, b_ffn = Sf.rows(out), Sf.rows(b_ffn)
        nxt = y
        nxt[1] += b_ffn
        nxt[2] += out
        Lg, Ld = RowLinear(self.Wg, N), RowLinear(self.Wd, N)
        I = Identity(N * M)
        att = Composed([A, S1]) if Sa is None else Composed([Sa, A, S1])
        W1 = Sum([I, att])
        bg = self.bg
        W3 = Composed([Ld, Diagonal(gate.reshape(-1))]) if Sf is None else Composed([Sf, Ld, Diagonal(gate.reshape(-1))])
        # b2 and b3 are formed when asked for (the one pass has folded them into the parts already):
        # a layer keeps no (N·M) bias vectors it is never asked for — without biases, vectors of zeros
        p = Eq20(W1=W1, W2=Composed([Lg, S2, W1]),
                 b2=lambda: Lg @ (S2 @ b_att.reshape(-1)) + (np.tile(bg, N) if bg is not None else 0.0),
                 W3=W3, b3=lambda: (b_att + b_ffn).reshape(-1), sigma=self.sigma)
        p.parts = {"S1": S1, "A": A, "Sa": Sa, "S2": S2, "Lg": Lg, "gate": W3.ops[-1], "Ld": Ld, "Sf": Sf}
        return p, nxt, pre

    def step(self, X: np.ndarray, output: bool = True) -> tuple[Eq20, np.ndarray | None]:
        """The raw Eq. 20 parameters at ``X`` and the layer's output."""
        X = np.asarray(X, dtype=float)
        p, nxt, _ = self.duat_step(np.stack([X, np.zeros_like(X), np.zeros_like(X)]))
        return p, (nxt.sum(axis=0) if output else None)


def _affine(X, W, b):
    out = X @ W
    if b is not None:
        out += b
    return out


class CausalLM:
    """A decoder in float64 NumPy: embeddings (times ``embed_scale``), :class:`DecoderLayer` blocks,
    the final RMSNorm and the LM head. A family module builds one from a checkpoint."""

    kind = "decoder"

    def __init__(self, config: DecoderConfig, embed_tokens, layers: list[DecoderLayer], norm, lm_head=None, *,
                 source: Path | str = "<model>", tokenizer=None, embed_scale: float = 1.0,
                 quant_types: dict | None = None):
        self.config, self.source, self.tokenizer = config, Path(source), tokenizer
        self.embed_tokens, self.layers, self.norm = embed_tokens, layers, norm
        self.lm_head = embed_tokens if lm_head is None else lm_head
        self.embed_scale = embed_scale
        self.quant_types = quant_types or {}
        self.reference_blind: list[str] = []  # features transformers' loader would drop (reference refused)
        self.fields_read: list[str] = []  # the config fields / GGUF keys the family loader read

    @property
    def family(self) -> str:
        return self.config.family

    def tokenize(self, text: str) -> np.ndarray:
        if not text or not text.strip():
            raise ModelError("empty text: give a sentence to encode")
        if self.tokenizer is None:
            raise ModelError(f"{self.source}: no tokenizer (tokenizer.json) next to the weights")
        ids = np.array(self.tokenizer.encode(text).ids, dtype=np.int64)
        self.check_ids(ids)
        return ids

    def decode(self, token: int) -> str:
        return self.tokenizer.decode([int(token)]) if self.tokenizer is not None else str(int(token))

    def check_ids(self, ids) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0:
            raise ModelError("token ids must be a non-empty 1-D sequence")
        if ids.size > self.config.context:
            raise ModelError(f"the text has {ids.size} tokens; the model takes at most {self.config.context}")
        if ids.min() < 0 or ids.max() >= self.config.vocab:
            raise ModelError(f"token ids must lie in [0, {self.config.vocab})")
        return ids

    def embed(self, ids) -> np.ndarray:
        X = self.embed_tokens[self.check_ids(ids)]
        return X * self.embed_scale if self.embed_scale != 1.0 else X

    def final_scales(self, X: np.ndarray) -> np.ndarray:
        return rms_scales(X, self.config.eps)

    def final_norm(self, X: np.ndarray) -> np.ndarray:
        """The last hidden state as HF reports it: after the final RMSNorm."""
        return X * self.final_scales(X)[:, None] * self.norm

    def logits(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\mathrm{RMS}_f(X)\\,W_{\\rm head}^\\top`."""
        return self.final_norm(X) @ self.lm_head.T

    def hidden_states(self, ids) -> list[np.ndarray]:
        """The embeddings and the output of every layer."""
        states = [self.embed(ids)]
        for layer in self.layers:
            states.append(layer.forward(states[-1]))
        return states

    def head(self, X: np.ndarray) -> Operator:
        """The LM head as the final lift at the last state: :math:`(I_N\\otimes W_{\\rm head})\\,S_f` (X5)."""
        return Composed([RowLinear(self.lm_head.T, X.shape[0]), TokenDiag(self.final_scales(X), self.norm)])

    def readout(self, X: np.ndarray, position: int, token: int) -> np.ndarray:
        """:math:`\\rho` with :math:`\\ell_{\\rm token}=\\rho\\cdot x'_L` at ``position`` (the head frozen at ``X``)."""
        N, M = X.shape
        rho = np.zeros(N * M)
        rho[position * M:(position + 1) * M] = self.final_scales(X)[position] * self.norm * self.lm_head[token]
        return rho
