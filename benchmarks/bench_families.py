#!/usr/bin/env python3
"""The DUAT rewrite of both packaged models against what a user would run: HF torch in float64
with its default (sdpa) attention, built from the same checkpoint files.

    python benchmarks/bench_families.py [--quick]      # or: python benchmarks/run.py families

For all-MiniLM-L6-v2 (BERT family) and SmolLM2-135M (Llama family, from its GGUF) at 16, 128 and
512 tokens (:func:`measure` also takes Gemma-3-270M, as ``run.py budget`` does): interleaved rounds in one process (the order rotated every round), medians, the ratio
rewrite / HF. Both sides produce every hidden state (and, for the decoder, the logits):

* HF — ``BertModel`` / ``AutoModelForCausalLM`` from the checkpoint (``symuat.models.reference``'s
  loader, then ``attn_implementation='sdpa'``), float64, ``torch.no_grad``, ``output_hidden_states``;
* rewrite — ``symuat.models.rewrite.rewrite``: every layer's Eq. 20 parameters frozen at its input
  and every state recomputed from the DUAT form (one pass, ``transformer.to_duat``), plus the
  logits through the frozen head.

One BLAS thread and one torch thread (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)). The issue's
target: rewrite ≤ 2× HF at every size.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # first: sets OPENBLAS_NUM_THREADS before numpy

import numpy as np

TEXT = ("The capital of France is Paris. It lies on the Seine, and its museums, cafés and bridges draw visitors "
        "from everywhere; ") * 40


def _hf(model, decoder: bool):
    import torch

    from symuat.models import reference

    hf = reference.hf_model(model.source if decoder else model.folder, decoder=decoder)
    if decoder:
        hf.config._attn_implementation = "sdpa"  # the default a user gets (the reference uses eager)
        for m in hf.modules():
            if hasattr(m, "config") and hasattr(m.config, "_attn_implementation"):
                m.config._attn_implementation = "sdpa"
    return torch, hf


#: the packaged models: name → decoder (Gemma-3's own benchmark, bench_gemma3, adds 1024 tokens and memory)
MODELS = {"minilm": False, "smollm2": True, "gemma3": True}


def measure(name: str, sizes: list[tuple[int, int]]) -> list[dict]:
    """The rewrite against HF for one packaged model at each ``(tokens, rounds)``: one dict a size
    (milliseconds, ratio, spread, the load average before and after)."""
    common.single_thread()
    from symuat.models.family import load
    from symuat.models.rewrite import rewrite

    decoder = MODELS[name]
    model = load(name)
    torch, hf = _hf(model, decoder)
    common.single_thread()
    base = model.tokenize(TEXT) if decoder else None  # BERT: [CLS] random word ids [SEP] (≤ 512)
    out = []
    for N, rounds in sizes:
        if decoder:
            ids = base[:N]
            tid = torch.tensor(ids[None])

            def hf_call(tid=tid):
                with torch.no_grad():
                    return hf(input_ids=tid, output_hidden_states=True)
        else:
            ids = np.concatenate([[101], np.random.default_rng(N).integers(1000, 20000, N - 2), [102]])
            tid = torch.tensor(ids[None])
            am = torch.ones_like(tid)

            def hf_call(tid=tid, am=am):
                with torch.no_grad():
                    return hf(input_ids=tid, attention_mask=am, output_hidden_states=True)

        def mine(ids=ids):
            return rewrite(model, model.embed(ids))

        load_before = common.load_one()
        times = common.interleaved({"hf": hf_call, "rewrite": mine}, rounds)
        h, r = common.median(times["hf"]), common.median(times["rewrite"])
        out.append({"model": name, "tokens": N, "rounds": rounds, "hf_ms": h * 1e3, "rewrite_ms": r * 1e3,
                    "ratio": r / h, "spread": common.spread(times["rewrite"]),
                    "load": f"{load_before} → {common.load_one()}"})
    return out


HOW = ("interleaved rounds (order rotated every round, one warm-up round), medians; one BLAS and one torch thread; "
       "HF built from the checkpoint files by transformers in float64 with sdpa attention, every hidden state "
       "returned; the rewrite = symuat.models.rewrite.rewrite (parameters frozen per layer + every state + logits); "
       "load = the 1-minute load average before → after the size's rounds")


def table(rows: list[dict]) -> list[str]:
    out = ["| model | tokens | rounds | HF torch float64 (sdpa) | rewrite (every state + logits) | ratio | spread "
           "(rewrite) | load |", "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['model']} | {r['tokens']} | {r['rounds']} | {r['hf_ms']:.0f} ms | {r['rewrite_ms']:.0f} ms | "
            f"{r['ratio']:.2f}× | {r['spread']} | {r['load']} |" for r in rows]
    return out


def run(quick: bool = False, models=("minilm", "smollm2")) -> str:
    sizes = [(16, 5), (128, 3)] if quick else [(16, 11), (128, 7), (512, 5)]
    rows = []
    for name in models:
        rows += measure(name, sizes)
        print(table(rows)[-1], flush=True)
    text = "\n".join(["# The DUAT rewrite vs HF torch float64 (sdpa), the packaged models", "",
                      *common.stamp(HOW), "", *table(rows), "",
                      "Target (issues 18, 37): ratio ≤ 2× at 16, 128 and 512 tokens."]) + "\n"
    out = common.RESULTS / "families.md"
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"written {out}")
    return text


if __name__ == "__main__":
    run("--quick" in sys.argv[1:])
