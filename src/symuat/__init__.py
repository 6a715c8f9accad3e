"""symuat: mechanical checks of the UAT / DUAT papers' rewrite of Transformers.

The bottom lines, as objects (:class:`symuat.verdicts.roll_up.ClaimVerdict`):

>>> from symuat import report
>>> [(v.id, v.verdict, v.strength) for v in report(["P1", "P4"])]
[('P1', 'holds', 'proved'), ('P4', 'fails', 'proved')]

Every check's result:

>>> from symuat import prove
>>> [r.verdict.status.value for r in prove(["P1"])]
['proved']

Your own identity, decided the way symuat decides the papers' (symbolic dimensions; a refutation
comes with a counterexample re-checked exactly):

>>> from sympy import MatrixSymbol
>>> from symuat import check_identity, dims
>>> m, n, p = dims("m n p")
>>> A, B = MatrixSymbol("A", m, n), MatrixSymbol("B", n, p)
>>> check_identity((A * B).T, B.T * A.T).status.value
'proved'
>>> C, D = MatrixSymbol("C", n, n), MatrixSymbol("D", n, n)
>>> wrong = check_identity((C * D).T, C.T * D.T)
>>> wrong.status.value, wrong.counterexample.sizes
('refuted', {'n': 2})
>>> wrong.counterexample.as_dict()["values"]
{'C': [[0, 0], [0, 1]], 'D': [[0, 0], [1, 0]]}
>>> wrong.counterexample.exact_recheck
'exact: entry (0, 1) differs by 1 (1 of 4 entries differ)'
"""

import os as _os

__version__ = "0.1.0"

#: SymPy memoises its pure functions (``cacheit``: an expression's construction, its assumptions,
#: a substitution) in LRU caches of 1,000 entries by default; the catalogue asks the same questions
#: far more often than that, and 100,000 entries cut about 8% of ``symuat prove --all``'s CPU time
#: for about 5 MB (every verdict and record of `prove --all` identical). SymPy reads the
#: variable when it is first imported — after this line whenever symuat is imported first, as by the
#: command line and its workers; a value the user set wins.
_os.environ.setdefault("SYMPY_CACHE_SIZE", "100000")

__all__ = ["report", "prove", "check_identity", "dims", "__version__"]


def prove(ids=None):
    """Run the checks selected by claim IDs (all when ``ids`` is None); return the results."""
    from symuat.claims import REGISTRY_LOADED  # noqa: F401  (registers the catalogue)
    from symuat.kernel.registry import REGISTRY

    checks = REGISTRY.all_checks() if not ids else REGISTRY.select(ids)
    return [c.run() for c in checks]


def report(ids=None, *, jobs: int | None = 1):
    """The bottom line of each claim (all when ``ids`` is None), as
    :class:`~symuat.verdicts.roll_up.ClaimVerdict` objects in the spec's order: ``verdict`` (holds /
    holds-under-readings / fails / definition / informal), ``strength``, ``readings_that_hold``,
    ``failing_step_names``, ``corrected`` (LaTeX) and the keys of the checks behind it. The counts
    ``symuat report`` prints first are :func:`symuat.verdicts.headline.headline` of this list. (The
    renderings of these objects, terminal, JSON, Markdown, LaTeX, are :mod:`symuat.render.report`.)"""
    from symuat.claims import REGISTRY_LOADED  # noqa: F401
    from symuat.kernel.registry import REGISTRY
    from symuat.kernel.runner import run_checks
    from symuat.verdicts.roll_up import claim_verdicts

    checks = REGISTRY.all_checks() if not ids else REGISTRY.select(ids)
    return claim_verdicts(list(run_checks(checks, jobs)), REGISTRY)


def __getattr__(name):
    # loaded on first use: `import symuat` (and `symuat --version`) stays instant
    if name == "check_identity":
        from symuat.kernel.decide import check_identity

        return check_identity
    if name == "dims":
        from symuat.expr.algebra import dims

        return dims
    raise AttributeError(f"module 'symuat' has no attribute {name!r}")
