"""Does the certify tier give the same count on a loaded machine? Run it beside a CPU hog.

Issue 33 asks that no clock decide what Coq certifies: a theorem is certified or not by what it
states and how it is proved, never by how long the machine took. This tool shows it: it starts
``--hogs`` busy processes (a CPU hog: each spins a core), runs ``symuat certify --jobs 2 --coqchk``
beside them, samples the load average, ends the hogs whatever happens, and compares the status of
every entry of the new record (checks, refutations, corrections) with a reference record — a run
on a quiet machine, e.g. CI's ``build/certify/record.json``. Prints the counts side by side, each
entry whose status differs, the wall time and the highest load seen; exit status 0 when no status
differs, 1 otherwise (or when the run failed), 2 when the reference cannot be read.

    python tools/certify_under_load.py --against build/certify/record.json --hogs 4

>>> a = {"checks": {"P1": {"status": "certified"}}, "refutations": {"P4": {"status": "certified"}},
...      "corrections": {}}
>>> b = {"checks": {"P1": {"status": "certified"}}, "refutations": {"P4": {"status": "failed"}},
...      "corrections": {}}
>>> differences(a, b)
['refutations P4: certified -> failed']
>>> differences(a, a)
[]
>>> counts(a)
{'checks': {'certified': 1}, 'refutations': {'certified': 1}, 'corrections': {}}
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SECTIONS = ("checks", "refutations", "corrections")


def statuses(record: dict) -> dict[tuple[str, str], str]:
    """``{(section, key): status}`` of a certify record."""
    return {(s, k): e.get("status") for s in SECTIONS for k, e in record.get(s, {}).items()}


def differences(before: dict, after: dict) -> list[str]:
    a, b = statuses(before), statuses(after)
    return [f"{s} {k}: {a.get((s, k), 'absent')} -> {b.get((s, k), 'absent')}"
            for s, k in sorted(a.keys() | b.keys()) if a.get((s, k)) != b.get((s, k))]


def counts(record: dict) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for s in SECTIONS:
        got = [e.get("status") for e in record.get(s, {}).values()]
        out[s] = {st: got.count(st) for st in sorted(set(got))}
    return out


def _hog() -> subprocess.Popen:
    """One busy process (its own session, so that it is ended with its children)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, help="the reference record (a run on a quiet machine)")
    ap.add_argument("--hogs", type=int, default=2 * (os.cpu_count() or 1), help="busy processes beside the run")
    ap.add_argument("--out", default=None, help="where the run writes (default: a temporary directory)")
    ap.add_argument("--pattern", default=None, help="passed to symuat certify (default: its tier)")
    args = ap.parse_args(argv)
    try:
        reference = json.loads(Path(args.against).read_text())
    except (OSError, ValueError) as exc:
        print(f"certify_under_load: cannot read the reference record {args.against}: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="symuat-load-"))
    cmd = [sys.executable, "-m", "symuat", "certify", "--jobs", "2", "--coqchk"]
    if args.pattern:
        cmd += ["--pattern", args.pattern]
    loads: list[float] = []
    done = threading.Event()

    def sample():
        while not done.wait(5):
            loads.append(os.getloadavg()[0])

    hogs = [_hog() for _ in range(args.hogs)]
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env={**os.environ, "SYMUAT_CERTIFY_DIR": str(out)}, stdin=subprocess.DEVNULL)
    finally:
        done.set()
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()
    wall = time.perf_counter() - start
    print(f"\nbeside {args.hogs} busy processes: {wall:.0f} s wall, load average up to "
          f"{max(loads, default=os.getloadavg()[0]):.1f}; symuat certify exited {proc.returncode}")
    try:
        record = json.loads((out / "record.json").read_text())
    except (OSError, ValueError):
        print("no record was written", file=sys.stderr)
        return 1
    print(f"reference ({args.against}): {json.dumps(counts(reference))}")
    print(f"under load ({out / 'record.json'}): {json.dumps(counts(record))}")
    diff = differences(reference, record)
    for line in diff:
        print("  " + line)
    print(f"{len(diff)} entries differ of {len(statuses(record))}")
    return 0 if proc.returncode == 0 and not diff else 1


if __name__ == "__main__":
    sys.exit(main())
