r"""Claims X7–X8 and X6's σ-split: exact attribution of a decoder's logit (extensions, not in the papers).

* **X7** — the residual view: a logit (difference) is the exact sum of the embedding's, every
  attention head's per source token and every MLP's write at the last position, read through the
  final norm's scale frozen at the model's last state (direct logit attribution, made exact);
* **X6.sigma-split** — the DUAT view: each σ-term splits exactly by its input
  :math:`V_jx'_0+e_j` (skip and attention per head × source, linear part and dynamic bias) through
  the frozen activation slope;
* **X8** — Golden's equivalent linear map: with the norm scales, the gate activation and the
  patterns detached, the last token's final-normed output is :math:`\sum_tJ_tx_t` exactly, and one
  reverse pass through the frozen operators' adjoints gives :math:`u^{\top}J_t` for every ``t``.

Each is decided numerically on random float64 Llama decoders (GQA, RoPE, SwiGLU, RMSNorm) by
:func:`symuat.kernel.decide.check_numeric`; the mutants are the mistakes others shipped —
a residual write counted twice (TransformerLens #1639), a norm scale frozen from the wrong layer
(#1076), a σ-split without its dynamic bias, an adjoint with an untransposed pattern — and each
is refuted (tests). On SmolLM2-135M: ``symuat model explain --model smollm2 --by head``.

Proved for symbolic sizes and every depth by the kernel's identity checker (index-level normal form):

* ``X7.telescope`` — one layer's write read through a frozen readout splits exactly into each
  head's term (through its frozen pattern column, linear in the source tokens), the MLP's and the
  bias's; the stream with frozen norm scales is T7's recursion with W1 = I, so every depth follows
  by L2.main.exact[induction];
* ``X8.linear-symbolic`` — a bias-free detached layer (pattern, gate, norm scales frozen) is
  linear, so every depth (a composition) is :math:`\sum_tJ_tx_t`;
* ``X8.affine`` — with biases the layer is affine, :math:`f(X)=JX+f(0)`; the bias-free claim on a
  biased layer is refuted with an exact counterexample (tests/test_attribution_symbolic.py).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from symuat.claims.decoder import X6
from symuat.kernel import decide
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status

EXT = {"polarity": None, "role": "extension"}
SIZES = [{"N": 5, "M": 8, "L": 2, "h": 2, "g": 1}, {"N": 7, "M": 12, "L": 3, "h": 6, "g": 2},
         {"N": 1, "M": 8, "L": 2, "h": 4, "g": 2}]


def _instance(sizes, seed):
    """A random decoder, a random text, a token and a counterfactual token."""
    from symuat.models.families import llama as ll

    rng = np.random.default_rng(seed)
    V = 23
    m = ll.random_llama(rng, M=sizes["M"], heads=sizes["h"], kv_heads=sizes["g"], F=sizes["M"] + 4,
                        layers=sizes["L"], vocab=V)
    ids = rng.integers(0, V, sizes["N"])
    t, vs = rng.choice(V, 2, replace=False)
    return m, ids, int(t), int(vs)


def _verdict(err: float, scale: float, what: str):
    res = err / max(scale, np.finfo(float).tiny)
    ok = bool(math.isfinite(res) and res <= decide.TOLERANCE)
    return ok, f"{what}: |Σ terms − value| / scale = {res:.2e} ≤ {decide.TOLERANCE}", {"residual": res}


# --------------------------------------------------------------------------------------------
# X7 — the residual view
# --------------------------------------------------------------------------------------------

X7 = REGISTRY.claim(
    "X7", "An exact residual-stream decomposition of a logit difference (extension)",
    where="not in the papers; `symuat model explain --view residual`; TransformerLens #523, #1742 (a sum-to-total "
          "assertion), #1639 (a write counted twice), #1076 (a norm scale from the wrong layer)",
    statement=r"\ell_t-\ell_{t'}=r\cdot x_0[n]+\sum_{l=1}^{L}\Big(\sum_{i=1}^{h}\sum_{m\le n}H^{(l)}_i[n,m]\,"
              r"(U^{(l)}_mW_{V,g(i)})\cdot(W_{O,i}\,r)+r\cdot\mathrm{mlp}_l[n]\Big),\quad "
              r"r=s_f[n]\,\gamma_f\odot(W_U[t]-W_U[t'])",
    group="decoder",
    remarks=r"Direct logit attribution made exact. Frozen: the final RMSNorm's scale $s_f[n]$ at the model's own last "
            r"state (so the readout $r$ is one vector); the patterns $H_i$ and pre-attention scales only split an "
            r"attention write per head and source token. A pre-norm decoder's last residual state is exactly "
            r"$x_0[n]+\sum_l(\mathrm{attn}_l[n]+\mathrm{mlp}_l[n])$, each write once, so the terms add up to float64 "
            r"rounding (asserted on every `explain` run). Mutants refuted: a write counted twice (resid_mid with "
            r"attn_out, TransformerLens #1639), the final scale taken from the last layer's input (#1076).",
)


def residual_trial(sizes, seed, *, mutant: str | None = None):
    """The residual view adds up (``mutant``: ``counted-twice`` adds layer 1's attention write to its
    MLP write, as a stack holding both resid_mid and attn_out does; ``wrong-layer-scale`` freezes the
    final norm's scale at the last layer's input instead of its output)."""
    from symuat.models import attribution as at

    m, ids, t, vs = _instance(sizes, seed)
    tr = at.trace(m, ids)
    if mutant == "counted-twice":
        tr.layers[0] = replace(tr.layers[0], mlp=tr.layers[0].mlp + tr.layers[0].attn)
    elif mutant == "wrong-layer-scale":
        tr = replace(tr, sf=m.final_scales(tr.layers[-1].X))
    elif mutant is not None:
        raise ValueError(mutant)
    tg = at.target(tr, t, vs)
    v = at.residual_view(tr, tg)
    return _verdict(v.abs_error, tg.scale, "residual view, logit difference")


X7.check("sum", None, r"\Big|r\cdot x_0[n]+\sum_l\big(\sum_{i,m}\mathrm{head}_{l,i,m}+r\cdot\mathrm{mlp}_l[n]\big)"
         r"-(\ell_t-\ell_{t'})\Big|\le10^{-12}\max(|\ell_t-\ell_{t'}|,|\ell_t|,|\ell_{t'}|)",
         lambda: decide.check_numeric(residual_trial, SIZES,
                                      what="float64, random GQA decoders, a random token against another"),
         note="symuat.models.attribution.residual_view", **EXT)


# --------------------------------------------------------------------------------------------
# X6 — each σ-term split by its input (the DUAT view)
# --------------------------------------------------------------------------------------------


def sigma_split_trial(sizes, seed, *, mutant: str | None = None):
    """The DUAT view adds up and each σ-term's split adds up to it (``mutant``: ``no-bias`` drops the
    dynamic bias e_j's share of every split)."""
    from symuat.models import attribution as at

    m, ids, t, vs = _instance(sizes, seed)
    tr = at.trace(m, ids)
    tg = at.target(tr, t, vs)
    v = at.duat_view(tr, tg)
    split = v.skip_linear + v.skip_bias + v.heads.sum(axis=(1, 2))
    if mutant == "no-bias":
        split = v.skip_linear + v.heads_linear.sum(axis=(1, 2))
    elif mutant is not None:
        raise ValueError(mutant)
    err = max(v.abs_error, float(np.abs(split - v.sigma).max()) if split.size else 0.0)
    return _verdict(err, tg.scale, "DUAT view and every σ-term's split")


