r"""Claims WP1–WP12: the weight-processing identities of checkpoint rewriters (spec §9; extensions,
not in the papers).

Interpretability libraries, converters and inference engines rewrite a checkpoint before they run
it: fold a norm's scale into the maps that read it, centre the unembedding, fold value biases,
expand grouped K/V heads, split fused projections, permute rows for a RoPE layout. Each rewrite
is an identity of the papers' kind — products, transposes, Kronecker factors, permutations,
diagonal scalings, row-stochastic patterns — and each shipped wrong somewhere (the sources are
listed on every entry). For each entry symuat

* proves the rewrite for symbolic dimensions where it is shape-general (the index engine, with
  :mod:`symuat.kernel.head_maps`, :mod:`symuat.kernel.rotary`, :class:`~symuat.expr.decoder.Diag`,
  :class:`~symuat.kernel.hypotheses.LineSums`), or at explicit sizes where the statement is about
  explicit layouts;
* checks every cited mistake as a mutant with the same procedure: it must come back ``refuted``
  with an exact counterexample (``<ID>.mutant[…]``); ``<ID>.mistakes`` carries the bottom line
  on that (``proved`` iff every mistake is refuted exactly);
* gives the corrected statement where the spec says "to examine" (WP2: the fold refuted, what does
  fold proved; WP9, WP11: refuted, with the corrected statement on the verdict).

Frozen norms: a norm applied to a token row is :math:`\operatorname{diag}(s)Z` (RMSNorm) or
:math:`\operatorname{diag}(s)ZC_M` (LayerNorm, :math:`C_M=I-\frac1M\mathbf 1\mathbf 1^T`) with
the per-token scales :math:`s` of its input, as in X3/T12. Every statement below holds for every
value of :math:`s`, hence at every input. The real-weight confirmations (SmolLM2, MiniLM) are the
model tier: ``symuat model fold`` (:mod:`symuat.models.fold`) and ``tests/test_fold.py``.
Every check is symuat's own (``polarity=None``, ``role="extension"``); the mutants are shown
(``admitted=False``) and carry the bottom line through ``<ID>.mistakes``.
"""

from __future__ import annotations

from functools import partial

import sympy as sp
from sympy import Identity, MatrixSymbol, OneMatrix

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.attention import CausalHeadMatrix
from symuat.expr.decoder import Diag, Hadamard, PairHeadMatrix, rotation
from symuat.expr.elementwise import Sigma
from symuat.expr.heads import BlockSymbol, HeadMatrix, HeadSum, Selector
from symuat.kernel import decide
from symuat.kernel.decide import bands, softcap
from symuat.kernel.head_maps import (AxisBlock, fused_to_separate, per_group_split, repeat_interleave_map, rope_permutation,
                                     tile_map)
from symuat.kernel.hypotheses import LineSums
from symuat.kernel.decide.mistakes import mistakes_refuted
from symuat.kernel.registry import REGISTRY
from symuat.kernel.decide.rotations import block as rot_block
from symuat.kernel.decide.rotations import check_block_lemma, refute_with_rotations
from symuat.kernel.rotary import PairRotation
from symuat.kernel.status import Corrected
from symuat.expr.vec import Commutation

GROUP = "weight-processing"
EXT = {"polarity": None, "role": "extension"}
MUT = {"polarity": None, "role": "extension", "admitted": False}


def _claim(id_, title, statement, remarks, sources):
    return REGISTRY.claim(id_, title + " (extension)", where="not in the papers (spec §9); sources: " + sources,
                          statement=statement, group=GROUP, remarks=remarks)


def _mutant(claim, tag: str, statement: str, procedure, source: str, step: str = "mutant"):
    """A cited mistake, checked with the same procedure as the rewrite (must be refuted); ``step``: the
    spec's item ID where it names one (``WP3.softcap``)."""
    return claim.check(step, (tag,), statement, procedure,
                       note=f"the shipped mistake ({source}): must come back refuted with an exact counterexample",
                       **MUT)


def _mistakes(claim, tags: list[str]):
    """``<ID>.mistakes``: proved iff every mutant of the claim is refuted with an exact witness."""
    keys = [next(c.key for c in claim.checks if c.reading == (t,) and not c.admitted) for t in tags]
    claim.check("mistakes", None, r"\text{each cited mistake}\neq\text{the rewrite: }" + ", ".join(
        rf"\text{{{t}}}" for t in tags),
        lambda: mistakes_refuted([REGISTRY.verdict(k) for k in keys], tags),
        note="rests on " + ", ".join(keys), **EXT)


_N, _M, _K, _F, _V = dims("N M K F V")
_s = MatrixSymbol("s", _N, 1)  # frozen per-token norm scales
_X = MatrixSymbol("X", _N, _M)
_gamma = MatrixSymbol("gamma", _M, 1)
_beta = MatrixSymbol("beta", _M, 1)
_oneN = OneMatrix(_N, 1)


def _centre(n):
    r""":math:`C_n=I_n-\frac1n\mathbf 1\mathbf 1^T`."""
    return add(Identity(n), mul(sp.Integer(-1) / n, OneMatrix(n, n)))


def _silu(P):
    return Hadamard(P, Sigma(P))


# ============================================================================================
# WP1 — fold a pre-norm's scale into every map that reads it
# ============================================================================================

WP1 = _claim(
    "WP1", "Fold a pre-norm's scale into every map that reads it",
    r"(\mathrm{RMS}(x)\odot\gamma)W=\mathrm{RMS}(x)(\operatorname{diag}(\gamma)W);\quad "
    r"(\mathrm{LN}(x)\odot\gamma+\beta)W+b=\mathrm{LN}(x)(\operatorname{diag}(\gamma)W)+(\beta W+b)",
    r"Every map that reads the normed stream — $W_Q,W_K,W_V$ and, in a gated MLP, *both* $W_g$ and $W_u$ — "
    r"takes $\operatorname{diag}(\gamma)W$; a LayerNorm's shift becomes the bias $\beta W+b$. Symbolic $N,M,K,F$; "
    r"frozen scales $s$ (any value). Real weights: `symuat model fold --model smollm2` folds every RMSNorm of "
    r"SmolLM2-135M (the final one into an untied LM head) and reproduces all 31 states and the logits. "
    r"all-MiniLM-L6-v2 has no pre-norm (every LayerNorm of BERT is a post-norm): WP1 does not apply there, WP2 "
    r"says why.",
    "TransformerLens #372, PR #489, PR #1580")
_W = MatrixSymbol("W", _M, _K)
_b = MatrixSymbol("b", _K, 1)
_Zr = mul(Diag(_s), _X)  # RMS(X) frozen
_Zl = mul(Diag(_s), _X, _centre(_M))  # LN(X) frozen (before its affine)
WP1.check("rms", ("rms",), r"(\operatorname{diag}(s)X\operatorname{diag}(\gamma))W=\operatorname{diag}(s)X(\operatorname{diag}(\gamma)W)",
          partial(decide.check_identity, mul(_Zr, Diag(_gamma), _W), mul(_Zr, mul(Diag(_gamma), _W))), **EXT)
WP1.check("ln", ("ln",), r"(\operatorname{diag}(s)XC_M\operatorname{diag}(\gamma)+\mathbf 1\beta^T)W+\mathbf 1b^T="
          r"\operatorname{diag}(s)XC_M(\operatorname{diag}(\gamma)W)+\mathbf 1(\beta^TW+b^T)",
          partial(decide.check_identity,
                  add(mul(add(mul(_Zl, Diag(_gamma)), mul(_oneN, T(_beta))), _W), mul(_oneN, T(_b))),
                  add(mul(_Zl, mul(Diag(_gamma), _W)), mul(_oneN, add(mul(T(_beta), _W), T(_b))))), **EXT)
