r"""An attribution as a table: one row per exact term, labelled the way TransformerLens names it.

Both views of :mod:`symuat.models.attribution` are sums of terms; here each term becomes one row
of a long-format table — ``view``, ``layer``, ``sublayer``, ``head``, ``position`` (the source
token's position), ``token``, ``hook``, ``value`` — with **0-based layers and heads everywhere**
(TransformerLens's convention: ``blocks.0`` is the first layer) and, where TransformerLens has
one, the hook whose activation the term reads:

=====================================  ==========================================================
term                                   TransformerLens hook
=====================================  ==========================================================
the embedding at the last position     ``hook_embed`` (plus ``hook_pos_embed`` for learned
                                       positions: symuat's :math:`x_0` is their sum)
head ``h`` of layer ``l``, one source  ``blocks.{l}.attn.hook_result`` (head ``h``; needs
                                       ``use_attn_result``), split per source position through
                                       the frozen pattern ``blocks.{l}.attn.hook_pattern``
layer ``l``'s attention output bias    ``blocks.{l}.hook_attn_out`` (TransformerLens adds
                                       :math:`b_O` there, not per head)
layer ``l``'s MLP write                ``blocks.{l}.hook_mlp_out``
=====================================  ==========================================================

Two conventions differ from TransformerLens's and are stated, not hidden: the readout is the
model's own unembedding row (TransformerLens centres it, WP3 — a centred logit differs from the
model's by a per-row constant), and a family with post-sub-layer norms (Gemma's sandwich) writes
``post_norm(write)``, whose scale is frozen at the model's own state (TransformerLens's
``hook_attn_out``/``hook_mlp_out`` are after that norm too). The DUAT view's σ-terms have no
TransformerLens hook (``hook`` is ``None``); the linear path per input token reads ``hook_embed``.

Every table sums to the explained value (asserted when the attribution is made):

>>> import numpy as np
>>> from symuat.models.families.llama import random_llama
>>> from symuat.models.attribution import explain
>>> att = explain(random_llama(np.random.default_rng(0)), np.array([1, 5, 7, 2]))
>>> rows = terms(att)
>>> rows[1]["hook"], rows[1]["layer"], rows[1]["head"], rows[1]["position"]
('blocks.0.attn.hook_result', 0, 0, 0)
>>> import math
>>> abs(math.fsum(r["value"] for r in rows if r["view"] == "residual") - att.target.value) < 1e-12
True
"""

from __future__ import annotations

import html
import math

import numpy as np

COLUMNS = ("view", "layer", "sublayer", "head", "position", "token", "hook", "value")


def _row(view, layer, sublayer, head, position, token, hook, value) -> dict:
    return {"view": view, "layer": layer, "sublayer": sublayer, "head": head, "position": position,
            "token": token, "hook": hook, "value": float(value)}


def residual_terms(att) -> list[dict]:
    """The residual view's terms: embedding, every head × source token, each ``b_O``, each MLP."""
    tr, v = att.trace, att.residual
    n = tr.N - 1
    out = [_row("residual", None, "embed", None, n, tr.words[n], "hook_embed", v.embedding)]
    L, h, N = v.heads.shape
    for layer in range(L):
        for head in range(h):
            out += [_row("residual", layer, "attn", head, m, tr.words[m], f"blocks.{layer}.attn.hook_result",
                         v.heads[layer, head, m]) for m in range(N)]
        if tr.layers[layer].bo is not None:
            out.append(_row("residual", layer, "attn_bias", None, n, tr.words[n], f"blocks.{layer}.hook_attn_out",
                            v.attn_bias[layer]))
        out.append(_row("residual", layer, "mlp", None, n, tr.words[n], f"blocks.{layer}.hook_mlp_out",
                        v.mlp[layer]))
    return out


def duat_terms(att) -> list[dict]:
    """The DUAT view's terms: the linear path per input token, each σ-term split by its input
    (skip and head × source token, of the linear part and of the dynamic bias), the biases."""
    tr, v = att.trace, att.duat
    n = tr.N - 1
    out = [_row("duat", None, "linear path", None, m, tr.words[m], "hook_embed", v.linear_per_token[m])
           for m in range(tr.N)]
    L, h, N = v.heads_linear.shape
    for j in range(L):
        out.append(_row("duat", j, "sigma skip (V x'0)", None, n, tr.words[n], None, v.skip_linear[j]))
        out.append(_row("duat", j, "sigma skip (e)", None, n, tr.words[n], None, v.skip_bias[j]))
        for head in range(h):
            out += [_row("duat", j, "sigma attn (V x'0)", head, m, tr.words[m], None, v.heads_linear[j, head, m])
                    for m in range(N)]
            out += [_row("duat", j, "sigma attn (e)", head, m, tr.words[m], None, v.heads_bias[j, head, m])
                    for m in range(N)]
        if v.bias_in[j] != 0:
            out.append(_row("duat", j, "sigma biases (b2)", None, n, tr.words[n], None, v.bias_in[j]))
        if v.bias[j] != 0:
            out.append(_row("duat", j, "bias (b3)", None, n, tr.words[n], None, v.bias[j]))
    return out


