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

A family supplies one adapter, ``trace(model, ids, states)``: :func:`trace_llama` here (SmolLM2
and every Llama checkpoint); a new family registers its own in :data:`ADAPTERS`.

**The residual view** (comparable with direct logit attribution). The residual stream at the last
position is exactly :math:`x_L[n]=x_0[n]+\sum_l(\mathrm{attn}_l[n]+\mathrm{mlp}_l[n])` and each
attention write is exactly
:math:`\sum_i\sum_m H_i[n,m]\,(U_mW_{V,g(i)})W_{O,i}`. With the final norm's scale frozen at the
model's own final state, the readout :math:`r=s_f[n]\,g_f\odot w_t` is one fixed vector and

.. math:: \ell_t=r\cdot x_0[n]+\sum_l\Big(\sum_{i,m}H^{(l)}_i[n,m]\,(U^{(l)}_mW_{V})\cdot(W_{O,i}r)
          +r\cdot\mathrm{mlp}_l[n]\Big).

**The DUAT view** (the papers' form): :math:`\ell_t=\rho_0\cdot x'_0+\sum_j\rho_j\cdot W3_j\sigma_j`
with :math:`\rho_{j-1}=W1_j^{\top}\rho_j` — :func:`symuat.models.llama.decompose_logit`'s terms —
and each σ-term's *input* :math:`u_j=V_jx'_0+e_j` split into the skip and the attention (per
head, per source token) of its linear-path part :math:`V_jx'_0` and of its dynamic bias
:math:`e_j`, through the frozen activation slope: :math:`\rho_j\cdot W3_j\sigma(u_j)=\kappa_j\cdot u_j`,
:math:`\kappa_j=\mathrm{slope}(u_j)\odot W3_j^{\top}\rho_j`.

**Golden's map**: with the norm scales, the gate activation :math:`\mathrm{act}(ZW_g)` and the
patterns detached, the last token's final-normed output is linear in the input embeddings,
:math:`y=\sum_tJ_tx_t` exactly; :func:`golden_vjp` gives :math:`u^{\top}J_t` for every ``t`` in one
reverse pass, :func:`golden_svd` the leading singular triplets of :math:`J_t` (no ``J`` built).

>>> import numpy as np
>>> from symuat.models.llama import random_llama
>>> m = random_llama(np.random.default_rng(0))
>>> a = explain(m, np.array([1, 5, 7, 2]))
>>> a.residual.passed and a.duat.passed
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from symuat.models.checkpoint import ModelError

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

    @property
    def heads(self) -> int:
        return self.H.shape[0]


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


def trace_llama(model, ids, states: list[np.ndarray] | None = None) -> Trace:
    """A :class:`Trace` of :class:`~symuat.models.llama.LlamaNumpy`.

    Without ``states`` the trace *is* the forward pass: each layer runs the expressions of
    ``LlamaLayer.forward`` in the same order (its patterns from the model's own
    ``LlamaLayer.patterns``), so every state equals ``model.hidden_states`` bit for bit (tested)
    and the logit the views add up to is the plain forward's. With ``states`` each layer is
    re-entered at the given state.
    """
    from symuat.models.llama import rms_scales

    ids = model.check_ids(ids)
    c = model.config
    X = model.embed(ids) if states is None else states[0]
    x0 = X
    N, M, d, g = X.shape[0], c.M, c.head_dim, c.kv_heads
    layers = []
    for k, layer in enumerate(model.layers):
        if states is not None:
            X = states[k]
        s1 = rms_scales(X, c.eps)
        U = X * s1[:, None] * layer.g1
        H = layer.patterns(U)
        V = (U @ layer.WV).reshape(N, g, d).transpose(1, 0, 2)
        attn = (H @ V[c.group]).transpose(1, 0, 2).reshape(N, -1) @ layer.WO
        Y = X + attn
        s2 = rms_scales(Y, c.eps)
        Z = Y * s2[:, None] * layer.g2
        gate, up = Z @ layer.Wg, Z @ layer.Wu
        slope = 0.5 * (1.0 + np.tanh(0.5 * gate))  # silu(z) = z · sigmoid(z), as llama.silu computes it
        mlp = (gate * slope * up) @ layer.Wd
        layers.append(LayerTrace(X=X, s1=s1, g1=layer.g1, H=H, WV=layer.WV.reshape(M, g, d).transpose(1, 0, 2),
                                 WO=layer.WO.reshape(c.heads, d, M), group=c.group, V=V, attn=attn, s2=s2,
                                 g2=layer.g2, Wg=layer.Wg, Wd=layer.Wd, gate=gate, up=up, slope=slope, mlp=mlp))
        X = Y + mlp
    xL = X if states is None else states[-1]
    logits = model.logits(xL[-1:])[0]
    tok = model.tokenizer
    decode = (lambda t: tok.decode([int(t)])) if tok is not None else str
    return Trace("llama", ids, [decode(i) for i in ids], x0, layers, xL, model.final_scales(xL),
                 model.norm, lambda t: model.lm_head[int(t)], logits, decode)


