"""The docs' notebook page (docs/notebook.rst): every ``symuat-run`` block executes, in page order
in one namespace, and each of its assertions (the sums add up within 1e-12) holds. The docs build
runs the same blocks (docs/_ext/symuat_run.py); this runs them without Sphinx."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import symuat_run  # noqa: E402

PAGE = ROOT / "docs" / "notebook.rst"


def test_the_page_has_blocks_and_each_asserts_its_sums():
    found = symuat_run.blocks(PAGE.read_text(encoding="utf-8"))
    assert len(found) >= 4
    assert all("assert" in code for _, code, _ in found)


@pytest.mark.long
def test_every_gallery_block_runs_and_its_assertions_hold():
    pytest.importorskip("pandas")
    found = symuat_run.blocks(PAGE.read_text(encoding="utf-8"))
    gone = sorted({n for needs, _, _ in found for n in symuat_run.missing(needs)})
    if gone:
        if os.environ.get("SYMUAT_REQUIRE_MODEL") == "1":
            pytest.fail(f"{', '.join(gone)} required here (SYMUAT_REQUIRE_MODEL=1): symuat model install")
        pytest.skip(f"{', '.join(gone)} not installed")
    printed = symuat_run.run_page(PAGE.read_text(encoding="utf-8"), PAGE.name)  # as the docs build runs them
    assert len(printed) == len(found) and all(printed)


def test_a_failing_block_is_an_error_naming_it():
    with pytest.raises(AssertionError):
        symuat_run.run("assert 1 + 1 == 3\n", {}, "block 0")


def test_a_block_in_its_own_process_sees_none_of_the_page_and_fails_naming_itself():
    text = ".. symuat-run::\n   :process: own\n\n   print(1 + 1)\n"
    assert symuat_run.blocks(text) == [([], "print(1 + 1)\n", True)]
    assert symuat_run.run_alone("print(1 + 1)\n", "block 0") == "2\n"
    with pytest.raises(RuntimeError, match="block 3.*NameError"):
        symuat_run.run_alone("print(m)\n", "block 3")


def test_page_blocks_share_one_worker_that_sees_none_of_the_main_namespace_and_ends_after_the_last():
    text = "".join(f".. symuat-run::\n{opts}\n   {code}\n\n" for opts, code in (
        ("   :process: page\n", "import os; m = 41; print(os.getpid())"), ("", "m = 0; print(m)"),
        ("   :process: page\n", "m += 1; print(m, os.getpid())")))
    assert [mode for _, _, mode in symuat_run.blocks(text)] == ["page", False, "page"]
    first, main, last = symuat_run.run_page(text, "page.rst")
    pid = first.strip()
    assert main == "0\n" and last == f"42 {pid}\n" and pid != str(os.getpid())  # one worker, its own names
    assert not Path(f"/proc/{pid}").exists()  # ended (and reaped) after the last page block


def test_a_failing_page_block_names_itself_and_the_worker_is_ended():
    worker = symuat_run.PageWorker()
    assert worker.run("x = 2\n", "block 0") == ""
    with pytest.raises(RuntimeError, match="block 1 .page worker.: NameError"):
        worker.run("print(y)\n", "block 1")
    assert worker.run("print(x)\n", "block 2") == "2\n"  # the namespace survives a failing block
    proc = worker.proc
    worker.close()
    assert proc.poll() == 0 and worker.proc is None