_Wg, _Wu, _Wd = MatrixSymbol("W_g", _M, _F), MatrixSymbol("W_u", _M, _F), MatrixSymbol("W_d", _F, _M)
_Zg = mul(_Zr, Diag(_gamma))


def _swiglu(Z_gate, Wg, Z_up, Wu):
    return mul(Hadamard(_silu(mul(Z_gate, Wg)), mul(Z_up, Wu)), _Wd)


_ffn = _swiglu(_Zg, _Wg, _Zg, _Wu)
WP1.check("gated", ("rms",), r"\big(\mathrm{silu}(Z_\gamma W_g)\odot Z_\gamma W_u\big)W_d="
          r"\big(\mathrm{silu}(Z(\operatorname{diag}(\gamma)W_g))\odot Z(\operatorname{diag}(\gamma)W_u)\big)W_d",
          partial(decide.check_identity, _ffn,
                  _swiglu(_Zr, mul(Diag(_gamma), _Wg), _Zr, mul(Diag(_gamma), _Wu))),
          note="both readers of the normed stream take the scale (σ uninterpreted: holds for silu and every σ)", **EXT)
_mutant(WP1, "gate-unfolded", r"\big(\mathrm{silu}(Z_\gamma W_g)\odot Z_\gamma W_u\big)W_d\overset?="
        r"\big(\mathrm{silu}(ZW_g)\odot Z(\operatorname{diag}(\gamma)W_u)\big)W_d",
        partial(softcap.refute_with_sigmoid, _ffn, _swiglu(_Zr, _Wg, _Zr, mul(Diag(_gamma), _Wu)),
                [{_N: 1, _M: 2, _F: 1}, {_N: 2, _M: 2, _F: 2}]),
        "TransformerLens #372; the witness uses silu itself (σ the logistic sigmoid), exactly")
_Wsq = MatrixSymbol("W_sq", _M, _M)
_mutant(WP1, "wrong-side", r"(Z\operatorname{diag}(\gamma))W\overset?=Z(W\operatorname{diag}(\gamma))\quad(W\ M\times M)",
        partial(decide.check_identity, mul(_Zr, Diag(_gamma), _Wsq), mul(_Zr, mul(_Wsq, Diag(_gamma)))),
        "TransformerLens PR #1580")
_mistakes(WP1, ["gate-unfolded", "wrong-side"])

# ============================================================================================
# WP2 — post-norms do not fold
# ============================================================================================

WP2 = _claim(
    "WP2", "Post-norms do not fold",
    r"x_{l+1}=\mathrm{LN}(x_l+F(x_l))\odot\gamma+\beta\ \text{(BERT)},\ x+\mathrm{RMS}_{\rm post}(F(\mathrm{RMS}_{\rm pre}(x)))"
    r"\ \text{(Gemma)}:\ \text{folding the post-norm's scale into the next }Q/K/V\text{ as in WP1 changes the model}",
    r"The statement to examine (“the post-norm's scale can be folded as in WP1”) is refuted: the next layer "
    r"reads the stream twice, through its maps and through the skip connection, and folding $\gamma,\beta$ "
    r"into the maps leaves the skip with $\mathrm{LN}(\cdot)$ instead of $\mathrm{LN}(\cdot)\odot\gamma+\beta$ "
    r"(`bert`: an exact witness; on MiniLM every state of the folded model is off by O(1) — "
    r"`symuat model fold --model minilm --norms` refuses, naming WP2). Sandwich norms: $\gamma_{\rm post}$ "
    r"scales one summand of the stream, so no reader can take it (`sandwich`). The corrected statement — what "
    r"does fold — is `kept`: a reader may take the scale only while the stream keeps it, i.e. only a "
    r"*pre*-norm's scale folds (WP1); a post-norm's affine stays on the stream.",
    "TransformerLens #509, PR #650")
_Z = MatrixSymbol("Z", _N, _M)  # the post-LN output before its affine (frozen)
_A = MatrixSymbol("A", _M, _M)  # the next sub-layer's maps, frozen (attention patterns fixed)
_bA = MatrixSymbol("b_A", _M, 1)
_stream = add(mul(_Z, Diag(_gamma)), mul(_oneN, T(_beta)))
_next = add(_stream, mul(_stream, _A), mul(_oneN, T(_bA)))
_folded_next = add(_Z, mul(_Z, mul(Diag(_gamma), _A)), mul(_oneN, add(mul(T(_beta), _A), T(_bA))))
_kept_next = add(_stream, mul(_Z, mul(Diag(_gamma), _A)), mul(_oneN, add(mul(T(_beta), _A), T(_bA))))
WP2.check("bert", ("post-LN",),
          r"\exists Z,\gamma,\beta,A,b:\ x+xA+\mathbf 1b^T\neq Z+Z(\operatorname{diag}(\gamma)A)+\mathbf 1(\beta^TA+b^T),"
          r"\quad x=Z\operatorname{diag}(\gamma)+\mathbf 1\beta^T",
          partial(decide.check_negation, _next, _folded_next),
          note="post-LN (BERT): the folded model drops γ, β from the skip path; an exact witness", **EXT)
WP2.check("kept", ("post-LN",),
          r"x+xA+\mathbf 1b^T=x+Z(\operatorname{diag}(\gamma)A)+\mathbf 1(\beta^TA+b^T)\ \text{(the skip keeps }\gamma,\beta)",
          partial(decide.check_identity, _next, _kept_next),
          note="the corrected statement: the readers may take γ, β only while the stream keeps them", **EXT)
_t = MatrixSymbol("t", _N, 1)  # frozen scales of the post-sublayer RMSNorm
_Y = MatrixSymbol("Y", _N, _M)  # the sub-layer's output
_gp, _gq = MatrixSymbol("gamma_post", _M, 1), MatrixSymbol("gamma_pre", _M, 1)
_Wn = MatrixSymbol("W_n", _M, _K)  # a map of the next layer
_x1 = add(_X, mul(Diag(_t), _Y, Diag(_gp)))
_read = mul(Diag(_s), _x1, Diag(_gq), _Wn)
WP2.check("sandwich", ("post-RMS",),
          r"\exists\ldots:\ \operatorname{diag}(s)\big(X+\operatorname{diag}(t)Y\operatorname{diag}(\gamma_{\rm post})\big)\operatorname{diag}(\gamma_{\rm pre})W"
          r"\neq\operatorname{diag}(s)\big(X+\operatorname{diag}(t)Y\big)\operatorname{diag}(\gamma_{\rm post}\odot\gamma_{\rm pre})W",
          partial(decide.check_negation, _read,
                  mul(Diag(_s), add(_X, mul(Diag(_t), _Y)), Diag(Hadamard(_gp, _gq)), _Wn)),
          note="Gemma 2/3 sandwich norms; even with the next pre-norm's scales s held fixed (in the folded model "
               "they change as well)", **EXT)
WP2.check("kept", ("post-RMS",),
          r"\operatorname{diag}(s)x_{l+1}\operatorname{diag}(\gamma_{\rm pre})W=\operatorname{diag}(s)x_{l+1}(\operatorname{diag}(\gamma_{\rm pre})W)"
          r"\ (\gamma_{\rm post}\text{ stays; }\gamma_{\rm pre}\text{ folds, WP1})",
          partial(decide.check_identity, _read, mul(Diag(_s), _x1, mul(Diag(_gq), _Wn))), **EXT)

# ============================================================================================
# WP3 — centre the unembedding
# ============================================================================================

