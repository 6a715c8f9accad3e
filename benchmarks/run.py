#!/usr/bin/env python3
"""Regenerate every results file in benchmarks/results/ in one go.

    python benchmarks/run.py            # the full run (about 15 minutes on 2 cores)
    python benchmarks/run.py --quick    # fewer rounds and sizes (a few minutes)
    python benchmarks/run.py model prove   # only some of them
    python benchmarks/run.py budget     # every budget of issue 37 in one file, budget.md
    python benchmarks/run.py budget --quick --out /tmp/x   # its smoke run, written elsewhere

Each file is stamped with the date, the machine (cores, BLAS via threadpoolctl, versions), the
load, and how every figure was taken (rounds, interleaving, medians). BLAS and torch run on one
thread (OPENBLAS_NUM_THREADS=1, set before numpy is imported; OPENBLAS_CORETYPE is left alone).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # first: sets OPENBLAS_NUM_THREADS before numpy

import bench_attention
import bench_budget
import bench_cli
import bench_duat
import bench_families
import bench_foundation
import bench_gemma3
import bench_long
import bench_model
import bench_prove

BENCHMARKS = {
    "prove": bench_prove.run,
    "model": bench_model.run,
    "duat": bench_duat.run,
    "attention": bench_attention.run,
    "foundation": bench_foundation.run,
    "cli": bench_cli.run,
    "families": bench_families.run,
    "gemma3": bench_gemma3.run,
    "budget": bench_budget.run,
    "long": bench_long.run,
}


def main(argv: list[str]) -> int:
    argv = list(argv)
    if "--out" in argv:  # write the results files into another folder (a smoke run must not replace them)
        at = argv.index("--out")
        if at + 1 >= len(argv):
            print("run.py: --out needs a folder", file=sys.stderr)
            return 2
        common.RESULTS = Path(argv[at + 1])
        del argv[at:at + 2]
    quick = "--quick" in argv
    chosen = [a for a in argv if not a.startswith("-")] or list(BENCHMARKS)
    unknown = [c for c in chosen if c not in BENCHMARKS]
    if unknown:
        print(f"run.py: unknown benchmark {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    for name in chosen:
        start = time.perf_counter()
        print(f"== {name} (load {common.load()})", flush=True)
        BENCHMARKS[name](quick)
        print(f"== {name}: {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
