import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest

#: the slow tiers: deselected by the README's plain ``pytest``, run by ``pytest --all-tiers`` (CI)
TIERS = {
    "coq": "compiles exported theorems with coqc and MathComp (about 10 minutes)",
    "browser": "reads the built docs in headless Chromium (needs SYMUAT_DOCS_HTML or a docs build)",
    "long": "Gemma-3-270M and the real models on long texts (about 4.5 GB of memory)",
}


def pytest_addoption(parser):
    parser.addoption("--all-tiers", action="store_true",
                     help="also run the slow tiers: " + "; ".join(f"{k}: {v}" for k, v in TIERS.items()))


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: slow tier, {what}")


def _tier_of(item) -> str | None:
    """A test's tier: ``coq`` if it compiles with Coq (it takes the ``coq_lib`` fixture), ``browser``
    for the docs' browser test, else whatever it is marked with."""
    if "coq_lib" in getattr(item, "fixturenames", ()):
        return "coq"
    if item.path.name == "test_docs_browser.py":
        return "browser"
    if "gemma3" in getattr(item, "fixturenames", ()):  # Gemma-3-270M itself: 4 GB in float64
        return "long"
    return next((name for name in TIERS if item.get_closest_marker(name)), None)


def _all_tiers(config) -> bool:
    return bool(config.getoption("--all-tiers") or config.option.markexpr)


def pytest_collection_modifyitems(config, items):
    keep, slow = [], []
    for item in items:
        tier = _tier_of(item)
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))
        (slow if tier is not None and not _all_tiers(config) else keep).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


def pytest_report_header(config):
    if _all_tiers(config):
        return "symuat: every tier (fast, coq, browser, long)"
    return ("symuat: the fast tier; `pytest --all-tiers` also runs the Coq, browser and long real-model tests "
            "(what CI runs)")


@pytest.fixture(scope="session")
def _coq_library(tmp_path_factory):
    """The Coq library (coq/*.v) compiled once for the session (``lib/``). Needs ``coqc`` with
    MathComp: skips without it, unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set (then a missing
    coqc fails)."""
    import shutil

    from symuat.certify.run import compile_library

    if shutil.which("coqc") is None:
        if os.environ.get("CI") or os.environ.get("SYMUAT_REQUIRE_COQ"):
            pytest.fail("coqc not found (required: CI / SYMUAT_REQUIRE_COQ is set)")
        pytest.skip("coqc not installed")
    out = tmp_path_factory.mktemp("library")
    compile_library(out)
    return out / "lib"


@pytest.fixture(scope="module")
def coq_lib(_coq_library, tmp_path_factory):
    """A folder of the test module's own with the compiled Coq library (``lib/``, a copy of the
    session's :func:`_coq_library`: a compiled file is read by its logical name, not its place) and
    ``theories/`` beside it for the test's exported files."""
    import shutil

    out = tmp_path_factory.mktemp("certify")
    shutil.copytree(_coq_library, out / "lib")
    (out / "theories").mkdir()
    return out


@pytest.fixture(scope="session")
def registry():
    import symuat.claims  # noqa: F401
    from symuat.kernel.registry import REGISTRY

    return REGISTRY


@pytest.fixture(scope="session")
def all_results(registry):
    """Every registered check, run once per test session (on every core, see symuat.kernel.runner)."""
    from symuat.kernel.runner import run_checks

    return {r.check.key: r for r in run_checks(registry.all_checks())}

# the suite runs every check fresh: symuat.cache (symuat report's reuse of an identical earlier
# run) is off unless a test turns it on with its own folder
os.environ.setdefault("SYMUAT_CACHE", "off")
