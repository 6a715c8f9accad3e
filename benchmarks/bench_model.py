#!/usr/bin/env python3
"""The DUAT rewrite of all-MiniLM-L6-v2 against HF torch float64 and symuat's own forward pass.

    python benchmarks/bench_model.py [--quick]      (or every benchmark: python benchmarks/run.py)

Needs the model tier (``pip install -e ".[model]" && symuat model install``); HF rows need the
reference tier (``pip install -e ".[reference]"``). Every variant starts from the token ids and
produces *every* hidden state (embedding output + 6 layers):

* HF ``BertModel`` in float64, ``output_hidden_states=True`` (torch, 1 thread);
* symuat's forward (``BertNumpy.hidden_states``, float64 NumPy);
* the rewrite: ``to_duat`` — the combined DUAT parameters (A, c, U_j, V_j, e_j) *and* every hidden
  state from them, in one O(L) pass (what ``symuat model check`` runs);
* the former model-check path: the DUAT form, then each state by ``evaluate(k)`` (direct, O(L²));
* the full Jacobian of the encoder (the "equivalent linear mapping" approach), at 4 tokens only
  (D = 4·384 = 1536; at 16 tokens J is 6144² float64 = 302 MB, at 128 tokens 19.3 GB).

Times: interleaved rounds (every variant once per round, order rotated), medians; memory:
tracemalloc peak in separate runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # sets OPENBLAS_NUM_THREADS before numpy

import numpy as np

from symuat.models.families.bert import BertNumpy, load_bert
from symuat.models.compare import relative_error
from symuat.models.families.bert import model_path
from symuat.numeric.transformer import to_duat


#: the full Jacobian is formed at this size only: D = 4·384 = 1536 and it already takes ~20 s
#: (at 16 tokens, D = 6144 and J = 302 MB, several minutes; at 128 tokens J is 19.3 GB)
JACOBIAN_TOKENS = 4


def _hf(folder):
    try:
        import torch
        from transformers import BertModel
    except ImportError:
        return None, None
    model = BertModel.from_pretrained(str(folder), local_files_only=True).to(torch.float64).eval()
    return torch, model


def _jacobian_seconds(torch, folder, ids) -> tuple[float, int]:
    """Seconds to form the full Jacobian d(last state)/d(embedding output) with torch.func.jacrev
    (HF's eager attention: the fused kernel has no batching rule for its backward)."""
    import time

    from torch.func import jacrev
    from transformers import BertModel

    model = BertModel.from_pretrained(str(folder), local_files_only=True,
                                      attn_implementation="eager").to(torch.float64).eval()

    with torch.no_grad():
        emb = model.embeddings(input_ids=torch.tensor(ids[None]))
    encoder = model.encoder

    def f(x):
        return encoder(x).last_hidden_state

    start = time.perf_counter()
    J = jacrev(f, chunk_size=256)(emb)
    seconds = time.perf_counter() - start
    return seconds, J.numel() * 8


def run(quick: bool = False) -> str:
    common.single_thread()
    folder = model_path("minilm")
    bert = BertNumpy(load_bert(folder))
    torch, hf = _hf(folder)
    common.single_thread()
    L = len(bert.blocks)
    h = bert.blocks[0].heads
    M = bert.blocks[0].M
    rng = np.random.default_rng(0)
    plan = [(16, 5), (128, 3)] if quick else [(4, 11), (16, 21), (128, 11), (512, 5)]
    rows = ["| tokens | variant | median time | vs HF torch f64 | vs symuat forward | spread |",
            "|---|---|---|---|---|---|"]
    mem_rows = ["| tokens | variant | peak allocations (tracemalloc) | kept after the call | "
                "L·h·N²·8 B (patterns) | L·N·F·8 B (the e_j) | 3(L+1)·N·M·8 B (the parts) |",
                "|---|---|---|---|---|---|---|"]
    err_rows = []
    for N, rounds in plan:
        ids = np.concatenate([[101], rng.integers(1000, 20000, N - 2), [102]])
        variants = {}
        if hf is not None:
            tid = torch.tensor(ids[None])
            am = torch.ones_like(tid)

            def hf_states(tid=tid, am=am):
                with torch.no_grad():
                    return hf(input_ids=tid, attention_mask=am, output_hidden_states=True).hidden_states

            variants["HF BertModel float64"] = hf_states
        variants["symuat forward"] = lambda ids=ids: bert.hidden_states(ids)
        variants["rewrite: to_duat, parameters + every state (one pass)"] = \
            lambda ids=ids: to_duat(bert.blocks, bert.embed(ids)).states()
        if N <= 128:
            def former(ids=ids):
                d = to_duat(bert.blocks, bert.embed(ids))
                return [d.evaluate(k) for k in range(1, L + 1)]

            variants["former check path: every state by direct evaluate (O(L²))"] = former
        times = common.interleaved(variants, rounds)
        med = {k: common.median(v) for k, v in times.items()}
        base_hf = med.get("HF BertModel float64")
        base_fw = med["symuat forward"]
        for name, t in med.items():
            vs_hf = f"{t / base_hf:.2f}×" if base_hf else "—"
            rows.append(f"| {N} | {name} | {t * 1e3:.1f} ms | {vs_hf} | {t / base_fw:.2f}× | {common.spread(times[name])} |")
        if hf is not None and N == JACOBIAN_TOKENS and not quick:
            seconds, jbytes = _jacobian_seconds(torch, folder, ids)
            rows.append(f"| {N} | full Jacobian (HF eager, torch.func.jacrev, chunks of 256; 1 run, not interleaved) | "
                        f"{seconds * 1e3:.0f} ms | {seconds / base_hf:.0f}× | {seconds / base_fw:.0f}× | "
                        f"J alone {jbytes / 2**20:.0f} MiB |")
        print("\n".join(rows[-len(med):]), flush=True)
        # memory, apart from timing
        X0 = bert.embed(ids)
        F = bert.blocks[0].W1.shape[1]
        sizes = [L * h * N * N * 8, L * N * F * 8, 3 * (L + 1) * N * M * 8]
        for name, fn in (("symuat forward (every state)", lambda: bert.hidden_states(ids)),
                         ("rewrite (to_duat: parameters + every state)", lambda: to_duat(bert.blocks, X0))):
            peak, kept = common.peak_and_kept(fn)
            mem_rows.append(f"| {N} | {name} | {common.mib(peak)} | {common.mib(kept)} | "
                            + " | ".join(common.mib(x) for x in sizes) + " |")
        # agreement, so a fast wrong answer cannot pass
        mine = to_duat(bert.blocks, X0).states()
        fwd = bert.hidden_states(ids)
        worst_fw = max(relative_error(a, b) for a, b in zip(mine, fwd))
        line = f"- {N} tokens: rewrite vs symuat forward, worst state {worst_fw:.1e}"
        if hf is not None:
            ref = variants["HF BertModel float64"]()
            worst_hf = max(relative_error(a, r[0].numpy()) for a, r in zip(mine, ref))
            line += f"; rewrite vs HF float64 {worst_hf:.1e}"
        err_rows.append(line + " (max |a−b| / max |b|)")
    weights = sum(b.WQ.size + b.WK.size + b.WV.size + b.WO.size + b.W1.size + b.W2.size for b in bert.blocks) * 8
    body = [
        f"all-MiniLM-L6-v2: L = {L} layers, M = {M}, h = {h}, F = {bert.blocks[0].W1.shape[1]}; one sentence of N "
        "random word-piece ids ([CLS] … [SEP]), no padding. Every variant starts from the ids and returns every "
        "hidden state.", "",
        "## Time", "", *rows, "",
        "## Peak memory (separate runs, tracemalloc; torch's allocations are not visible to it, so HF has no row)", "",
        *mem_rows, "",
        f"The weights ({common.mib(weights)}) exist beforehand and are not counted. What the rewrite keeps is "
        "every layer's attention patterns (L·h·N²), the biases e_j (L·N·F) and the parts A_k x0, c_k, R_k of "
        "every state (3(L+1)·N·M) — the columns on the right; the operators A, U_j, V_j are lazy chains over "
        "the weights. Peak memory is O(L·h·N² + L·N·(F + M) + M²): no NM × NM operator is formed (at 128 tokens "
        "one would be 49152² · 8 B = 19.3 GB; the full Jacobian likewise).", "",
        "## Agreement", "", *err_rows,
    ]
    how = (f"interleaved rounds in one process ({', '.join(f'{r} at {n} tokens' for n, r in plan)}), every "
           "variant once per round in rotated order after one warm-up round; median per variant; ratios of "
           "medians; spread = interquartile range / median. Memory: tracemalloc in separate runs, never "
           "while timing.")
    return common.write("model.md", "Model benchmark: the DUAT rewrite of all-MiniLM-L6-v2", how, body)


if __name__ == "__main__":
    run(common.quick_flag())
