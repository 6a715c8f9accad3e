"""Do two runs of ``symuat prove --all --format json`` give every check the same status?

A layout change (issue 29: modules moved into packages) must keep every verdict: run the command
before and after, then ``python tools/same_verdicts.py before.json after.json``. Prints one line per
check whose status (or presence) differs and a count; exit status 0 when none differs, 1 otherwise,
2 when a file cannot be read.

>>> import json, tempfile, os
>>> d = tempfile.mkdtemp()
>>> def put(name, rows):
...     path = os.path.join(d, name)
...     with open(path, "w") as f:
...         json.dump(rows, f)
...     return path
>>> a = put("a.json", [{"key": "P1", "status": "proved"}, {"key": "P4", "status": "refuted"}])
>>> b = put("b.json", [{"key": "P1", "status": "proved"}, {"key": "P4", "status": "proved"}])
>>> differences(load(a), load(b))
['P4: refuted -> proved']
>>> differences(load(a), load(a))
[]
"""

from __future__ import annotations

import json
import sys


def load(path: str) -> dict[str, str]:
    """``{check key: status}`` of one ``symuat prove --format json`` output."""
    with open(path) as f:
        rows = json.load(f)
    return {row["key"]: row["status"] for row in rows}


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"{key}: {before.get(key, 'absent')} -> {after.get(key, 'absent')}"
            for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python tools/same_verdicts.py BEFORE.json AFTER.json", file=sys.stderr)
        return 2
    try:
        before, after = load(argv[0]), load(argv[1])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"same_verdicts: cannot read {argv[0]!r} or {argv[1]!r}: {e}", file=sys.stderr)
        return 2
    diff = differences(before, after)
    print("\n".join(diff + [f"{len(before)} checks before, {len(after)} after; {len(diff)} differ"]))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
