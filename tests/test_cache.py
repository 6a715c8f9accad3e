"""symuat.cache can only give what a fresh run gives: its key covers every source file, the
library versions and the checks asked for; a hit reproduces the fresh report exactly."""

from __future__ import annotations

import shutil

import pytest

from symuat import cache, cli
from symuat.kernel.registry import Check, Registry, Result
from symuat.kernel.decide import informal


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMUAT_CACHE", "on")
    monkeypatch.setenv("SYMUAT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _checks():
    return [Check(f"X{k}", None, f"x_{k}=x_{k}", lambda k=k: informal(f"item {k}")) for k in range(3)]


def test_key_covers_every_source_file_the_versions_and_the_checks(tmp_path):
    root = tmp_path / "symuat"
    shutil.copytree(cache.PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    versions = cache.dependency_versions()
    checks = _checks()
    base = cache.key(checks, root, versions)
    assert cache.key(checks, root, versions) == base
    leaf = root / "kernel" / "status.py"
    leaf.write_text(leaf.read_text() + "\n# an edit\n")
    assert cache.key(checks, root, versions) != base
    leaf.write_text(leaf.read_text().replace("\n# an edit\n", ""))
    assert cache.key(checks, root, versions) == base
    (root / "claims" / "new_claims.py").write_text("x = 1\n")  # a new module is a new key too
    assert cache.key(checks, root, versions) != base
    (root / "claims" / "new_claims.py").unlink()
    assert cache.key(checks, root, {**versions, "sympy": "0.0"}) != base
    assert cache.key(checks[:2], root, versions) != base
    other = _checks()
    other[0].statement = "x_0=y"
    assert cache.key(other, root, versions) != base


def test_a_hit_gives_the_fresh_results_and_a_stale_entry_is_never_read(cache_dir, monkeypatch):
    checks = _checks()
    results = [c.run() for c in checks]
    assert cache.store(results, {"X1": {"X0"}}) is not None
    fresh = _checks()
    hit = cache.load(fresh)
    assert hit is not None
    got, edges, _ = hit
    assert [r.verdict.detail for r in got] == ["item 0", "item 1", "item 2"] and edges == {"X1": {"X0"}}
    # any source change: the entry is not found
    monkeypatch.setattr(cache, "source_digest", lambda root=cache.PACKAGE: "edited")
    assert cache.load(_checks()) is None


def test_a_crash_is_never_stored(cache_dir):
    checks = _checks()
    results = [c.run() for c in checks]
    results[1] = Result(checks[1], None, 0.0, "ZeroDivisionError: boom")
    assert cache.store(results) is None
    assert cache.load(checks) is None


def test_report_from_the_cache_is_the_fresh_report(cache_dir, capsys):
    assert cli.main(["report", "P5", "H4", "--format", "json"]) == 0  # fresh, stored
    first = capsys.readouterr().out
    assert list(cache_dir.glob("results-*.pickle"))
    assert cli.main(["report", "P5", "H4", "--format", "json"]) == 0  # from the cache
    second = capsys.readouterr().out
    assert cli.main(["report", "P5", "H4", "--format", "json", "--fresh"]) == 0
    third = capsys.readouterr().out
    assert first == second == third


def test_off_means_off(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMUAT_CACHE", "off")
    monkeypatch.setenv("SYMUAT_CACHE_DIR", str(tmp_path / "c"))
    assert cli.main(["report", "P1", "--format", "json"]) == 0
    assert not (tmp_path / "c").exists()


def test_an_unreadable_entry_is_a_miss(cache_dir):
    checks = _checks()
    cache.store([c.run() for c in checks])
    for entry in cache_dir.glob("results-*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert cache.load(checks) is None
    assert Registry  # the registry type is importable beside the cache (no cycle)


def test_a_source_edited_during_the_run_is_not_stored_and_the_next_lookup_misses(cache_dir, monkeypatch):
    """The key is taken before the checks run; when the sources give another key at store time
    (a ``git pull`` during ``symuat report``), the old code's verdicts are not filed under it.
    Main computed the key after the run, so the next report replayed the old verdicts."""
    from symuat.render import report

    real, runs = report.run_with_progress, []

    def run_then_edit(checks, **kw):
        runs.append(len(checks))
        out = real(checks, **kw)
        monkeypatch.setattr(cache, "source_digest", lambda root=cache.PACKAGE: "edited during the run")
        return out

    monkeypatch.setattr(report, "run_with_progress", run_then_edit)
    assert cli.main(["report", "P1", "--format", "json"]) == 0
    assert not list(cache_dir.glob("results-*.pickle"))  # nothing stored
    assert cli.main(["report", "P1", "--format", "json"]) == 0
    assert len(runs) == 2  # the next lookup missed: the checks ran again (and this time were stored)
    assert list(cache_dir.glob("results-*.pickle"))


def test_an_entry_takes_its_key_once_before_the_run(tmp_path):
    root = tmp_path / "symuat"
    shutil.copytree(cache.PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    checks = _checks()
    entry = cache.Entry(checks, root, directory=tmp_path / "c")
    results = [c.run() for c in checks]
    leaf = root / "kernel" / "status.py"
    leaf.write_text(leaf.read_text() + "\n# pulled during the run\n")
    assert entry.store(results) is None
    assert cache.Entry(_checks(), root, directory=tmp_path / "c").load() is None
    leaf.write_text(leaf.read_text().replace("\n# pulled during the run\n", ""))
    assert entry.store(results) is not None  # unchanged sources: stored under the key taken before
    assert cache.Entry(_checks(), root, directory=tmp_path / "c").load() is not None


def test_the_key_covers_the_blas_configuration_the_docstring_promises(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    versions = cache.dependency_versions()
    assert {"blas:blas", "blas:lapack", "blas:simd", "blas:OPENBLAS_NUM_THREADS"} <= set(versions)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    assert cache.key(_checks(), versions=cache.dependency_versions()) != cache.key(_checks(), versions=versions)


def test_a_source_edited_while_the_catalogue_is_imported_is_not_stored(cache_dir, monkeypatch):
    """The sources are read when ``symuat report`` starts, before the code that will run is
    imported: an edit during the import is an edit during the run."""
    from symuat.render import report

    digest = {"now": "as the run began"}
    monkeypatch.setattr(cache, "source_digest", lambda root=cache.PACKAGE: digest["now"])
    real_registry, real_run, runs = cli._registry, report.run_with_progress, []

    def registry_then_edit():
        out = real_registry()
        digest["now"] = "edited during the import"
        return out

    def counted(checks, **kw):
        runs.append(1)
        return real_run(checks, **kw)

    monkeypatch.setattr(cli, "_registry", registry_then_edit)
    monkeypatch.setattr(report, "run_with_progress", counted)
    assert cli.main(["report", "P1", "--format", "json"]) == 0
    assert not list(cache_dir.glob("results-*.pickle"))
    assert cli.main(["report", "P1", "--format", "json"]) == 0  # the edited sources throughout: stored
    assert cli.main(["report", "P1", "--format", "json"]) == 0  # and found
    assert len(runs) == 2