def sigma_split_statement(mutant: str | None = None):
    """``(lhs, rhs)`` of the σ-split for symbolic N, M, F, a layer j with two frozen heads:
    ``ρ_jᵀ W3_j σ(u_j)`` with ``σ(u) = diag(slope(u)) u`` (the definition of the frozen slope) and
    ``u_j = W_g' S_2 z``, ``z = y + Σ_i (H_i ⊗ B_iᵀ) y``, ``y = A_{j-1}x'_0 + R_{j-1}`` (a Llama layer has
    no static bias: c = 0), against ``κ_jᵀ`` applied to each share of ``z``, ``κ_j = diag(slope) W3_jᵀ ρ_j``.
    ``W3_j = W_down' diag(W_u' z)`` (X4). Mutants: ``no-bias`` drops the shares of the dynamic part
    R_{j-1}; ``no-slope`` reads the σ-term through ``W3_jᵀρ_j`` without the slope."""
    from sympy import Identity, MatrixSymbol

    from symuat.expr.algebra import T, add, dims, kron, mul
    from symuat.expr.decoder import Diag
    from symuat.expr.vec import Vec

    N, M, F = dims("N M F")
    vec = lambda name, cols: Vec(MatrixSymbol(name, N, cols), "row")
    yA, yR = vec("Ax_0", M), vec("R", M)  # A_{j-1}x'_0 and R_{j-1}, vectors of ℝ^{NM}
    heads = [(MatrixSymbol(f"H_{i}", N, N), MatrixSymbol(f"B_{i}", M, M)) for i in (1, 2)]
    att = lambda v: [mul(kron(H, T(B)), v) for H, B in heads]
    Wg = kron(Identity(N), T(MatrixSymbol("W_g", M, F)))
    S2 = kron(Diag(MatrixSymbol("s_2", N, 1)), Diag(MatrixSymbol("gamma_2", M, 1)))
    W3 = mul(kron(Identity(N), T(MatrixSymbol("W_down", F, M))), Diag(vec("W_uz", F)))
    rho, slope = vec("rho_j", M), Diag(vec("slope", F))
    y = add(yA, yR)
    u = mul(Wg, S2, add(y, *att(y)))
    lhs = mul(T(rho), W3, slope, u)
    kappa = mul(T(W3), rho) if mutant == "no-slope" else mul(slope, T(W3), rho)
    shares = [yA, *att(yA)] + ([] if mutant == "no-bias" else [yR, *att(yR)])
    rhs = add(*[mul(T(kappa), Wg, S2, v) for v in shares])
    return lhs, rhs


