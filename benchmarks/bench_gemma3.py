#!/usr/bin/env python3
"""Gemma-3-270M: the DUAT rewrite against HF torch float64, at 16, 128, 512 and 1024 tokens, and
the rewrite's peak memory at 1024 tokens.

    python benchmarks/bench_gemma3.py [--quick]      # or: python benchmarks/run.py gemma3

* HF — ``Gemma3ForCausalLM`` built by transformers from the GGUF (``symuat.models.reference``'s
  loader), float64, its default ``sdpa`` attention, ``torch.no_grad``, every hidden state and the
  logits of every row;
* rewrite — ``symuat.models.rewrite.rewrite``: every layer's Eq. 20 parameters frozen at its
  input (QK-norm, banded local patterns, the sandwich norms' lifts), every state recomputed from
  the DUAT form, and the logits of every row through the frozen head.

Interleaved rounds in one process (the order rotated every round), medians, the ratio
rewrite / HF; one BLAS thread and one torch thread. Memory apart from the timing (tracemalloc, to
which numpy reports): the peak of the allocations of one call beyond the loaded float64 weights
(2.1 GB, of which the embedding 1.34 GB), with every row's logits (1024 × 262 144 float64 = 2 GiB
by themselves) and with the logits formed 64 rows at a time as ``symuat model check`` does.
The issue's targets: ratio ≤ 2× at every size; peak ≤ 4 GiB at 1024 tokens.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # first: sets OPENBLAS_NUM_THREADS before numpy

import numpy as np


def run(quick: bool = False) -> str:
    common.single_thread()
    from symuat.models.families import gemma3
    from symuat.models import reference
    from symuat.models.rewrite import rewrite
    from symuat.numeric.transformer import to_duat

    model = gemma3.load_gemma3()
    hf = reference.hf_model(model.source, decoder=True)
    hf.config._attn_implementation = "sdpa"  # the default a user gets (the reference uses eager)
    for m in hf.modules():
        if hasattr(m, "config") and hasattr(m.config, "_attn_implementation"):
            m.config._attn_implementation = "sdpa"
    import torch

    common.single_thread()
    base = model.tokenize(gemma3.LONG_TEXT + " " + gemma3.LONG_TEXT)
    sizes = [(16, 3), (128, 2)] if quick else [(16, 7), (128, 5), (512, 3), (1024, 3)]
    rows = ["| tokens | HF torch float64 (sdpa) | rewrite (every state + logits) | ratio | spread (rewrite) |",
            "|---|---|---|---|---|"]
    for N, rounds in sizes:
        ids = base[:N]
        tid = torch.tensor(ids[None])

        def hf_call(tid=tid, hf=hf):
            with torch.no_grad():
                return hf(input_ids=tid, output_hidden_states=True, use_cache=False)

        def mine(ids=ids):
            return rewrite(model, model.embed(ids))

        times = common.interleaved({"hf": hf_call, "rewrite": mine}, rounds)
        h, r = common.median(times["hf"]), common.median(times["rewrite"])
        rows.append(f"| {N} | {h * 1e3:.0f} ms | {r * 1e3:.0f} ms | {r / h:.2f}× | {common.spread(times['rewrite'])} |")
        print(rows[-1], flush=True)
    del hf
    reference._CACHE.clear()
    weights = sum(a.nbytes for a in _arrays(model))
    N = 128 if quick else 1024
    ids = base[:N]

    def chunked():
        d = to_duat(model.layers, model.embed(ids))
        X = model.final_norm(d.parts[-1].sum(axis=0))
        return d, np.concatenate([np.argmax(X[i:i + 64] @ model.lm_head.T, axis=1) for i in range(0, N, 64)])

    full_peak, _ = common.peak_and_kept(lambda: rewrite(model, model.embed(ids)))
    chunk_peak, _ = common.peak_and_kept(chunked)
    mem = ["", f"Memory at {N} tokens (tracemalloc; the float64 weights held before the call: {common.mib(weights)}):", "",
           "| rewrite | peak of the call | weights + peak |", "|---|---|---|",
           f"| every state + every row's logits at once | {common.mib(full_peak)} | {common.mib(weights + full_peak)} |",
           f"| every state + the logits 64 rows at a time (as `model check`) | {common.mib(chunk_peak)} | "
           f"{common.mib(weights + chunk_peak)} |"]
    how = ("interleaved rounds (3–7 per size, order rotated), medians; one BLAS and one torch thread; HF "
           "Gemma3ForCausalLM built from the GGUF by transformers in float64 with sdpa attention, every hidden state "
           "and every row's logits returned; the rewrite = symuat.models.rewrite.rewrite (parameters frozen per "
           "layer + every state + every row's logits); memory by tracemalloc in separate calls")
    return common.write("gemma3.md", "Gemma-3-270M: the DUAT rewrite vs HF torch float64 (sdpa)", how,
                        rows + mem + ["", "Targets (issue 22): ratio ≤ 2× at every size; peak ≤ 4 GiB at 1024 tokens."])


def _arrays(model):
    seen = {}
    for a in [model.embed_tokens, model.norm, *(v for layer in model.layers for v in vars(layer).values())]:
        if isinstance(a, np.ndarray):
            seen[id(a)] = a
    return list(seen.values())


if __name__ == "__main__":
    run("--quick" in sys.argv[1:])
