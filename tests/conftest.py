import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def coq_lib(tmp_path_factory):
    """The Coq library (coq/*.v) compiled into a fresh folder, with ``theories/`` beside it for
    the test's exported files. Needs ``coqc`` with MathComp: skips without it, unless ``CI`` or
    ``SYMUAT_REQUIRE_COQ`` is set (then a missing coqc fails)."""
    import shutil

    from symuat.certify.run import compile_library

    if shutil.which("coqc") is None:
        if os.environ.get("CI") or os.environ.get("SYMUAT_REQUIRE_COQ"):
            pytest.fail("coqc not found (required: CI / SYMUAT_REQUIRE_COQ is set)")
        pytest.skip("coqc not installed")
    out = tmp_path_factory.mktemp("certify")
    compile_library(out)
    (out / "theories").mkdir(exist_ok=True)
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
