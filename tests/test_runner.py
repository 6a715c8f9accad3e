"""symuat.kernel.runner: the same verdicts, in the same order, on one process or several."""

from dataclasses import replace

from symuat.kernel.runner import run_checks


def _fresh(registry, ids):
    # copies without the memoised verdict, so each run computes them anew
    return [replace(c, _verdict=None) for c in registry.select(ids)]


def _records(results):
    out = []
    for r in results:
        d = r.as_dict()
        d.pop("seconds")
        out.append(d)
    return out


def test_parallel_verdicts_equal_serial(registry):
    ids = ["M3", "T3", "D3"]  # T3 rests on M3's verdicts through REGISTRY.verdict
    serial = _records(run_checks(_fresh(registry, ids), jobs=1))
    parallel = _records(run_checks(_fresh(registry, ids), jobs=2, slice_size=1))
    assert [d["key"] for d in parallel] == [c.key for c in registry.select(ids)]
    assert parallel == serial


def test_parallel_results_memoised_in_parent(registry):
    checks = _fresh(registry, ["M1"])
    results = list(run_checks(checks, jobs=2, slice_size=1))
    assert all(c._verdict is r.verdict for c, r in zip(checks, results))


def test_a_crash_is_a_result_not_an_exception():
    from symuat.kernel.decide import informal
    from symuat.kernel.registry import Check

    def boom():
        raise RuntimeError("no")

    checks = [Check("A", None, "-", lambda: informal("a")), Check("B", None, "-", boom)]
    results = list(run_checks(checks, jobs=2, slice_size=1))
    assert [r.check.key for r in results] == ["A", "B"]
    assert results[1].verdict is None and results[1].error == "RuntimeError: no"


def test_edges_recorded_in_workers_reach_the_parent(registry):
    """A check whose procedure asks for another check's verdict records the edge in the worker;
    the parent's REGISTRY.edges (the docs' dependency graph) must have it too."""
    from symuat.kernel.registry import REGISTRY

    saved = {k: set(v) for k, v in REGISTRY.edges.items()}
    REGISTRY.edges.clear()
    try:
        checks = _fresh(registry, ["D3"])
        list(run_checks(checks, jobs=2, slice_size=1))
        callers = {k.split(".")[0].split("[")[0] for k in REGISTRY.edges}
        assert "D3" in callers, REGISTRY.edges
    finally:
        REGISTRY.edges.clear()
        REGISTRY.edges.update(saved)