WP3 = _claim(
    "WP3", "Centre the unembedding",
    r"\operatorname{softmax}(xW_U+b_U)=\operatorname{softmax}\big(xW_U(I-\tfrac1V\mathbf 1\mathbf 1^T)+b_U(I-\tfrac1V\mathbf 1\mathbf 1^T)\big)",
    r"Two steps: the centred logits are the logits minus their row mean (`shift`, symbolic $N,M,V$), and a "
    r"softmax does not see a per-row constant (`softmax`, symbolic $V$). With soft-capping "
    r"$z\mapsto c\tanh(z/c)$ after the unembedding (Gemma 2) the shift enters the tanh: the probabilities "
    r"change (`softcap`, exact counterexample); centre the *capped* logits instead.",
    "TransformerLens #693, PR #650")
_WU, _bU = MatrixSymbol("W_U", _M, _V), MatrixSymbol("b_U", _V, 1)
_x = MatrixSymbol("X", _N, _M)
_logits = add(mul(_x, _WU), mul(_oneN, T(_bU)))
WP3.check("shift", None, r"XW_UC_V+\mathbf 1b_U^TC_V=(XW_U+\mathbf 1b_U^T)-\tfrac1V(XW_U+\mathbf 1b_U^T)\mathbf 1\mathbf 1^T",
          partial(decide.check_identity, add(mul(_x, _WU, _centre(_V)), mul(_oneN, T(_bU), _centre(_V))),
                  add(_logits, mul(sp.Integer(-1) / _V, _logits, OneMatrix(_V, _V)))),
          note="the logits move by one constant per row (their mean)", **EXT)
WP3.check("softmax", None, r"\operatorname{softmax}(z+k\mathbf 1^T)=\operatorname{softmax}(z)\quad(z\in\mathbb R^{1\times V})",
          softcap.softmax_shift_invariance, **EXT)


def _wp3_softcap():
    verdict = softcap.check_capped_shift([2, 0], 1, 1)
    verdict.corrected = Corrected(r"\operatorname{softmax}(\mathrm{cap}(z)C_V)=\operatorname{softmax}(\mathrm{cap}(z))"
                                  r"\ \text{(centre the capped logits)}", softcap.softmax_shift_invariance())
    return verdict


_mutant(WP3, "softcap", r"\operatorname{softmax}(c\tanh((z-k\mathbf 1^T)/c))\overset?=\operatorname{softmax}(c\tanh(z/c))",
        _wp3_softcap, "TransformerLens PR #650: capped logits are not shift-invariant", step="softcap")
_mistakes(WP3, ["softcap"])

# ============================================================================================
# WP4 — fold the value bias into the output bias
# ============================================================================================

WP4 = _claim(
    "WP4", "Fold the value bias into the output bias",
    r"\sum_iH_i(XW_{V,i}+\mathbf 1_Nb_{V,i})W_{O,i}+\mathbf 1_Nb_O=\sum_iH_iXW_{V,i}W_{O,i}+\mathbf 1_N\big(b_O+\sum_ib_{V,i}W_{O,i}\big)",
    r"Under the hypothesis that every $H_i$ is row-stochastic (softmax; bidirectional and causal): "
    r"$H_i\mathbf 1_N=\mathbf 1_N$. Symbolic $h,N,M,d$ (the hypothesis is a rewrite rule of the normal form, "
    r"instances drawn on it). Without it the fold is wrong (`mutant[any-H]`). `symuat model fold --model minilm` "
    r"folds MiniLM's six value biases and reproduces every state.",
    "TransformerLens PR #116; llm-transparency-tool #35")
_h, _d = dims("h d")
_i = sp.Symbol("i", integer=True)


def _wp4(mask: str, *, twice: bool = False):
    H = (CausalHeadMatrix if mask == "causal" else HeadMatrix)("H", _i, _h, _N, _N)
    WV, WO = HeadMatrix("W_V", _i, _h, _M, _d), HeadMatrix("W_O", _i, _h, _d, _M)
    bV, bO = HeadMatrix("b_V", _i, _h, 1, _d), MatrixSymbol("b_O", 1, _M)
    lhs = add(HeadSum(_i, _h, mul(H, add(mul(_X, WV), mul(_oneN, bV)), WO)), mul(_oneN, bO))
    kept = mul(H, add(mul(_X, WV), mul(_oneN, bV)), WO) if twice else mul(H, _X, WV, WO)
    rhs = add(HeadSum(_i, _h, kept), mul(_oneN, add(bO, HeadSum(_i, _h, mul(bV, WO)))))
    return lhs, rhs


for _mask in ("bidir", "causal"):
    WP4.check("fold", (_mask,), r"\text{fold }b_V\text{ into }b_O\ \text{given }\textstyle\sum_{n'}H_{i,nn'}=1",
              partial(decide.check_identity, *_wp4(_mask), hypotheses=[LineSums("H", causal=_mask == "causal")]),
              **EXT)
_mutant(WP4, "any-H", r"\text{fold }b_V\text{ into }b_O\ \text{for any }H_i\ (\textstyle\sum_{n'}H_{i,nn'}\overset?=1\text{ dropped})",
        partial(decide.check_identity, *_wp4("bidir")), "the hypothesis dropped (an arbitrary H_i)")
_mutant(WP4, "bV-twice", r"\sum_iH_i(XW_{V,i}+\mathbf 1b_{V,i})W_{O,i}+\mathbf 1(b_O+\textstyle\sum_ib_{V,i}W_{O,i})\overset?=\text{the original}",
        partial(decide.check_identity, *_wp4("bidir", twice=True), hypotheses=[LineSums("H")]),
        "llm-transparency-tool #35")
_mistakes(WP4, ["any-H", "bV-twice"])

# ============================================================================================
# WP5 — expand grouped K/V heads
# ============================================================================================

WP5 = _claim(
    "WP5", "Expand grouped K/V heads",
    r"\mathrm{GQA}(X)=\mathrm{MHA}\big(X;\ W_Q,\ W_K(R\otimes I_d)^T,\ W_V(R\otimes I_d)^T,\ W_O\big),\quad "
    r"R=I_g\otimes\mathbf 1_r\ \ (R_{ia}=[a=\lfloor i/r\rfloor])",
    r"$h=gr$ query heads; query head $i=ar+b$ reads K/V head $a=\lfloor i/r\rfloor$ (HF `repeat_kv`, "
    r"`repeat_interleave` on the head axis). Both halves of attention are checked for symbolic $g,r,N,M,d$: "
    r"the scores of every query head (`scores`, stacked over the heads) and the value/output path with any "
    r"patterns $H_{ab}$ (`values`). Tiling ($i\ \mathrm{mod}\ g$) is the matrix $\mathbf 1_r\otimes I_g$: the same flat "
    r"index set read through another multi-index, equal only when $g=1$ or $r=1$ — which is why tests with "
    r"one K/V head pass.",
    "TransformerLens #1553 / PR #1593; nntile PR #347; fkodom/grouped-query-attention-pytorch #5")
_g, _r = dims("g r")
_a, _bq = sp.symbols("a b", integer=True)
_WQg = BlockSymbol("W_Q", (_M,), (_g, _r, _d))
_WKg = BlockSymbol("W_K", (_M,), (_g, _d))
_WVg = BlockSymbol("W_V", (_M,), (_g, _d))
_WOg = BlockSymbol("W_O", (_g, _r, _d), (_M,))
_Sq = kron(Selector(_a, _g), Selector(_bq, _r), Identity(_d))  # query head (a, b): columns of W_Q
_Skv = kron(Selector(_a, _g), Identity(_d))  # its K/V head a