def terms(att, view: str = "both") -> list[dict]:
    """Every term of ``view`` (``residual``, ``duat`` or ``both``), as dicts with :data:`COLUMNS`."""
    if view not in ("residual", "duat", "both"):
        raise ValueError(f"view must be 'residual', 'duat' or 'both', not {view!r}")
    return ((residual_terms(att) if view in ("residual", "both") else [])
            + (duat_terms(att) if view in ("duat", "both") else []))


def to_pandas(att, view: str = "both"):
    """:func:`terms` as a pandas ``DataFrame`` (long format; needs pandas: ``pip install -e '.[notebook]'``)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas needs pandas: pip install pandas (or the notebook extra)") from None
    frame = pd.DataFrame(terms(att, view), columns=list(COLUMNS))
    for col in ("layer", "head", "position"):
        frame[col] = frame[col].astype("Int64")
    return frame


def top(att, k: int = 10, view: str = "residual") -> list[dict]:
    """The ``k`` terms of ``view`` largest in absolute value, largest first."""
    rows = terms(att, view)
    return sorted(rows, key=lambda r: -abs(r["value"]) if math.isfinite(r["value"]) else -math.inf)[:k]


def label(row: dict) -> str:
    """A short name for a row: ``L3H5 ← 2:' of'``, ``L3 MLP``, ``embedding``, ``σ3 ← L3H5 (e) ← 2:' of'``."""
    src = f"{row['position']}:{row['token']!r}"
    layer, head, sub = row["layer"], row["head"], row["sublayer"]
    if sub == "embed":
        return "embedding"
    if sub == "linear path":
        return f"linear path ← {src}"
    if sub == "attn":
        return f"L{layer}H{head} ← {src}"
    if sub == "attn_bias":
        return f"L{layer} attention b_O"
    if sub == "mlp":
        return f"L{layer} MLP"
    if sub.startswith("sigma attn"):
        return f"σ{layer} ← L{layer}H{head} {sub.split()[-1]} ← {src}"
    return f"σ{layer} {sub.removeprefix('sigma ')}" if sub.startswith("sigma") else f"L{layer} {sub}"


def html_summary(att, predictions: list[dict], k: int = 10) -> str:
    """The notebook display of an attribution: what is explained, whether each view adds up, the
    most likely next tokens (``predictions``, as :func:`symuat.models.attribution.top_k` gives them)
    and the ``k`` largest terms of the residual view."""
    tr, tg = att.trace, att.target
    esc = html.escape
    what = f"logit({tg.text!r})" if tg.vs is None else f"logit({tg.text!r}) − logit({tr.decode(tg.vs)!r})"
    views = "".join(f"<li>{name}: Σ terms = {v.total:+.12f}, |Σ − value| = {v.abs_error:.1e} — "
                    f"<b>{'adds up' if v.passed else 'DOES NOT ADD UP'}</b></li>"
                    for name, v in (("residual view", att.residual), ("DUAT view", att.duat)))
    preds = "".join(f"<tr><td>{t['rank']}</td><td>{esc(repr(t['token']))}</td><td>{t['logit']:.4f}</td>"
                    f"<td>{t['probability']:.2%}</td></tr>" for t in predictions)
    rows = "".join(f"<tr><td>{esc(label(r))}</td><td><code>{esc(r['hook'] or '')}</code></td>"
                   f"<td>{r['value']:+.6f}</td></tr>" for r in top(att, k))
    return (f"<div><p><b>{esc(what)}</b> = {tg.value:+.12f} at position {tr.N - 1} of {tr.N} tokens "
            f"({esc(tr.family)})</p><ul>{views}</ul>"
            f"<table><tr><th>rank</th><th>next token</th><th>logit</th><th>probability</th></tr>{preds}</table>"
            f"<p>the {k} largest terms of the residual view (0-based layers and heads; TransformerLens hooks):</p>"
            f"<table><tr><th>term</th><th>hook</th><th>value</th></tr>{rows}</table></div>")


def text_summary(att, k: int = 5) -> str:
    """The plain-text display (``print(att)``)."""
    tr, tg = att.trace, att.target
    what = f"logit({tg.text!r})" if tg.vs is None else f"logit({tg.text!r}) − logit({tr.decode(tg.vs)!r})"
    lines = [f"{what} = {tg.value:+.12f} at position {tr.N - 1} ({tr.family}, {tr.N} tokens)"]
    for name, v in (("residual view", att.residual), ("DUAT view", att.duat)):
        lines.append(f"  {name}: |Σ terms − value| = {v.abs_error:.1e}: {'adds up' if v.passed else 'DOES NOT ADD UP'}")
    lines.append("  largest terms (residual view, 0-based layers and heads):")
    lines += [f"    {label(r):<40} {r['value']:+.6f}" for r in top(att, k)]
    return "\n".join(lines)


def sums_to(rows: list[dict], value: float, scale: float, tol: float = 1e-12) -> bool:
    """Whether ``rows`` sum (``math.fsum``) to ``value`` within ``tol · scale``."""
    vals = [r["value"] for r in rows]
    return bool(np.isfinite(vals).all()) and abs(math.fsum(vals) - value) <= tol * max(scale, np.finfo(float).tiny)
