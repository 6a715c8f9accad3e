"""Signal a ``symuat`` command while it runs, whatever the machine's load.

The command is started with ``SYMUAT_TEST_PAUSE=POINT=PATH`` (:mod:`symuat.interrupt`): at the
pause point it writes ``PATH`` (its pid and, for the runner, its workers' pids) and waits; the
test waits for ``PATH`` — a condition, not a duration — and only then signals. So the signal
always arrives during the run (main's test sent it after a first line of output, which a piped,
block-buffered stdout may deliver only when the run has finished: exit 0 instead of 130).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"  # the package's parent: `python -m symuat.cli` runs this checkout


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def ended(pids, within: float = 30.0) -> list[int]:
    """The ``pids`` still running after waiting up to ``within`` seconds for them to end (a
    parent-death signal reaches an orphan asynchronously: on a loaded machine it takes a moment)."""
    import time

    deadline = time.monotonic() + within
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _sigint_as_at_a_terminal() -> None:
    """In the command's process before it starts: SIGINT's default action, as a terminal's Ctrl-C
    finds it. A shell starts a background job (``pytest … &``, a CI step run from a script)
    with SIGINT *ignored*, and Python then keeps it ignored: the command would sleep through the
    test's SIGINT at its pause point and, 10 minutes later, finish with exit 0."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def signal_at(args: list[str], point: str, signum: int, tmp_path: Path, env: dict | None = None,
              wait: float = 600, before=None, group: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``python -m symuat.cli *args`` until it reaches ``point``, call ``before(info)`` (what
    the pause point wrote), send it ``signum`` (with ``group``: to its whole process group, as
    ``timeout`` or a terminal's hang-up does — the command runs in a session of its own), and return
    its completed process and ``info``."""
    marker = tmp_path / f"paused-{point}.json"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "SYMUAT_CACHE": "off",
           "SYMUAT_TEST_PAUSE": f"{point}={marker}", **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "symuat.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=group,
                            preexec_fn=_sigint_as_at_a_terminal)
    try:
        deadline = time.monotonic() + wait
        while not marker.exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"ended (exit {proc.returncode}) before the pause point {point}: {err[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the pause point {point} was not reached in {wait} s")
            time.sleep(0.05)
        info = json.loads(marker.read_text())
        if before is not None:
            before(info)
        (os.killpg if group else os.kill)(proc.pid, signum)
        out, err = proc.communicate(timeout=wait)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), info


def workers_run(info: dict) -> None:
    """Before the signal: the run's pool workers exist and run (so "none is left after" can fail)."""
    assert info["workers"] and all(alive(w) for w in info["workers"]), info