#: family adapters, by the model class's name (a new family adds one line)
ADAPTERS: dict[str, Callable] = {"LlamaNumpy": trace_llama}


def trace(model, ids, states=None) -> Trace:
    """The :class:`Trace` of ``model`` on ``ids`` through its family's adapter."""
    adapter = ADAPTERS.get(type(model).__name__)
    if adapter is None:
        raise ModelError(f"attribution has no adapter for {type(model).__name__} (known: {', '.join(ADAPTERS)})")
    return adapter(model, ids, states)


# --------------------------------------------------------------------------------------------
# the quantity explained: a logit or a logit difference
# --------------------------------------------------------------------------------------------


@dataclass
class Target:
    token: int
    vs: int | None
    value: float  # the model's logit, or logit(token) − logit(vs)
    scale: float  # the tolerance's reference: max(|value|, |logit(token)|, |logit(vs)|)
    w: np.ndarray  # (M,) the unembedding direction: W_U[token] (− W_U[vs])
    text: str = ""

    @property
    def readout(self) -> str:
        return f"logit({self.text})" if self.vs is None else f"logit({self.text}) − logit(vs)"


def target(tr: Trace, token: int | None = None, vs: int | None = None) -> Target:
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


@dataclass
class ResidualView:
    """:math:`\\ell=r\\cdot x_0[n]+\\sum_l(\\sum_{i,m}\\mathrm{head}_{l,i,m}+r\\cdot\\mathrm{mlp}_l[n])`."""

    embedding: float
    heads: np.ndarray  # (L, h, N): layer l, head i, source token m
    mlp: np.ndarray  # (L,)
    value: float
    total: float
    abs_error: float
    rel_error: float
    passed: bool
    frozen: tuple = RESIDUAL_FROZEN
    relation: str = RESIDUAL_RELATION

    @property
    def attention(self) -> np.ndarray:
        return self.heads.sum(axis=(1, 2))


def residual_view(tr: Trace, tg: Target, tol: float = TOLERANCE) -> ResidualView:
    n = tr.N - 1
    r = tr.sf[n] * tr.gf * tg.w
    emb = float(r @ tr.x0[n])
    L = len(tr.layers)
    heads = np.zeros((L, tr.layers[0].heads if L else 0, tr.N))
    mlp = np.zeros(L)
    for k, lt in enumerate(tr.layers):
        ra = r if lt.post_attn is None else r * lt.post_attn[0][n] * lt.post_attn[1]
        q = lt.WO @ ra  # (h, d): W_O,i r per head
        vq = np.einsum("hmd,hd->hm", lt.V[lt.group], q)  # (U_m W_V,g(i)) · (W_O,i r)
        heads[k] = lt.H[:, n, :] * vq
        mlp[k] = r @ lt.mlp[n]
    total, err, rel, ok = _exactness([[emb], heads, mlp], tg.value, tg.scale, tol)
    return ResidualView(emb, heads, mlp, tg.value, total, err, rel, ok)


