"""Run checks on several cores; results come back in the order the checks were given.

The checks of the catalogue are independent computations (seeded, no shared mutable state
between procedures) except that a check may rest on another's verdict through
``REGISTRY.verdict(key)``, which computes that verdict once *per process* and memoises it on the
:class:`~symuat.kernel.registry.Check`. :func:`run_checks` therefore

* forks worker processes (the registry, with every procedure, is inherited — nothing is pickled
  on the way in); a check another one rests on is computed at most once in each worker;
* hands them short consecutive runs of checks (an idle worker takes the next run), and yields each :class:`~symuat.kernel.registry.Result` as soon as it *and every check before it*
  are done — the output order is the input order whatever the number of jobs;
* brings every verdict back into the parent and memoises it there too, so a later
  ``REGISTRY.verdict(key)`` in the parent reuses it;
* on an interruption (Ctrl-C, or SIGTERM turned into one by :mod:`symuat.interrupt`) ends its
  workers at once and re-raises (the command line turns it into one line and exit status 130 or
  143); a test stops it at the pause point ``runner`` (after the first results came back, the
  workers running) to signal it there;
* falls back to running a check in the parent when its verdict cannot be sent back (not
  picklable), and to running everything in order in the parent when ``jobs`` is 1 or the platform
  has no ``fork``.

A verdict never depends on the number of jobs (``tests/test_runner.py`` compares them).

>>> from symuat.kernel.registry import Check
>>> from symuat.kernel.decide import informal
>>> checks = [Check(f"X{k}", None, "-", lambda k=k: informal(f"item {k}")) for k in range(5)]
>>> [r.verdict.detail for r in run_checks(checks, jobs=2)]
['item 0', 'item 1', 'item 2', 'item 3', 'item 4']
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Iterable, Iterator

from symuat.interrupt import default_sigterm_in_worker, pause_point
from symuat.kernel.registry import REGISTRY, Check, Result

#: The checks being run, set in the parent just before the workers fork (they read it, by index).
_CHECKS: list[Check] = []


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _run_slice(start: int, stop: int) -> tuple[list[bytes | None], dict[str, set[str]]]:
    """In a worker: run checks ``start:stop``; each outcome pickled, or None if it cannot be; and
    the dependency edges the worker's registry has recorded (``REGISTRY.edges``), which the
    parent merges into its own — a verdict memoised in the parent never re-runs its procedure, so
    the edges it asked for would otherwise be lost with the worker."""
    out: list[bytes | None] = []
    for check in _CHECKS[start:stop]:
        result = check.run()
        try:
            out.append(pickle.dumps((result.verdict, result.seconds, result.error)))
        except Exception:  # an unpicklable verdict: the parent runs this check itself
            out.append(None)
    return out, REGISTRY.edges


def _slices(n: int, jobs: int, size: int | None) -> list[tuple[int, int]]:
    # small slices keep both cores busy to the end (a few checks cost far more than the rest)
    size = size or max(1, min(8, n // (8 * jobs) or 1))
    return [(k, min(n, k + size)) for k in range(0, n, size)]


def run_checks(checks: Iterable[Check], jobs: int | None = None, *, slice_size: int | None = None
               ) -> Iterator[Result]:
    """Run ``checks`` on ``jobs`` processes (default: every core); yield their results in order."""
    global _CHECKS
    checks = list(checks)
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if jobs == 1 or len(checks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for check in checks:
            yield check.run()
        return
    _CHECKS = checks
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(checks)),
                               mp_context=multiprocessing.get_context("fork"), initializer=_worker_init)
    try:
        futures = [(start, stop, pool.submit(_run_slice, start, stop))
                   for start, stop in _slices(len(checks), jobs, slice_size)]
        for n, (start, stop, future) in enumerate(futures):
            outcomes, edges = future.result()
            if n == 0:
                pause_point("runner", workers=sorted((getattr(pool, "_processes", None) or {}).keys()))
            for caller, keys in edges.items():
                REGISTRY.edges.setdefault(caller, set()).update(keys)
            for check, payload in zip(checks[start:stop], outcomes):
                if payload is None:
                    yield check.run()
                    continue
                verdict, seconds, error = pickle.loads(payload)
                if verdict is not None and check._verdict is None:
                    check._verdict = verdict  # the parent's memo, for REGISTRY.verdict(key)
                yield Result(check, verdict, seconds, error)
    except BaseException:  # Ctrl-C (KeyboardInterrupt), a closed pipe, …: end the workers now
        _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _CHECKS = []


def _worker_init() -> None:
    """In a worker: ignore SIGINT — Ctrl-C reaches the whole process group, and the parent alone
    handles it (it ends the workers), so no worker prints a traceback; SIGTERM (the parent's way
    of ending it) ends it, whatever handler the parent had when it forked."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    default_sigterm_in_worker()


def _terminate(pool: ProcessPoolExecutor) -> None:
    """End every worker of ``pool`` at once (SIGTERM, then wait for each)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)
