#!/usr/bin/env python3
"""The DUAT rewrite of both packaged models against what a user would run: HF torch in float64
with its default (sdpa) attention, built from the same checkpoint files.

    python benchmarks/bench_families.py [--quick]      # or: python benchmarks/run.py families

For all-MiniLM-L6-v2 (BERT family) and SmolLM2-135M (Llama family, from its GGUF) at 16, 128 and
512 tokens: interleaved rounds in one process (the order rotated every round), medians, the ratio
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


def run(quick: bool = False) -> str:
    common.single_thread()
    from symuat.models.family import load
    from symuat.models.rewrite import rewrite

    sizes = [(16, 5), (128, 3)] if quick else [(16, 11), (128, 7), (512, 5)]
    rows = ["| model | tokens | HF torch float64 (sdpa) | rewrite (every state + logits) | ratio | spread (rewrite) |",
            "|---|---|---|---|---|---|"]
    for name, decoder in (("minilm", False), ("smollm2", True)):
        model = load(name)
        torch, hf = _hf(model, decoder)
        common.single_thread()
        base = model.tokenize(TEXT) if decoder else None  # BERT: [CLS] random word ids [SEP] (≤ 512)
        for N, rounds in sizes:
            if decoder:
                ids = base[:N]
                tid = torch.tensor(ids[None])

                def hf_call(tid=tid):
                    with torch.no_grad():
                        return hf(input_ids=tid, output_hidden_states=True)

                def mine(ids=ids):
                    return rewrite(model, model.embed(ids))
            else:
                ids = np.concatenate([[101], np.random.default_rng(N).integers(1000, 20000, N - 2), [102]])
                tid = torch.tensor(ids[None])
                am = torch.ones_like(tid)

                def hf_call(tid=tid, am=am):
                    with torch.no_grad():
                        return hf(input_ids=tid, attention_mask=am, output_hidden_states=True)

                def mine(ids=ids):
                    return rewrite(model, model.embed(ids))

            times = common.interleaved({"hf": hf_call, "rewrite": mine}, rounds)
            h, r = common.median(times["hf"]), common.median(times["rewrite"])
            rows.append(f"| {name} | {N} | {h * 1e3:.0f} ms | {r * 1e3:.0f} ms | {r / h:.2f}× | "
                        f"{common.spread(times['rewrite'])} |")
            print(rows[-1], flush=True)
    how = ("interleaved rounds (5–11 per size, order rotated), medians; one BLAS and one torch thread; HF built "
           "from the checkpoint files by transformers in float64 with sdpa attention, every hidden state returned; "
           "the rewrite = symuat.models.rewrite.rewrite (parameters frozen per layer + every state + logits)")
    text = "\n".join(["# The DUAT rewrite vs HF torch float64 (sdpa), both packaged models", "",
                      *common.stamp(how), "", *rows, "",
                      "Target (issue 18): ratio ≤ 2× at 16, 128 and 512 tokens."]) + "\n"
    out = common.RESULTS / "families.md"
    out.write_text(text)
    print(f"written {out}")
    return text


if __name__ == "__main__":
    run("--quick" in sys.argv[1:])
