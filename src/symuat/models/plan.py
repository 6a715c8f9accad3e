"""The memory plan of a long run (``--max-memory SIZE`` on ``model check`` and ``model explain``):
an estimate of the working set from the model's sizes and the prompt length, the chunking it
allows, and a refusal *before* the run starts when even the smallest plan does not fit.

What a streamed run holds at its peak (float64, 8 bytes a number; :math:`N` tokens, :math:`L`
layers, width :math:`M`, :math:`h` query heads, MLP width :math:`F`, vocabulary :math:`V`):

* the weights, measured (every array the loaded model holds; a tied head counted once), and
  the interpreter with NumPy (and torch, for the reference): :data:`BASE` bytes;
* ``check``: the forward's states and the rewrite's, :math:`2(L+1)NM`; one layer at a time —
  its patterns :math:`hN^2` (every family forms them one head at a time) plus one head's scores
  :math:`2N^2`, its parts and MLP activations :math:`6NM+4NF`; the logits, ``rows`` × :math:`V` for each of up to four sources. With the
  reference: transformers' float64 copy of the weights, its states (faithful; stock on at most the first 1,024 tokens)
  and its eager attention (:math:`3hN^2`: scores, mask, softmax);
* ``explain``: the trace (per layer the input, the attention write, the values:
  :math:`2NM+N\\,g\\,d`; the MLP write is formed again), the DUAT view's linear path
  :math:`(L+1)NM`, one layer's patterns (the views then hold one head's at a time) and
  products (a layer's :math:`hN^2` when the DUAT decomposition runs); all layers' patterns and MLP
  activations when they are kept (:func:`symuat.models.attribution.trace_bytes`); a family the
  views do not read yet (its explain the sum of the DUAT terms): the states :math:`(L+1)NM`, the
  decomposition's parts :math:`3(L+1)NM` and one layer.

It is an estimate (NumPy's temporaries are not all counted; the measured peaks are in
``benchmarks/results/long.md``), so a plan leaves :data:`MARGIN` of the budget free.

>>> parse_size("8G"), parse_size("512M"), parse_size("1.5GiB")
(8589934592, 536870912, 1610612736)
>>> parse_size("lots")
Traceback (most recent call last):
...
symuat.models.formats.ModelError: --max-memory 'lots': give a size such as 8G, 512M or 2GiB
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from symuat.models.formats import ModelError

#: the interpreter, NumPy, the tokenizer (torch adds about as much again for the reference)
BASE = 400 * 2 ** 20
#: the share of the budget a plan leaves free for what the estimate does not count
MARGIN = 0.1
#: the most logit rows formed at a time (more buys no speed)
MAX_ROWS = 64

_UNITS = {"": 1, "B": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def parse_size(text) -> int:
    """``8G``, ``512M``, ``2GiB``, ``1.5g``, ``1000000`` → bytes (binary units)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgtKMGT]?)(?:i?[bB])?\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise ModelError(f"--max-memory {text!r}: give a size such as 8G, 512M or 2GiB")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def gib(n: float) -> str:
    return f"{n / 2 ** 30:.2f} GiB"


def weight_bytes(model, *, float64: bool = False) -> int:
    """Every distinct array the model holds (a tied head once; a vocabulary kept in its file's form,
    :class:`~symuat.models.quantized_rows.QuantizedRows`, by its stored bytes — by its float64 size
    with ``float64``, what a reference that holds every weight in float64 takes)."""
    seen, total = set(), 0

    def add(a):
        nonlocal total
        streamed = getattr(a, "streamed", False)
        if (isinstance(a, np.ndarray) or streamed) and id(a) not in seen:
            seen.add(id(a))
            total += 8 * a.shape[0] * a.shape[1] if streamed and float64 else a.nbytes

    for name in ("embed_tokens", "lm_head", "norm"):
        add(getattr(model, name, None))
    for layer in getattr(model, "layers", []):
        for v in vars(layer).values():
            add(v)
    return total


@dataclass
class Plan:
    """What a run may hold: ``rows`` logit rows at a time, whether the trace keeps every layer's
    patterns; ``parts`` the estimate's terms (bytes), ``total`` their sum."""

    rows: int
    keep_patterns: bool
    parts: dict = field(default_factory=dict)
    budget: int | None = None

    @property
    def total(self) -> int:
        return int(sum(self.parts.values()))

    def describe(self) -> str:
        terms = ", ".join(f"{k} {gib(v)}" for k, v in self.parts.items() if v)
        return f"estimated peak {gib(self.total)} ({terms}); logits {self.rows} rows at a time"


def _sizes(model):
    c = model.config
    return len(model.layers), c.M, c.heads, c.F, c.vocab, c.kv_heads * c.head_dim


