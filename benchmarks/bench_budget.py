"""The budgets of the README's commands: the test command's fast tier (``pytest``), the docs build
and ``symuat prove --all --jobs 2`` — wall time, CPU time and peak memory, each measured as a
whole child process.

How each figure is taken: the command runs in a subprocess with ``OPENBLAS_NUM_THREADS=1``; wall
time is ``time.perf_counter`` around it; CPU time is the user + system time of the finished child
processes (``getrusage(RUSAGE_CHILDREN)`` before and after); peak memory is the largest resident
set of any one of them (``ru_maxrss`` of the children — the high-water mark of the biggest single
process, which is what runs a machine out of memory; it is cumulative over the benchmark
process's life, so the commands run from the smallest expected peak to the largest and each row
states the mark after it). ``prove --all`` is the median of three runs, the others run once (they
take minutes). The machine's load is stamped at the start; a loaded machine stretches wall time,
not CPU time or memory.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import common

#: the budgets of issue 37 (wall seconds on two quiet cores, peak GiB)
BUDGETS = {"prove --all --jobs 2": (6, None), "pytest (the README's test command, fast tier)": (8 * 60, 3.0),
           "sphinx-build (the docs)": (None, 2.0)}


def _measure(argv: list[str], env: dict, cwd) -> tuple[float, float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 2**20, proc.returncode  # ru_maxrss: KiB on Linux


def run(quick: bool = False) -> str:
    exe = shutil.which("symuat") or sys.exit("bench_budget: the symuat console script is not installed")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", SYMUAT_CACHE="off", HF_HUB_OFFLINE="1")
    out = tempfile.mkdtemp(prefix="symuat-bench-docs-")
    commands = [("prove --all --jobs 2", [exe, "prove", "--all", "--jobs", "2"], 1 if quick else 3)]
    if not quick:
        commands += [("pytest (the README's test command, fast tier)", [sys.executable, "-m", "pytest", "-q"], 1),
                     ("sphinx-build (the docs)", [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs",
                                                  out], 1)]
    rows = ["| command | wall time | CPU time | peak memory (largest process) | exit | budget (wall, peak) |",
            "|---|---|---|---|---|---|"]
    for name, argv, runs in commands:
        samples = [_measure(argv, env, common.ROOT) for _ in range(runs)]
        wall = common.median([s[0] for s in samples])
        cpu = common.median([s[1] for s in samples])
        peak, code = samples[-1][2], max(s[3] for s in samples)
        budget = BUDGETS[name]
        rows.append(f"| `{name}` | {wall:.1f} s | {cpu:.1f} s | {peak:.2f} GiB | {code} | "
                    f"{'—' if budget[0] is None else f'{budget[0]} s'}, {'—' if budget[1] is None else f'{budget[1]} GiB'} |")
    shutil.rmtree(out, ignore_errors=True)
    return common.write("budget.md", "Budgets of the README's commands", " ".join(__doc__.split("\n\n")[1].split()), rows)