def _expanded(W, R):
    return mul(W, T(kron(R, Identity(_d))))


def _stack(body):
    """Σ_{a,b} (e_a ⊗ e_b) ⊗ body_ab: every head's block, stacked (equal stacks ⇔ equal blocks)."""
    return HeadSum(_a, _g, HeadSum(_bq, _r, kron(Selector(_a, _g), Selector(_bq, _r), body)))


def _scores(WK_read):
    return _stack(mul(_X, _WQg, _Sq, T(mul(_X, WK_read))))


def _values(R, *, swapped: bool = False):
    H = PairHeadMatrix("H", _a, _bq, _g, _r, _N, _N)
    sel_o = kron(Selector(_bq, _r), Selector(_a, _g), Identity(_d)) if swapped else _Sq
    WO = BlockSymbol("W_O", (_r, _g, _d), (_M,)) if swapped else _WOg
    mha = HeadSum(_a, _g, HeadSum(_bq, _r, mul(H, _X, _expanded(_WVg, R), _Sq, T(sel_o), WO)))
    gqa = HeadSum(_a, _g, HeadSum(_bq, _r, mul(H, _X, _WVg, _Skv, T(_Sq), _WOg)))
    return mha, gqa


_RI, _TILE = repeat_interleave_map(_g, _r), tile_map(_g, _r)
WP5.check("scores", ("repeat_interleave",),
          r"X W_Q S_{ab}\big(XW_K(R\otimes I_d)^TS_{ab}\big)^T=XW_QS_{ab}(XW_KS_a)^T\ \ \forall a,b",
          partial(decide.check_identity, _scores(mul(_expanded(_WKg, _RI), _Sq)), _scores(mul(_WKg, _Skv))), **EXT)
WP5.check("values", ("repeat_interleave",),
          r"\sum_{a,b}H_{ab}XW_V(R\otimes I_d)^TS_{ab}S_{ab}^TW_O=\sum_{a,b}H_{ab}XW_VS_aS_{ab}^TW_O",
          partial(decide.check_identity, *_values(_RI)), **EXT)
_mutant(WP5, "tile", r"R=\mathbf 1_r\otimes I_g\ (i\mapsto i\ \mathrm{mod}\ g):\ \text{the scores of every head}",
        partial(decide.check_identity, _scores(mul(_expanded(_WKg, _TILE), _Sq)), _scores(mul(_WKg, _Skv))),
        "TransformerLens #1553, fkodom #5")
_mutant(WP5, "O-swapped", r"\sum_{a,b}H_{ab}XW_V(R\otimes I_d)^TS_{ab}S_{ba}^TW_O\overset?=\sum_{a,b}H_{ab}XW_VS_aS_{ab}^TW_O\ \text{(}W_O\text{ blocks swapped)}",
        partial(decide.check_identity, *_values(_RI, swapped=True)), "nntile PR #347")

_mistakes(WP5, ["tile", "O-swapped"])

# ============================================================================================
# WP6 — split a fused QKV projection
# ============================================================================================

WP6 = _claim(
    "WP6", "Split a fused QKV projection",
    r"F\,(K_{h,c}\otimes I_d)=[W_1|\cdots|W_c],\quad W_t=F(I_h\otimes e_t\otimes I_d)",
    r"A fused projection stored head-major, columns $(i,t,j)$ = head, projection, feature "
    r"($[q_1k_1v_1\cdots q_hk_hv_h]$, GPT-NeoX `query_key_value`; $c=3$, or $c=2$ for a fused gate/up), "
    r"regrouped by the commutation $K_{h,c}\otimes I_d$: symbolic $h,c,d,M$. The flat three-way split "
    r"reads the same columns as $(t,i,j)$: right only for $h=1$. Grouped K/V, "
    r"$[q_{j,1}\cdots q_{j,r}\,k_j\,v_j]_{j\le g}$ (`gqa`): columns $(g,\,r+2,\,d)$, and $W_Q,W_K,W_V$ are the "
    r"blocks $[0,r)$, $\{r\}$, $\{r+1\}$ of the middle axis, $F(I_g\otimes E_t\otimes I_d)$ — symbolic "
    r"$g,r,d,M$ (the index engine's rule for a block of one axis). The flat split of that layout is refuted at "
    r"explicit sizes (a flat column range is not a block of one axis). A head width computed as "
    r"$M/h$ where $d\neq M/h$ (Gemma-3-270M: $M=640$, $h=4$, $d=256$) splits at the wrong columns.",
    "mlxcel PR #928; vllm PR #53114; NVIDIA-NeMo/RL PR #2802; tt-metal #32806")
_c = dims("c")
_tq = sp.Symbol("t", integer=True)
_Ff = BlockSymbol("F", (_M,), (_h, _c, _d))


def _split_stack(sel):
    return HeadSum(_tq, _c, mul(_Ff, sel, kron(T(Selector(_tq, _c)), Identity(_h), Identity(_d))))


_Wt = kron(Identity(_h), Selector(_tq, _c), Identity(_d))
WP6.check("split", ("head-major",), r"F(K_{h,c}\otimes I_d)=\sum_tF(I_h\otimes e_t\otimes I_d)(e_t^T\otimes I_h\otimes I_d)",
          partial(decide.check_identity, mul(_Ff, fused_to_separate(_h, _c, _d)), _split_stack(_Wt)), **EXT)
_mutant(WP6, "flat-split", r"W_t\overset?=F(e_t\otimes I_h\otimes I_d)\ \text{(the flat split }[Q|K|V]\text{ of a head-major }F)",
        partial(decide.check_identity, _split_stack(kron(Selector(_tq, _c), Identity(_h), Identity(_d))),
                _split_stack(_Wt)), "mlxcel PR #928, vllm PR #53114")


def _fused_gqa_build(mistake: str | None = None):
    """``build(sizes) -> (split, separate)`` for the per-group layout [q_{j,1..r} k_j v_j]_{j<g}."""
    import numpy as np

    def build(sizes):
        M, g, r, d = (sizes[k] for k in ("M", "g", "r", "d"))
        h = g * r
        Q = np.array(sp.symbols(f"q0:{M * h * d}")).reshape(M, h, d)
        K = np.array(sp.symbols(f"k0:{M * g * d}")).reshape(M, g, d)
        V = np.array(sp.symbols(f"v0:{M * g * d}")).reshape(M, g, d)
        fused = np.concatenate([Q.reshape(M, g, r, d), K[:, :, None], V[:, :, None]], axis=2)  # (M, g, r+2, d)
        F = fused.reshape(M, -1)
        if mistake == "flat-split":
            q = F[:, :h * d]
            k = F[:, h * d:(h + g) * d]
        elif mistake == "d=M/h":
            w = M // h
            F4 = F[:, :g * (r + 2) * w].reshape(M, g, r + 2, w)
            q, k = F4[:, :, :r].reshape(M, -1), F4[:, :, r].reshape(M, -1)
        else:
            F4 = F.reshape(M, g, r + 2, d)
            q, k = F4[:, :, :r].reshape(M, -1), F4[:, :, r].reshape(M, -1)
        return np.concatenate([q, k], axis=1), np.concatenate([Q.reshape(M, -1), K.reshape(M, -1)], axis=1)
    return build


