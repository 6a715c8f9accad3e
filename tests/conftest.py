import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402


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
