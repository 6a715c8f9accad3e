"""symuat: mechanical checks of the UAT / DUAT papers' rewrite of Transformers.

>>> from symuat import prove
>>> [r.verdict.status.value for r in prove(["P1"])]
['proved']
"""

__version__ = "0.1.0"


def prove(ids=None):
    """Run the checks selected by claim IDs (all when ``ids`` is None); return the results."""
    from symuat.claims import REGISTRY_LOADED  # noqa: F401  (registers the catalogue)
    from symuat.kernel.registry import REGISTRY

    checks = REGISTRY.all_checks() if not ids else REGISTRY.select(ids)
    return [c.run() for c in checks]
