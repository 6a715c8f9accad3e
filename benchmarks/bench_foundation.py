#!/usr/bin/env python3
"""Foundation benchmark: proof time of the Linear lift identity (M1), symbolic vs explicit sizes.

    python benchmarks/bench_foundation.py [--quick]      (or every benchmark: python benchmarks/run.py)

The identity is vec_r(W X) = (W ⊗ I_M) vec_r(X). "symbolic" is the index-level normal-form
proof for symbolic N, M (what `symuat prove M1` uses); "explicit n" expands every entry with
symbolic entries at N = M = n (what proved-at-sizes uses). The measurements are interleaved
round by round in one process and reported as ratios to the symbolic proof, so the noise of a
shared machine hits all of them alike. (`symuat prove --all`: benchmarks/bench_prove.py.)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # sets OPENBLAS_NUM_THREADS before numpy

from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import dims, kron, mul
from symuat.kernel.decide import explicit_expansion
from symuat.kernel.index_calculus import compare_entries
from symuat.expr.vec import Vec

N, M = dims("N M")
W, X = MatrixSymbol("W", N, N), MatrixSymbol("X", N, M)
LHS = Vec(mul(W, X), "row")
RHS = mul(kron(W, Identity(M)), Vec(X, "row"))
SIZES = (2, 4, 8, 16)


def symbolic() -> None:
    assert compare_entries(LHS, RHS).equal


def explicit(n: int) -> None:
    proved, cex = explicit_expansion(LHS, RHS, [{N: n, M: n}])
    assert proved and cex is None


def clock(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def run(quick: bool = False) -> str:
    rounds = 1 if quick else 3
    sizes = SIZES[:3] if quick else SIZES
    variants = {"symbolic": symbolic} | {f"explicit n={n}": (lambda n=n: explicit(n)) for n in sizes}
    times = common.interleaved(variants, rounds, warmup=0)
    base = common.median(times["symbolic"])
    rows = ["| method | NM | median s | ratio to symbolic |", "|---|---|---|---|"]
    for name, ts in times.items():
        nm = "symbolic" if name == "symbolic" else str(int(name.split("=")[1]) ** 2)
        med = common.median(ts)
        rows.append(f"| {name} | {nm} | {med:.4f} | {med / base:.1f}× |")
    body = ["Linear lift identity vec_r(WX) = (W⊗I_M) vec_r(X) (M1).", "", *rows]
    how = f"{rounds} interleaved rounds in one process (no warm-up: SymPy's cache would make later rounds cheaper for all), medians, ratios of medians."
    return common.write("foundation.md", "Foundation benchmark", how, body)


if __name__ == "__main__":
    run(common.quick_flag())
