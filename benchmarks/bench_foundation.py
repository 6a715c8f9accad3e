#!/usr/bin/env python3
"""Foundation benchmark: proof time of the Linear lift identity (M1), symbolic vs explicit sizes.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_foundation.py

The identity is vec_r(W X) = (W ⊗ I_M) vec_r(X). "symbolic" is the index-level normal-form
proof for symbolic N, M (what `symuat prove M1` uses); "explicit n" expands every entry with
symbolic entries at N = M = n (what proved-at-sizes uses). The measurements are interleaved
round by round in one process and reported as ratios to the symbolic proof, so the noise of a
shared machine hits all of them alike. Also reported: the wall time of `symuat prove --all`.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from sympy import Identity, MatrixSymbol  # noqa: E402

from symuat.algebra import dims, kron, mul  # noqa: E402
from symuat.kernel.decide import explicit_expansion  # noqa: E402
from symuat.kernel.index_calculus import compare_entries  # noqa: E402
from symuat.vec import Vec  # noqa: E402

N, M = dims("N M")
W, X = MatrixSymbol("W", N, N), MatrixSymbol("X", N, M)
LHS = Vec(mul(W, X), "row")
RHS = mul(kron(W, Identity(M)), Vec(X, "row"))
SIZES = (2, 4, 8, 16)
ROUNDS = 3


def symbolic() -> None:
    assert compare_entries(LHS, RHS).equal


def explicit(n: int) -> None:
    proved, cex = explicit_expansion(LHS, RHS, [{N: n, M: n}])
    assert proved and cex is None


def clock(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> int:
    times: dict[str, list[float]] = {"symbolic": []} | {f"explicit n={n}": [] for n in SIZES}
    for _ in range(ROUNDS):  # interleaved: every variant once per round
        times["symbolic"].append(clock(symbolic))
        for n in SIZES:
            times[f"explicit n={n}"].append(clock(explicit, n))
    base = statistics.median(times["symbolic"])
    rows = ["| method | NM | median s | ratio to symbolic |", "|---|---|---|---|"]
    for name, ts in times.items():
        nm = "symbolic" if name == "symbolic" else str(int(name.split("=")[1]) ** 2)
        med = statistics.median(ts)
        rows.append(f"| {name} | {nm} | {med:.4f} | {med / base:.1f}× |")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "symuat.cli", "prove", "--all", "--format", "json"],
                   check=True, capture_output=True)
    prove_all = time.perf_counter() - start
    text = "\n".join([
        "# Foundation benchmark",
        "",
        f"Linear lift identity vec_r(WX) = (W⊗I_M) vec_r(X); {ROUNDS} interleaved rounds, "
        "OPENBLAS_NUM_THREADS=1, one process.",
        "",
        *rows,
        "",
        f"`symuat prove --all` (one run, fresh process, all claims): {prove_all:.1f} s",
        "",
    ])
    print(text)
    out = Path(__file__).with_name("results") / "foundation.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