def _x6_split():
    lhs, rhs = sigma_split_statement()
    return decide.check_identity(lhs, rhs, construction=r"\sigma(u)=\operatorname{diag}(\mathrm{slope}(u))\,u,\ "
                                   r"\kappa_j=\operatorname{diag}(\mathrm{slope}(u_j))W3_j^{T}\rho_j")


_SPLIT_TEX = (r"\rho_j\cdot W3_j\sigma(u_j)=\kappa_j\cdot W_gS_2\big(A_{j-1}x'_0+R_{j-1}"
              r"+\textstyle\sum_{i,m}\mathrm{head}_{i,m}(A_{j-1}x'_0)+\sum_{i,m}\mathrm{head}_{i,m}(R_{j-1})\big),\ "
              r"\kappa_j=\mathrm{slope}(u_j)\odot W3_j^{T}\rho_j")
X6.check("split", None, _SPLIT_TEX, _x6_split,
         note="the DUAT view's identity for symbolic N, M, F (two frozen heads; a head's share is the sum of its "
              "per-source shares by the definition of the product): with the slope frozen, σ(u) = diag(slope(u)) u "
              "(slope(u)_k = σ(u_k)/u_k, any value where u_k = 0 since silu(0) = 0), so each σ-term is linear in "
              "the shares of its input", **EXT)
