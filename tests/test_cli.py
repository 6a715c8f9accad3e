import json
import subprocess
import sys
from pathlib import Path

import pytest

from symuat import cli
from symuat.kernel.registry import Registry

ROOT = Path(__file__).resolve().parents[1]


def test_prove_json(capsys):
    assert cli.main(["prove", "P1", "P5.f", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data][:1] == ["P1"]
    assert all({"id", "reading", "status", "seconds"} <= set(d) for d in data)
    assert data[0]["reading"] is None
    f = {d["key"]: d for d in data if d["id"] == "P5.f"}
    assert f["P5.f[C-col,LR,square]"]["counterexample"]["sizes"] == {"n": 2}
    assert "corrected" in f["P5.f[C-col,LR,square]"]


def test_prove_table_and_latex(capsys):
    assert cli.main(["prove", "M2"]) == 0
    out = capsys.readouterr().out
    assert "M2[zero-frac,row]" in out and "refuted" in out and "4 checks" in out
    assert cli.main(["prove", "P1", "--format", "latex"]) == 0
    assert r"\begin{longtable}" in capsys.readouterr().out


def test_unknown_id_is_a_clear_error(capsys):
    assert cli.main(["prove", "P9"]) == 2
    assert "unknown claim ID 'P9'" in capsys.readouterr().err
    assert cli.main(["prove"]) == 2


def test_show_and_list(capsys):
    assert cli.main(["list"]) == 0
    assert "P5" in capsys.readouterr().out
    assert cli.main(["show", "M4[row,col]"]) == 0
    out = capsys.readouterr().out
    assert "counterexample" in out and "corrected" in out


def test_a_crashing_check_makes_the_exit_status_nonzero(monkeypatch, capsys):
    import symuat.kernel.registry as reg

    fake = Registry()
    claim = fake.claim("X1", "a broken check", where="-", statement="-", group="-")
    claim.check(None, None, "1=1", lambda: 1 / 0)
    monkeypatch.setattr(reg, "REGISTRY", fake)
    assert cli.main(["prove", "X1"]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "symuat.cli", "prove", "P1", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT / "src", check=True)
    assert json.loads(out.stdout)[0]["status"] == "proved"


@pytest.mark.parametrize("script", ["diamond.py", "linear.py", "attention.py", "lemmas.py"])
def test_proof_scripts_run(script):
    out = subprocess.run([sys.executable, str(ROOT / "proofs" / script)], capture_output=True,
                         text=True, check=True)
    assert "checks:" in out.stdout.splitlines()[-1]


# -- SIGTERM is Ctrl-C with exit 143 ------------------------------------------------------------------


@pytest.mark.parametrize("args", [["prove", "--all", "--jobs", "2"], ["report", "--jobs", "2", "--fresh"]],
                         ids=["prove-all", "report-jobs-2"])
def test_sigterm_during_a_run_on_two_jobs_exits_143_with_one_line_and_ends_the_workers(args, tmp_path):
    """Main died of the default SIGTERM at once: no line, and both pool workers left running."""
    import signal

    from _signals import alive, signal_at, workers_run as _workers_run

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    done, info = signal_at(args, "runner", signal.SIGTERM, tmp_path, before=_workers_run)
    assert done.returncode == 143, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == ["symuat: terminated"], done.stderr[-2000:]
    assert len(info["workers"]) == 2
    assert not [w for w in info["workers"] if alive(w)]


def test_a_run_killed_with_sigkill_leaves_no_worker(tmp_path):
    """No handler sees SIGKILL: the workers are told by the kernel (PR_SET_PDEATHSIG) and end; on
    main they waited for work forever, holding the run's stdout open."""
    import signal

    from _signals import ended, signal_at, workers_run as _workers_run

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    done, info = signal_at(["prove", "--all", "--jobs", "2"], "runner", signal.SIGKILL, tmp_path, before=_workers_run)
    assert done.returncode == -signal.SIGKILL
    assert not ended(info["workers"])


def test_a_worker_killed_with_sigkill_in_the_middle_of_a_claim_ends_the_run_with_one_line(tmp_path):
    """A worker is SIGKILLed with slices claimed and not reported (paused at ``runner-claim``, just
    after receiving one): the run neither hangs nor prints a verdict for them — exit 1, one line
    naming the process and the signal, and the other worker ended too."""
    import os
    import signal

    from _signals import ended, signal_at

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    workers = []

    def kill_the_worker(info):
        parent = Path(f"/proc/{info['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if stat.read_text().rsplit(")", 1)[1].split()[1] == parent:
                    workers.append(int(stat.parent.name))
            except (OSError, IndexError):  # a process that ended meanwhile
                pass
        os.kill(info["pid"], signal.SIGKILL)

    # the run itself is sent signal 0 (nothing): the worker's SIGKILL is the only signal
    done, info = signal_at(["prove", "--all", "--jobs", "2", "--format", "json"], "runner-claim", 0, tmp_path,
                           before=kill_the_worker)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr[-2000:]
    assert done.stderr.startswith(f"symuat: worker process {info['pid']} was killed by SIGKILL before reporting")
    assert done.stdout == ""  # no record at all, so none for a lost check
    assert len(workers) == 2 and info["pid"] in workers
    assert not ended(workers)


def test_sigterm_to_the_process_group_with_the_workers_mid_claim_exits_143_not_as_a_lost_worker(tmp_path):
    """``timeout`` sends SIGTERM to the whole group: the workers die of it as the run gets it. The
    run must say it was terminated (143), not that it lost a worker (1)."""
    import signal

    from _signals import alive, signal_at

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    done, info = signal_at(["prove", "--all", "--jobs", "2"], "runner-claim", signal.SIGTERM, tmp_path, group=True)
    assert done.returncode == 143, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == ["symuat: terminated"], done.stderr[-2000:]
    assert not alive(info["pid"])
