"""A cache of check results that can only give what a fresh run gives.

``symuat report`` re-runs nearly a thousand checks (seconds of SymPy). Their results are a pure
function of symuat's own source code, the versions of the libraries that compute them and the
checks asked for: every procedure is seeded, none reads the clock, the network or a file outside
the package. The cache key is therefore a SHA-256 of

* every ``*.py`` file of the installed ``symuat`` package (path and bytes),
* the versions of Python, SymPy, mpmath, NumPy and SciPy, and NumPy's BLAS configuration,
* the checks asked for: key and statement of each, in order.

Any edit to any source file, any upgrade, any different selection gives a different key, so a
stale entry is never read (it is simply not found). An entry is one pickle of the verdicts,
written atomically (a temporary file, then a rename), in ``$SYMUAT_CACHE_DIR`` or
``$XDG_CACHE_HOME/symuat`` (``~/.cache/symuat``). ``SYMUAT_CACHE=off`` or ``--fresh`` turns it
off; an unreadable entry is treated as absent.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
#: libraries whose versions enter the key (they compute the verdicts)
DEPENDENCIES = ("sympy", "mpmath", "numpy", "scipy")
FORMAT = 1


def enabled() -> bool:
    return os.environ.get("SYMUAT_CACHE", "on").lower() not in ("off", "0", "no", "false")


def directory() -> Path:
    given = os.environ.get("SYMUAT_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symuat"


def dependency_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": sys.version, "symuat-cache-format": str(FORMAT)}
    for name in DEPENDENCIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def source_digest(root: Path = PACKAGE) -> str:
    """SHA-256 over every ``*.py`` file under ``root``: relative path and contents."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def key(checks, root: Path = PACKAGE, versions: dict | None = None) -> str:
    h = hashlib.sha256()
    h.update(source_digest(root).encode())
    for name, version in sorted((versions or dependency_versions()).items()):
        h.update(f"{name}={version}\n".encode())
    for c in checks:
        h.update(f"{c.key}\0{c.statement}\n".encode())
    return h.hexdigest()


def load(checks, root: Path = PACKAGE):
    """``(results, edges, extra)`` of ``checks`` from an identical earlier run, or None (``extra``:
    what the run stored beside the results, e.g. the bottom lines derived from them)."""
    from symuat.kernel.registry import Result

    path = directory() / f"results-{key(checks, root)}.pickle"
    try:
        payload = pickle.loads(path.read_bytes())
        rows, edges, extra = payload["rows"], payload["edges"], payload.get("extra", {})
        if [k for k, *_ in rows] != [c.key for c in checks]:
            return None
    except Exception:  # absent, unreadable, from another format: not a hit
        return None
    results = []
    for check, (_, verdict, seconds, error) in zip(checks, rows):
        if verdict is not None and check._verdict is None:
            check._verdict = verdict
        results.append(Result(check, verdict, seconds, error))
    return results, edges, extra


def store(results, edges=None, extra: dict | None = None, root: Path = PACKAGE) -> Path | None:
    """Write the results of a complete run (none crashed), and ``extra`` (anything computed from
    them alone by symuat's code, which the key covers); None when they cannot be stored."""
    if any(r.error for r in results):
        return None  # a crash may be transient: never replay one
    checks = [r.check for r in results]
    folder = directory()
    path = folder / f"results-{key(checks, root)}.pickle"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        data = pickle.dumps({"rows": [(r.check.key, r.verdict, r.seconds, r.error) for r in results],
                             "edges": {k: set(v) for k, v in (edges or {}).items()},
                             "extra": extra or {}})
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        # one entry per selection asked for is plenty: keep the 8 newest
        entries = sorted(folder.glob("results-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[8:]:
            old.unlink(missing_ok=True)
    except Exception:  # a read-only home, a full disk, an unpicklable verdict: just no cache
        return None
    return path