X6.check("sigma-split", None, _SPLIT_TEX,
         lambda: decide.check_numeric(sigma_split_trial, SIZES,
                                      what="float64, random GQA decoders, a random token against another"),
         note="symuat.models.attribution.duat_view on random decoders: a float64 confirmation of the "
              "implementation beside the proof (X6.split)", polarity=None, role="confirmation")


# --------------------------------------------------------------------------------------------
# X8 — Golden's equivalent linear map, matrix-free
# --------------------------------------------------------------------------------------------

X8 = REGISTRY.claim(
    "X8", "Golden's equivalent linear map, applied by adjoints (extension)",
    where="not in the papers; Golden 2025, \"Equivalent Linear Mappings of Large Language Models\" (TMLR), "
          "which computes J by autograd",
    statement=r"y=s_f[n]\gamma_f\odot x_L[n]=\sum_{t\le n}J_t\,x_t,\qquad u^{T}J_t=\big(\mathcal{J}^{T}(e_n\otimes "
              r"s_f[n]\gamma_f\odot u)\big)_t",
    group="decoder",
    remarks=r"Frozen (Golden's freezing): every RMSNorm scale, the gate activation $\mathrm{silu}(ZW_g)$ (the "
            r"up-projection stays linear) and the attention patterns. The frozen network $\mathcal J$ is linear in "
            r"the input embeddings and reproduces the model at this input; its transpose is applied with the "
            r"operators' adjoints in one reverse pass, and $J_t$'s leading singular vectors come from "
            r"`scipy.sparse.linalg.svds` on a LinearOperator, $J$ never built. Compared with `torch.func.jacrev` on "
            r"the detached float64 HF model in benchmarks/results/attribution.md.",
)


def golden_trial(sizes, seed, *, mutant: str | None = None):
    """J x_0 = y and ⟨u, J_t v⟩ = ⟨J_tᵀ u, v⟩ for random u, v, t (``mutant``: ``untransposed-pattern``
    pulls back through H instead of Hᵀ; ``wrong-layer-scale`` freezes the MLP norm of layer 1 at
    the layer's input)."""
    from symuat.models import attribution as at

    m, ids, _, _ = _instance(sizes, seed)
    rng = np.random.default_rng(seed + 1)
    tr = at.trace(m, ids)
    n = tr.N - 1
    y_model = tr.sf[n] * tr.gf * tr.xL[n]
    probe = tr
    if mutant == "wrong-layer-scale":
        probe = replace(tr, layers=[replace(tr.layers[0], s2=tr.layers[0].s1)] + tr.layers[1:])
    elif mutant not in (None, "untransposed-pattern"):
        raise ValueError(mutant)
    y = at.golden_apply(probe, tr.x0)
    err = float(np.abs(y - y_model).max())
    u, v, t = rng.standard_normal(tr.x0.shape[1]), rng.standard_normal(tr.x0.shape[1]), int(rng.integers(0, tr.N))
    X = np.zeros_like(tr.x0)
    X[t] = v
    back = probe
    if mutant == "untransposed-pattern":  # the adjoint reads H where it should read Hᵀ
        back = replace(tr, layers=[replace(lt, H=lt.H.transpose(0, 2, 1)) for lt in tr.layers])
    Ju = at.golden_vjp(back, u)[t]
    lhs, rhs = u @ at.golden_apply(probe, X), Ju @ v
    scale = max(float(np.abs(y_model).max()), abs(lhs), 1e-300)
    err = max(err / max(float(np.abs(y_model).max()), 1e-300), abs(lhs - rhs) / scale)
    ok = bool(math.isfinite(err) and err <= decide.TOLERANCE)
    return ok, f"J x_0 = y and the adjoint identity: relative residual {err:.2e} ≤ {decide.TOLERANCE}", {"residual": err}


