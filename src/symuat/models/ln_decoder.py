r"""The pre-LayerNorm causal decoder with biases (GPT-2, GPT-NeoX/Pythia): a float64 forward and
each layer's Eq. 20 parameters, applied matrix-free — sequential or *parallel* residual, learned
absolute or (partial) rotary positions.

One layer at input :math:`X` (rows are tokens, ``x @ W``), :math:`\mathrm{LN}_k(Z)=S_k(Z)\,Z+\mathbf 1\beta_k^\top`
with :math:`S_k` the LayerNorm's linear part frozen at its input (per-token centring and scaling
times :math:`\gamma_k`, T12), :math:`A=\sum_iH_i\otimes B_i^\top` the attention at its frozen
patterns (X1), :math:`b_{\rm att}` its bias row (H7), :math:`L_{\rm in}=I_N\otimes W_{\rm in}^\top`,
:math:`L_{\rm out}=I_N\otimes W_{\rm out}^\top`:

* **sequential** (GPT-2; NeoX with ``use_parallel_residual`` false):
  :math:`Y=X+\mathrm{Attn}(\mathrm{LN}_1X)`, :math:`X_{\rm next}=Y+\mathrm{MLP}(\mathrm{LN}_2Y)` — the
  Eq. 20 term with :math:`W1=I+AS_1`, :math:`W2=L_{\rm in}S_2W1`, :math:`W3=L_{\rm out}`,
  :math:`b3=A\mathbf 1\beta_1^\top+\mathbf 1(b_{\rm att}+b_{\rm out})^\top`,
  :math:`b2=L_{\rm in}(S_2(A\mathbf 1\beta_1^\top+\mathbf 1b_{\rm att}^\top)+\mathbf 1\beta_2^\top)+\mathbf 1b_{\rm in}^\top`;
* **parallel** (GPT-NeoX/Pythia, X9): :math:`X_{\rm next}=X+\mathrm{Attn}(\mathrm{LN}_1X)+\mathrm{MLP}(\mathrm{LN}_2X)` —
  the same :math:`W1`, :math:`W3`, :math:`b3`, but :math:`W2=L_{\rm in}S_2` (no :math:`W1`: the MLP
  reads the layer's input, not the attention's output) and :math:`b2=L_{\rm in}\mathbf 1\beta_2^\top+\mathbf 1b_{\rm in}^\top`,
  with :math:`S_2` frozen at :math:`X`. Lemma 2's unrolling uses only the Eq. 20 shape, so it
  carries over unchanged (claim X9, :mod:`symuat.claims.parallel_residual`).

The LM head reads the final LayerNorm: :math:`\ell=\mathrm{LN}_f(x_L)W_{\rm head}^\top` is the frozen
lift :math:`(I_N\otimes W_{\rm head})S_f` plus the constant :math:`\mathbf 1(\beta_fW_{\rm head}^\top)`
(:meth:`LNCausalLM.head_bias`, counted with the bias terms in ``explain``).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((5, 8))
>>> for parallel in (True, False):
...     layer = random_ln_layer(rng, parallel=parallel)
...     p, out = layer.step(X)
...     x = X.reshape(-1)
...     eq20 = p.W1 @ x + p.b3 + p.W3 @ p.sigma(p.W2 @ x + p.b2)
...     print(parallel, bool(np.abs(eq20 - layer.forward(X).reshape(-1)).max() < 1e-12))
True True
False True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderConfig, _affine
from symuat.models.lifts import ACTIVATIONS, GQAOperator, RowLinear, pattern_matmul, rope_angles, softmax_causal
from symuat.models.partial_rotary import apply_partial_rope
from symuat.numeric.operators import Composed, Identity, Operator, Sum, TokenAffine
from symuat.numeric.transformer import Eq20, layer_norm, layer_norm_scales, token_affine


class LayerNormLift(TokenAffine):
    r"""LayerNorm's linear part frozen at its input (T12), :math:`Z\mapsto\operatorname{diag}(s)\,ZC_M\operatorname{diag}(\gamma)`,
    with its adjoint :math:`G\mapsto\operatorname{diag}(s)\,G\operatorname{diag}(\gamma)C_M` (the transposed chains of X6)."""

    def rows(self, Z: np.ndarray) -> np.ndarray:
        return token_affine(Z, self.scales, self.gamma)

    def rmatvec(self, v):
        G = v.reshape(self.scales.size, self.gamma.size) * self.gamma
        return (self.scales[:, None] * (G - G.mean(axis=1, keepdims=True))).reshape(-1)


@dataclass
class LNDecoderLayer:
    """One pre-LayerNorm decoder layer with biases; weights ``(in, out)``, every head its own K/V.

    ``rotary_dim`` 0: no rotary positions (GPT-2's are learned, in the embeddings); else RoPE
    (rotate-half) on the first ``rotary_dim`` coordinates of each head with ``inv_freq``.
    ``scale`` multiplies the scores (GPT-2: ``1/√d``, or 1, divided by the layer number when
    ``scale_attn_by_inverse_layer_idx``)."""

    WQ: np.ndarray  # (M, h·d)
    WK: np.ndarray
    WV: np.ndarray
    WO: np.ndarray  # (h·d, M)
    Win: np.ndarray  # (M, F)
    Wout: np.ndarray  # (F, M)
    ln1: tuple  # (γ, β)
    ln2: tuple
    config: DecoderConfig
    scale: float
    parallel: bool = False
    rotary_dim: int = 0
    bq: np.ndarray | None = None
    bk: np.ndarray | None = None
    bv: np.ndarray | None = None
    bo: np.ndarray | None = None
    bin: np.ndarray | None = None
    bout: np.ndarray | None = None

    @property
    def sigma(self):
        return ACTIVATIONS[self.config.activation]

    def _split(self, P: np.ndarray) -> np.ndarray:
        c = self.config
        return P.reshape(P.shape[0], c.heads, c.head_dim).transpose(1, 0, 2)

    def patterns(self, U: np.ndarray) -> np.ndarray:
        """:math:`H_i` at the normed input ``U`` (with its β): (partial) RoPE, causal mask, softmax; ``(h, N, N)``."""
        Q, K = self._split(_affine(U, self.WQ, self.bq)), self._split(_affine(U, self.WK, self.bk))
        if self.rotary_dim:
            ang = rope_angles(U.shape[0], self.rotary_dim, inv_freq=self.config.inv_freq)
            Q = apply_partial_rope(Q, ang, self.rotary_dim, "half")
            K = apply_partial_rope(K, ang, self.rotary_dim, "half")
        H = np.empty((Q.shape[0], U.shape[0], U.shape[0]))
        for i in range(Q.shape[0]):  # one head's scores at a time: peak (h + 2) N², not 3 h N²
            H[i] = softmax_causal((Q[i] @ K[i].T) * self.scale)
        return H

    def attention_bias_row(self) -> np.ndarray:
        r""":math:`b_VW_O+b_O`: what every token gets from the biases (each row of :math:`H_i` sums to one, H7)."""
        row = np.zeros(self.WO.shape[1]) if self.bo is None else np.array(self.bo, dtype=float)
        if self.bv is not None:
            row += self.bv @ self.WO
        return row

    def _attention(self, H) -> GQAOperator:
        c = self.config
        WV = self.WV.reshape(self.WV.shape[0], c.heads, c.head_dim).transpose(1, 0, 2)
        return GQAOperator(H, WV, self.WO, np.arange(c.heads))

    def _mlp(self, Z):
        return _affine(self.sigma(_affine(Z, self.Win, self.bin)), self.Wout, self.bout)

    # -- the plain forward --------------------------------------------------------------------
    def forward(self, X: np.ndarray) -> np.ndarray:
        """The plain float64 forward pass (independent of the operators below)."""
        c = self.config
        N = X.shape[0]
        U = layer_norm(X, *self.ln1, c.eps)
        H = self.patterns(U)
        V = self._split(_affine(U, self.WV, self.bv))
        att = _affine(pattern_matmul(H, V).transpose(1, 0, 2).reshape(N, -1), self.WO, self.bo)
        if self.parallel:
            return X + att + self._mlp(layer_norm(X, *self.ln2, c.eps))
        Y = X + att
        return Y + self._mlp(layer_norm(Y, *self.ln2, c.eps))

    # -- the layer in the Eq. 20 form ---------------------------------------------------------
    def duat_step(self, parts) -> tuple[Eq20, np.ndarray, np.ndarray]:
        r"""One layer of the one-pass rewrite (:func:`symuat.numeric.transformer.to_duat`): ``parts`` =
        :math:`[A_{j-1}x'_0,\ c_{j-1},\ R_{j-1}]`; returns the Eq. 20 parameters frozen at their sum,
        the next parts and :math:`[V_jx'_0,\ e_j]` (the MLP's pre-activation is their sum)."""
        c = self.config
        T = np.asarray(parts, dtype=float)
        _, N, M = T.shape
        X = T.sum(axis=0)
        g1, beta1 = self.ln1
        g2, beta2 = self.ln2
        S1 = LayerNormLift(layer_norm_scales(X, c.eps), g1)
        u = S1.rows(T)  # LN1(x') = Σu + 1β1ᵀ
        A = self._attention(self.patterns(u.sum(axis=0) + beta1))
        Au = A.apply_many(np.concatenate([u, np.broadcast_to(beta1, (1, N, M))]))
        shift = Au[3] + self.attention_bias_row()  # A 1β1ᵀ + 1 b_attᵀ: the attention's constant
        y = T + Au[:3]  # W1 = I + A S1 on each part
        y[1] += shift
        I = Identity(N * M)
        W1 = Sum([I, Composed([A, S1])])
        Lin, Lout = RowLinear(self.Win, N), RowLinear(self.Wout, N)
        reads = T if self.parallel else y  # what the MLP's LayerNorm reads: the layer's input (X9) or Y
        S2 = LayerNormLift(layer_norm_scales(reads.sum(axis=0), c.eps), g2)
        z = S2.rows(reads)
        pre = (np.concatenate([z[0], z[1] + z[2] + beta2]) @ self.Win).reshape(2, N, -1)
        if self.bin is not None:
            pre[1] += self.bin
        shift_v = shift.reshape(-1)
        tile = lambda b: np.tile(b, N) if b is not None else 0.0
        if self.parallel:
            W2 = Composed([Lin, S2])
            b2 = lambda: Lin @ np.tile(beta2, N) + tile(self.bin)
        else:
            W2 = Composed([Lin, S2, W1])
            b2 = lambda: Lin @ (S2 @ shift_v + np.tile(beta2, N)) + tile(self.bin)
        p = Eq20(W1=W1, W2=W2, b2=b2, W3=Lout, b3=lambda: shift_v + tile(self.bout), sigma=self.sigma)
        p.parts = {"S1": S1, "A": A, "S2": S2, "Lin": Lin, "Lout": Lout, "parallel": self.parallel}
        nxt = y
        if self.bout is not None:
            nxt[1] += self.bout
        nxt[2] += self.sigma(pre.sum(axis=0)) @ self.Wout
        return p, nxt, pre

    def step(self, X: np.ndarray, output: bool = True):
        X = np.asarray(X, dtype=float)
        p, nxt, _ = self.duat_step(np.stack([X, np.zeros_like(X), np.zeros_like(X)]))
        return p, (nxt.sum(axis=0) if output else None)


class LNCausalLM(CausalLM):
    """A pre-LayerNorm decoder: token (+ learned position) embeddings, :class:`LNDecoderLayer`
    blocks, the final LayerNorm (γ, β) and the LM head."""

    def __init__(self, config: DecoderConfig, embed_tokens, layers, norm: tuple, lm_head=None, *,
                 positions=None, **kw):
        super().__init__(config, embed_tokens, layers, norm[0], lm_head, **kw)
        self.norm_bias = norm[1]
        self.positions = positions  # (context, M) learned absolute positions, or None

    def embed(self, ids) -> np.ndarray:
        X = self.embed_tokens[self.check_ids(ids)]
        if self.positions is not None:
            X = X + self.positions[: X.shape[0]]
        return X

    def final_scales(self, X: np.ndarray) -> np.ndarray:
        return layer_norm_scales(X, self.config.eps)

    def final_norm(self, X: np.ndarray) -> np.ndarray:
        return layer_norm(X, self.norm, self.norm_bias, self.config.eps)

    def head(self, X: np.ndarray) -> Operator:
        r"""The linear part of the head at the last state, :math:`(I_N\otimes W_{\rm head})S_f` (X5);
        the constant :math:`\beta_fW_{\rm head}^\top` is :meth:`head_bias`."""
        return Composed([RowLinear(self.lm_head.T, X.shape[0]), LayerNormLift(self.final_scales(X), self.norm)])

    def head_bias(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\mathbf 1(\\beta_fW_{\\rm head}^\\top)`, ``(N, vocab)``: the final LayerNorm's β read
        by the head."""
        return np.broadcast_to(self.norm_bias @ self.lm_head.T, (X.shape[0], self.lm_head.shape[0]))

    def readout(self, X: np.ndarray, position: int, token: int) -> np.ndarray:
        N, M = X.shape
        rho = np.zeros(N * M)
        v = self.norm * self.lm_head[token]
        rho[position * M:(position + 1) * M] = self.final_scales(X)[position] * (v - v.mean())
        return rho

    def readout_bias(self, position: int, token: int) -> float:
        """The logit's constant from the final LayerNorm's β: :math:`\\beta_f\\cdot w_{\\rm token}`."""
        return float(self.norm_bias @ self.lm_head[token])


def random_ln_layer(rng, *, M: int = 8, F: int = 12, heads: int = 2, rotary: int = 2, parallel: bool = True):
    """A random GPT-NeoX-style layer (LayerNorm with biases, biases everywhere, partial RoPE, GELU)."""
    from symuat.models.lifts import rope_inv_freq

    d = M // heads
    cfg = DecoderConfig(vocab=1, M=M, layers=1, heads=heads, kv_heads=heads, head_dim=d, F=F, rope_theta=1e4,
                        eps=1e-5, context=64, rope="half", activation="gelu", inv_freq=rope_inv_freq(rotary, 1e4))
    g = lambda *s: rng.standard_normal(s) / np.sqrt(s[0])
    b = lambda n: 0.3 * rng.standard_normal(n)
    ln = lambda: (1 + 0.2 * rng.standard_normal(M), 0.3 * rng.standard_normal(M))
    return LNDecoderLayer(WQ=g(M, M), WK=g(M, M), WV=g(M, M), WO=g(M, M), Win=g(M, F), Wout=g(F, M), ln1=ln(),
                          ln2=ln(), config=cfg, scale=d ** -0.5, parallel=parallel, rotary_dim=rotary, bq=b(M),
                          bk=b(M), bv=b(M), bo=b(M), bin=b(F), bout=b(M))


FROZEN = ("the attention patterns H_i of every layer and head (positions, causal mask and softmax evaluated at the "
          "input)", "the LayerNorm scales s_n = 1/sqrt(var(z_n) + eps) of both norms of every layer and of the final "
          "norm (the centring is linear and stays)", "the MLP's activation input is sigma's argument itself (no gate)",
          "the dynamic biases e_j = W2_j (c_{j-1} + R_{j-1}) + b2_j inside each sigma (they carry the earlier layers' "
          "sigma-terms, as DUAT's recursion defines them)")
EXACT = ("with those frozen, the logit is an exact identity: logit = r.A_L x'_0 + r.c_L + sum_j r.U_{L,j} "
         "sigma(V_j x'_0 + e_j) + beta_f.w_token, r the readout of the chosen token at the last position through the "
         "final LayerNorm's linear part and the LM head row; the terms are computed in float64 with the transposed "
         "chains, so the only error is float64 rounding")