_GQA_SIZES = [{"M": 2, "g": 2, "r": 2, "d": 1}, {"M": 1, "g": 2, "r": 3, "d": 2}, {"M": 2, "g": 3, "r": 1, "d": 2}]
# the per-group layout for symbolic g, r, d, M: F = Σ_t W_t (I_g ⊗ E_t ⊗ I_d)^T, E_t a block of the (r+2)-axis
_Qg, _Kg, _Vg = (BlockSymbol(n, (_M,), s) for n, s in (("W_Q", (_g, _r, _d)), ("W_K", (_g, _d)), ("W_V", (_g, _d))))
_PG = {t: per_group_split(_g, _r, _d, t) for t in "qkv"}
_Fg = add(*(mul(W, T(_PG[t])) for t, W in zip("qkv", (_Qg, _Kg, _Vg))))
for _t, _W in zip("qkv", (_Qg, _Kg, _Vg)):
    WP6.check("gqa", ("per-group", _t.upper()),
              rf"F(I_g\otimes E_{_t}\otimes I_d)=W_{_t.upper()},\quad F=[q_{{j,1}}\cdots q_{{j,r}}\,k_j\,v_j]_{{j\le g}}"
              r"=\sum_{t\in\{q,k,v\}}W_T(I_g\otimes E_t\otimes I_d)^T",
              partial(decide.check_identity, mul(_Fg, _PG[_t]), _W),
              note="E_q, E_k, E_v: the blocks [0, r), {r}, {r+1} of the (r+2)-axis of each group "
                   "(symuat.kernel.head_maps.AxisBlock); symbolic g, r, d, M", **EXT)
_mutant(WP6, "gqa-flat-split", r"F[:,\,:hd]\overset?=W_Q\ \text{(flat split of the per-group layout)}",
        partial(decide.check_explicit, _fused_gqa_build("flat-split"), _GQA_SIZES), "NVIDIA-NeMo/RL PR #2802")
_mutant(WP6, "d=M/h", r"\text{split with head width }M/h\overset?=(W_Q,W_K)\ (M=2,h=2,d=2)",
        partial(decide.check_explicit, _fused_gqa_build("d=M/h"), [{"M": 2, "g": 1, "r": 2, "d": 2}]),
        "tt-metal #32806")
_mistakes(WP6, ["flat-split", "gqa-flat-split", "d=M/h"])

# ============================================================================================
# WP7 — RoPE layouts and the converter's permutation
# ============================================================================================

WP7 = _claim(
    "WP7", "RoPE layouts: interleaved pairs, half-split, and the converter's row permutation",
    r"(qP)\,R^{\rm int}_n=(q\,R^{\rm half}_n)\,P,\quad P=I_h\otimes K_{2,d/2}",
    r"$P$ is llama.cpp's per-head `permute` of $W_Q,W_K$ (here on columns, $y=xW$); the RoPE blocks are "
    r"left generic (any 2×2 block per pair, at every position), so the identity holds for every frequency. "
    r"Scores: $(qPR^{\rm int}_n)(kPR^{\rm int}_m)^T=(qR^{\rm half}_n)(kR^{\rm half}_m)^T$ ($PP^T=I$). With grouped "
    r"K/V, $W_K$ is permuted with its own head count $g$. Symbolic $h,g,e=d/2$. The mistakes are refuted on "
    r"true rotations (rational cos/sin). Real weights: SmolLM2's GGUF stores $W_Q,W_K$ permuted; "
    r"`symuat model fold` writes the HF (half-split) layout by $P^T$ and reproduces every state.",
    "llama.cpp PR #3364, #2376; transformers PR #31788; flash-attention PR #546; EleutherAI/gpt-neox #834")
_e, _f = dims("e f")
_q = BlockSymbol("q", (1,), (_h, 2, _e))
_k = BlockSymbol("k", (1,), (_h, 2, _e))
_P = rope_permutation(_h, _e)


def _R(name, layout, heads=_h, width=_e):
    return kron(Identity(heads), PairRotation(name, width, layout))


WP7.check("rot", None, r"(qP)(I_h\otimes R^{\rm int}_n)=(q(I_h\otimes R^{\rm half}_n))P",
          partial(decide.check_identity, mul(_q, _P, _R("rho", "interleaved")), mul(_q, _R("rho", "half"), _P)), **EXT)
_scores_true = mul(_q, _R("rho", "half"), T(mul(_k, _R("rho2", "half"))))
WP7.check("scores", None, r"(qPR^{\rm int}_n)(kPR^{\rm int}_m)^T=(qR^{\rm half}_n)(kR^{\rm half}_m)^T",
          partial(decide.check_identity, mul(_q, _P, _R("rho", "interleaved"), T(mul(_k, _P, _R("rho2", "interleaved")))),
                  _scores_true), **EXT)
_kg = BlockSymbol("k_g", (1,), (_g, 2, _e))
WP7.check("gqa", None, r"(k\,(I_g\otimes K_{2,e}))(I_g\otimes R^{\rm int}_m)=(k(I_g\otimes R^{\rm half}_m))(I_g\otimes K_{2,e})",
          partial(decide.check_identity, mul(_kg, rope_permutation(_g, _e), _R("rho2", "interleaved", _g)),
                  mul(_kg, _R("rho2", "half", _g), rope_permutation(_g, _e))),
          note="a K row with g heads: permuted with g", **EXT)
_ROT_SIZES = [{_h: 1, _e: 2}, {_h: 2, _e: 2}, {_h: 2, _e: 3}]
_mutant(WP7, "Q-only", r"(qPR^{\rm int}_n)(kR^{\rm int}_m)^T\overset?=(qR^{\rm half}_n)(kR^{\rm half}_m)^T",
        partial(refute_with_rotations, mul(_q, _P, _R("rho", "interleaved"), T(mul(_k, _R("rho2", "interleaved")))),
                _scores_true, _ROT_SIZES), "P applied to W_Q only (gpt-neox #834)")
# W_K (g heads of width 2e, e = r·f) permuted with h = g·r heads: blocks of width 2f
_kgr = BlockSymbol("k_g", (1,), (_g, 2, _r * _f))
_mutant(WP7, "K-with-h", r"(k\,(I_h\otimes K_{2,d/(2r)}))(I_g\otimes R^{\rm int}_m)\overset?=(k(I_g\otimes R^{\rm half}_m))(I_g\otimes K_{2,e})",
        partial(refute_with_rotations, mul(_kgr, kron(Identity(_g * _r), Commutation(2, _f)),
                                           _R("rho2", "interleaved", _g, _r * _f)),
                mul(_kgr, _R("rho2", "half", _g, _r * _f), rope_permutation(_g, _r * _f)),
                [{_g: 1, _r: 2, _f: 1}, {_g: 2, _r: 2, _f: 1}, {_g: 1, _r: 2, _f: 2}]),
        "llama.cpp PR #3364 (GQA permute with n_head: TinyLlama converted to gibberish)")
_mistakes(WP7, ["Q-only", "K-with-h"])

# ============================================================================================
# WP8 — partial rotary
# ============================================================================================

WP8 = _claim(
    "WP8", "Partial rotary",
    r"R^{(r)}_n=\begin{pmatrix}R^{\rm half}_n(\theta^{-2k/r})_{k<r/2}&0\\0&I_{d-r}\end{pmatrix}",
    r"Rotary width $r<d$ (GPT-NeoX, Phi): the first $r$ coordinates of each head rotate, with frequencies "
    r"$\theta^{-2k/r}$ and half-split pairs $(k,k+r/2)$; the other $d-r$ pass through. The relative form "
    r"$R_n^TR_m=R_{m-n}$ survives (`relative`): proved for symbolic $r=2e$ and $d=2e+p$ — the index engine "
    r"shows the block structure (the cross terms between the rotated block $[0,r)$ and the rest vanish, the "
    r"rest passes through) with generic 2×2 blocks, and SymPy proves $\rho(n\theta_k)^T\rho(m\theta_k)="
    r"\rho((m-n)\theta_k)$ for symbolic angles by the addition formulas alone — so it holds for every "
    r"frequency, $\theta^{-2k/r}$ included (also written out at explicit $(d,r)$ with the models' base), so "
    r"H8's $W_{QK}$ becomes $W_QR^{(r)}_{m-n}W_K^T$. The mistakes are other matrices: frequencies over the "
    r"head width agree at position 0 and drift with distance; contiguous pairs on a half-split layout rotate "
    r"the wrong coordinates.",
    "transformers #48630 / PR #48652; pie-project PR #603; apple/coreai-models #66")