X8.check("linear", None, r"\max\Big(\frac{|\mathcal Jx_0-y|_\infty}{|y|_\infty},\ "
         r"\frac{|u^{T}(J_tv)-(u^{T}J_t)v|}{\max(|y|_\infty,|u^{T}J_tv|)}\Big)\le10^{-12}",
         lambda: decide.check_numeric(golden_trial, SIZES, what="float64, random GQA decoders; random u, v, t"),
         note="symuat.models.attribution.golden_apply / golden_vjp", **EXT)


def attribution_figure(path):
    """Both views of ' Paris' − ' London' after "The capital of France is" (SmolLM2 when installed)."""
    from symuat.claims.decoder import _real_or_random
    from symuat.models import attribution as at

    model, _, text = _real_or_random()
    if text:
        ids = model.tokenize(text)
        enc = lambda s: model.tokenizer.encode(s).ids[0]
        att = at.explain(model, ids, enc(" Paris"), enc(" London"))
    else:
        att = at.explain(model, np.arange(6) % model.config.vocab)
    at.figure(att, path)


X7.figures.append(("decoder-attribution", "The logit difference ' Paris' − ' London' after \"The capital of France "
                   "is\" in both exact views: per layer × head (the residual view's head writes and MLP writes; the "
                   "DUAT view's σ-terms split by their input) and per source token.", attribution_figure))


# --------------------------------------------------------------------------------------------
# X7, X8 for symbolic sizes and every depth (the kernel's identity checker; the depth by induction)
# --------------------------------------------------------------------------------------------

def x7_step_statement(mutant: str | None = None):
    """One layer of the residual stream read through a frozen readout r (symbolic D, N, F):
    rᵀ(x + Σ_i O_iV_iXP_iᵀe_n + m + b) = rᵀx + Σ_i (V_iᵀO_iᵀr)ᵀ X (P_iᵀe_n) + rᵀm + rᵀb — each head's
    write read through the frozen pattern column P_iᵀe_n (so split by source token, linearly), the
    MLP's write and the bias. ``mutant``: ``dropped-mlp`` drops rᵀm, ``head-twice`` counts head 1 twice.

    >>> from symuat.kernel import decide
    >>> decide.check_identity(*x7_step_statement()).status.name
    'PROVED'
    """
    from sympy import MatrixSymbol

    from symuat.expr.algebra import T, add, dims, mul

    D, N, K = dims("D N K")
    r, x, m, b = (MatrixSymbol(s, D, 1) for s in ("r", "x_prev", "m_l", "b_l"))
    X, e = MatrixSymbol("X", D, N), MatrixSymbol("e_n", N, 1)
    heads = [(MatrixSymbol(f"O_{i}", D, K), MatrixSymbol(f"V_{i}", K, D), MatrixSymbol(f"P_{i}", N, N)) for i in (1, 2)]
    lhs = mul(T(r), add(x, *[mul(O, V, X, T(P), e) for O, V, P in heads], m, b))
    terms = [mul(T(r), x)] + [mul(T(mul(T(V), T(O), r)), X, mul(T(P), e)) for O, V, P in heads]
    terms += [mul(T(r), m), mul(T(r), b)]
    if mutant == "dropped-mlp":
        terms = [t for t in terms if t != mul(T(r), m)]
    elif mutant == "head-twice":
        terms.append(terms[1])
    elif mutant is not None:
        raise ValueError(mutant)
    return lhs, add(*terms)


def _x7_telescope():
    out = decide.combine_all([decide.check_identity(*x7_step_statement()), REGISTRY.verdict("L2.main.exact[induction]")],
                             ["one layer: rᵀ(x + heads + mlp + b) splits into its terms", "L2.main.exact[induction]"])
    if out.status is Status.PROVED:
        out.method = ("the residual stream with the norm scales frozen is T7's recursion with W1 = I, so "
                      "x_L = x_0 + Σ_l writes for every depth (L2.main.exact[induction]); the step, for symbolic D, N, "
                      "head size K, splits rᵀ of a layer's write into heads (each through its frozen pattern column, "
                      "linear in the source tokens), the MLP and the bias; " + out.method)
    return out


