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
    """Every registered check, run once per test session."""
    return {c.key: c.run() for c in registry.all_checks()}
