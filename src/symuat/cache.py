"""A cache of check results that can only give what a fresh run gives.

``symuat report`` re-runs nearly a thousand checks (seconds of SymPy). Their results are a pure
function of symuat's own source code, the versions of the libraries that compute them and the
checks asked for: every procedure is seeded, none reads the clock, the network or a file outside
the package. The cache key is therefore a SHA-256 of

* every ``*.py`` file of the installed ``symuat`` package (path and bytes),
* the versions of Python, SymPy, mpmath, NumPy and SciPy,
* NumPy's BLAS configuration (:func:`blas_configuration`: the BLAS/LAPACK library, its version
  and build string, the SIMD extensions NumPy found on this CPU, and the thread-count variables
  ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``),
* the checks asked for: key and statement of each, in order.

Any edit to any source file, any upgrade, any different selection gives a different key, so a
stale entry is never read (it is simply not found). The key is taken *once*, before any check
runs (:class:`Entry`); at store time it is taken again, and when the sources changed meanwhile
(an edit, a ``git pull`` during a run) nothing is stored — the verdicts were computed by code that
neither key describes. ``load``/``store`` below are an :class:`Entry` made on the spot. An entry
is one pickle of the verdicts, written atomically (a temporary file, then a rename), in
``$SYMUAT_CACHE_DIR`` or ``$XDG_CACHE_HOME/symuat`` (``~/.cache/symuat``). ``SYMUAT_CACHE=off``
or ``--fresh`` turns it off; an unreadable entry is treated as absent.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    out.update({f"blas:{k}": v for k, v in blas_configuration().items()})
    return out


#: the environment variables that set the BLAS's thread count (a sum's order may depend on it)
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_configuration() -> dict[str, str]:
    """NumPy's BLAS as far as it can change a float64 result: the library (name, version, build
    configuration) of BLAS and LAPACK, the SIMD extensions found on this CPU (they pick the
    kernels), and the thread-count variables.

    >>> {'blas', 'lapack', 'simd', 'OPENBLAS_NUM_THREADS'} <= set(blas_configuration())
    True
    """
    import json

    import numpy as np

    try:
        config: Mapping[str, Any] = np.show_config(mode="dicts")
    except TypeError:  # pragma: no cover - NumPy < 1.26 has no dicts mode
        config = {}
    build = config.get("Build Dependencies", {})
    out = {lib: json.dumps({k: build.get(lib, {}).get(k) for k in ("name", "version", "openblas configuration")},
                           sort_keys=True) for lib in ("blas", "lapack")}
    out["simd"] = json.dumps(config.get("SIMD Extensions", {}), sort_keys=True)
    for name in BLAS_THREAD_VARIABLES:
        out[name] = os.environ.get(name, "unset")
    return out


def source_digest(root: Path = PACKAGE) -> str:
    """SHA-256 over every ``*.py`` file under ``root``: relative path and contents."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def key(checks, root: Path = PACKAGE, versions: dict | None = None, sources: str | None = None) -> str:
    """The key of ``checks`` (``sources``: a :func:`source_digest` taken earlier, else taken now)."""
    h = hashlib.sha256()
    h.update((source_digest(root) if sources is None else sources).encode())
    for name, version in sorted((versions or dependency_versions()).items()):
        h.update(f"{name}={version}\n".encode())
    for c in checks:
        h.update(f"{c.key}\0{c.statement}\n".encode())
    return h.hexdigest()


class Entry:
    """The cache entry of one run of ``checks``: its key is taken when the entry is made — before
    any check runs — and the run's results are stored under that key only if the sources still
    give it at store time.

    >>> import tempfile
    >>> from symuat.kernel.registry import Check
    >>> from symuat.kernel.decide import informal
    >>> checks = [Check("X0", None, "-", lambda: informal("item"))]
    >>> entry = Entry(checks, directory=Path(tempfile.mkdtemp()))
    >>> entry.load() is None, entry.store([c.run() for c in checks]) is not None, entry.load() is not None
    (True, True, True)
    """

    def __init__(self, checks, root: Path = PACKAGE, directory: Path | None = None, sources: str | None = None):
        """``sources``: the :func:`source_digest` taken when the process started, before it
        imported the code that will run (default: taken now)."""
        self.checks, self.root = list(checks), root
        self.folder = directory if directory is not None else globals()["directory"]()
        self.key = key(self.checks, root, sources=sources)

    @property
    def path(self) -> Path:
        return self.folder / f"results-{self.key}.pickle"

    def load(self):
        """``(results, edges, extra)`` of the checks from an identical earlier run, or None
        (``extra``: what the run stored beside the results, e.g. the bottom lines derived from them)."""
        return _read(self.path, self.checks)

    def store(self, results, edges=None, extra: dict | None = None) -> Path | None:
        """Write the results of a complete run (none crashed) and ``extra`` (anything computed from
        them alone by symuat's code, which the key covers) under the key taken before the run; None
        when they cannot be stored, or must not be: a check crashed, or the key taken now differs
        (a source was edited during the run)."""
        if any(r.error for r in results):
            return None  # a crash may be transient: never replay one
        if [r.check.key for r in results] != [c.key for c in self.checks]:
            return None  # not the run this entry was made for
        try:
            if key(self.checks, self.root) != self.key:
                return None  # the sources changed while the checks ran: neither key describes them
        except OSError:
            return None
        return _write(self.folder, self.path, results, edges, extra)


def _read(path: Path, checks):
    from symuat.kernel.registry import Result

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


def _write(folder: Path, path: Path, results, edges, extra) -> Path | None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        data = pickle.dumps({"rows": [(r.check.key, r.verdict, r.seconds, r.error) for r in results],
                             "edges": {k: set(v) for k, v in (edges or {}).items()},
                             "extra": extra or {}})
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        # one entry per selection asked for is plenty: keep the 8 newest
        entries = sorted(folder.glob("results-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[8:]:
            old.unlink(missing_ok=True)
    except Exception:  # a read-only home, a full disk, an unpicklable verdict: just no cache
        return None
    return path


def load(checks, root: Path = PACKAGE):
    """``(results, edges, extra)`` of ``checks`` from an identical earlier run, or None."""
    return Entry(checks, root).load()


def store(results, edges=None, extra: dict | None = None, root: Path = PACKAGE) -> Path | None:
    """Store results whose run began just now (the key is taken here: a caller that runs the
    checks first must take an :class:`Entry` before, and store through it)."""
    return Entry([r.check for r in results], root).store(results, edges, extra)
