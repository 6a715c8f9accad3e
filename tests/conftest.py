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


def _tier_library():
    """The certify tier's compiled library (``$SYMUAT_CERTIFY_DIR/lib``, default
    ``build/certify/lib``) when its record was written for these sources and this toolchain (the
    record's fingerprint covers coq/*.v, symuat's sources, coqc and MathComp) and each of its files
    ``X.v`` is byte for byte ``coq/X.v`` with its ``X.vo`` beside it; else None. CI runs ``symuat
    certify`` just before the Coq tier: its library is the one the tests would compile."""
    import json

    from symuat.certify.record import COQ_DIR, fingerprint, out_dir
    from symuat.certify.run import LIBRARY

    lib = out_dir() / "lib"
    try:
        if json.loads((lib.parent / "record.json").read_text()).get("fingerprint") != fingerprint():
            return None
        if all((lib / n).read_bytes() == (COQ_DIR / n).read_bytes() and (lib / n).with_suffix(".vo").is_file()
               for n in LIBRARY):
            return lib
    except (OSError, ValueError):
        pass
    return None


@pytest.fixture(scope="session")
def _coq_library(tmp_path_factory):
    """The Coq library (coq/*.v) compiled once for the session (``lib/``), or the certify tier's
    own compiled library when it is of these very files (:func:`_tier_library`: CI compiled it
    minutes before). Needs ``coqc`` with MathComp: skips without it, unless ``CI`` or
    ``SYMUAT_REQUIRE_COQ`` is set (then a missing coqc fails)."""
    import shutil

    from symuat.certify.run import compile_library

    if shutil.which("coqc") is None:
        if os.environ.get("CI") or os.environ.get("SYMUAT_REQUIRE_COQ"):
            pytest.fail("coqc not found (required: CI / SYMUAT_REQUIRE_COQ is set)")
        pytest.skip("coqc not installed")
    out = tmp_path_factory.mktemp("library")
    tier = _tier_library()
    if tier is not None:
        shutil.copytree(tier, out / "lib")
    else:
        compile_library(out)
    return out / "lib"


@pytest.fixture
def library_compiled_once(_coq_library, monkeypatch):
    """``certify()`` in the test copies the session's compiled library (:func:`_coq_library`: the
    same coq/*.v compiled by the same coqc) into its output instead of compiling coq/*.v again."""
    import shutil
    import time

    from symuat.certify import run

    def copy(out):
        start = time.perf_counter()
        shutil.copytree(_coq_library, out / "lib", dirs_exist_ok=True)
        return time.perf_counter() - start

    monkeypatch.setattr(run, "compile_library", copy)


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
