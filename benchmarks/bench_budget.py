"""Every budget of issue 37 in one run: the README's test command (``pytest``, the fast tier), the
docs build, ``symuat prove --all --jobs 2``, ``symuat report --fresh``, and the DUAT rewrite with
every state (and a decoder's logits) against HF torch float64 at 16, 128 and 512 tokens for every
packaged model — each figure with its budget, the load average before and after it, and how it
was taken.

    python benchmarks/run.py budget            # the full run (the test suite and the docs take minutes)
    python benchmarks/run.py budget --quick    # a smoke run of the same machinery (about 20 s):
                                               # small stand-ins for the commands, MiniLM at 16 tokens

How each command's figures are taken: it runs as a child process with ``OPENBLAS_NUM_THREADS=1``
(``prove --all`` with ``SYMUAT_CACHE=off``, ``report --fresh`` with an empty cache folder of its
own); wall time is ``time.perf_counter`` around it; CPU time and peak memory come from the
kernel's accounting of that child when it is reaped (``os.wait4``): user + system time of the
child and of every process it waited for (the ``prove`` workers, pytest's subprocesses), and the
largest resident set of any one of them (what runs a machine out of memory). ``prove`` and
``report`` are the median of three runs, the test suite and the docs build run once (minutes
each). The load average is read before and after every row: a loaded machine stretches wall time,
not CPU time or memory. The ratios are those of :mod:`bench_families` (interleaved rounds in one
process, medians).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import common

#: issue 37: wall seconds on two quiet cores, peak GiB of the largest process
BUDGETS = {"pytest": (8 * 60, 3.0), "docs": (None, 2.0), "prove": (6, None), "report": (6, None)}
RATIO_BUDGET = 2.0


def _measure(argv: list[str], env: dict, cwd) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + sys of the child and what it reaped), peak GiB (the
    largest resident set among them) and the exit status of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20, proc.returncode  # maxrss: KiB


def commands(quick: bool, exe: str, docs_out: str) -> list[tuple[str, str, list[str], int, dict]]:
    """(budget key, the command as shown, argv, runs, extra environment) of every command row."""
    py = sys.executable
    if quick:  # the same machinery on small stand-ins: a smoke test, not a figure
        return [("pytest", "pytest -q tests/test_printing.py (quick stand-in)",
                 [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_printing.py"], 1, {}),
                ("prove", "symuat prove P5 --jobs 2 (quick stand-in)", [exe, "prove", "P5", "--jobs", "2"], 1,
                 {"SYMUAT_CACHE": "off"}),
                ("report", "symuat report P5 --fresh (quick stand-in)", [exe, "report", "P5", "--fresh"], 1, {})]
    return [("prove", "symuat prove --all --jobs 2", [exe, "prove", "--all", "--jobs", "2"], 3, {"SYMUAT_CACHE": "off"}),
            ("report", "symuat report --fresh", [exe, "report", "--fresh"], 3, {}),
            ("pytest", "pytest (the README's test command, fast tier)", [py, "-m", "pytest", "-q"], 1, {}),
            ("docs", "sphinx-build -W (the docs)", [py, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", docs_out],
             1, {})]


def _budget_cell(key: str) -> str:
    wall, peak = BUDGETS[key]
    return f"{'—' if wall is None else f'≤ {wall} s'}, {'—' if peak is None else f'≤ {peak} GiB'}"


def _met(key: str, wall: float, peak: float, code: int) -> str:
    limit_wall, limit_peak = BUDGETS[key]
    ok = code == 0 and (limit_wall is None or wall <= limit_wall) and (limit_peak is None or peak <= limit_peak)
    return "yes" if ok else "**no**"


def run(quick: bool = False) -> str:
    exe = shutil.which("symuat") or sys.exit("bench_budget: the symuat console script is not installed")
    import bench_families

    cache = tempfile.mkdtemp(prefix="symuat-bench-cache-")
    docs_out = tempfile.mkdtemp(prefix="symuat-bench-docs-")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               SYMUAT_CACHE_DIR=cache)
    rows = ["| command | runs | wall time (median) | CPU time, user + sys (median) | peak memory (largest "
            "process) | exit | budget (wall on 2 quiet cores, peak) | met | load (1 min) before → after |",
            "|---|---|---|---|---|---|---|---|---|"]
    try:
        for key, shown, argv, runs, extra in commands(quick, exe, docs_out):
            before = common.load_one()
            samples = []
            for _ in range(runs):
                shutil.rmtree(cache, ignore_errors=True)  # report --fresh stores into an empty cache
                samples.append(_measure(argv, dict(env, **extra), common.ROOT))
            wall = common.median([s[0] for s in samples])
            cpu = common.median([s[1] for s in samples])
            peak = max(s[2] for s in samples)
            code = max((s[3] for s in samples), key=abs)
            rows.append(f"| `{shown}` | {runs} | {wall:.1f} s | {cpu:.1f} s | {peak:.2f} GiB | {code} | "
                        f"{_budget_cell(key)} | {'stand-in' if quick else _met(key, wall, peak, code)} | "
                        f"{before} → {common.load_one()} |")
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(docs_out, ignore_errors=True)
    if quick:
        rows.append("| `sphinx-build -W (the docs)` | 0 | not run with --quick | | | | "
                    f"{_budget_cell('docs')} | | |")

    sizes = [(16, 3)] if quick else [(16, 11), (128, 7), (512, 5)]
    ratios = []
    for name in (("minilm",) if quick else tuple(bench_families.MODELS)):
        ratios += bench_families.measure(name, sizes)
        print(bench_families.table(ratios)[-1], flush=True)
    ratio_rows = bench_families.table(ratios)
    ratio_rows[0] += " met (≤ 2×) |"
    ratio_rows[1] += "---|"
    ratio_rows[2:] = [row + (" stand-in |" if quick else f" {'yes' if r['ratio'] <= RATIO_BUDGET else '**no**'} |")
                      for row, r in zip(ratio_rows[2:], ratios)]
    body = ["## The commands", "", *rows, "",
            "## The rewrite with every state against HF torch float64", "", f"- how: {bench_families.HOW}", "",
            *ratio_rows, ""]
    if quick:
        body.append("A `--quick` run: small stand-ins and one model at 16 tokens, to show the machinery "
                    "works end to end; its figures are not the budgets' figures.")
    how = " ".join(__doc__.split("\n\n")[2].split(": ", 1)[1].split())
    return common.write("budget.md", "The budgets of issue 37: the README's commands and the rewrite's speed",
                        how, body)
