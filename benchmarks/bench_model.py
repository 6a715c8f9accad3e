#!/usr/bin/env python3
"""The DUAT rewrite of all-MiniLM-L6-v2 against its plain NumPy forward pass.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_model.py

Needs the model tier (pip install -e ".[model]" && symuat model install). Interleaved rounds in
one process, ratios to the plain forward pass:

* forward — the 6 layers, float64;
* rewrite — to_duat (runs the layers once, builds the combined parameters as lazy operators)
  followed by evaluate(method="factored") (O(L) operator applications) — and with
  evaluate(method="direct") (every chain applied on its own, O(L²));
* dense — the attention's per-layer matrix W'_MHA materialised (NM × NM) and applied, for one
  layer, at 16 tokens only (at 128 tokens it would be 49152² · 8 B = 19 GB).

Peak memory (tracemalloc, allocations during the call) at 128 tokens shows the rewrite never
forms an NM × NM matrix.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from symuat.attention import MHAOperator, attention_patterns  # noqa: E402
from symuat.models import BertNumpy, load_bert  # noqa: E402
from symuat.transformer import to_duat  # noqa: E402


def measure(fn, rounds: int):
    times, peak = [], 0
    for _ in range(rounds):
        tracemalloc.start()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return statistics.median(times), peak


def main() -> int:
    bert = BertNumpy(load_bert("minilm"))
    rng = np.random.default_rng(0)
    lines = ["# Model benchmark: DUAT rewrite of all-MiniLM-L6-v2", "",
             "OPENBLAS_NUM_THREADS=1; median of interleaved rounds; ratios to the plain forward pass; "
             "peak = tracemalloc peak of allocations during the call.", "",
             "| tokens | variant | median time | ratio | peak memory |", "|---|---|---|---|---|"]
    for N, rounds in ((16, 5), (128, 3)):
        ids = np.concatenate([[101], rng.integers(1000, 20000, N - 2), [102]])
        X0 = bert.embed(ids)
        variants = {
            "forward": lambda: _forward(bert, X0),
            "rewrite (to_duat + factored evaluate)": lambda: to_duat(bert.blocks, X0).evaluate(method="factored"),
            "rewrite (to_duat + direct evaluate)": lambda: to_duat(bert.blocks, X0).evaluate(),
            "to_duat only": lambda: to_duat(bert.blocks, X0),
        }
        results = {}
        for _ in range(1):  # warm-up
            for fn in variants.values():
                fn()
        for name, fn in variants.items():
            results[name] = measure(fn, rounds)
        base = results["forward"][0]
        for name, (t, peak) in results.items():
            lines.append(f"| {N} | {name} | {t * 1e3:.1f} ms | {t / base:.2f}× | {peak / 2**20:.1f} MiB |")
        if N == 16:
            blk = bert.blocks[0]
            H = attention_patterns(X0, blk.WQ, blk.WK, blk.heads, projection="std", bQ=blk.bQ, bK=blk.bK,
                                   scale=blk.scale)
            op = MHAOperator(H, blk.WV, blk.WO, projection="std")
            x = X0.reshape(-1)
            t_op, p_op = measure(lambda: op @ x, rounds)
            t_dense, p_dense = measure(lambda: op.dense() @ x, 1)
            lines.append(f"| {N} | one layer's W'_MHA applied matrix-free | {t_op * 1e3:.2f} ms | {t_op / base:.3f}× | {p_op / 2**20:.2f} MiB |")
            lines.append(f"| {N} | one layer's W'_MHA built dense ({N * 384}²) + applied | {t_dense * 1e3:.0f} ms | "
                         f"{t_dense / base:.1f}× | {p_dense / 2**20:.0f} MiB |")
        print("\n".join(lines[-6:]), flush=True)
    lines += ["", "At 128 tokens a dense W'_MHA per layer would need 49152² · 8 B = 19.3 GB; not built."]
    text = "\n".join(lines) + "\n"
    print(text)
    (Path(__file__).with_name("results") / "model.md").write_text(text, encoding="utf-8")
    return 0


def _forward(bert, X0):
    X = X0
    for b in bert.blocks:
        X = b.forward(X)
    return X


if __name__ == "__main__":
    sys.exit(main())
