"""Run checks on several cores; results come back in the order the checks were given.

The checks of the catalogue are independent computations (seeded, no shared mutable state
between procedures) except that a check may rest on another's verdict through
``REGISTRY.verdict(key)``, which computes that verdict once *per process* and memoises it on the
:class:`~symuat.kernel.registry.Check`. :func:`run_checks` therefore

* forks worker processes (the registry, with every procedure, is inherited — nothing is pickled
  on the way in); a check another one rests on is computed at most once in each worker;
* cuts the checks into short consecutive runs (*slices*, :func:`_slices`) and the slices into one
  contiguous *lane* per worker (:func:`_lanes`): a worker works down its own lane, and when it is
  empty takes the last slice of the lane with the most left (:func:`_take`). Neighbouring checks
  (the readings of one claim, a claim and the check it rests on) mostly share a worker, so a
  verdict another check asks for is rarely computed twice and the caches (SymPy's, the kernel's)
  are warm; the stealing keeps both cores busy to the end;
* yields each :class:`~symuat.kernel.registry.Result` as soon as it *and every check before it*
  are done — the output order is the input order whatever the number of jobs;
* brings every verdict back into the parent and memoises it there too, so a later
  ``REGISTRY.verdict(key)`` in the parent reuses it;
* on an interruption (Ctrl-C, or SIGTERM turned into one by :mod:`symuat.interrupt`) ends its
  workers at once and re-raises (the command line turns it into one line and exit status 130 or
  143); a test stops it at the pause point ``runner`` (after the first results came back, the
  workers running) to signal it there, or a worker at ``runner-claim`` (a slice just received,
  not yet run) to kill it there;
* when a worker ends before reporting every slice it was given (killed, say, by SIGKILL or the
  out-of-memory killer), raises :class:`~symuat.errors.WorkerLostError` naming the worker, how it
  ended and the checks it took with it (the command line: one line, exit status 1) — it does not
  run them again: a worker killed from outside is an event the user should hear of, and a check
  that kills its process would kill the next one too. Every result yielded before is a verdict
  its worker reported; no verdict is guessed for the lost checks;
* falls back to running a check in the parent when its verdict cannot be sent back (not
  picklable), and to running everything in order in the parent when ``jobs`` is 1 or the platform
  has no ``fork``.

**Why no process can hang another, whichever is killed at whatever instant.** Nothing is shared
between processes but pipes, and no lock at all: the *parent alone* keeps the lanes
(:func:`_take` is called only there) and hands each worker its slices over the worker's own task
pipe; the worker answers over its own result pipe. Each pipe has exactly one reader and one
writer process — every other copy of its ends is closed right after the fork (:func:`_work`
closes the parent's ends it inherited; the parent closes the worker's ends). So

* a worker waits only in ``recv`` on its task pipe, or in ``send`` on its result pipe; the only
  other process holding that pipe is the parent. If the parent dies, the pipe reports end-of-file
  or a broken pipe and the worker exits, and the kernel sends it SIGTERM anyway
  (``PR_SET_PDEATHSIG``, :func:`~symuat.interrupt.default_sigterm_in_worker`);
* the parent waits only in :func:`multiprocessing.connection.wait` on every worker's result pipe
  *and process sentinel*, then in ``recv`` on a pipe that is ready. A worker that dies, at any
  instant, closes its write end — the only one — so the parent's ``recv`` ends (a message cut
  short is end-of-file, not a wait for bytes no one can send) and its sentinel is ready; its task
  pipe then fails the parent's next ``send`` with a broken pipe. Each of these is the lost-worker
  path, never a wait;
* a SIGTERM to the whole process group (``timeout``, a closed terminal) kills the workers as it
  reaches the parent: the parent's handler (Terminated, exit 143) runs at its next bytecode, before
  it has read the dead worker's pipe or, at the latest, while it ends the other workers — the run
  says it was terminated, not that it lost a worker;
* on an interruption the parent sends SIGTERM to each worker (the default action there: it
  cannot be caught between two bytecodes, or held up by anything the worker holds), waits at most
  5 s for each, then SIGKILL. Each worker starts with SIGINT and SIGTERM blocked (it is forked
  inside :func:`~symuat.interrupt.deferred`) until it has put the worker's handlers in place,
  so no signal reaches it while it still has the parent's.

Contrast the lane runner this replaces (0c80493): a ``multiprocessing`` lock shared by the
workers guarded the lanes, and ``ProcessPoolExecutor`` workers share the write end of one result
queue — a process killed holding either leaves the others waiting for ever (CI's 600 s hang).

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
import traceback
from multiprocessing.connection import wait
from typing import Iterable, Iterator

from symuat.errors import WorkerLostError
from symuat.interrupt import default_sigterm_in_worker, deferred, pause_point
from symuat.kernel.registry import REGISTRY, Check, Result

#: The checks being run, and their slices, set in the parent just before the workers fork (they
#: read them, by index).
_CHECKS: list[Check] = []
_SLICES: list[tuple[int, int]] = []
#: how many slices a worker holds at once: the one it runs and the next, already in its pipe, so
#: it never waits for the parent (busy handing a result on) between two slices
_AHEAD = 2


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


def _lanes(m: int, jobs: int) -> list[tuple[int, int]]:
    """``m`` slices cut into ``jobs`` contiguous lanes, as equal in count as can be.

    >>> _lanes(5, 2)
    [(0, 2), (2, 5)]
    """
    bounds = [m * k // jobs for k in range(jobs + 1)]
    return list(zip(bounds, bounds[1:]))


def _take(lane: int, front: list[int], back: list[int]) -> int | None:
    """The next slice for the worker of ``lane``: the first left in its own lane, else the last of
    the lane with the most left (None when every slice is taken). ``front``/``back`` are each
    lane's next and end slice; only the parent reads or changes them.

    >>> front, back = [0, 2], [2, 5]
    >>> [_take(0, front, back) for _ in range(6)]
    [0, 1, 4, 3, 2, None]
    """
    if front[lane] < back[lane]:
        front[lane] += 1
        return front[lane] - 1
    left = [back[k] - front[k] for k in range(len(front))]
    j = max(range(len(left)), key=left.__getitem__)
    if left[j] <= 0:
        return None
    back[j] -= 1
    return back[j]


class _Worker:
    """The parent's handle on one worker: its process, its two pipes' parent ends, its lane and
    the slices it was given and has not reported yet (in the order given)."""

    def __init__(self, context, lane: int, inherited: list, keys):
        self.lane, self.keys = lane, keys  # keys(i): the keys of the checks of slice i
        self.pending: list[int] = []
        tasks_in, self.tasks = context.Pipe(duplex=False)  # parent -> worker
        self.results, results_out = context.Pipe(duplex=False)  # worker -> parent
        # the worker closes every parent end it inherits: the other workers' and its own
        self._ends = (tasks_in, results_out)
        self.process = context.Process(target=_work, args=(tasks_in, results_out, [*inherited, self.tasks, self.results]),
                                       name=f"symuat-runner-{lane}")

    def start(self) -> None:
        """Fork the worker (with SIGINT/SIGTERM blocked: see :func:`_work`) and close the worker's
        ends here: the parent keeps only its own, so the worker's death is end-of-file to it."""
        try:
            with deferred():
                self.process.start()
        finally:
            for conn in self._ends:
                conn.close()

    def give(self, index: int | None) -> None:
        """Send slice ``index`` (None: stop); a worker that is gone raises :class:`_Gone`."""
        try:
            self.tasks.send(index)
        except (OSError, EOFError) as exc:  # broken pipe: the worker's end is closed, it died
            raise _Gone(self) from exc
        if index is not None:
            self.pending.append(index)

    def close(self) -> None:
        for conn in (self.tasks, self.results, *self._ends):
            conn.close()


