r"""Soft-capping (Gemma 2; optional in Gemma 3): :math:`\mathrm{cap}_c(s)=c\tanh(s/c)`, applied to the
attention scores before the mask and the softmax, and to the final logits.

**Attention soft-capping** lives inside the patterns: with the scores capped, :math:`H_i` is still a
function of the layer's input only, so freezing it (as every decoder's DUAT form does) keeps the
layer *exactly* the Eq. 20 term — :class:`SoftcapLayer` is a
:class:`~symuat.models.causal_lm.DecoderLayer` whose :meth:`~SoftcapLayer.patterns` caps the scores
(HF ``eager_attention_forward``: ``scores * scaling``, then ``/ softcap``, ``tanh``, ``* softcap``,
then the mask, then the softmax).

**Final-logit soft-capping** is not linear, so a logit is no longer a dot product with the last
state. symuat decomposes it by a *frozen secant slope*, the way the σ-terms are split through the
activation's slope: at the model's own pre-cap logits :math:`\ell`,

.. math:: \mathrm{cap}_c(\ell)=\kappa(\ell)\,\ell,\qquad
          \kappa(\ell)=\frac{c\tanh(\ell/c)}{\ell}\ (\kappa(0)=1),

so with :math:`\kappa` frozen the head is the linear lift :math:`D_\kappa(I_N\otimes W_E)S_f` (X5 with
one more frozen diagonal), and every exact decomposition of :math:`\ell=\sum_k t_k` gives one of the
capped logit, :math:`\mathrm{cap}_c(\ell)=\sum_k\kappa\,t_k` — each term scaled by the same
:math:`\kappa\in(0,1]`, the sum asserted as for every other family. A logit *difference* is
:math:`\kappa_a\ell_a-\kappa_b\ell_b` (two slopes, one per token). The pre-cap logit and its slope are
reported beside the capped one (:func:`secant_slope`).

>>> import numpy as np
>>> l = np.array([-80.0, -1.0, 0.0, 2.5, 300.0])
>>> k = secant_slope(l, 30.0)
>>> bool(np.allclose(k * l, softcap(l, 30.0), rtol=0, atol=1e-13)), float(k[2])
(True, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderLayer
from symuat.models.lifts import Diagonal, softmax_causal
from symuat.numeric.operators import Composed


def softcap(x, c: float):
    """:math:`c\\tanh(x/c)` (HF: ``x / c``, ``tanh``, ``* c``, in that order)."""
    return np.tanh(np.asarray(x, dtype=float) / c) * c


def secant_slope(logits, c: float) -> np.ndarray:
    """:math:`\\kappa=\\mathrm{cap}_c(\\ell)/\\ell` (1 at :math:`\\ell=0`, its limit): the capped logit is
    :math:`\\kappa\\ell` (to float64 rounding)."""
    ell = np.asarray(logits, dtype=float)
    capped = softcap(ell, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(ell == 0.0, 1.0, capped / np.where(ell == 0.0, 1.0, ell))
    return k


@dataclass
class SoftcapLayer(DecoderLayer):
    """A :class:`~symuat.models.causal_lm.DecoderLayer` whose attention scores are soft-capped,
    :math:`c\\tanh(s/c)` (``attn_softcap``: ``None`` for none), inside the patterns."""

    attn_softcap: float | None = None

    def head_pattern(self, S: np.ndarray, offset: int = 0) -> np.ndarray:
        """The soft-cap :math:`c\\tanh(s/c)` of one head's scores, then the causal softmax."""
        return softmax_causal(S if self.attn_softcap is None else softcap(S, self.attn_softcap), self.window, offset)


class SoftcapLM(CausalLM):
    """A :class:`~symuat.models.causal_lm.CausalLM` whose logits are soft-capped (``final_softcap``;
    ``None``: plain). The head frozen at a state is :math:`D_\\kappa(I_N\\otimes W_E)S_f`
    (:func:`secant_slope` at that state's own logits); :meth:`readout` carries the same :math:`\\kappa`."""

    def __init__(self, *args, final_softcap: float | None = None, **kw):
        super().__init__(*args, **kw)
        self.final_softcap = final_softcap

    def raw_logits(self, X: np.ndarray) -> np.ndarray:
        """The logits before the soft-cap, :math:`\\mathrm{RMS}_f(X)W_{\\rm head}^\\top`."""
        return super().logits(X)

    def logits(self, X: np.ndarray) -> np.ndarray:
        raw = self.raw_logits(X)
        return raw if self.final_softcap is None else softcap(raw, self.final_softcap)

    def slopes(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\kappa` of every logit of the state ``X`` ``(N, V)`` (all ones without a cap)."""
        raw = self.raw_logits(X)
        return np.ones_like(raw) if self.final_softcap is None else secant_slope(raw, self.final_softcap)

    def head(self, X: np.ndarray):
        base = super().head(X)
        if self.final_softcap is None:
            return base
        return Composed([Diagonal(self.slopes(X).reshape(-1)), *base.ops])

    def readout(self, X: np.ndarray, position: int, token: int) -> np.ndarray:
        rho = super().readout(X, position, token)
        if self.final_softcap is None:
            return rho
        return rho * float(secant_slope(self.raw_logits(X[position:position + 1])[0, token], self.final_softcap))


FROZEN_FINAL = ("the final-logit soft-cap's secant slope kappa = c tanh(l/c) / l at the model's own pre-cap logit l "
                "(so the capped logit is kappa times the exact sum of the pre-cap terms)")
FROZEN_ATTENTION = ("the attention soft-cap c tanh(s/c) of the scores, inside the frozen patterns H_i")


def trace_softcap_lm(model, ids, states=None):
    """The attribution :class:`~symuat.models.attribution.Trace` of a :class:`SoftcapLM`: the plain
    decoder's, with each unembedding row scaled by its token's frozen secant slope at the model's own
    last state, so that both views add up to the *capped* logit (or difference) exactly."""
    from symuat.models.attribution import trace_causal_lm

    tr = trace_causal_lm(model, ids, states)
    if model.final_softcap is None:
        return tr
    raw = model.raw_logits(tr.xL[-1:])[0]
    kappa = secant_slope(raw, model.final_softcap)
    plain = tr.unembed
    tr.unembed = lambda t: float(kappa[int(t)]) * np.asarray(plain(t), dtype=float)
    tr.extra_frozen = (FROZEN_FINAL,)
    tr.pre_cap_logits = raw
    return tr


def _register() -> None:
    from symuat.models import attribution

    attribution.ADAPTERS.setdefault("SoftcapLM", trace_softcap_lm)


_register()


def slope_is_exact(logits, c: float) -> float:
    """The largest :math:`|\\kappa\\ell-\\mathrm{cap}_c(\\ell)|/\\max(1,|\\mathrm{cap}_c(\\ell)|)` (float64 rounding)."""
    ell = np.asarray(logits, dtype=float)
    gap = np.abs(secant_slope(ell, c) * ell - softcap(ell, c)) / np.maximum(1.0, np.abs(softcap(ell, c)))
    return float(gap.max()) if gap.size else 0.0


__all__ = ["softcap", "secant_slope", "SoftcapLayer", "SoftcapLM", "trace_softcap_lm", "FROZEN_FINAL",
           "FROZEN_ATTENTION", "slope_is_exact"]
