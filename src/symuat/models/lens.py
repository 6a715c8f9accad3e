r"""Two exact lenses on a decoder's residual stream: what each layer's state at the last position
would predict.

* **The logit lens** reads the state :math:`x_l[n]` entering layer ``l`` (0-based; ``l = L`` is the
  last state) through the final norm — at *its own* scale, as the model would if it stopped there
  — and the unembedding: :math:`\mathrm{logits}_l=W_U\,\mathrm{Norm}_f(x_l[n])`. Nothing is
  approximated; it is the standard logit lens computed in float64.
* **The exact Jacobian lens** pushes the same state through the *rest of the network* with its
  nonlinear factors detached at the model's own input (norm scales, attention patterns, the gate's
  activation — Golden's freezing, :func:`symuat.models.attribution.golden_apply`):
  :math:`\mathrm{logits}_l=W_U\,J^{(l)}_n\,x_l[n]`, where :math:`J^{(l)}_t` is the detached
  Jacobian of the final-normed last output with respect to layer ``l``'s input at position ``t``.
  Because the detached rest is linear, :math:`\sum_tJ^{(l)}_tx_l[t]` *is* the model's output
  (checked on every call, ``exact_error``); the lens keeps the last position's own share. This is
  the per-prompt, exact counterpart of the Jacobian lens that fits one corpus-averaged Jacobian
  (applied matrix-free: one frozen forward per layer, no Jacobian is built).

The gap between the two at each layer is reported as the KL divergence of their next-token
distributions and whether their top tokens agree.

>>> import numpy as np
>>> from symuat.models.families.llama import random_llama
>>> m = random_llama(np.random.default_rng(0))
>>> lens = lenses(m, np.array([1, 5, 7, 2]))
>>> [r["hook"] for r in lens.rows][:2], lens.rows[-1]["hook"]
(['blocks.0.hook_resid_pre', 'blocks.1.hook_resid_pre'], 'blocks.1.hook_resid_post')
>>> bool(np.allclose(lens.logit_lens[-1], lens.model_logits, rtol=0, atol=1e-12))
True
>>> max(lens.exact_error) < 1e-12
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from symuat.models.attribution import Trace, golden_apply, top_k, trace
from symuat.models.formats import ModelError


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def kl(p_logits: np.ndarray, q_logits: np.ndarray) -> float:
    """:math:`\\mathrm{KL}(p\\,\\|\\,q)` of the softmaxes of two logit vectors (float64, natural log)."""
    p, logq = _softmax(p_logits), q_logits - q_logits.max()
    logq = logq - math.log(np.exp(logq).sum())
    logp = p_logits - p_logits.max()
    logp = logp - math.log(np.exp(logp).sum())
    return max(0.0, float(np.sum(p * (logp - logq))))  # ≥ 0; a rounding's −1e-16 is 0


def hook_of(layer: int, L: int) -> str:
    """TransformerLens's name of the residual stream entering layer ``layer`` (``L``: the last state)."""
    return f"blocks.{layer}.hook_resid_pre" if layer < L else f"blocks.{L - 1}.hook_resid_post"


@dataclass
class Lenses:
    """Both lenses at every layer: ``logit_lens`` and ``jacobian_lens`` ``(L + 1, V)`` (row ``l``: the
    state entering layer ``l``; row ``L``: the last state), the model's own ``model_logits``, and
    ``rows`` — one dict per layer with the top tokens of each lens, their gap and, with a ``token``,
    its probability and rank under each."""

    words: list[str]
    logit_lens: np.ndarray
    jacobian_lens: np.ndarray
    model_logits: np.ndarray
    exact_error: list[float]  # per layer: |the detached rest applied to the whole state − the output| / scale
    rows: list[dict]

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(self.rows)

    def __str__(self) -> str:
        out = [f"{'layer':>5}  {'hook':<28} {'logit lens':<22} {'Jacobian lens':<22} {'KL':>9}"]
        for r in self.rows:
            a, b = r["logit_lens_top"][0], r["jacobian_lens_top"][0]
            out.append(f"{r['layer']:>5}  {r['hook']:<28} {a['token']!r:<14} {a['probability']:>6.1%} "
                       f"{b['token']!r:<14} {b['probability']:>6.1%} {r['kl']:>9.3g}")
        return "\n".join(out)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def _unembed(model) -> np.ndarray:
    head = getattr(model, "lm_head", None)
    if head is None:
        raise ModelError(f"{getattr(model, 'source', 'the model')}: the lenses read a decoder's unembedding")
    return head


def lenses(model, ids, token: int | None = None, k: int = 5, *, tr: Trace | None = None) -> Lenses:
    """The logit lens and the exact Jacobian lens of ``model`` on ``ids`` at the last position."""
    tr = trace(model, ids) if tr is None else tr
    W = _unembed(model)
    L, N = len(tr.layers), tr.N
    n = N - 1
    states = [lt.X for lt in tr.layers] + [tr.xL]
    out_final = tr.sf[n] * tr.gf * tr.xL[n]
    scale = max(float(np.abs(out_final).max()), np.finfo(float).tiny)
    logit_lens = np.stack([model.logits(x[n][None])[0] for x in states])
    jac, errors = [], []
    for layer, X in enumerate(states):
        if layer < L:
            own = np.zeros_like(X)
            own[n] = X[n]
            y = golden_apply(tr, own, start=layer)
            errors.append(float(np.abs(golden_apply(tr, X, start=layer) - out_final).max()) / scale)
        else:
            y = out_final
            errors.append(0.0)
        jac.append(W @ y)
    jac = np.stack(jac)
    rows = []
    for layer in range(L + 1):
        row = {"layer": layer, "hook": hook_of(layer, L),
               "logit_lens_top": top_k(logit_lens[layer], k, tr.decode),
               "jacobian_lens_top": top_k(jac[layer], k, tr.decode),
               "kl": kl(logit_lens[layer], jac[layer])}
        row["top_agree"] = row["logit_lens_top"][0]["token_id"] == row["jacobian_lens_top"][0]["token_id"]
        if token is not None:
            for name, z in (("logit_lens", logit_lens[layer]), ("jacobian_lens", jac[layer])):
                p = _softmax(z)
                row[f"{name}_probability"] = float(p[token])
                row[f"{name}_rank"] = int((z > z[token]).sum()) + 1
        rows.append(row)
    return Lenses(tr.words, logit_lens, jac, tr.logits, errors, rows)