class _Gone(Exception):
    """A worker's pipe failed: it ended (the parent turns this into a WorkerLostError)."""

    def __init__(self, worker: _Worker):
        super().__init__(worker.process.pid)
        self.worker = worker


def _work(tasks, results, inherited) -> None:
    """A worker's life: run each slice the parent sends, send back its outcomes, until told to stop
    (None) or the parent is gone. Exits with ``os._exit`` — never through the parent's clean-ups
    or by flushing the output buffers it inherited."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group: the parent handles it
    default_sigterm_in_worker()  # SIGTERM (the parent's way of ending it) ends it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    for conn in inherited:
        conn.close()
    code = 0
    try:
        while (index := tasks.recv()) is not None:
            pause_point("runner-claim", slice=index)
            results.send((index, *_run_slice(*_SLICES[index])))
    except (EOFError, OSError):  # the parent is gone (or closed the pipe): nothing to report to
        code = 1
    except BaseException:  # a bug of the runner: say where; the parent reports the lost worker
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def run_checks(checks: Iterable[Check], jobs: int | None = None, *, slice_size: int | None = None
               ) -> Iterator[Result]:
    """Run ``checks`` on ``jobs`` processes (default: every core); yield their results in order."""
    global _CHECKS, _SLICES
    checks = list(checks)
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if jobs == 1 or len(checks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for check in checks:
            yield check.run()
        return
    context = multiprocessing.get_context("fork")
    slices = _slices(len(checks), jobs, slice_size)
    lanes = _lanes(len(slices), min(jobs, len(slices)))
    front, back = [lo for lo, _ in lanes], [hi for _, hi in lanes]
    _CHECKS, _SLICES = checks, slices
    workers: list[_Worker] = []
    try:
        for lane in range(len(lanes)):  # known (to be ended) before it exists
            workers.append(_Worker(context, lane, [c for w in workers for c in (w.tasks, w.results)],
                                   lambda i: [c.key for c in checks[slice(*slices[i])]]))
            workers[-1].start()
        busy = list(workers)
        for worker in workers:
            _top_up(worker, front, back, busy)
        done: dict[int, list[bytes | None]] = {}
        following, first = 0, True  # the next slice to yield
        while following < len(slices):
            if following not in done:
                _receive(busy, front, back, done)
                if first:
                    first = False
                    pause_point("runner", workers=[w.process.pid for w in workers])
                continue
            start, stop = slices[following]
            for check, payload in zip(checks[start:stop], done.pop(following)):
                if payload is None:
                    yield check.run()
                    continue
                verdict, seconds, error = pickle.loads(payload)
                if verdict is not None and check._verdict is None:
                    check._verdict = verdict  # the parent's memo, for REGISTRY.verdict(key)
                yield Result(check, verdict, seconds, error)
            following += 1
    except BaseException:  # Ctrl-C (KeyboardInterrupt), a lost worker, a closed pipe, …: end the workers now
        _end(workers, signal.SIGTERM)
        raise
    finally:
        for worker in workers:
            worker.close()  # a worker still waiting for a slice reads end-of-file and exits
        _end(workers, None)
        _CHECKS, _SLICES = [], []


def _top_up(worker: _Worker, front, back, busy: list[_Worker]) -> None:
    """Give ``worker`` slices (:func:`_take`) until it holds :data:`_AHEAD`; none left and none
    held: tell it to stop, and it is no longer ``busy``."""
    try:
        while len(worker.pending) < _AHEAD and (index := _take(worker.lane, front, back)) is not None:
            worker.give(index)
        if not worker.pending:
            busy.remove(worker)
            worker.give(None)
    except _Gone:
        if worker.pending:
            raise _lost(worker) from None


def _receive(busy: list[_Worker], front, back, done: dict) -> None:
    """Wait for the next outcome of any busy worker (or its end); file it in ``done`` and top the
    worker up. A busy worker that ends raises :class:`~symuat.errors.WorkerLostError`."""
    if not busy:  # every slice was handed out and not every one came back: cannot happen
        raise WorkerLostError("the runner has no worker left and results missing")  # pragma: no cover
    ready = set(wait([w.results for w in busy] + [w.process.sentinel for w in busy]))
    for worker in list(busy):
        if worker.results not in ready and worker.process.sentinel not in ready:
            continue
        try:
            index, outcomes, edges = worker.results.recv()
        except (EOFError, OSError):  # its write end closed: it died, perhaps mid-message
            raise _lost(worker) from None
        worker.pending.remove(index)
        for caller, keys in edges.items():
            REGISTRY.edges.setdefault(caller, set()).update(keys)
        done[index] = outcomes
        _top_up(worker, front, back, busy)


def _lost(worker: _Worker) -> WorkerLostError:
    """The error for a worker that ended holding slices: who, how, and which checks went with it."""
    worker.process.join(timeout=5)  # reaped: its exit code says how it ended
    code = worker.process.exitcode
    if code is None:
        how = "closed its pipe"
    elif code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:  # pragma: no cover - a signal Python has no name for
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with status {code}"
    keys = [key for i in sorted(worker.pending) for key in worker.keys(i)]
    which = keys[0] if len(keys) == 1 else f"{keys[0]} … {keys[-1]}"
    return WorkerLostError(f"worker process {worker.process.pid} {how} before reporting {len(keys)} "
                           f"check{'s' if len(keys) != 1 else ''} ({which}); no verdict is reported for them")


def _end(workers: list[_Worker], signum: int | None) -> None:
    """End every worker: send ``signum`` (None: none, they were told to stop), wait at most 5 s for
    each, then SIGKILL what is left."""
    processes = [w.process for w in workers if w.process.pid is not None]
    if signum is not None:
        for proc in processes:
            if proc.exitcode is None:
                try:
                    os.kill(proc.pid, signum)
                except ProcessLookupError:  # pragma: no cover - already gone
                    pass
    for proc in processes:
        proc.join(timeout=5)
        if proc.exitcode is None:  # pragma: no cover - a worker that would not end
            proc.kill()
            proc.join()
