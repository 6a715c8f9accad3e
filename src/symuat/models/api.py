r"""The notebook API: a model in one line, an exact attribution in one more.

.. code-block:: python

   from symuat.models import load, explain
   m = load("smollm2")         # a packaged name, a checkpoint folder or a .gguf file
   att = explain(m, "The capital of France is", " Paris", vs=" London")
   att                         # in a notebook: what is explained, both sums, the top terms
   att.to_pandas()             # one row per term: layer, sublayer, head, position, token, hook, value
   att.top(10)                 # the 10 largest terms; att.pattern(3, 5): layer 3, head 5's pattern

``model`` is anything :func:`load` accepts — a packaged name, a folder, a ``.gguf`` file, a
transformers model in memory — or a model :func:`load` returned. Prompts and answers are strings (the
model's tokenizer; an answer is tokenized *without* special tokens, so Gemma's BOS is not
prepended) or token ids. Layers and heads are 0-based throughout (TransformerLens's ``blocks.{l}``).

* :func:`explain` — one prompt; an answer of several tokens is explained position by position
  (teacher-forced: the prompt plus the answer's earlier tokens), giving one attribution each;
* :func:`explain_many` — many prompts (a list, or a JSONL file of ``{"prompt", "token", "vs"}``
  objects), one long table out;
* :func:`lenses` — the logit lens and the exact Jacobian lens per layer
  (:mod:`symuat.models.lens`);
* :func:`attention_pattern` — one head's pattern, and its figure.

Every attribution is checked when it is made: each view sums to the explained value within
:data:`symuat.models.attribution.TOLERANCE` (relative, see ``SCALE``) or ``explain`` raises.

A random model (the same calls on a packaged one):

>>> import numpy as np
>>> from symuat.models.families.llama import random_llama
>>> m = random_llama(np.random.default_rng(0))
>>> [a.target.token for a in explain(m, [1, 5, 7], answer=[2, 3])]
[2, 3]
>>> explain(m, [1, 5, 7, 2], token=3).passed
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from symuat.models import attribution, lens
from symuat.models.family import load as _load
from symuat.models.formats import ModelError
from symuat.models.memory import from_hf


class AttributionError(ModelError):
    """An attribution whose views do not add up (a non-finite number, or a sum off the value)."""


def load(where, tokenizer=None):
    """The model of ``where``: a packaged name (``smollm2``, ``gemma3``, ``minilm``), a checkpoint
    folder (``config.json`` + ``*.safetensors`` + ``tokenizer.json``), a ``.gguf`` file, or a
    transformers model already in memory (with its ``tokenizer``; :func:`symuat.models.memory.from_hf`)."""
    if isinstance(where, (str, os.PathLike)):
        return _load(where)
    return from_hf(where, tokenizer)


def _model(model):
    """A loaded model as given; a name, a path or a transformers model loaded (:func:`load`)."""
    if isinstance(model, (str, os.PathLike)) or hasattr(model, "state_dict"):
        return load(model)
    return model


def prompt_ids(model, prompt) -> np.ndarray:
    """``prompt`` as token ids: a string through the model's tokenizer (with its special tokens,
    as the model reads a prompt), or ids as given (checked)."""
    if isinstance(prompt, str):
        return model.tokenize(prompt)
    return model.check_ids(np.asarray(prompt, dtype=np.int64))


def answer_ids(model, answer) -> list[int]:
    """``answer`` as token ids: a string tokenized *without* special tokens (``" Paris"`` →
    ``[id]``, never a BOS in front), an int, or a list of ids.

    >>> answer_ids(None, 7), answer_ids(None, [7, 8])
    ([7], [7, 8])
    """
    if isinstance(answer, (int, np.integer)):
        return [int(answer)]
    if isinstance(answer, str):
        tok = getattr(model, "tokenizer", None)
        if tok is None:
            raise ModelError(f"{getattr(model, 'source', 'the model')}: no tokenizer; give token ids")
        ids = tok.encode(answer, add_special_tokens=False).ids if answer else []
        if not ids:
            raise ModelError(f"the answer {answer!r} is no token")
        return [int(i) for i in ids]
    ids = [int(i) for i in answer]
    if not ids:
        raise ModelError("the answer is empty")
    return ids


def _one(model, answer, what: str) -> int | None:
    if answer is None:
        return None
    ids = answer_ids(model, answer)
    if len(ids) != 1:
        raise ModelError(f"{what} {answer!r} is {len(ids)} tokens {ids}; a comparison token must be one token")
    return ids[0]


def _checked(att: attribution.Attribution) -> attribution.Attribution:
    if not att.passed:
        raise AttributionError(f"the views do not add up: residual |Σ − value| = {att.residual.abs_error:.1e}, "
                               f"DUAT {att.duat.abs_error:.1e} (tolerance {attribution.TOLERANCE:g}, relative)")
    return att


def explain(model, prompt, token=None, vs=None, *, answer=None):
    """The exact attribution of ``logit(token)`` (default: the model's prediction), or of
    ``logit(token) − logit(vs)``, at the last position of ``prompt``.

    ``token`` is one token (a string such as ``" Paris"`` or an id). With ``answer`` (a string or
    ids of any length) every answer token is explained at its own position — the prompt followed by
    the answer's earlier tokens — and a list of attributions is returned, one per answer token.
    """
    model = _model(model)
    ids = prompt_ids(model, prompt)
    other = _one(model, vs, "vs")
    if answer is not None:
        if token is not None:
            raise ModelError("give token or answer, not both")
        seq = answer_ids(model, answer)
        return [_explain_ids(model, np.concatenate([ids, np.asarray(seq[:k], dtype=np.int64)]), t, other)
                for k, t in enumerate(seq)]
    return _explain_ids(model, ids, _one(model, token, "token"), other)


def _explain_ids(model, ids, token, vs):
    if vs is not None and token is not None and token == vs:
        raise ModelError("vs is the explained token itself; the difference is 0")
    with np.errstate(all="ignore"):
        return _checked(attribution.explain(model, ids, token, vs))


def _jsonl(path) -> list[dict]:
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{p}: cannot read it ({exc})") from None
    out = []
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ModelError(f"{p}:{k}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("prompt"), str):
            raise ModelError(f"{p}:{k}: each line must be an object with a string 'prompt' (and 'token', 'vs')")
        out.append(item)
    return out


def explain_many(model, prompts, token=None, vs=None, *, view: str = "residual"):
    """Many prompts, one table: ``prompts`` is a list of strings (each with ``token``/``vs``), a list
    of ``{"prompt", "token", "vs"}`` dicts, or the path of a JSONL file of such objects. Returns a
    pandas ``DataFrame`` of every term of ``view`` with a ``prompt`` column (the prompt's index)
    and its ``explained`` value.

    >>> import numpy as np
    >>> from symuat.models.families.llama import random_llama
    >>> m = random_llama(np.random.default_rng(0))
    >>> table = explain_many(m, [{"prompt": [1, 5, 7], "token": 2}, {"prompt": [3, 4]}])
    >>> sorted(set(table.prompt)), list(table.columns[:3])
    ([0, 1], ['prompt', 'view', 'layer'])
    >>> all(abs(part.value.sum() - part.explained.iloc[0]) < 1e-12 for _, part in table.groupby("prompt"))
    True
    """
    import pandas as pd

    model = _model(model)
    items = _jsonl(prompts) if isinstance(prompts, (str, os.PathLike)) else list(prompts)
    frames = []
    for k, item in enumerate(items):
        if isinstance(item, str):
            item = {"prompt": item, "token": token, "vs": vs}
        att = explain(model, item["prompt"], item.get("token", token), item.get("vs", vs))
        frame = att.to_pandas(view)
        frame.insert(0, "prompt", k)
        frame["explained"] = att.target.value
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def lenses(model, prompt, token=None, k: int = 5) -> lens.Lenses:
    """The logit lens and the exact Jacobian lens at every layer (see :mod:`symuat.models.lens`).

    >>> import numpy as np
    >>> from symuat.models.families.llama import random_llama
    >>> lz = lenses(random_llama(np.random.default_rng(0)), [1, 5, 7, 2], token=3)
    >>> row = lz.rows[0]
    >>> row["hook"], row["logit_lens_rank"] >= 1, row["jacobian_lens_rank"] >= 1
    ('blocks.0.hook_resid_pre', True, True)
    """
    model = _model(model)
    return lens.lenses(model, prompt_ids(model, prompt), _one(model, token, "token"), k)


def attention_pattern(model, prompt, layer: int, head: int, figure=None) -> np.ndarray:
    """Layer ``layer``, head ``head``'s attention pattern on ``prompt`` (0-based; ``(N, N)``, row: the
    query position, column: the source), as the model computes it; with ``figure`` a path, also
    its heat map (needs matplotlib).

    >>> import numpy as np
    >>> from symuat.models.families.llama import random_llama
    >>> H = attention_pattern(random_llama(np.random.default_rng(0)), [1, 5, 7, 2], layer=1, head=0)
    >>> H.shape, bool(np.allclose(H.sum(axis=1), 1)), bool(np.allclose(np.triu(H, 1), 0))
    ((4, 4), True, True)
    """
    model = _model(model)
    ids = prompt_ids(model, prompt)
    tr = attribution.trace(model, ids)
    H = attribution.pattern(tr, layer, head)
    if figure is not None:
        pattern_figure(H, tr.words, layer, head, figure)
    return H


def pattern_figure(H: np.ndarray, words: list[str], layer: int, head: int, path):
    """A heat map of one attention pattern (rows: query tokens, columns: source tokens)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from symuat.numeric.figures import FONT, _save

    N = H.shape[0]
    with plt.rc_context(FONT):
        size = min(12, 3 + 0.25 * N)
        fig, ax = plt.subplots(figsize=(size, size))
        im = ax.imshow(H, cmap="Blues", vmin=0, vmax=max(float(H.max()), np.finfo(float).tiny))
        step = max(1, N // 32)
        labels = [repr(w)[1:-1] for w in words]
        ax.set_xticks(range(0, N, step), labels[::step], rotation=90)
        ax.set_yticks(range(0, N, step), labels[::step])
        ax.set_xlabel("source token")
        ax.set_ylabel("query token")
        ax.set_title(f"blocks.{layer}.attn.hook_pattern, head {head}")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        fig.tight_layout()
        return _save(fig, path)