DUAT_FROZEN = ("the attention patterns H_i of every layer and head, at the layer's input",
               "every norm's scales (pre-attention, pre-MLP, final), at their inputs",
               "the SwiGLU up-projection W_u z (DUAT's dynamic output weight W3 = W_down diag(W_u z))",
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
    """:math:`G\,W_{O,i}^{\top}` for every head, ``(h, N, d)``, from ``G`` ``(N, M)`` (one matmul)."""
    h, d, M = lt.WO.shape
    return (G @ lt.WO.reshape(h * d, M).T).reshape(G.shape[0], h, d).transpose(1, 0, 2)


def _attention_adjoint(lt: LayerTrace, G: np.ndarray) -> np.ndarray:
    """:math:`(\text{post}\,A\,S_1)^{\top}G` for ``G`` ``(N, M)``: the frozen attention's adjoint."""
    Gh = lt.H.transpose(0, 2, 1) @ _per_head(_post(G, lt.post_attn), lt)  # (h, N, d)
    g, M, d = lt.WV.shape
    Gg = np.zeros((g,) + Gh.shape[1:])
    for i, k in enumerate(lt.group):
        Gg[k] += Gh[i]
    N = G.shape[0]
    return (Gg.transpose(1, 0, 2).reshape(N, g * d) @ _flat_wv(lt).T) * lt.s1[:, None] * lt.g1


def _attention_apply(lt: LayerTrace, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values per group ``(g, N, d)``, post A S_1 X): the frozen attention applied to any ``X``."""
    N, M = X.shape
    g, _, d = lt.WV.shape
    V = ((X * lt.s1[:, None] * lt.g1) @ _flat_wv(lt)).reshape(N, g, d).transpose(1, 0, 2)
    O = (lt.H @ V[lt.group]).transpose(1, 0, 2).reshape(N, -1) @ lt.WO.reshape(-1, M)
    return V, _post(O, lt.post_attn)


def duat_view(tr: Trace, tg: Target, tol: float = TOLERANCE) -> DUATView:
    N, M = tr.x0.shape
    n, L = N - 1, len(tr.layers)
    h = tr.layers[0].heads if L else 0
    # the linear path a_j = A_j x'_0 entering every layer, and its values (forward)
    a_in, Va = [tr.x0], []
    for lt in tr.layers:
        V, O = _attention_apply(lt, a_in[-1])
        Va.append(V)
        a_in.append(a_in[-1] + O)
    # the readout pulled back (reverse), each σ-term and its split
    rho = np.zeros((N, M))
    rho[n] = tr.sf[n] * tr.gf * tg.w
    sigma, sk_a, sk_r = np.zeros(L), np.zeros(L), np.zeros(L)
    hd_a, hd_r = np.zeros((L, h, N)), np.zeros((L, h, N))
    split_err = 0.0
    for j in range(L - 1, -1, -1):
        lt = tr.layers[j]
        rm = _post(rho, lt.post_mlp)
        sigma[j] = float((rho * lt.mlp).sum())
        kappa = (rm @ lt.Wd.T) * lt.up * lt.slope  # (N, F)
        q = (kappa @ lt.Wg.T) * lt.s2[:, None] * lt.g2  # σ-term = Σ q ⊙ (x_{j-1} + attn_j)
        R = lt.X - a_in[j]
        sk_a[j], sk_r[j] = float((q * a_in[j]).sum()), float((q * R).sum())
        Gh = _per_head(_post(q, lt.post_attn), lt)  # (h, N, d)
        Vall = lt.V[lt.group]
        Vlin = Va[j][lt.group]
        P_all = Gh @ Vall.transpose(0, 2, 1)  # (h, N, N): [i, n, m] = G_i[n] · V_i[m]
        P_lin = Gh @ Vlin.transpose(0, 2, 1)
        hd_all = (lt.H * P_all).sum(axis=1)  # Σ_n H_i[n, m] P[i, n, m]
        hd_a[j] = (lt.H * P_lin).sum(axis=1)
        hd_r[j] = hd_all - hd_a[j]
        parts = [sk_a[j], sk_r[j], math.fsum(hd_all.ravel().tolist())]
        split_err = max(split_err, abs(math.fsum(parts) - sigma[j]) / max(tg.scale, np.finfo(float).tiny))
        rho = rho + _attention_adjoint(lt, rho)  # ρ_{j-1} = W1_j^T ρ_j
    lin = (rho * tr.x0).sum(axis=1)
    total, err, rel, ok = _exactness([lin, sigma], tg.value, tg.scale, tol)
    split_ok = math.isfinite(split_err) and split_err <= tol
    return DUATView(lin, sigma, sk_a, sk_r, hd_a, hd_r, tg.value, total, err, rel, split_err, ok and split_ok)


# --------------------------------------------------------------------------------------------
# one call: every view
# --------------------------------------------------------------------------------------------


@dataclass
class Attribution:
    trace: Trace
    target: Target
    residual: ResidualView
    duat: DUATView

    @property
    def passed(self) -> bool:
        return self.residual.passed and self.duat.passed


def explain(model, ids, token: int | None = None, vs: int | None = None, *, states=None,
            tol: float = TOLERANCE) -> Attribution:
    """Both views of ``logit(token)`` (or ``logit(token) − logit(vs)``) at the last position."""
    tr = trace(model, ids, states)
    tg = target(tr, token, vs)
    return Attribution(tr, tg, residual_view(tr, tg, tol), duat_view(tr, tg, tol))


BY = ("layer", "sublayer", "head", "token")


def rows(att: Attribution, view: str, by: str) -> list[tuple[str, float]]:
    """The view's terms aggregated ``by`` layer, sub-layer, head or source token; they sum to the value."""
    tr, L = att.trace, len(att.trace.layers)
    words = [f"{m}:{w!r}" for m, w in enumerate(tr.words)]
    if view == "residual":
        v = att.residual
        if by == "layer":
            return [("embedding", v.embedding)] + [(f"layer {k + 1}", float(v.heads[k].sum() + v.mlp[k]))
                                                   for k in range(L)]
        if by == "sublayer":
            out = [("embedding", v.embedding)]
            for k in range(L):
                out += [(f"layer {k + 1} attention", float(v.heads[k].sum())), (f"layer {k + 1} MLP", float(v.mlp[k]))]
            return out
        if by == "head":
            out = [("embedding", v.embedding)]
            for k in range(L):
                out += [(f"L{k + 1}H{i}", float(v.heads[k, i].sum())) for i in range(v.heads.shape[1])]
                out.append((f"L{k + 1} MLP", float(v.mlp[k])))
            return out
        per = v.heads.sum(axis=(0, 1))
        return ([(f"attention from {words[m]}", float(per[m])) for m in range(tr.N)]
                + [(f"last position's own: embedding + MLPs", float(v.embedding + v.mlp.sum()))])
    v = att.duat
    if by == "layer":
        return [("linear path A_L x'_0", v.linear)] + [(f"σ-term {j + 1}", float(v.sigma[j])) for j in range(L)]
    if by == "sublayer":
        out = [("linear path A_L x'_0", v.linear)]
        for j in range(L):
            out += [(f"σ{j + 1} ← skip, V x'_0", float(v.skip_linear[j])),
                    (f"σ{j + 1} ← attention, V x'_0", float(v.heads_linear[j].sum())),
                    (f"σ{j + 1} ← skip, e", float(v.skip_bias[j])),
                    (f"σ{j + 1} ← attention, e", float(v.heads_bias[j].sum()))]
        return out
    if by == "head":
        out = [("linear path A_L x'_0", v.linear)]
        for j in range(L):
            out.append((f"σ{j + 1} ← skip", float(v.skip_linear[j] + v.skip_bias[j])))
            out += [(f"σ{j + 1} ← L{j + 1}H{i}", float(v.heads[j, i].sum())) for i in range(v.heads.shape[1])]
        return out
    per = v.heads.sum(axis=(0, 1))
    return ([(f"linear path from {words[m]}", float(v.linear_per_token[m])) for m in range(tr.N)]
            + [(f"σ-terms ← attention from {words[m]}", float(per[m])) for m in range(tr.N)]
            + [("σ-terms ← skip", float(v.skip_linear.sum() + v.skip_bias.sum()))])
