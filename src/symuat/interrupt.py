"""SIGTERM stops a command as Ctrl-C does; a test can stop a run at a known point.

``kill PID`` (SIGTERM) must leave what Ctrl-C (SIGINT) leaves: no worker process, no temporary
folder, one line on stderr. Python's default SIGTERM ends the process at once, skipping every
``finally`` and ``except BaseException`` that ends workers and removes temporary folders; so the
command line (:func:`sigterm_raises`) turns SIGTERM into :class:`Terminated`, a
``KeyboardInterrupt``, which every such clean-up already handles, and exits with status 143
(128 + SIGTERM) instead of 130. A worker process puts the default action back
(:func:`default_sigterm_in_worker`): its parent ends it with SIGTERM.

A test that signals a run must signal it *while it runs*, whatever the machine's load: with
``SYMUAT_TEST_PAUSE=POINT=PATH`` in the environment, :func:`pause_point` ``POINT`` writes ``PATH``
(a JSON object: the process id and what the point passes, e.g. the worker ids) and then waits
for a signal; the test waits for ``PATH`` before signalling. Without the variable a pause point
does nothing.

>>> with sigterm_raises():
...     try:
...         os.kill(os.getpid(), signal.SIGTERM)
...         time.sleep(5)  # the signal interrupts it
...     except Terminated:
...         print("terminated")
terminated
>>> pause_point("nowhere", workers=[1])  # no SYMUAT_TEST_PAUSE: returns at once
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time

#: exit status of a command ended by SIGTERM (128 + 15), as a shell reports it
EXIT_TERMINATED = 128 + signal.SIGTERM
#: exit status of a command ended by Ctrl-C (128 + 2)
EXIT_INTERRUPTED = 128 + signal.SIGINT


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwinds like Ctrl-C (workers ended, temporary files removed)."""


def _raise_terminated(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not interrupt the clean-up
    raise Terminated()


@contextlib.contextmanager
def sigterm_raises():
    """Within the block, SIGTERM raises :class:`Terminated` (in the main thread; elsewhere, where
    no handler can be set, the block runs unchanged). The previous handler is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def deferred():
    """Within the block, SIGINT and SIGTERM wait (they are delivered when it ends): for a step such
    as creating a temporary folder and remembering its name, which a signal must not split."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def default_sigterm_in_worker() -> None:
    """In a forked worker: SIGTERM ends the process (the parent's handler is inherited by fork),
    and on Linux the worker is sent SIGTERM when its parent dies — even of SIGKILL, which no
    handler sees — so a worker never outlives its run."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before prctl: no signal will come
        os._exit(1)


def pause_point(point: str, **info) -> None:
    """For tests (``SYMUAT_TEST_PAUSE=POINT=PATH``): at ``point``, write ``PATH`` and wait for a
    signal (at most 10 minutes, then go on). Otherwise do nothing."""
    wanted, _, path = os.environ.get("SYMUAT_TEST_PAUSE", "").partition("=")
    if wanted != point or not path:
        return
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "point": point, **info}, f)
    os.replace(tmp, path)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(0.05)