def pattern_entries(model, N: int) -> tuple[int, int]:
    """(numbers one head's pattern keeps, numbers of its largest block of scores) on ``N`` tokens,
    the most over the layers: ``N²`` each for a dense pattern; a long text's pattern is kept by the
    blocks that hold its nonzeros (:class:`~symuat.models.lifts.BandPattern`: a window's band, the
    causal half), and its scores are formed a block at a time."""
    from symuat.models.lifts import band_blocks, is_banded

    kept, scores = 0, 0
    for layer in model.layers:
        window = getattr(layer, "window", None)
        if is_banded(N, window):
            sizes = [(r1 - r0) * (r1 - c0) for r0, r1, c0 in band_blocks(N, window)]
            kept, scores = max(kept, sum(sizes)), max(scores, max(sizes))
        else:
            kept, scores = max(kept, N * N), max(scores, N * N)
    return kept, scores


def estimate(model, N: int, command: str, *, reference: bool, rows: int = MAX_ROWS, keep_patterns: bool = False,
             view: str = "residual") -> dict:
    """The estimate's terms (bytes) for ``command`` (``check`` | ``explain``) on ``N`` tokens."""
    L, M, h, F, V, gd = _sizes(model)
    w = weight_bytes(model)
    b = 8
    P, S = pattern_entries(model, N)
    layer = b * (h * P + 2 * S + 6 * N * M + 4 * N * F)  # one layer's patterns, scores, parts, MLP
    parts = {"weights": w, "interpreter": BASE}
    if getattr(getattr(model, "lm_head", None), "streamed", False):  # a block of the vocabulary, dequantized
        parts["vocabulary block"] = b * 2 * model.lm_head.block_rows * M
    if command == "check":
        parts["states"] = b * 2 * (L + 1) * N * M
        # the forward and the rewrite's frozen operators hold a layer's h patterns (formed a head at a time)
        parts["one layer"] = layer
        parts["logit rows"] = b * 4 * rows * V
    elif not views_read(model):  # explain as the sum of the DUAT terms (compare.explain): states, parts, a layer
        parts["states"] = b * (L + 1) * N * M
        parts["DUAT parts"] = b * 3 * (L + 1) * N * M
        parts["one layer"] = layer
        parts["logit rows"] = b * 2 * V
    else:
        parts["trace"] = b * L * (2 * N * M + N * gd) + b * (L + 1) * N * M  # inputs, attention writes, values; a_j
        # patterns one head at a time unless kept: a head's pattern and two (N, N) products, Q and K
        parts["one layer"] = layer if keep_patterns else b * (P + 2 * S + 6 * N * M + 4 * N * F + N * (h + 1) * gd)
        if keep_patterns:
            parts["kept patterns"] = b * L * (h * P + 3 * N * F)
        if view in ("duat", "both"):  # the rewrite's decomposition runs before the trace: the larger of the two
            parts["DUAT parts"] = max(0, b * 3 * (L + 1) * N * M - parts["trace"])
            parts["one layer"] = layer  # its frozen operators hold a layer's h patterns
        parts["logit rows"] = b * 2 * V
    if reference:
        from symuat.models.reference import STOCK_PREFIX

        parts["reference"] = weight_bytes(model, float64=True) + b * (L + 1) * (N + min(N, STOCK_PREFIX)) * M + b * 3 * h * N * N + BASE
    return parts


def views_read(model) -> bool:
    """Whether the attribution views read ``model`` (an adapter in
    :data:`symuat.models.attribution.ADAPTERS`); otherwise ``explain`` is the sum of its DUAT terms."""
    from symuat.models.attribution import ADAPTERS

    return type(model).__name__ in ADAPTERS


def plan(model, N: int, command: str, budget: int | None, *, reference: bool, view: str = "residual") -> Plan:
    """The largest plan that fits ``budget`` (all logit rows chunked at :data:`MAX_ROWS`, patterns
    kept when they fit); :class:`ModelError` naming the estimate when the smallest does not."""
    from symuat.models.attribution import KEEP_BYTES, trace_bytes

    keep = command == "explain" and views_read(model) and trace_bytes(model, N) <= KEEP_BYTES
    if budget is None:
        return Plan(MAX_ROWS, keep, estimate(model, N, command, reference=reference, keep_patterns=keep, view=view))
    room = budget * (1 - MARGIN)
    for keep_p in ((True, False) if keep else (False,)):
        for rows in (MAX_ROWS, 16, 4, 1):
            parts = estimate(model, N, command, reference=reference, rows=rows, keep_patterns=keep_p, view=view)
            if sum(parts.values()) <= room:
                return Plan(rows, keep_p, parts, budget)
    smallest = Plan(1, False, estimate(model, N, command, reference=reference, rows=1, view=view), budget)
    raise ModelError(f"--max-memory {gib(budget)}: {N} tokens need more — {smallest.describe()}; with "
                     f"{int(MARGIN * 100)}% left free that needs at least {gib(smallest.total / (1 - MARGIN))}"
                     + ("; --no-reference saves the reference's share" if reference else ""))
