r"""Claim X10 (spec §8, an extension): soft-capping, :math:`\mathrm{cap}_c(z)=c\tanh(z/c)` (Gemma 2).

* **Scores** (``X10.pattern``): Gemma 2 caps the attention scores before the mask and the softmax.
  The capped pattern :math:`H_i` is still a function of the layer's input alone, so the attention
  frozen at its input is X1's form :math:`\sum_{a,b}\mathbf H_{ab}\otimes\mathbf B_{ab}^T` — proved for
  symbolic sizes *for every* :math:`H_{ab}` (the capped ones included); ``X10.layer`` confirms it on
  random soft-capped layers (:class:`symuat.models.softcap.SoftcapLayer`) against their own forward,
  and that the uncapped patterns would not reproduce them.
* **The capped logit** (``X10.logit``): not linear in the residual stream, but with the *secant slope*
  :math:`\kappa=\mathrm{cap}_c(\ell)/\ell` frozen at the model's own pre-cap logit
  :math:`\ell=\sum_kt_k` (any exact decomposition: DUAT's terms, the residual view's),
  :math:`\mathrm{cap}_c(\ell)=\sum_k\kappa\,t_k` — proved for a symbolic number of terms
  (:func:`symuat.kernel.decide.softcap.check_capped_sum`). The two tempting splits are refuted with exact
  counterexamples (every tanh a rational function of the transcendental :math:`e^{1/c}`): capping each
  term, :math:`\sum_k\mathrm{cap}_c(t_k)`, and ignoring the cap, :math:`\sum_kt_k`. ``X10.explain``
  runs the model's own ``explain`` on random soft-capped decoders: both views add up to the capped logit.
* **Weight processing** (``X10.wp3``): WP3's centring of the unembedding is a per-row shift of the
  pre-cap logits, which the cap does not let through — refuted with an exact counterexample
  (TransformerLens PR #650), corrected: centre the capped logits. (WP2's post-norms are Gemma's
  sandwich norms, refuted in WP2.sandwich; soft-capping changes nothing there.)
"""

from __future__ import annotations

from functools import partial

import numpy as np
import sympy as sp

from symuat.kernel import decide
from symuat.kernel.decide import softcap
from symuat.kernel.decide.mistakes import mistakes_refuted
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Corrected

EXT = {"polarity": None, "role": "extension"}
MUT = {"polarity": None, "role": "extension", "admitted": False}

X10 = REGISTRY.claim(
    "X10", "Soft-capping (extension)",
    where="not in the papers (spec §8); Gemma 2 (attn_logit_softcapping, final_logit_softcapping); "
          "TransformerLens PR #650",
    statement=r"H_i=\operatorname{softmax}\big(\operatorname{mask}(c_a\tanh(S_i/c_a))\big)\text{ frozen: }"
              r"\mathring H'=\Big(\sum_i\mathbf H_i\otimes\mathbf B_i^T\Big)\mathbf x';\qquad "
              r"c\tanh(\ell/c)=\sum_k\kappa\,t_k,\ \ \kappa=\frac{c\tanh(\ell/c)}{\ell},\ \ \ell=\sum_kt_k",
    group="decoder",
    remarks=r"Scores: the cap is inside the pattern, frozen with it (X1's form for every $H_i$). The logit: "
            r"the secant slope $\kappa\in(0,1]$ frozen at the model's own pre-cap logit makes the head the linear "
            r"lift $D_\kappa(I_N\otimes W_E)S_f$; every exact decomposition of $\ell$ times $\kappa$ is one of the "
            r"capped logit (`symuat model explain` on a Gemma 2 folder asserts it). Capping each term, or ignoring "
            r"the cap, is refuted exactly; WP3's centring does not survive the cap (`X10.wp3`).",
)


def _pattern_statement():
    from symuat.claims.decoder import gqa_statement

    return gqa_statement("row", "causal")


X10.check("pattern", ("causal",),
          r"\operatorname{vec}(\mathrm{GQA}_{c}(X))=\sum_{a,b}\mathbf H_{ab}\otimes\mathbf B_{ab}^{T}\operatorname{vec}(X)"
          r"\quad(\mathbf H_{ab}\text{ any causal pattern, the capped ones included})",
          lambda: decide.check_identity(*_pattern_statement()),
          note="X1.exist with the capped patterns: the identity holds for every H_ab, so freezing the capped "
               "pattern at the input keeps the attention exactly X1's form", **EXT)


def _layer_trial(sizes, seed, *, cap_in_patterns: bool = True):
    """A random soft-capped Gemma-2-like layer: its DUAT step (patterns frozen with the cap) reproduces its
    forward; the same step with the uncapped patterns does not."""
    from dataclasses import fields

    from symuat.models.compare import row_errors
    from symuat.models.families.gemma3 import random_gemma3
    from symuat.models.softcap import SoftcapLayer

    rng = np.random.default_rng(seed)
    base = random_gemma3(rng, M=sizes["M"], layers=1, window=3).layers[0]
    layer = SoftcapLayer(**{f.name: getattr(base, f.name) for f in fields(base)}, attn_softcap=0.5)
    X = rng.standard_normal((sizes["N"], sizes["M"])) * 3
    _, out = layer.step(X)
    res = row_errors(out, layer.forward(X))[0]
    uncapped = SoftcapLayer(**{f.name: getattr(base, f.name) for f in fields(base)}, attn_softcap=None)
    gap = row_errors(uncapped.step(X)[1], layer.forward(X))[0]
    ok = res <= decide.TOLERANCE and gap > 1e-6
    return ok, f"rewrite vs forward {res:.2e} ≤ {decide.TOLERANCE}; without the cap in H_i off by {gap:.2g}", {"residual": res}