_npos, _mpos = sp.symbols("n m", integer=True)
_base = sp.Integer(10000)  # θ as the models use it: θ^{-2k/r} exact (10000^{-1/2} = 1/100)


def partial_rotation(n, d: int, r: int, *, freq_over: int | None = None, layout: str = "half") -> sp.Matrix:
    """RoPE with rotary width ``r`` of a ``d``-wide head (columns act on a column vector).

    ``freq_over``: the width the frequencies are computed over (``r`` right; ``d`` the mistake);
    ``layout``: the pairing inside the first ``r`` coordinates (``half`` right for a half-split head)."""
    width = freq_over or r
    thetas = [_base ** sp.Rational(-2 * k, width) for k in range(r // 2)]
    R = sp.eye(d)
    R[:r, :r] = rotation(n, r, layout if layout == "half" else "interleaved", thetas=thetas)
    return R


def _wp8_build(mistake: str | None = None, relative: bool = False):
    import numpy as np

    def build(sizes):
        d, r = sizes["d"], sizes["r"]
        if relative:
            left = partial_rotation(_npos, d, r).T * partial_rotation(_mpos, d, r)
            right = partial_rotation(_mpos - _npos, d, r)
        else:
            right = partial_rotation(_npos, d, r)
            left = partial_rotation(_npos, d, r, freq_over=d if mistake == "freq-over-d" else None,
                                    layout="interleaved" if mistake == "contiguous-pairs" else "half")
        return np.array(left.tolist(), dtype=object), np.array(right.tolist(), dtype=object)
    return build


_PR_SIZES = [{"d": 4, "r": 2}, {"d": 8, "r": 4}, {"d": 6, "r": 4}]
# symbolic widths: r = 2e rotated coordinates (half-split pairs (k, k+e)), p = d − r passed through
_e8, _p8 = dims("e p")
_J8 = AxisBlock(2 * _e8 + _p8, 0, (2, _e8))  # the rotated block [0, r) of the head axis, multi-index (t, k)
_Jp8 = AxisBlock(2 * _e8 + _p8, 2 * _e8, _p8)  # the untouched block [r, d)


def _partial(A):
    """:math:`R^{(r)}=J A J^T+J'J'^T` (``d×d``, :math:`d=2e+p`)."""
    return add(mul(_J8, A, T(_J8)), mul(_Jp8, T(_Jp8)))


def _wp8_relative():
    r"""Symbolic :math:`e,p`, every position and frequency: (1) the index engine proves
    :math:`R^{(r)}(A)^TR^{(r)}(B)=J(A^TB)J^T+J'J'^T` for generic pair-block matrices :math:`A,B`
    (the cross terms vanish, the last :math:`d-r` coordinates pass through); (2) :math:`A^TB` of
    two :class:`PairRotation` is block-diagonal with blocks :math:`\rho_k^T\sigma_k` (their
    definition: the engine's entry :math:`\delta_{kk'}\sum_t\rho_k[t,\cdot]\sigma_k[t,\cdot]`), and
    SymPy proves :math:`\rho(n\theta_k)^T\rho(m\theta_k)=\rho((m-n)\theta_k)` for symbolic angles."""
    from symuat.kernel import certificates
    from symuat.kernel.decide.steps import check_steps
    from symuat.kernel.status import Status

    A, B = PairRotation("rho_n", _e8, "half"), PairRotation("rho_m", _e8, "half")
    structure = decide.check_identity(mul(T(_partial(A)), _partial(B)),
                                      add(mul(_J8, mul(T(A), B), T(_J8)), mul(_Jp8, T(_Jp8))))
    a, b = sp.symbols("alpha beta", real=True)  # nθ_k, mθ_k
    rotary_block_lemma = check_block_lemma(rot_block(a).T * rot_block(b), rot_block(b - a), (a, b))
    written = decide.check_explicit(_wp8_build(relative=True), _PR_SIZES)  # the models' θ^{-2k/r}, written out
    steps = {"structure (index engine, symbolic e, p)": structure, "per pair (SymPy, symbolic angles)": rotary_block_lemma,
             "cross-check: 10000^(-2k/r) written out at (d, r) = (4, 2), (8, 4), (6, 4)": written}
    want = {k: Status.PROVED for k in steps} | {list(steps)[2]: Status.PROVED_AT_SIZES}
    if rotary_block_lemma.status is Status.PROVED:  # the one pair, for the certify tier (symuat.certify.rotary)
        certificates.record("pair_rotation", orientation="row", angles=(a.name, b.name))
    return check_steps(steps, want, "index-level normal form, symbolic dimensions (e, p: r = 2e, d = 2e + p) for the "
                       "block structure, with generic 2×2 blocks; SymPy for one block at symbolic angles "
                       "(addition formulas only): holds at every position and every frequency θ_k",
                       quantities={k: v.method for k, v in steps.items()})


WP8.check("relative", None, r"(R^{(r)}_n)^TR^{(r)}_m=R^{(r)}_{m-n},\quad R^{(r)}_n=JA_nJ^T+J'J'^T,\ "
          r"A_n=\bigoplus_k\rho(n\theta_k)\ \text{(half-split pairs)}",
          _wp8_relative, note="symbolic rotary width r = 2e and head width d = 2e + p; J, J′ the blocks [0, r), [r, d) "
                               "of the head axis (symuat.kernel.head_maps.AxisBlock)", **EXT)
_mutant(WP8, "freq-over-d", r"R_n(\theta^{-2k/d})\overset?=R_n(\theta^{-2k/r})\ \text{(frequencies over the head width)}",
        partial(decide.check_explicit, _wp8_build("freq-over-d"), [{"d": 8, "r": 4}]), "transformers #48630")
_mutant(WP8, "contiguous-pairs", r"R^{\rm int}_n\overset?=R^{\rm half}_n\ \text{on the first }r\text{ coordinates of a half-split head}",
        partial(decide.check_explicit, _wp8_build("contiguous-pairs"), [{"d": 8, "r": 4}]), "pie-project PR #603")
_mistakes(WP8, ["freq-over-d", "contiguous-pairs"])

# ============================================================================================
# WP9 — sliding-window masks
# ============================================================================================

WP9 = _claim(
    "WP9", "Sliding-window masks",
    r"0\le n-n'<w\ \overset?=\ n-n'\le w\ \overset?=\ \texttt{window\_size=(w, w)}",
    r"To examine. A window is a band of offsets $n-n'$ (`symuat.kernel.decide.bands`): two bands are the same "
    r"$N\times N$ mask iff their symmetric difference lies beyond $\pm(N-1)$ — decided for symbolic $N,w$, "
    r"cross-checked on materialised masks. $n-n'<w$ ($w$ keys, the token itself included) and $n-n'\le w$ "
    r"($w+1$ keys) agree iff $N\le w$: every test shorter than the window passes. flash-attention's "
    r"`window_size=(left, right)` is the band $-{\rm right}\le n-n'\le{\rm left}$ (with `causal=True`: "
    r"$0\le n-n'\le{\rm left}$), so $(w,w)$ is $n-n'\le w$ causally and a two-sided band without the flag; "
    r"the corrected statement is `window_size=(w-1, 0)`. Which convention a real model uses: Gemma 3 "
    r"$0\le n-n'<w$ with $w=512$, established in the model tier (`symuat model check --model gemma3`) from the "
    r"checkpoint's own config (the GGUF's `sliding_window` 512, which transformers' GGUF loader reads too) and "
    r"transformers' own mask function (`sliding_window_causal_mask_function`: `kv_idx > q_idx - w`) evaluated "
    r"on a 715-token text, where the other convention changes layer 0's patterns on the rows $n\ge512$ (and "
    r"only there); symuat's forward masks the same band and matches HF to 3e-14. SmolLM2 and MiniLM have no "
    r"window.",
    "transformers #39408; NVIDIA-NeMo/Megatron-Bridge PR #2656; vLLM #3385; onnxruntime PR #25927; mlx-lm PR #390")
_w = bands.WINDOW
_BANDS = {
    "lt-w": bands.Band(0, _w - 1, "0 ≤ n−n′ < w"),
    "le-w": bands.Band(0, _w, "0 ≤ n−n′ ≤ w"),
    "fa(w,w)+causal": bands.Band(0, _w, "window_size=(w, w), causal"),
    "fa(w,w)": bands.Band(-_w, _w, "window_size=(w, w), no causal flag"),
    "fa(w-1,0)": bands.Band(0, _w - 1, "window_size=(w−1, 0)"),
}
WP9.check("same", ("lt-w", "le-w"), r"0\le n-n'<w\ \overset?=\ 0\le n-n'\le w",
          partial(bands.check_same_mask, _BANDS["lt-w"], _BANDS["le-w"]),
          note="the statement to examine; the corrected statement is the exact condition on N", **EXT)
WP9.check("same", ("lt-w", "fa(w,w)+causal"), r"0\le n-n'<w\ \overset?=\ \texttt{window\_size=(w, w)},\ \texttt{causal}",
          partial(bands.check_same_mask, _BANDS["lt-w"], _BANDS["fa(w,w)+causal"]), **EXT)
WP9.check("corrected", ("lt-w", "fa(w-1,0)"), r"0\le n-n'<w\ =\ \texttt{window\_size=(w-1, 0)}",
          partial(bands.check_same_mask, _BANDS["lt-w"], _BANDS["fa(w-1,0)"]),
          note="the convention that matches n − n′ < w for every N", **EXT)
_mutant(WP9, "two-sided", r"\texttt{window\_size=(w, w)}\text{ without the causal flag}\ \overset?=\ 0\le n-n'\le w",
        partial(bands.check_same_mask, _BANDS["fa(w,w)"], _BANDS["le-w"]), "vLLM #3385, onnxruntime PR #25927")
_mutant(WP9, "off-by-one", r"n-n'\le w\text{ used for a window of }w\text{ keys}",
        partial(bands.check_same_mask, _BANDS["le-w"], _BANDS["lt-w"]), "transformers #39408, mlx-lm PR #390")
_mistakes(WP9, ["two-sided", "off-by-one"])

# ============================================================================================
# WP10 — Gemma's (1 + w) norm weight
# ============================================================================================

WP10 = _claim(
    "WP10", "Gemma's (1+w) norm weight",
    r"\mathrm{RMS}(x)\odot(1+w)=\mathrm{RMS}(x)\odot w',\quad w'=1+w\ \text{(as llama.cpp's converter stores it)}",
    r"HF stores $w$ and multiplies by $1+w$; llama.cpp's converter stores $w'=1+w$, to be read with multiplier "
    r"$w'$. Adding the 1 again, or not at all, scales every coordinate by the wrong factor: exact counterexamples "
    r"(symbolic $N,M$). The two files agree only when the reader knows which one it holds. Real weights "
    r"(the Gemma-3-270M GGUF's norm weights, `symuat model check --model gemma3`): every one of the 55,936 "
    r"stored $v$ has $v-1$ a bfloat16 number while 14,189 of the $v$ are not: the file stores $w'=1+w$.",
    "llama.cpp PR #5631; vLLM PR #31464; utensils/mold PR #1078; pytorch/executorch PR #19901")
_wn = MatrixSymbol("w", _M, 1)
_oneM = OneMatrix(_M, 1)
_wfile = add(_oneM, _wn)  # what the GGUF file holds
_gemma = mul(Diag(_s), _X, Diag(add(_oneM, _wn)))  # HF: RMS(x) ⊙ (1 + w)
WP10.check("read", None, r"\operatorname{diag}(s)X\operatorname{diag}(\mathbf 1+w)=\operatorname{diag}(s)X\operatorname{diag}(w')",
           partial(decide.check_identity, _gemma, mul(Diag(_s), _X, Diag(_wfile))), **EXT)
_mutant(WP10, "added-twice", r"\operatorname{diag}(s)X\operatorname{diag}(\mathbf 1+w')\overset?=\operatorname{diag}(s)X\operatorname{diag}(\mathbf 1+w)",
        partial(decide.check_identity, mul(Diag(_s), _X, Diag(add(_oneM, _wfile))), _gemma), "llama.cpp PR #5631, vLLM PR #31464")
_mutant(WP10, "never-added", r"\operatorname{diag}(s)X\operatorname{diag}(w)\overset?=\operatorname{diag}(s)X\operatorname{diag}(\mathbf 1+w)",
        partial(decide.check_identity, mul(Diag(_s), _X, Diag(_wn)), _gemma), "utensils/mold PR #1078, executorch PR #19901")
_mistakes(WP10, ["added-twice", "never-added"])

# ============================================================================================
# WP11 — QK-norm and H8's W_QK form
# ============================================================================================

WP11 = _claim(
    "WP11", "QK-norm and H8's W_QK form",
    r"q_n^Tk_{n'}=s_ns'_{n'}\;x_nW_Q\operatorname{diag}(\gamma_q\odot\gamma_k)W_K^Tx_{n'}^T\quad\text{(with RoPE between the norm and the product?)}",
    r"To examine. Per-head RMSNorm on queries and keys (Gemma 3, OLMo 2, Qwen 3), frozen per-token scales "
    r"$s,s'$. Without RoPE the two norm weights fold into one diagonal (`norope`, symbolic). With RoPE the "
    r"rotation sits between them: $W_Q\operatorname{diag}(\gamma_q)R_nR_{n'}^T\operatorname{diag}(\gamma_k)W_K^T$ "
    r"(`rope`, corrected form, proved for symbolic head width with generic RoPE blocks); the single-diagonal "
    r"fold is refuted on true rotations. It holds when $\gamma_k$ is constant on each rotated pair "
    r"(`pair-constant`: $\operatorname{diag}(\gamma_k)$ then commutes with $R_nR_{n'}^T$; symmetrically a "
    r"pair-constant $\gamma_q$ folds the diagonal after the rotations). Real weights (`symuat model check --model gemma3`, "
    r"the first 128 tokens of a text, every layer and head): Gemma-3-270M's $\gamma_q,\gamma_k$ are not "
    r"pair-constant on the half-split RoPE pairs $(k,k+128)$ in any of the 18 layers (at most 7 of 128 pairs "
    r"equal), and the single-diagonal fold is off by at least 0.66 of a score row's largest entry in every "
    r"layer — yet exact on the diagonal $n=m$ ($R_0=I$), as the refutation predicts; the corrected sandwich "
    r"form agrees to 3.9e-15, and the fold with $\gamma_k$ made pair-constant to 4.8e-15.",
    "NVIDIA TensorRT-Model-Connect PR #1304; vllm #51049")
_N2 = dims("Np")
_sp = MatrixSymbol("s_k", _N2, 1)
_Xk = MatrixSymbol("X_k", _N2, _M)
_WQ1 = MatrixSymbol("W_Q", _M, 2 * _e)
_WK1 = MatrixSymbol("W_K", _M, 2 * _e)
_gq1, _gk1 = MatrixSymbol("gamma_q", 2 * _e, 1), MatrixSymbol("gamma_k", 2 * _e, 1)
WP11.check("norope", None, r"(\operatorname{diag}(s)XW_Q\operatorname{diag}(\gamma_q))(\operatorname{diag}(s')X'W_K\operatorname{diag}(\gamma_k))^T="
           r"\operatorname{diag}(s)XW_Q\operatorname{diag}(\gamma_q\odot\gamma_k)W_K^TX'^T\operatorname{diag}(s')",
           partial(decide.check_identity,
                   mul(mul(Diag(_s), _X, _WQ1, Diag(_gq1)), T(mul(Diag(_sp), _Xk, _WK1, Diag(_gk1)))),
                   mul(Diag(_s), _X, _WQ1, Diag(Hadamard(_gq1, _gk1)), T(_WK1), T(_Xk), Diag(_sp))), **EXT)
# one query row x, one key row x' (per-token scales are scalars on each side; they factor out)
_xq, _xk = MatrixSymbol("x", 1, _M), MatrixSymbol("x_k", 1, _M)
_WQh = BlockSymbol("W_Q", (_M,), (2, _e))
_WKh = BlockSymbol("W_K", (_M,), (2, _e))
_gqh, _gkh = BlockSymbol("gamma_q", (2, _e), (1,)), BlockSymbol("gamma_k", (2, _e), (1,))
_Rn, _Rm = PairRotation("rho", _e, "half"), PairRotation("rho2", _e, "half")
_rope_scores = mul(mul(_xq, _WQh, Diag(_gqh), _Rn), T(mul(_xk, _WKh, Diag(_gkh), _Rm)))
_rope_sandwich = mul(_xq, _WQh, Diag(_gqh), _Rn, T(_Rm), Diag(_gkh), T(_WKh), T(_xk))
_rope_folded = mul(_xq, _WQh, Diag(Hadamard(_gqh, _gkh)), _Rn, T(_Rm), T(_WKh), T(_xk))


def _wp11_rope():
    verdict = refute_with_rotations(_rope_scores, _rope_folded, [{_M: 2, _e: 1}, {_M: 2, _e: 2}, {_M: 3, _e: 2}])
    verdict.corrected = Corrected(r"q_n^Tk_{n'}=s_ns'_{n'}\,x_nW_Q\operatorname{diag}(\gamma_q)R_nR_{n'}^T"
                                  r"\operatorname{diag}(\gamma_k)W_K^Tx_{n'}^T",
                                  decide.check_identity(_rope_scores, _rope_sandwich))
    return verdict


WP11.check("rope", ("rope",), r"(xW_Q\operatorname{diag}(\gamma_q)R_n)(x'W_K\operatorname{diag}(\gamma_k)R_{n'})^T\overset?="
           r"xW_Q\operatorname{diag}(\gamma_q\odot\gamma_k)R_nR_{n'}^TW_K^Tx'^T",
           _wp11_rope, note="the statement to examine; refuted on true rotations, corrected to the sandwich form", **EXT)
_gpair = MatrixSymbol("g_k", _e, 1)
_gk_pc = kron(OneMatrix(2, 1), _gpair)  # γ_k constant on each rotated pair (k, k+e)
WP11.check("pair-constant", ("rope",), r"\gamma_k=\mathbf 1_2\otimes g:\ (xW_Q\operatorname{diag}(\gamma_q)R_n)(x'W_K\operatorname{diag}(\gamma_k)R_{n'})^T="
           r"xW_Q\operatorname{diag}(\gamma_q\odot\gamma_k)R_nR_{n'}^TW_K^Tx'^T",
           partial(decide.check_identity,
                   mul(mul(_xq, _WQh, Diag(_gqh), _Rn), T(mul(_xk, _WKh, Diag(_gk_pc), _Rm))),
                   mul(_xq, _WQh, Diag(Hadamard(_gqh, _gk_pc)), _Rn, T(_Rm), T(_WKh), T(_xk))),
           note="a sufficient condition for the examined fold: with γ_k constant on each rotated pair, diag(γ_k) "
                "commutes with R_n R_n'ᵀ (symmetrically, γ_q pair-constant folds the diagonal after the rotations)",
           **EXT)

# ============================================================================================
# WP12 — centre the weights that write to the residual stream
# ============================================================================================

WP12 = _claim(
    "WP12", "Centre the weights that write to the residual stream",
    r"\mathrm{LN}\Big(x+\sum_jy_jW_{{\rm out},j}C_M\Big)=\mathrm{LN}\Big(x+\sum_jy_jW_{{\rm out},j}\Big),\quad C_M=I-\tfrac1M\mathbf 1\mathbf 1^T",
    r"LayerNorm reads a row only through its centred part $zC_M$ (its scale is $1/\sqrt{\operatorname{mean}((zC_M)^2)+"
    r"\epsilon}$), so a writer centred by $C_M$ (weights and biases alike) changes nothing any reader sees: "
    r"$(x+yWC_M)C_M=(x+yW)C_M$ (`ln`, symbolic $N,M,F$). An RMSNorm reader sees the mean (`rms`: refuted, and its "
    r"scale changes too), and so does a reader that is no norm (`no-norm`). `symuat model fold --model minilm` "
    r"centres MiniLM's writers (post-LN: the only reader of each sum is a LayerNorm) and reproduces every state; "
    r"`--center-writers` on SmolLM2 is refused, naming WP12.",
    "TransformerLens center_writing_weights; #523")
_Yw = MatrixSymbol("Y", _N, _F)
_Wout, _bout = MatrixSymbol("W_out", _F, _M), MatrixSymbol("b_out", 1, _M)
_writer = add(mul(_Yw, _Wout), mul(_oneN, _bout))
_writer_c = add(mul(_Yw, _Wout, _centre(_M)), mul(_oneN, _bout, _centre(_M)))
WP12.check("ln", ("LayerNorm",), r"\big(X+YW_{\rm out}C_M+\mathbf 1b_{\rm out}C_M\big)C_M=\big(X+YW_{\rm out}+\mathbf 1b_{\rm out}\big)C_M",
           partial(decide.check_identity, mul(add(_X, _writer_c), _centre(_M)), mul(add(_X, _writer), _centre(_M))),
           note="what a LayerNorm reads (its centred input; the scale is a function of it)", **EXT)
_Wr = MatrixSymbol("W_r", _M, _K)
_mutant(WP12, "rms", r"\operatorname{diag}(s)\big(X+YW_{\rm out}C_M\big)\operatorname{diag}(\gamma)\overset?=\operatorname{diag}(s)\big(X+YW_{\rm out}\big)\operatorname{diag}(\gamma)",
        partial(decide.check_identity, mul(Diag(_s), add(_X, _writer_c), Diag(_gamma)),
                mul(Diag(_s), add(_X, _writer), Diag(_gamma))),
        "TransformerLens #523: centring under RMSNorm readers (even with the scales s held fixed)")
_mutant(WP12, "no-norm", r"(X+YW_{\rm out}C_M)W_r\overset?=(X+YW_{\rm out})W_r",
        partial(decide.check_identity, mul(add(_X, _writer_c), _Wr), mul(add(_X, _writer), _Wr)),
        "a reader that is no norm")
_mistakes(WP12, ["rms", "no-norm"])