def x8_layer(X, *, bias: bool):
    """One detached layer (symbolic D, N, F): X + OVXPᵀ + W_d(G ∘ W_uX) (+ b1ᵀ), pattern P and gate G frozen."""
    from sympy import MatrixSymbol

    from symuat.expr.algebra import T, add, mul
    from symuat.expr.decoder import Hadamard

    from symuat.expr.algebra import dims

    D, N = X.shape
    K, F = dims("K F")  # the head and MLP widths
    O, V, P = MatrixSymbol("O", D, K), MatrixSymbol("V", K, D), MatrixSymbol("P", N, N)
    Wu, Wd, G = MatrixSymbol("W_u", F, D), MatrixSymbol("W_d", D, F), MatrixSymbol("G", F, N)
    parts = [X, mul(O, V, X, T(P)), mul(Wd, Hadamard(G, mul(Wu, X)))]
    if bias:
        parts.append(MatrixSymbol("B", D, N))
    return add(*parts)


def x8_statement(kind: str):
    """``linear`` (bias-free: f(X + Y) = f(X) + f(Y)), ``homogeneous`` (f(aX) = af(X)), their
    ``-biased`` variants (the same claims on a biased layer: false), ``linear-biased`` (the same claim on a biased
    layer: false) or ``affine`` (biased: f(X + Y) = f(X) + f(Y) − f(0), i.e. f = J + c)."""
    import sympy
    from sympy import MatrixSymbol, ZeroMatrix

    from symuat.expr.algebra import add, dims

    D, N = dims("D N")
    X, Y = MatrixSymbol("X", D, N), MatrixSymbol("Y", D, N)
    def f(Z):
        return x8_layer(Z, bias=kind not in ("linear", "homogeneous"))

    if kind in ("linear", "linear-biased"):
        return f(add(X, Y)), add(f(X), f(Y))
    if kind in ("homogeneous", "homogeneous-biased"):
        a = sympy.Symbol("a")
        return f(a * X), a * f(X)
    if kind == "affine":
        return f(add(X, Y)), add(f(X), f(Y), -f(ZeroMatrix(D, N)))
    raise ValueError(kind)


X7.check("telescope", None,
         r"r^{T}x_L=r^{T}x_0+\sum_{l<L}\Big(\sum_i(V_{l,i}^{T}O_{l,i}^{T}r)^{T}X_l\,(P_{l,i}^{T}e_n)+r^{T}m_l+r^{T}b_l\Big)\ \forall L",
         _x7_telescope, note="symbolic D, N, head size; every depth (the norm scales frozen)", **EXT)


def _x8_symbolic():
    parts = [decide.check_identity(*x8_statement(k)) for k in ("linear", "homogeneous")]
    out = decide.combine_all(parts, ["a bias-free detached layer is additive in X (symbolic D, N, K, F)",
                                     "and homogeneous: f(aX) = af(X)"])
    if out.status is Status.PROVED:
        out.method = ("each detached layer (pattern, gate and norm scales frozen) is linear in its input, for symbolic "
                      "sizes; a composition of linear maps is linear, so every depth's output is Σ_t J_t x_t: "
                      + out.method)
    return out


X8.check("linear-symbolic", None, r"f(X+Y)=f(X)+f(Y)\ \text{(bias-free detached layer; every depth by composition)}",
         _x8_symbolic, note="symbolic D, N, K, F", **EXT)
X8.check("affine", None, r"f_b(X+Y)=f_b(X)+f_b(Y)-f_b(0),\ \text{i.e. }f_b=\sum_tJ_tx_t+c,\ c=f_b(0)",
         lambda: decide.check_identity(*x8_statement("affine")),
         note="symbolic D, N, K, F: the affine correction c = f(0); the bias-free claim on a biased layer is refuted with an exact counterexample (tests)", **EXT)