X10.check("layer", ("causal",),
          r"\text{soft-capped layer: }x'_{\rm next}=W1\,x'+W3\,\sigma(W2\,x')\text{ with }H_i\text{ capped and frozen}",
          lambda: decide.check_numeric(_layer_trial, [{"N": 7, "M": 8}, {"N": 5, "M": 8}],
                                       what="float64, random soft-capped layers (c = 0.5, scores ×3); relative "
                                            f"error ≤ {decide.TOLERANCE}, and > 1e-6 without the cap in the patterns"),
          note="symuat.models.softcap.SoftcapLayer (Gemma 2's attention) through the shared decoder's duat_step",
          **EXT)


def _ell(t, k, n, c):
    return sp.Sum(t[k], (k, 1, n))


def _capped(t, k, n, c):
    return c * sp.tanh(_ell(t, k, n, c) / c)


def _secant(t, k, n, c):
    return sp.Sum(_capped(t, k, n, c) / _ell(t, k, n, c) * t[k], (k, 1, n))


def _per_term(t, k, n, c):
    return sp.Sum(c * sp.tanh(t[k] / c), (k, 1, n))


X10.check("logit", None, r"\sum_{k=1}^{n}\kappa\,t_k=c\tanh\Big(\tfrac1c\sum_{k=1}^{n}t_k\Big),\quad"
          r"\kappa=\frac{c\tanh(\ell/c)}{\ell}",
          partial(softcap.check_capped_sum, _secant, _capped),
          note="the exact decomposition of a soft-capped logit: the pre-cap terms (any exact split of ℓ) each "
               "times the frozen secant slope κ ∈ (0, 1] (κ(0) = 1, its limit)", **EXT)
X10.check("mutant", ("per-term",), r"\sum_{k}c\tanh(t_k/c)\overset?=c\tanh\Big(\tfrac1c\sum_kt_k\Big)",
          partial(softcap.check_capped_sum, _per_term, _capped),
          note="capping each term of the decomposition: must come back refuted with an exact counterexample", **MUT)
X10.check("mutant", ("uncapped",), r"\sum_{k}t_k\overset?=c\tanh\Big(\tfrac1c\sum_kt_k\Big)",
          partial(softcap.check_capped_sum, _ell, _capped),
          note="the pre-cap terms read as the capped logit: must come back refuted with an exact counterexample",
          **MUT)


def _wp3_under_cap():
    verdict = softcap.check_capped_shift([2, 0], 1, 1)
    verdict.corrected = Corrected(r"\operatorname{softmax}(\mathrm{cap}(z)C_V)=\operatorname{softmax}(\mathrm{cap}(z))"
                                  r"\ \text{(centre the capped logits)}", softcap.softmax_shift_invariance())
    return verdict


X10.check("wp3", None, r"\operatorname{softmax}(c\tanh((z-k\mathbf 1^T)/c))\overset?=\operatorname{softmax}(c\tanh(z/c))",
          _wp3_under_cap,
          note="which weight processing fails under soft-capping: WP3's centring (TransformerLens PR #650), a "
               "shipped mistake that must come back refuted with an exact counterexample; symuat model fold refuses "
               "Gemma 2 naming it", **MUT)


def _explain_trial(sizes, seed):
    """``explain`` on a random soft-capped decoder: both views and the DUAT terms add up to the *capped* logit."""
    from dataclasses import fields

    from symuat.models import attribution as at
    from symuat.models.families.gemma3 import random_gemma3
    from symuat.models.rewrite import decompose_logit
    from symuat.models.softcap import SoftcapLayer, SoftcapLM

    rng = np.random.default_rng(seed)
    g = random_gemma3(rng, M=sizes["M"], layers=2, window=3)
    layers = [SoftcapLayer(**{f.name: getattr(lay, f.name) for f in fields(lay)}, attn_softcap=1.0) for lay in g.layers]
    m = SoftcapLM(g.config, g.embed_tokens, layers, g.norm, None, embed_scale=g.embed_scale, final_softcap=0.7)
    ids = rng.integers(0, g.config.vocab, sizes["N"])
    a = at.explain(m, ids, 3, 5)
    dec = decompose_logit(m, ids, 3)
    res = abs(dec.total - dec.logit) / max(1.0, abs(dec.logit))
    raw = m.raw_logits(m.hidden_states(ids)[-1])[-1, 3]
    capped_differs = abs(raw - dec.logit) > 1e-6
    return bool(a.passed and res <= decide.TOLERANCE and capped_differs), \
        f"views add up: {a.passed}; Σ DUAT terms vs the capped logit {res:.1e}; the cap moves the logit: " \
        f"{capped_differs}", {"residual": res}


X10.check("explain", None, r"\text{explain: }\sum\text{terms}=c\tanh(\ell/c)\text{ (both views, the DUAT terms)}",
          lambda: decide.check_numeric(_explain_trial, [{"N": 6, "M": 8}, {"N": 4, "M": 8}],
                                       what="float64, random soft-capped decoders (attention c = 1, final c = 0.7)"),
          note="symuat.models.softcap.SoftcapLM: the head frozen as D_κ (I ⊗ W_E) S_f; the attribution adapter "
               "scales each unembedding row by its κ", **EXT)

X10.check("mistakes", None,
          r"\text{each mistake}\neq\text{the capped logit: }\text{capping each term}, \text{ignoring the cap}, "
          r"\text{WP3's centring under the cap}",
          lambda: mistakes_refuted([REGISTRY.verdict(k) for k in ("X10.mutant[per-term]", "X10.mutant[uncapped]",
                                                                   "X10.wp3")], ["per-term", "uncapped", "wp3"]),
          note="rests on X10.mutant[per-term], X10.mutant[uncapped], X10.wp3", **EXT)
