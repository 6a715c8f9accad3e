#!/usr/bin/env python3
"""Attention benchmarks (issue: MHA in matrix-vector form).

    python benchmarks/bench_attention.py [--quick]      (or every benchmark: python benchmarks/run.py)

(a) Proof time of the whole-MHA identity vec_r(H̊) = (Σ_i H_i ⊗ B_iᵀ) vec_r(X) against NM, per
    strategy (symuat.expr.attention_sizes): `index` (symbolic dimensions — one proof for every size),
    `poly` (exact sparse polynomials, Kronecker-structured right side), `naive` (SymPy expand,
    dense W'), `pit` (exact random evaluation over F_p; a cross-check, never a proof). Sizes grow
    until a run takes more than the budget (60 s); the largest NM reached within it is reported.
(b) The MHA operator (matrix-free), the dense W'_HVO, and the forward pass: time (interleaved
    rounds, medians, no tracemalloc) and peak memory (tracemalloc, separate runs) as ratios, at N=128, M=384, h=12 (dense W' would need
    (NM)² · 8 B = 19 GB there, so it is measured at N=32, M=96, h=12 beside the others).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # sets OPENBLAS_NUM_THREADS before numpy

import numpy as np

from symuat.expr import attention_sizes as strategies
from symuat.expr.attention import MHAOperator, attention_patterns, mha_fixed_pattern, mha_forward

BUDGET = 60.0


def clock(fn, *args):
    start = time.perf_counter()
    ok = fn(*args)
    return time.perf_counter() - start, ok


def clock_limited(name: str, nm: int) -> tuple[float | None, bool]:
    """Run one strategy in a child process, killed at the budget: (seconds or None, ok)."""
    import subprocess

    code = ("import time, sys; from symuat.expr import attention_sizes as a; t = time.perf_counter(); "
            f"ok = a.STRATEGIES[{name!r}](*a.size_for({nm})); print(time.perf_counter() - t, ok)")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=BUDGET, check=True, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        return None, True
    seconds, ok = out.stdout.split()
    return float(seconds), ok == "True"


def part_a(quick: bool) -> list[str]:
    sizes = [16, 64, 256, 1024, 4096] if not quick else [16, 64]
    rows = ["| strategy | status it can give | " + " | ".join(f"NM={nm}" for nm in sizes)
            + " | largest NM within 60 s |", "|---|---|" + "---|" * len(sizes) + "---|"]
    t_index, ok = clock(strategies.prove_index)
    assert ok
    rows.append("| index (symbolic N,h,d,d_v) | proved | " + " | ".join(f"{t_index:.3f} s" for _ in sizes)
                + " | every NM (one proof) |")
    gives = {"poly": "proved-at-sizes", "naive": "proved-at-sizes", "pit": "none (cross-check)"}
    for name in strategies.STRATEGIES:
        cells, best, stopped = [], None, False
        for nm in sizes:
            if stopped:
                cells.append("—")
                continue
            t, ok = clock_limited(name, nm)
            assert ok, f"{name} failed at NM={nm}"
            if t is None:
                cells.append(f"> {BUDGET:.0f} s")
                stopped = True
            else:
                cells.append(f"{t:.3f} s")
                best = nm
        rows.append(f"| {name} | {gives[name]} | " + " | ".join(cells) + f" | {best} |")
        print(rows[-1], flush=True)
    return rows


def part_b(N: int, M: int, h: int, with_dense: bool, rounds: int):
    rng = np.random.default_rng(0)
    d = M // h
    X = rng.standard_normal((N, M))
    WQ, WK, WV = (rng.standard_normal((h, d, d)) / np.sqrt(d) for _ in range(3))
    WO = rng.standard_normal((M, M)) / np.sqrt(M)
    H = attention_patterns(X, WQ, WK, h)
    x = X.reshape(-1)
    variants = {
        "forward (H fixed)": lambda: mha_fixed_pattern(X, H, WV, WO).reshape(-1),
        "forward pass (softmax, heads)": lambda: mha_forward(X, WQ, WK, WV, WO, heads=h)[0].reshape(-1),
        "operator (vec trick)": lambda: MHAOperator(H, WV, WO) @ x,
    }
    if with_dense:
        variants["dense W' (build + matvec)"] = lambda: MHAOperator(H, WV, WO).dense() @ x
    reference = variants["forward (H fixed)"]()
    for name in ("operator (vec trick)",) + (("dense W' (build + matvec)",) if with_dense else ()):
        assert np.allclose(variants[name](), reference, atol=1e-9), name
    times = common.interleaved(variants, rounds)
    peaks = {name: common.peak_bytes(fn) for name, fn in variants.items()}
    base_t = common.median(times["forward (H fixed)"])
    base_m = peaks["forward (H fixed)"]
    rows = []
    for name in variants:
        t = common.median(times[name])
        rows.append(f"| N={N}, M={M}, h={h} | {name} | {t * 1e3:.2f} ms | {t / base_t:.2f}× | "
                    f"{common.spread(times[name])} | {peaks[name] / 2**20:.2f} MiB | {peaks[name] / base_m:.2f}× |")
        print(rows[-1], flush=True)
    return rows


def run(quick: bool = False) -> str:
    common.single_thread()
    body = ["## (a) Proof time of the whole-MHA identity", ""]
    body += part_a(quick)
    small, large = (3, 0) if quick else (7, 11)
    body += ["", "## (b) Operator vs dense W'_HVO vs forward pass", "",
             "Peak memory counts allocations made during the call (tracemalloc, separate runs); the inputs "
             "(X, the patterns H, the weights) exist beforehand and are not counted.", "",
             "| size | variant | median time | time ratio | spread | peak memory | memory ratio |",
             "|---|---|---|---|---|---|---|"]
    body += part_b(32, 96, 12, with_dense=True, rounds=small)
    if not quick:
        body += part_b(128, 384, 12, with_dense=False, rounds=large)
        body += ["", "Dense W' at N=128, M=384 would be 49152² float64 = 19.3 GB: not built."]
    how = (f"(a) one run per strategy and size, each in a child process killed at {BUDGET:.0f} s (index: in "
           f"process). (b) interleaved rounds ({small} at N=32" + (f", {large} at N=128" if large else "")
           + "), variants in rotated order after a warm-up round, medians, ratios of medians; memory apart.")
    return common.write("attention.md", "Attention benchmark", how, body)


if __name__ == "__main__":
    run(common.quick_flag())
