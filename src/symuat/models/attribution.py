r"""Exact attribution of a decoder's next-token logit (or a logit difference): two views that add up,
and Golden's equivalent linear map, matrix-free.

Everything here reads a model through a small, family-agnostic interface — a :class:`Trace` of
one forward pass, one :class:`LayerTrace` per layer, holding what a pre-norm decoder layer freezes:

* the pre-attention norm scales ``s1`` (per token) and its effective gain ``g1`` (per channel; a
  family whose norm multiplies by ``1 + γ`` gives ``1 + γ``), so the attention reads
  :math:`U=\operatorname{diag}(s_1)\,X\operatorname{diag}(g_1)`;
* the attention patterns ``H`` ``(h, N, N)`` (RoPE, masks, softmax, QK-norm, soft-caps: all inside);
* ``WV`` ``(g, M, d)`` per key/value group with ``group`` (query head → group), ``WO`` ``(h, d, M)``;
* an optional post-attention / post-MLP norm (Gemma's sandwich), frozen the same way;
* the MLP's gate pre-activation ``gate`` :math:`=ZW_g`, its up-projection ``up`` :math:`=ZW_u`,
  the activation's *slope* ``slope`` with :math:`\mathrm{act}(z)=z\,\mathrm{slope}(z)` (SiLU:
  the sigmoid; GELU: :math:`\Phi`), ``Wg``, ``Wd``, the MLP pre-norm ``s2``, ``g2``, and the MLP write;
* the final-norm scales ``sf``, ``gf`` and the unembedding rows.

A model class supplies one adapter, ``trace(model, ids, states)``: :func:`trace_causal_lm` reads
every :class:`~symuat.models.causal_lm.CausalLM` (Llama/SmolLM2, Qwen2, Gemma 3, biases and sandwich
norms included); another class registers its own in :data:`ADAPTERS`.

**The residual view** (comparable with direct logit attribution). The residual stream at the last
position is exactly :math:`x_L[n]=x_0[n]+\sum_l(\mathrm{attn}_l[n]+\mathrm{mlp}_l[n])` and each
attention write is exactly
:math:`\sum_i\sum_m H_i[n,m]\,(U_mW_{V,g(i)})W_{O,i}`. With the final norm's scale frozen at the
model's own final state, the readout :math:`r=s_f[n]\,g_f\odot w_t` is one fixed vector and

.. math:: \ell_t=r\cdot x_0[n]+\sum_l\Big(\sum_{i,m}H^{(l)}_i[n,m]\,(U^{(l)}_mW_{V})\cdot(W_{O,i}r)
          +r\cdot\mathrm{mlp}_l[n]\Big).

**The DUAT view** (the papers' form): :math:`\ell_t=\rho_0\cdot x'_0+\sum_j\rho_j\cdot W3_j\sigma_j`
with :math:`\rho_{j-1}=W1_j^{\top}\rho_j` — :func:`symuat.models.rewrite.decompose_logit`'s terms —
and each σ-term's *input* :math:`u_j=V_jx'_0+e_j` split into the skip and the attention (per
head, per source token) of its linear-path part :math:`V_jx'_0` and of its dynamic bias
:math:`e_j`, through the frozen activation slope: :math:`\rho_j\cdot W3_j\sigma(u_j)=\kappa_j\cdot u_j`,
:math:`\kappa_j=\mathrm{slope}(u_j)\odot W3_j^{\top}\rho_j`.

Biases (Qwen2's, a Llama with ``attention_bias``/``mlp_bias``): the residual view keeps :math:`b_V`
inside the values (split through the pattern like them) and adds each layer's :math:`b_O` term; the
DUAT view adds DUAT's bias terms :math:`\rho_j\cdot b3_j` (:math:`c_L`) and splits off the biases
inside σ's input (:math:`\kappa_j\cdot b2_j`). Sandwich norms (Gemma 3) are frozen diagonals like
the others. Every run checks the sums against the model's value (:data:`SCALE` says how).

**Golden's map**: with the norm scales, the gate activation :math:`\mathrm{act}(ZW_g)` and the
patterns detached, the last token's final-normed output is linear in the input embeddings,
:math:`y=\sum_tJ_tx_t` exactly; :func:`golden_vjp` gives :math:`u^{\top}J_t` for every ``t`` in one
reverse pass, :func:`golden_svd` the leading singular triplets of :math:`J_t` (no ``J`` built).

>>> import numpy as np
>>> from symuat.models.families.llama import random_llama
>>> m = random_llama(np.random.default_rng(0))
>>> a = explain(m, np.array([1, 5, 7, 2]))
>>> a.residual.passed and a.duat.passed
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models import terms as terms_mod
from symuat.models.formats import ModelError, json_safe
from symuat.models.lifts import pattern_matmul, pattern_rmatmul, pattern_weighted_colsum
from symuat.numeric.transformer import tanh_gate

TOLERANCE = 1e-12

# --------------------------------------------------------------------------------------------
# the interface a family provides
# --------------------------------------------------------------------------------------------


@dataclass
class LayerTrace:
    """One pre-norm decoder layer, frozen at its input ``X`` (see the module docstring)."""

    X: np.ndarray  # (N, M) the layer's input (the model's own state)
    s1: np.ndarray  # (N,) pre-attention norm scales
    g1: np.ndarray  # (M,) its effective gain
    H: np.ndarray  # (h, N, N) attention patterns
    WV: np.ndarray  # (g, M, d) value projection per K/V group
    WO: np.ndarray  # (h, d, M) output projection per query head
    group: np.ndarray  # (h,) K/V group of each query head
    V: np.ndarray  # (g, N, d) values U W_V per group
    attn: np.ndarray  # (N, M) the attention write (after a post-norm, if any)
    s2: np.ndarray  # (N,) MLP pre-norm scales (at X + attn)
    g2: np.ndarray  # (M,)
    Wg: np.ndarray  # (M, F)
    Wd: np.ndarray  # (F, M)
    gate: np.ndarray  # (N, F) gate pre-activation Z W_g
    up: np.ndarray  # (N, F) up-projection Z W_u
    slope: np.ndarray  # (N, F) act(gate) = gate * slope
    mlp: np.ndarray  # (N, M) the MLP write (after a post-norm, if any)
    post_attn: tuple[np.ndarray, np.ndarray] | None = None  # (scales (N,), gain (M,)) of a post-attention norm
    post_mlp: tuple[np.ndarray, np.ndarray] | None = None
    Wu: np.ndarray | None = None  # (M, F) (Golden's map: the up-projection stays linear)
    bv: np.ndarray | None = None  # (g, d) value bias per K/V group (inside V: the forward's values)
    bo: np.ndarray | None = None  # (M,) output bias of the attention
    bg: np.ndarray | None = None  # (F,) gate bias
    bd: np.ndarray | None = None  # (M,) down-projection bias
    affine: bool = False  # a bias acts on the residual stream (b_V, b_O, b_g, b_u or b_d): Golden's map is affine
    #: long texts: ``H``, ``gate``, ``up``, ``slope`` are not kept (``None``); ``recompute(name)`` forms
    #: them again from the layer's frozen input, by the same expressions (bit for bit), when a view needs them
    recompute: Callable[[str], np.ndarray] | None = None
    H_last: np.ndarray | None = None  # (h, N) the last query's pattern row (what the residual view reads)
    window: int | None = None  # a sliding window: the patterns are banded (applied by their blocks)
    mlp_last: np.ndarray | None = None  # (M,) the MLP write at the last position

    def pattern_head(self, i: int) -> np.ndarray:
        """``H[i]`` ``(N, N)``: kept, or formed again alone (the long-text views hold one head's at a time)."""
        return self.H[i] if self.H is not None else self.recompute("H", i)

    def mlp_write(self) -> np.ndarray:
        """The MLP write ``(N, M)``: kept, or formed again."""
        return self.mlp if self.mlp is not None else self.recompute("mlp")

    def mlp_row(self) -> np.ndarray:
        """The MLP write at the last position ``(M,)``."""
        return self.mlp[-1] if self.mlp is not None else self.mlp_last

    def patterns(self) -> np.ndarray:
        """``H`` ``(h, N, N)``: kept, or formed again (one layer's at a time, never all layers')."""
        return self.H if self.H is not None else self.recompute("H")

    def mlp_inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(gate, up, slope)``, each ``(N, F)``: kept, or formed again."""
        if self.gate is not None:
            return self.gate, self.up, self.slope
        return self.recompute("gate"), self.recompute("up"), self.recompute("slope")

    def last_row(self) -> np.ndarray:
        """``H[:, N-1, :]`` ``(h, N)``: the patterns' row of the last query."""
        return self.H[:, -1, :] if self.H is not None else self.H_last

    def attn_const(self) -> np.ndarray:
        """The part of the attention write that does not depend on the input, ``(N, M)``:
        post(Σ_i H_i 1 b_{V,g(i)}ᵀ W_{O,i} + 1 b_Oᵀ) (zero without biases)."""
        N, M = self.X.shape
        out = np.zeros((N, M))
        if self.bv is not None:
            rows = np.einsum("hd,hdM->hM", self.bv[self.group], self.WO)
            out += self.patterns().sum(axis=2).T @ rows
        if self.bo is not None:
            out += self.bo
        return _post(out, self.post_attn)

    def mlp_const(self) -> np.ndarray:
        """post(1 b_dᵀ): the MLP write's bias (zero without one)."""
        N, M = self.X.shape
        return _post(np.broadcast_to(self.bd if self.bd is not None else np.zeros(M), (N, M)), self.post_mlp)

    @property
    def act(self) -> np.ndarray:
        """The gate activation act(Z W_g) (Golden freezes it)."""
        gate, _, slope = self.mlp_inputs()
        return gate * slope

    @property
    def heads(self) -> int:
        return len(self.group)


@dataclass
class Trace:
    """One forward pass of a decoder, with what every view freezes."""

    family: str
    ids: np.ndarray
    words: list[str]
    x0: np.ndarray  # (N, M) the input embeddings (as the first layer reads them)
    layers: list[LayerTrace]
    xL: np.ndarray  # (N, M) the model's last state (before the final norm)
    sf: np.ndarray  # (N,) final-norm scales at xL
    gf: np.ndarray  # (M,) its effective gain
    unembed: Callable[[int], np.ndarray]  # token id → its unembedding row (M,)
    logits: np.ndarray  # (V,) the model's own logits at the last position (plain forward)
    decode: Callable[[int], str] = str
    extra_frozen: tuple[str, ...] = ()  # what the model's adapter freezes beyond the views' own (a soft-cap's slope)
    pre_cap_logits: np.ndarray | None = None  # (V,) a soft-capped head's logits before the cap

    @property
    def N(self) -> int:
        return self.x0.shape[0]


def _post(v: np.ndarray, post) -> np.ndarray:
    """A frozen post-norm (or its adjoint: it is diagonal) applied to ``v`` ``(N, M)``; identity if None."""
    if post is None:
        return v
    s, g = post
    return v * s[:, None] * g


# --------------------------------------------------------------------------------------------
# the Llama adapter (SmolLM2 and every Llama checkpoint)
# --------------------------------------------------------------------------------------------


#: the activation's slope φ with act(z) = z·φ(z), by symuat's activation name (symuat.models.lifts)
SLOPES: dict[str, Callable] = {
    "silu": lambda z: 0.5 * (1.0 + np.tanh(0.5 * z)),
    "gelu_tanh": tanh_gate,
    "gelu": lambda z: 0.5 * (1.0 + _erf(z / math.sqrt(2.0))),
    "relu": lambda z: (np.asarray(z) > 0).astype(float),
}


def _erf(x):
    from scipy.special import erf

    return erf(x)


#: a trace keeps every layer's patterns and MLP activations when they take at most this many bytes
#: (short texts: the views read them several times); above it they are formed again per layer
KEEP_BYTES = 256 * 2 ** 20


def trace_bytes(model, N: int) -> int:
    """What keeping every layer's patterns ``(h, N, N)`` and MLP activations (3 × ``(N, F)``) takes."""
    c = model.config
    return 8 * len(model.layers) * (c.heads * N * N + 3 * N * c.F)


def trace_causal_lm(model, ids, states: list[np.ndarray] | None = None, *, keep: bool | None = None) -> Trace:
    """A :class:`Trace` of a :class:`~symuat.models.causal_lm.CausalLM` (every decoder family:
    Llama/SmolLM2, Qwen2, Gemma 3 — biases, sandwich norms, QK-norms and windows included).

    Without ``states`` the trace *is* the forward pass: each layer runs the expressions of
    ``DecoderLayer.forward`` in the same order (its patterns from the layer's own ``patterns``),
    so every state equals ``model.hidden_states`` bit for bit (tested) and the logit the views add
    up to is the plain forward's. With ``states`` each layer is re-entered at the given state.

    ``keep`` (default: when :func:`trace_bytes` ≤ :data:`KEEP_BYTES`): keep every layer's patterns
    and MLP activations; otherwise only the last query's pattern row is kept and the rest is
    formed again, one layer at a time, from the layer's kept input (:meth:`LayerTrace.patterns`).
    """
    from symuat.models.causal_lm import _affine
    from symuat.models.lifts import rms_scales

    ids = model.check_ids(ids)
    c = model.config
    if c.activation not in SLOPES:
        raise ModelError(f"attribution does not know the slope of activation {c.activation!r} "
                         f"(known: {', '.join(SLOPES)})")
    slope_of = SLOPES[c.activation]
    X = model.embed(ids) if states is None else states[0]
    x0 = X
    N, M, d, g = X.shape[0], c.M, c.head_dim, c.kv_heads
    if keep is None:
        keep = trace_bytes(model, N) <= KEEP_BYTES
    layers, slot = [], {}  # slot: one layer's queries and keys, shared by the layers' recompute
    for k, layer in enumerate(model.layers):
        if states is not None:
            X = states[k]
        s1 = rms_scales(X, c.eps)
        U = X * s1[:, None] * layer.g1
        V = _affine(U, layer.WV, layer.bv).reshape(N, g, d).transpose(1, 0, 2)
        if keep:
            H = layer.patterns(U)
            O = pattern_matmul(H, V[c.group], layer.window)
        else:  # one head's pattern at a time; its last row kept
            qk, O, H = layer.queries_keys(U), np.empty((c.heads, N, d)), np.empty((c.heads, 1, N))
            for i, kv in enumerate(c.group):
                Hi = layer.patterns(U, [i], qk=qk)[0]
                O[i], H[i, 0] = pattern_matmul(Hi, V[kv], layer.window), Hi[-1]
            del qk, Hi
        raw = _affine(O.transpose(1, 0, 2).reshape(N, -1), layer.WO, layer.bo)
        post_attn = None
        attn = raw
        if layer.post_attn is not None:
            post_attn = (rms_scales(raw, c.eps), layer.post_attn)
            attn = raw * post_attn[0][:, None] * layer.post_attn
        Y = X + attn
        s2 = rms_scales(Y, c.eps)
        Z = Y * s2[:, None] * layer.g2
        gate, up = _affine(Z, layer.Wg, layer.bg), _affine(Z, layer.Wu, layer.bu)
        mraw = _affine(layer.sigma(gate) * up, layer.Wd, layer.bd)
        post_mlp = None
        mlp = mraw
        if layer.post_ffn is not None:
            post_mlp = (rms_scales(mraw, c.eps), layer.post_ffn)
            mlp = mraw * post_mlp[0][:, None] * layer.post_ffn
        affine = any(b is not None for b in (layer.bv, layer.bo, layer.bg, layer.bu, layer.bd))
        layers.append(LayerTrace(
            X=X, s1=s1, g1=layer.g1, H=H, WV=layer.WV.reshape(M, g, d).transpose(1, 0, 2),
            WO=layer.WO.reshape(c.heads, d, M), group=c.group, V=V, attn=attn, s2=s2, g2=layer.g2, Wg=layer.Wg,
            Wd=layer.Wd, gate=gate, up=up, slope=slope_of(gate), mlp=mlp, post_attn=post_attn, post_mlp=post_mlp,
            Wu=layer.Wu, bv=None if layer.bv is None else layer.bv.reshape(g, d), bo=layer.bo, bg=layer.bg,
            bd=layer.bd, affine=affine, window=layer.window))
        if not keep:
            lt = layers[-1]
            lt.H, lt.gate, lt.up, lt.slope, lt.H_last = None, None, None, None, H[:, -1, :].copy()
            lt.mlp, lt.mlp_last = None, mlp[-1].copy()
            lt.recompute = _recompute(layer, X, s1, attn, s2, slope_of, slot)
        del H, gate, up
        X = Y + mlp
    xL = X if states is None else states[-1]
    logits = model.logits(xL[-1:])[0]
    decode = model.decode
    return Trace(c.family, ids, [decode(i) for i in ids], x0, layers, xL, model.final_scales(xL),
                 model.norm, lambda t: model.lm_head[int(t)], logits, decode)


def _recompute(layer, X, s1, attn, s2, slope_of, slot: dict) -> Callable[[str], np.ndarray]:
    """A layer's patterns and MLP activations formed again from its kept input, by
    :func:`trace_causal_lm`'s own expressions (so bit for bit the numbers it dropped)."""
    from symuat.models.causal_lm import _affine
    from symuat.models.lifts import rms_scales

    def recompute(name: str, head: int | None = None) -> np.ndarray:
        if name == "H":
            U = X * s1[:, None] * layer.g1
            if head is None:
                return layer.patterns(U)
            if slot.get("layer") is not layer:  # one layer's Q, K kept (O(N h d)): a head at a time costs one softmax
                slot.update(layer=layer, qk=layer.queries_keys(U))
            return layer.patterns(U, [head], qk=slot["qk"])[0]
        if slot.get("mlp_layer") is not layer:  # one layer's gate and up kept (2 N F): each formed once
            Z = (X + attn) * s2[:, None] * layer.g2
            slot.update(mlp_layer=layer, gate=_affine(Z, layer.Wg, layer.bg), up=_affine(Z, layer.Wu, layer.bu))
            del Z
        gate, up = slot["gate"], slot["up"]
        if name == "up":
            return up
        if name == "mlp":
            mraw = _affine(layer.sigma(gate) * up, layer.Wd, layer.bd)
            if layer.post_ffn is None:
                return mraw
            return mraw * rms_scales(mraw, layer.config.eps)[:, None] * layer.post_ffn
        return gate if name == "gate" else slope_of(gate)

    return recompute


#: family adapters, by the model class's name (a new family adds one line)
ADAPTERS: dict[str, Callable] = {"CausalLM": trace_causal_lm}


def trace(model, ids, states=None, *, keep: bool | None = None) -> Trace:
    """The :class:`Trace` of ``model`` on ``ids`` through its family's adapter."""
    adapter = ADAPTERS.get(type(model).__name__)
    if adapter is None and getattr(model, "kind", None) == "encoder":
        raise ModelError(f"{getattr(model, 'source', 'the model')}: attribution explains a decoder's next-token logit; "
                         "this is an encoder")
    if adapter is None:
        raise ModelError(f"attribution has no adapter for {type(model).__name__} (known: {', '.join(ADAPTERS)})")
    return adapter(model, ids, states) if keep is None else adapter(model, ids, states, keep=keep)


# --------------------------------------------------------------------------------------------
# the quantity explained: a logit or a logit difference
# --------------------------------------------------------------------------------------------


@dataclass
class Target:
    token: int
    vs: int | None
    value: float  # the model's logit, or logit(token) − logit(vs)
    scale: float  # the tolerance's reference (SCALE below)
    w: np.ndarray  # (M,) the unembedding direction: W_U[token] (− W_U[vs])
    text: str = ""

    @property
    def readout(self) -> str:
        return f"logit({self.text})" if self.vs is None else f"logit({self.text}) − logit(vs)"


SCALE = ("|sum of terms − value| ≤ tolerance · scale, scale = the largest of |value|, the logits involved and "
         "‖r ⊙ x_L[n]‖₁ (r the readout: the sum of the |products| of the dot product that computes the value, which "
         "the model's own float64 value is only defined to within rounding of); for a logit of ordinary size this is "
         "plain relative error, and it stays meaningful for a value near 0 or a small difference of two large "
         "logits. Every σ-term's split must add up to it the same way; a non-finite number fails")


def target(tr: Trace, token: int | None = None, vs: int | None = None) -> Target:
    """The value explained: ``logit(token)`` (default: the prediction) or ``logit(token) − logit(vs)``."""
    V = tr.logits.size
    token = int(np.argmax(tr.logits)) if token is None else int(token)
    for t in (token, vs):
        if t is not None and not 0 <= t < V:
            raise ModelError(f"token id {t} is outside the vocabulary [0, {V})")
    w = np.array(tr.unembed(token), dtype=float)
    value = float(tr.logits[token])
    scale = abs(value)
    if vs is not None:
        w = w - tr.unembed(vs)
        value = float(tr.logits[token] - tr.logits[vs])
        scale = max(abs(value), abs(float(tr.logits[token])), abs(float(tr.logits[vs])))
    n = tr.N - 1
    scale = max(scale, float(np.abs(tr.sf[n] * tr.gf * w * tr.xL[n]).sum()))
    return Target(token, None if vs is None else int(vs), value, scale, w, tr.decode(token))


def top_k(logits: np.ndarray, k: int, decode: Callable = str) -> list[dict]:
    """The ``k`` most likely next tokens: id, text, logit, probability (softmax in float64), rank."""
    z = logits - logits.max()
    p = np.exp(z) / np.exp(z).sum()
    order = np.argsort(-logits, kind="stable")[:k]
    return [{"rank": r + 1, "token_id": int(t), "token": decode(int(t)), "logit": float(logits[t]),
             "probability": float(p[t])} for r, t in enumerate(order)]


def token_stats(logits: np.ndarray, t: int) -> dict:
    z = logits - logits.max()
    logp = z[t] - math.log(np.exp(z).sum())
    return {"logit": float(logits[t]), "probability": float(math.exp(logp)), "log_probability": float(logp),
            "rank": int((logits > logits[t]).sum()) + 1}


# --------------------------------------------------------------------------------------------
# the two views
# --------------------------------------------------------------------------------------------


def _exactness(terms: list, value: float, scale: float, tol: float) -> tuple[float, float, float, bool]:
    """(sum, |sum − value|, relative error, passed): the sum with ``math.fsum`` (exactly rounded), a
    non-finite number fails."""
    flat = np.concatenate([np.ravel(np.asarray(t, dtype=float)) for t in terms])
    if not (np.isfinite(flat).all() and math.isfinite(value)):
        return math.nan, math.nan, math.nan, False
    total = math.fsum(flat.tolist())
    err = abs(total - value)
    rel = err / max(abs(value), np.finfo(float).tiny)
    return total, err, rel, bool(err <= tol * max(scale, np.finfo(float).tiny))


RESIDUAL_FROZEN = ("the final norm's scale s_f[n] at the model's last state (so the readout "
                   "r = s_f[n] g_f ⊙ w is one fixed vector)",
                   "each layer's attention patterns H_i and pre-attention norm scales, at the model's own "
                   "state (only to split an attention write per head and per source token)")
RESIDUAL_RELATION = (
    "This is direct logit attribution made exact: TransformerLens's decompose_resid splits the last "
    "position's residual stream into the embedding and every attention and MLP output, and "
    "apply_ln_to_stack divides by the final norm's cached scale; here that scale is frozen at the model's "
    "own last state, each sub-layer's write is counted once (a pre-norm decoder writes nothing else), "
    "and each attention write is split exactly as Σ_i Σ_m H_i[n,m] (U_m W_V) W_O,i, so the pieces add up to "
    "the logit up to float64 rounding — asserted on every run, not assumed. A piece is a sub-layer's "
    "write at the last position only; earlier positions enter through the attention of later layers.")


def residual_frozen(tr: Trace) -> tuple:
    """:data:`RESIDUAL_FROZEN` and, for a model with sandwich norms (Gemma), the post-attention norm's
    scales it freezes to split an attention write per head (the MLP write, post-norm included, is whole)."""
    extra = ()
    if any(lt.post_attn is not None for lt in tr.layers):
        extra += ("each layer's post-attention norm scale (the sandwich norm after the attention), at the "
                  "model's own attention output (only to split an attention write per head and per source token)",)
    if any(lt.post_mlp is not None for lt in tr.layers):
        extra += ("nothing of the post-MLP (post-feed-forward) norm: each MLP write is taken whole, that norm "
                  "included",)
    return RESIDUAL_FROZEN + extra + tr.extra_frozen


def duat_frozen(tr: Trace) -> tuple:
    """:data:`DUAT_FROZEN` and, for a model with sandwich norms (Gemma), the post-attention and post-MLP
    norm scales inside W1 = I + D_post A D_in and W3 = D_post_ffw W_down diag(W_u z)."""
    extra = ()
    if any(lt.post_attn is not None for lt in tr.layers):
        extra += ("every post-attention norm's scales (sandwich norm: D_post inside W1 = I + D_post A D_in), at "
                  "the attention output",)
    if any(lt.post_mlp is not None for lt in tr.layers):
        extra += ("every post-MLP (post-feed-forward) norm's scales (sandwich norm: D_post_ffw inside "
                  "W3 = D_post_ffw W_down diag(W_u z)), at the MLP output",)
    return DUAT_FROZEN + extra + tr.extra_frozen


@dataclass
class ResidualView:
    """:math:`\\ell=r\\cdot x_0[n]+\\sum_l(\\sum_{i,m}\\mathrm{head}_{l,i,m}+r\\cdot\\mathrm{mlp}_l[n])`."""

    embedding: float
    heads: np.ndarray  # (L, h, N): layer l, head i, source token m (value biases b_V inside, through H)
    mlp: np.ndarray  # (L,)
    attn_bias: np.ndarray  # (L,) the attention output bias b_O read through r (zero without one)
    value: float
    total: float
    abs_error: float
    rel_error: float
    passed: bool
    frozen: tuple = RESIDUAL_FROZEN
    relation: str = RESIDUAL_RELATION

    @property
    def attention(self) -> np.ndarray:
        return self.heads.sum(axis=(1, 2)) + self.attn_bias


def residual_view(tr: Trace, tg: Target, tol: float = TOLERANCE) -> ResidualView:
    n = tr.N - 1
    r = tr.sf[n] * tr.gf * tg.w
    emb = float(r @ tr.x0[n])
    L = len(tr.layers)
    heads = np.zeros((L, tr.layers[0].heads if L else 0, tr.N))
    mlp, bias = np.zeros(L), np.zeros(L)
    for k, lt in enumerate(tr.layers):
        ra = r if lt.post_attn is None else r * lt.post_attn[0][n] * lt.post_attn[1]
        q = lt.WO @ ra  # (h, d): W_O,i r per head
        vq = np.einsum("hmd,hd->hm", lt.V[lt.group], q)  # (U_m W_V,g(i) + b_V) · (W_O,i r)
        heads[k] = lt.last_row() * vq
        mlp[k] = r @ lt.mlp_row()
        if lt.bo is not None:
            bias[k] = ra @ lt.bo
    total, err, rel, ok = _exactness([[emb], heads, mlp, bias], tg.value, tg.scale, tol)
    return ResidualView(emb, heads, mlp, bias, tg.value, total, err, rel, ok, frozen=residual_frozen(tr))


DUAT_FROZEN = ("the attention patterns H_i of every layer and head, at the layer's input",
               "every norm's scales (pre-attention, pre-MLP, final), at their inputs",
               "the gated MLP's up-projection W_u z (DUAT's dynamic output weight W3 = W_down diag(W_u z))",
               "the dynamic biases e_j = W2_j (c_{j-1} + R_{j-1}) (they carry the earlier σ-terms)",
               "to split a σ-term by its input: the activation's slope act(u)/u at u = V_j x'_0 + e_j "
               "(the σ-term is then κ_j · u_j exactly)")
DUAT_RELATION = (
    "The papers' form: logit = ρ_0·x'_0 (the linear path A_L x'_0, split per input token) + Σ_j ρ_j·W3_j σ_j "
    "(one σ-term per layer), ρ_j the readout pulled back through the later layers' W1 = I + attention. "
    "A σ-term is not layer j's residual write (the DLA piece): it is that write as the later layers' "
    "attention carries it to the last position, and its input e_j holds the earlier σ-terms. Each σ-term is "
    "split by its input u_j = V_j x'_0 + e_j = W2_j (A_{j-1}x'_0 + R_{j-1}), W2_j = W_g S_2 (I + attention): "
    "the skip and each head × source token of the linear part V_j x'_0 and of the dynamic bias e_j.")


@dataclass
class DUATView:
    """:math:`\\ell=\\rho_0\\cdot x'_0+\\sum_j\\sigma\\text{-term}_j`, each σ-term split by its input."""

    linear_per_token: np.ndarray  # (N,) ρ_0 · x'_0, per input token
    sigma: np.ndarray  # (L,) ρ_j · W3_j σ_j
    skip_linear: np.ndarray  # (L,) κ_j · W_g S_2 A_{j-1} x'_0
    skip_bias: np.ndarray  # (L,) κ_j · W_g S_2 R_{j-1}
    heads_linear: np.ndarray  # (L, h, N) κ_j · W_g S_2 (head i, source m) of A_{j-1} x'_0
    heads_bias: np.ndarray  # (L, h, N) the same of R_{j-1} (inside e_j)
    bias_in: np.ndarray  # (L,) κ_j · b2_j: the biases inside σ's input (attention's b_V, b_O; the gate's b_g)
    bias: np.ndarray  # (L,) ρ_j · b3_j: the biases written to the residual stream (c_L's terms)
    value: float
    total: float
    abs_error: float
    rel_error: float
    split_error: float  # max_j |Σ split − σ-term_j| / scale
    passed: bool
    frozen: tuple = DUAT_FROZEN
    relation: str = DUAT_RELATION

    @property
    def linear(self) -> float:
        return float(self.linear_per_token.sum())

    @property
    def heads(self) -> np.ndarray:
        return self.heads_linear + self.heads_bias


def _flat_wv(lt: LayerTrace) -> np.ndarray:
    """``WV`` as one ``(M, g·d)`` matrix (group-major columns)."""
    g, M, d = lt.WV.shape
    return lt.WV.transpose(1, 0, 2).reshape(M, g * d)


def _per_head(G: np.ndarray, lt: LayerTrace) -> np.ndarray:
    r""":math:`G\,W_{O,i}^{\top}` for every head, ``(h, N, d)``, from ``G`` ``(N, M)`` (one matmul)."""
    h, d, M = lt.WO.shape
    return (G @ lt.WO.reshape(h * d, M).T).reshape(G.shape[0], h, d).transpose(1, 0, 2)


def _attention_adjoint(lt: LayerTrace, G: np.ndarray) -> np.ndarray:
    """:math:`(\\text{post}\\,A\\,S_1)^{\\top}G` for ``G`` ``(N, M)``: the frozen attention's adjoint."""
    Gh = pattern_rmatmul(lt.patterns(), _per_head(_post(G, lt.post_attn), lt), lt.window)  # (h, N, d)
    return _adjoint_values(lt, Gh)


def _adjoint_values(lt: LayerTrace, Gh: np.ndarray) -> np.ndarray:
    """The rest of the adjoint after the patterns, from :math:`H_i^{\\top}G_i` ``(h, N, d)``."""
    g, M, d = lt.WV.shape
    Gg = np.zeros((g,) + Gh.shape[1:])
    for i, k in enumerate(lt.group):
        Gg[k] += Gh[i]
    N = Gh.shape[1]
    return (Gg.transpose(1, 0, 2).reshape(N, g * d) @ _flat_wv(lt).T) * lt.s1[:, None] * lt.g1


def _attention_apply(lt: LayerTrace, X: np.ndarray, per_head: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(values per group ``(g, N, d)``, post A S_1 X): the frozen attention applied to any ``X``
    (``per_head``: one head's pattern at a time)."""
    N, M = X.shape
    g, _, d = lt.WV.shape
    V = ((X * lt.s1[:, None] * lt.g1) @ _flat_wv(lt)).reshape(N, g, d).transpose(1, 0, 2)
    if per_head:
        O = np.empty((lt.heads, N, d))
        for i, k in enumerate(lt.group):
            O[i] = pattern_matmul(lt.pattern_head(i), V[k], lt.window)
    else:
        O = pattern_matmul(lt.patterns(), V[lt.group], lt.window)
    O = O.transpose(1, 0, 2).reshape(N, -1) @ lt.WO.reshape(-1, M)
    return V, _post(O, lt.post_attn)


def duat_view(tr: Trace, tg: Target, tol: float = TOLERANCE) -> DUATView:
    N, M = tr.x0.shape
    n, L = N - 1, len(tr.layers)
    h = tr.layers[0].heads if L else 0
    # the linear path a_j = A_j x'_0 entering every layer, and its values (forward)
    a_in, Va = [tr.x0], []
    for lt in tr.layers:
        V, O = _attention_apply(lt, a_in[-1], per_head=True)
        Va.append(V)
        a_in.append(a_in[-1] + O)
    # the readout pulled back (reverse), each σ-term and its split
    rho = np.zeros((N, M))
    rho[n] = tr.sf[n] * tr.gf * tg.w
    sigma, sk_a, sk_r = np.zeros(L), np.zeros(L), np.zeros(L)
    hd_a, hd_r = np.zeros((L, h, N)), np.zeros((L, h, N))
    split_errs = [0.0]
    b_in, b_out = np.zeros(L), np.zeros(L)
    for j in range(L - 1, -1, -1):
        lt = tr.layers[j]
        rm = _post(rho, lt.post_mlp)
        a_const = lt.attn_const() if lt.affine else None
        m_const = lt.mlp_const() if lt.affine else None
        mlp_j = lt.mlp_write()
        sigma[j] = float((rho * (mlp_j if m_const is None else mlp_j - m_const)).sum())
        del mlp_j
        if lt.affine:
            b_out[j] = float((rho * (a_const + m_const)).sum())
        _, up, slope = lt.mlp_inputs()
        kappa = (rm @ lt.Wd.T) * up * slope  # (N, F)
        del up, slope
        q = (kappa @ lt.Wg.T) * lt.s2[:, None] * lt.g2  # σ-term = Σ q ⊙ (x_{j-1} + attn_j)
        R = lt.X - a_in[j]
        sk_a[j], sk_r[j] = float((q * a_in[j]).sum()), float((q * R).sum())
        Gh = _per_head(_post(q, lt.post_attn), lt)  # (h, N, d)
        Vall = (lt.V if lt.bv is None else lt.V - lt.bv[:, None, :])[lt.group]  # the linear part of the values
        Vlin = Va[j][lt.group]
        hd_all = np.empty((h, N))
        P = _per_head(_post(rho, lt.post_attn), lt)  # for the adjoint ρ_{j-1} = W1_j^T ρ_j, below
        Ht_P = np.empty_like(P)
        for i in range(h):  # one head's pattern (formed again on a long text) and (N, N) products at a time
            Hi = lt.pattern_head(i)
            hd_all[i] = pattern_weighted_colsum(Hi, Gh[i], Vall[i], lt.window)  # Σ_n H_i[n, m] G_i[n] · V_i[m]
            hd_a[j, i] = pattern_weighted_colsum(Hi, Gh[i], Vlin[i], lt.window)
            Ht_P[i] = pattern_rmatmul(Hi, P[i], lt.window)
            del Hi
        hd_r[j] = hd_all - hd_a[j]
        if lt.affine:
            b_in[j] = float((q * a_const).sum()) + (float(kappa.sum(axis=0) @ lt.bg) if lt.bg is not None else 0.0)
        parts = [sk_a[j], sk_r[j], b_in[j], math.fsum(hd_all.ravel().tolist())]
        split_errs.append(abs(math.fsum(parts) - sigma[j]) / max(tg.scale, np.finfo(float).tiny))
        rho = rho + _adjoint_values(lt, Ht_P)  # ρ_{j-1} = W1_j^T ρ_j
    lin = (rho * tr.x0).sum(axis=1)
    total, err, rel, ok = _exactness([lin, sigma, b_out], tg.value, tg.scale, tol)
    split_err = max(split_errs) if all(math.isfinite(e) for e in split_errs) else math.nan  # NaN is sticky
    split_ok = bool(math.isfinite(split_err) and split_err <= tol)
    return DUATView(lin, sigma, sk_a, sk_r, hd_a, hd_r, b_in, b_out, tg.value, total, err, rel, split_err,
                    ok and split_ok, frozen=duat_frozen(tr))


# --------------------------------------------------------------------------------------------
# Golden's equivalent linear map, matrix-free
# --------------------------------------------------------------------------------------------

GOLDEN_FROZEN = ("every norm's scale (pre-attention, pre-MLP, final; post-norms if any), at its input",
                 "the gate activation act(Z W_g) of every MLP (the up-projection Z W_u stays linear)",
                 "the attention patterns H_i of every layer and head")


def _golden_ok(tr: Trace) -> None:
    for k, lt in enumerate(tr.layers):
        if lt.Wu is None:
            raise ModelError(f"the {tr.family} adapter does not give W_u: Golden's map needs it")
        if lt.affine:
            raise ModelError(f"layer {k} has a bias on the residual stream (b_V, b_O, b_g, b_u or b_d): with "
                             "Golden's freezing the output is affine, not linear, in the embeddings (Golden treats "
                             "bias-free models); the residual and DUAT views are exact for it")


def golden_apply(tr: Trace, X: np.ndarray, start: int = 0) -> np.ndarray:
    r"""The frozen network applied to any input ``X`` ``(N, M)``: the last token's final-normed
    output :math:`\sum_tJ_tX_t` ``(M,)``. At ``X = x_0`` it is the model's output (exactly, up to rounding).
    With ``start = l`` ``X`` enters layer ``l`` (0-based): the frozen rest of the network from there."""
    _golden_ok(tr)
    for lt in tr.layers[start:]:
        Y = X + _attention_apply(lt, X)[1]
        Z = Y * lt.s2[:, None] * lt.g2
        X = Y + _post((lt.act * (Z @ lt.Wu)) @ lt.Wd, lt.post_mlp)
    n = tr.N - 1
    return tr.sf[n] * tr.gf * X[n]


def golden_vjp(tr: Trace, u: np.ndarray) -> np.ndarray:
    r""":math:`u^{\top}J_t` for every input position ``t`` at once, ``(N, M)``: one reverse pass
    through the frozen operators' adjoints (a logit's row: ``u = W_U[token]``)."""
    N, M = tr.x0.shape
    G = np.zeros((N, M))
    G[N - 1] = tr.sf[N - 1] * tr.gf * np.asarray(u, dtype=float)
    _golden_ok(tr)
    for lt in reversed(tr.layers):
        gm = (_post(G, lt.post_mlp) @ lt.Wd.T) * lt.act  # (N, F)
        GY = G + (gm @ lt.Wu.T) * lt.s2[:, None] * lt.g2
        G = GY + _attention_adjoint(lt, GY)
    return G


def golden_operator(tr: Trace, t: int):
    """:math:`J_t` as a SciPy ``LinearOperator`` ``(M, M)`` (matvec: a forward of the frozen network
    from position ``t``; rmatvec: one reverse pass)."""
    from scipy.sparse.linalg import LinearOperator

    N, M = tr.x0.shape
    if not 0 <= t < N:
        raise ModelError(f"input position {t} is outside [0, {N})")

    def mv(v):
        X = np.zeros((N, M))
        X[t] = np.ravel(v)
        return golden_apply(tr, X)

    return LinearOperator((M, M), matvec=mv, rmatvec=lambda u: golden_vjp(tr, np.ravel(u))[t], dtype=float)


def golden_svd(tr: Trace, t: int, k: int = 3):
    """The ``k`` leading singular triplets of :math:`J_t` (``scipy.sparse.linalg.svds`` on
    :func:`golden_operator`; no ``J`` materialised). Returns ``(U, s, Vt)``, ``s`` descending."""
    from scipy.sparse.linalg import svds

    M = tr.x0.shape[1]
    U, s, Vt = svds(golden_operator(tr, t), k=min(k, M - 1), tol=1e-14, random_state=0)
    order = np.argsort(-s)
    return U[:, order], s[order], Vt[order]


class _GoldenDetached:
    """A HF decoder in float64 (its float32 islands patched by the family's ``reference_islands``,
    default :class:`~symuat.models.reference.Float64Islands`) with Golden's freezing: every RMSNorm's
    scale ``rsqrt(mean(x²)+eps)``, every gated MLP's ``act(gate_proj(x))`` and the softmax'd
    attention patterns ``detach()``-ed, so autograd sees the linear map. Everything is restored on exit."""

    def __init__(self, hf, islands):
        self.hf, self.islands = hf, islands

    def __enter__(self):
        import torch

        self.islands.__enter__()
        self.saved = []
        island_forward = {}

        def rms(norm, x):
            # the gain the family's (island-patched) norm applies — weight, or Gemma's 1 + weight — read off
            # the norm itself at x = 1 (mean(x²) = 1), so no family's convention is assumed here
            eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
            ones = torch.ones(x.shape[-1], dtype=x.dtype)
            gain = island_forward[type(norm)](norm, ones) * torch.sqrt(torch.tensor(1.0, dtype=x.dtype) + eps)
            var = x.pow(2).mean(-1, keepdim=True)
            return gain * (x * torch.rsqrt(var + eps).detach())

        def mlp(m, x):
            return m.down_proj(m.act_fn(m.gate_proj(x)).detach() * m.up_proj(x))

        mods = list(self.hf.modules())
        for cls in {type(m) for m in mods if type(m).__name__.endswith("RMSNorm")}:
            self.saved.append((cls, "forward", cls.forward))
            island_forward[cls] = cls.forward
            cls.forward = rms
        for cls in {type(m) for m in mods if type(m).__name__.endswith("MLP") and hasattr(m, "gate_proj")}:
            self.saved.append((cls, "forward", cls.forward))
            cls.forward = mlp
        F = torch.nn.functional
        soft = F.softmax  # the islands' float64 softmax

        def softmax(t, dim=None, dtype=None, **kw):
            return soft(t, dim=dim, dtype=dtype, **kw).detach()

        self.saved.append((F, "softmax", soft))
        F.softmax = softmax
        return self

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        return self.islands.__exit__(*exc)


def golden_reference(model, ids, *, jacobian: bool = True, u: np.ndarray | None = None,
                     chunk_size: int | None = 64) -> dict:
    r"""transformers' model of the checkpoint's own files (float64, islands patched, Golden's detaches):
    ``y`` (the last token's final-normed output), ``x0`` its input embeddings, ``J`` ``(M, N, M)``
    by ``torch.func.jacrev`` (``jacobian=True``; ``chunk_size`` output directions per batched backward,
    which bounds its memory — 576 at once on SmolLM2 takes over 10 GB), and ``vjp`` :math:`u^{	op}J` by one
    ``torch.autograd`` backward (``u`` given)."""

    import torch

    from symuat.models import reference

    reference.refuse_blind(model)
    hf = reference.family_hf_model(model)
    islands = reference.islands(model, hf)
    ids_t = torch.tensor(np.asarray(ids)[None])
    out = {}
    with _GoldenDetached(hf, islands):
        base = hf.get_decoder() if hasattr(hf, "get_decoder") else hf.model
        E = base.embed_tokens(ids_t)[0].detach()  # (Gemma's module scales by sqrt(M) itself, as model.embed does)

        def f(E):
            return base(inputs_embeds=E[None]).last_hidden_state[0, -1]

        E1 = E.clone().requires_grad_(True)
        y = f(E1)
        out["y"], out["x0"] = y.detach().numpy(), E.numpy()
        if u is not None:
            (g,) = torch.autograd.grad(y, E1, torch.from_numpy(np.asarray(u, dtype=np.float64)))
            out["vjp"] = g.numpy()
        if jacobian:
            out["J"] = torch.func.jacrev(f, chunk_size=chunk_size)(E).detach().numpy()
    return out


# --------------------------------------------------------------------------------------------
# one call: every view
# --------------------------------------------------------------------------------------------


@dataclass
class Attribution:
    """Both exact views of one explained value; in a notebook it displays as a summary table.

    Layers and heads are 0-based (TransformerLens's ``blocks.{l}``); :meth:`terms` labels every
    term with its TransformerLens hook (:mod:`symuat.models.terms`)."""

    trace: Trace
    target: Target
    residual: ResidualView
    duat: DUATView

    @property
    def passed(self) -> bool:
        return self.residual.passed and self.duat.passed

    def terms(self, view: str = "both") -> list[dict]:
        """Every term of ``view`` (``residual``, ``duat``, ``both``): one dict per term, long format."""
        return terms_mod.terms(self, view)

    def to_pandas(self, view: str = "both"):
        """:meth:`terms` as a pandas ``DataFrame`` (layer, sublayer, head, position, token, hook, value)."""
        return terms_mod.to_pandas(self, view)

    def top(self, k: int = 10, view: str = "residual") -> list[dict]:
        """The ``k`` terms of ``view`` largest in absolute value."""
        return terms_mod.top(self, k, view)

    def predictions(self, k: int = 5) -> list[dict]:
        """The ``k`` most likely next tokens (rank, token, logit, probability)."""
        return top_k(self.trace.logits, k, self.trace.decode)

    def pattern(self, layer: int, head: int) -> np.ndarray:
        """Layer ``layer``'s attention pattern of head ``head`` (0-based), ``(N, N)``: row = query
        position, column = source position (TransformerLens's ``blocks.{layer}.attn.hook_pattern``)."""
        return pattern(self.trace, layer, head)

    def figure(self, path):
        """Write the per-layer × head and per-source-token figure (needs matplotlib)."""
        write_figure(self, str(path))
        return path

    def __str__(self) -> str:
        return terms_mod.text_summary(self)

    def _repr_html_(self) -> str:
        return terms_mod.html_summary(self, self.predictions())

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def pattern(tr: Trace, layer: int, head: int) -> np.ndarray:
    """Layer ``layer``'s attention pattern of head ``head`` (0-based) in the trace, ``(N, N)``."""
    L = len(tr.layers)
    if not 0 <= layer < L:
        raise ModelError(f"layer {layer} is outside [0, {L}) (layers are 0-based)")
    lt = tr.layers[layer]
    if not 0 <= head < lt.heads:
        raise ModelError(f"head {head} is outside [0, {lt.heads}) (heads are 0-based)")
    return np.asarray(lt.pattern_head(head))  # dense: a long text's banded pattern filled in


def explain(model, ids, token: int | None = None, vs: int | None = None, *, states=None,
            tol: float = TOLERANCE, keep: bool | None = None) -> Attribution:
    """Both views of ``logit(token)`` (or ``logit(token) − logit(vs)``) at the last position
    (``keep``: whether the trace keeps every layer's patterns, :func:`trace_causal_lm`)."""
    tr = trace(model, ids, states, keep=keep)
    tg = target(tr, token, vs)
    return Attribution(tr, tg, residual_view(tr, tg, tol), duat_view(tr, tg, tol))


BY = ("layer", "sublayer", "head", "token")


def rows(att: Attribution, view: str, by: str) -> list[tuple[str, float]]:
    """The view's terms aggregated ``by`` layer, sub-layer, head or source token; they sum to the value."""
    tr, L = att.trace, len(att.trace.layers)
    affine = any(lt.affine for lt in tr.layers)
    words = [f"{m}:{w!r}" for m, w in enumerate(tr.words)]
    if view == "residual":
        v = att.residual
        if by == "layer":
            return [("embedding", v.embedding)] + [(f"layer {k}", float(v.attention[k] + v.mlp[k]))
                                                   for k in range(L)]
        if by == "sublayer":
            out = [("embedding", v.embedding)]
            for k in range(L):
                out += [(f"layer {k} attention", float(v.attention[k])), (f"layer {k} MLP", float(v.mlp[k]))]
            return out
        if by == "head":
            out = [("embedding", v.embedding)]
            for k in range(L):
                out += [(f"L{k}H{i}", float(v.heads[k, i].sum())) for i in range(v.heads.shape[1])]
                if affine:
                    out.append((f"L{k} attention b_O", float(v.attn_bias[k])))
                out.append((f"L{k} MLP", float(v.mlp[k])))
            return out
        per = v.heads.sum(axis=(0, 1))
        return ([(f"attention from {words[m]}", float(per[m])) for m in range(tr.N)]
                + [("last position's own: embedding + MLPs" + (" + b_O" if affine else ""),
                    float(v.embedding + v.mlp.sum() + v.attn_bias.sum()))])
    v = att.duat
    c_L = [("bias terms c_L", float(v.bias.sum()))]
    if by == "layer":
        return [("linear path A_L x'_0", v.linear)] + [(f"σ-term {j}", float(v.sigma[j])) for j in range(L)] + c_L
    if by == "sublayer":
        out = [("linear path A_L x'_0", v.linear)]
        for j in range(L):
            out += [(f"σ{j} ← skip, V x'_0", float(v.skip_linear[j])),
                    (f"σ{j} ← attention, V x'_0", float(v.heads_linear[j].sum())),
                    (f"σ{j} ← skip, e", float(v.skip_bias[j])),
                    (f"σ{j} ← attention, e", float(v.heads_bias[j].sum()))]
            if affine:
                out.append((f"σ{j} ← biases b2, e", float(v.bias_in[j])))
        return out + c_L
    if by == "head":
        out = [("linear path A_L x'_0", v.linear)]
        for j in range(L):
            out.append((f"σ{j} ← skip" + (" + biases" if affine else ""),
                        float(v.skip_linear[j] + v.skip_bias[j] + v.bias_in[j])))
            out += [(f"σ{j} ← L{j}H{i}", float(v.heads[j, i].sum())) for i in range(v.heads.shape[1])]
        return out + c_L
    per = v.heads.sum(axis=(0, 1))
    return ([(f"linear path from {words[m]}", float(v.linear_per_token[m])) for m in range(tr.N)]
            + [(f"σ-terms ← attention from {words[m]}", float(per[m])) for m in range(tr.N)]
            + [("σ-terms ← skip" + (" + biases" if affine else ""),
                float(v.skip_linear.sum() + v.skip_bias.sum() + v.bias_in.sum()))] + c_L)


# --------------------------------------------------------------------------------------------
# the report: JSON, table, figure (``symuat model explain``)
# --------------------------------------------------------------------------------------------


def report(att: Attribution, *, by: str = "layer", k: int = 5, tol: float = TOLERANCE) -> dict:
    """Everything ``explain`` prints, as one JSON-ready dict (full per-head × source arrays included)."""
    tr, tg, res, du = att.trace, att.target, att.residual, att.duat
    words = tr.words
    out = {
        "tokens": words, "position": tr.N - 1, "token": tg.text, "token_id": tg.token,
        "vs": None if tg.vs is None else tr.decode(tg.vs), "vs_id": tg.vs,
        "explained": "logit(token)" if tg.vs is None else "logit(token) - logit(vs)",
        "value": tg.value, "logit": float(tr.logits[tg.token]),
        "token_stats": token_stats(tr.logits, tg.token),
        "vs_stats": None if tg.vs is None else token_stats(tr.logits, tg.vs),
        "top_k": top_k(tr.logits, k, tr.decode),
        "tolerance": tol,
        "tolerance_definition": SCALE, "scale": tg.scale,
        "passed": att.passed, "by": by,
        "indexing": "layers, heads and source positions are 0-based (TransformerLens's blocks.{l}, head h); "
                    "rank 1 is the most likely token",
        "hooks": {"embedding": "hook_embed", "head_source": "blocks.{layer}.attn.hook_result (head; per source "
                  "position through blocks.{layer}.attn.hook_pattern)", "mlp": "blocks.{layer}.hook_mlp_out",
                  "attention_output_bias": "blocks.{layer}.hook_attn_out"},
        # the DUAT terms, as `explain` has always listed them (linear path, σ-terms, zero bias)
        "sum_of_terms": du.total, "abs_error": du.abs_error, "rel_error": du.rel_error,
        "terms": ([{"term": "linear path A_L x'_0", "value": du.linear,
                    "per_input_token": [{"token": w, "value": float(v)} for w, v in zip(words, du.linear_per_token)]}]
                  + [{"term": f"layer {j} sigma-term", "value": float(v)} for j, v in enumerate(du.sigma)]
                  + [{"term": "bias terms c_L", "value": float(du.bias.sum())}]),
        "views": {
            "residual": {"total": res.total, "abs_error": res.abs_error, "rel_error": res.rel_error,
                         "passed": res.passed, "frozen": list(res.frozen), "relation": res.relation,
                         "embedding": res.embedding, "attention": res.attention, "mlp": res.mlp,
                         "attention_output_bias": res.attn_bias,
                         "heads": res.heads.sum(axis=2), "head_source": res.heads,
                         "rows": [{"term": t, "value": v} for t, v in rows(att, "residual", by)]},
            "duat": {"total": du.total, "abs_error": du.abs_error, "rel_error": du.rel_error,
                     "split_error": du.split_error, "passed": du.passed, "frozen": list(du.frozen),
                     "relation": du.relation, "linear_per_token": du.linear_per_token, "sigma": du.sigma,
                     "sigma_split": {"skip_linear": du.skip_linear, "skip_bias": du.skip_bias,
                                     "heads_linear": du.heads_linear, "heads_bias": du.heads_bias,
                                     "biases": du.bias_in},
                     "bias_terms": du.bias,
                     "rows": [{"term": t, "value": v} for t, v in rows(att, "duat", by)]},
        },
    }
    return json_safe(out)


def _table_rows(pairs: list[tuple[str, float]], by: str, limit: int) -> list[tuple[str, float]]:
    """All rows ``by`` layer; otherwise the ``limit`` largest in |value| and one row for the rest."""
    if by == "layer" or len(pairs) <= limit + 1:
        return pairs
    order = sorted(range(len(pairs)), key=lambda i: -abs(pairs[i][1]) if math.isfinite(pairs[i][1]) else -math.inf)
    keep = sorted(order[:limit])
    rest = [pairs[i][1] for i in order[limit:]]
    total = math.fsum(rest) if all(math.isfinite(v) for v in rest) else math.nan
    return [pairs[i] for i in keep] + [(f"the other {len(rest)} terms", total)]


def print_table(rep: dict, text: str, *, limit: int = 20, views=("residual", "duat"), file=None,
                quiet: bool = False) -> None:
    import shutil
    import sys
    import textwrap

    p = (lambda *a: print(*a, file=file or sys.stdout))
    cols = max(60, min(120, shutil.get_terminal_size((100, 24)).columns))
    f = lambda v: f"{v:+.12f}" if v is not None else "non-finite"
    what = repr(rep["token"]) if rep["vs"] is None else f"{rep['token']!r} − {rep['vs']!r}"
    p(f"{text!r} → next token at position {rep['position']} ({len(rep['tokens'])} tokens)")
    p(f"  {'rank':>4}  {'token':<18} {'logit':>10} {'probability':>12}")
    num = lambda v, spec: format(v, spec) if v is not None else "non-finite"
    for t in rep["top_k"]:
        p(f"  {t['rank']:>4}  {t['token']!r:<18} {num(t['logit'], '>10.4f'):>10} {num(t['probability'], '>12.4%'):>12}")
    for key, tid in (("token_stats", rep["token_id"]), ("vs_stats", rep["vs_id"])):
        s = rep[key]
        if s is not None:
            name = rep["token"] if key == "token_stats" else rep["vs"]
            p(f"  {name!r} (id {tid}): rank {s['rank']}, probability {num(s['probability'], '.4%')}, "
              f"logit {num(s['logit'], '.6f')}")
    p(f"\nexplained: {'logit(' + what + ')' if rep['vs'] is None else 'logit difference ' + what} = "
      f"{f(rep['value'])} (the model's float64 forward)")
    names = {"residual": "residual view — direct logit attribution, exact", "duat": "DUAT view — the papers' form"}
    for view in views:
        v = rep["views"][view]
        pairs = [(r["term"], r["value"] if r["value"] is not None else math.nan) for r in v["rows"]]
        shown = _table_rows(pairs, rep["by"], limit)
        p(f"\n{names[view]}, by {rep['by']}")
        width = max([len(t) for t, _ in shown] + [24])
        p(f"  {'term':<{width}} {'value':>18}")
        for t, val in shown:
            p(f"  {t:<{width}} {f(val) if math.isfinite(val) else 'non-finite':>18}")
        extra = f", σ-splits within {v['split_error']:.1e}" if view == "duat" and v.get("split_error") is not None else ""
        err = "—" if v["abs_error"] is None else f"{v['abs_error']:.1e} (relative {v['rel_error']:.1e})"
        p(f"  {'sum':<{width}} {f(v['total']):>18}   |sum − value| = {err}{extra}: "
          f"{'adds up' if v['passed'] else 'DOES NOT ADD UP'}")
        if not quiet:
            wrap = lambda t: textwrap.fill(t, width=cols, initial_indent="  ", subsequent_indent="    ")
            p(wrap("frozen: " + "; ".join(v["frozen"])))
            p(wrap(v["relation"]))
    for c in rep.get("checks", []):
        err = "non-finite" if c["abs_error"] is None else f"{c['abs_error']:.1e}"
        p(f"  {'ok  ' if c['passed'] else 'FAIL'} {c['check']}: |difference| = {err}")
    if rep.get("lens"):
        p("\nlenses at the last position (0-based layers; row l: the state entering layer l):")
        p("  " + rep["lens_table"].replace("\n", "\n  "))
    p(f"\n{'PASS' if rep['passed'] else 'FAIL'}: every view sums to the value within {rep['tolerance']:g} "
      "(see tolerance_definition in --format json)" if rep["passed"] else
      f"\nFAIL: a view does not sum to the value within {rep['tolerance']:g}, or a number is non-finite")


def figure(att: Attribution, path) -> "Path":
    """One page-width figure: the residual view per layer × head (+ the MLP column), the DUAT
    σ-terms' attention per layer × head, and both views per source token."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from symuat.numeric.figures import FONT, _save

    tr, tg, res, du = att.trace, att.target, att.residual, att.duat
    L, h = res.heads.shape[:2]
    what = f"logit({tg.text!r})" if tg.vs is None else f"logit({tg.text!r}) − logit({tr.decode(tg.vs)!r})"
    with plt.rc_context(FONT):
        fig = plt.figure(figsize=(14, 11))
        gs = fig.add_gridspec(2, 2, height_ratios=[3, 2])
        for col, (title, grid) in enumerate((
                ("residual view: head writes + MLP", np.column_stack([res.heads.sum(axis=2), res.mlp])),
                ("DUAT view: σ-term ← head / skip", np.column_stack([du.heads.sum(axis=2),
                                                                      du.skip_linear + du.skip_bias + du.bias_in])))):
            ax = fig.add_subplot(gs[0, col])
            vmax = max(np.abs(grid).max(), np.finfo(float).tiny)
            im = ax.imshow(grid, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
            ax.set_xticks(range(h + 1), [str(i) for i in range(h)] + ["MLP" if col == 0 else "skip"])
            step = max(1, L // 10)
            ax.set_yticks(range(0, L, step), [str(k) for k in range(0, L, step)])
            ax.set_xlabel("head")
            ax.set_ylabel("layer")
            ax.set_title(title)
            fig.colorbar(im, ax=ax, fraction=0.05, pad=0.02, label="contribution")
        ax = fig.add_subplot(gs[1, :])
        x = np.arange(tr.N)
        w = 0.27
        ax.bar(x - w, res.heads.sum(axis=(0, 1)), w, label="residual view: attention from the token", color="#1f4e79")
        ax.bar(x, du.heads.sum(axis=(0, 1)), w, label="DUAT view: σ-terms ← attention from the token", color="#c0392b")
        ax.bar(x + w, du.linear_per_token, w, label="DUAT view: linear path from the token", color="#999")
        ax.axhline(0, color="k", lw=0.6)
        step = max(1, tr.N // 24)
        ax.set_xticks(x[::step], [repr(t)[1:-1] for t in tr.words][::step], rotation=60, ha="right")
        ax.set_ylabel("contribution")
        ax.set_title("per source token")
        ax.legend(loc="best", fontsize=11)
        fig.suptitle(f"{what} = {tg.value:.6f}, exact: residual view |Σ − value| = {res.abs_error:.1e}, "
                     f"DUAT view {du.abs_error:.1e}")
        fig.tight_layout()
        return _save(fig, path)


def write_figure(att: Attribution, path: str) -> None:
    """The figure, written to a temporary file in the same folder and renamed (nothing half-written)."""
    import os
    import tempfile
    from pathlib import Path

    p = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=p.suffix, dir=p.parent)
    os.close(fd)
    try:
        with np.errstate(all="ignore"):
            figure(att, tmp)
        os.replace(tmp, p)
    except (OSError, ValueError) as exc:
        raise ModelError(f"{p}: cannot write the figure ({exc})") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
