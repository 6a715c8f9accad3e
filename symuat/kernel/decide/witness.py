r"""A witness computed by the caller, decided here: ``refuted`` only for an exact difference that
float64 confirms.

Some statements are refuted by an evaluation only their claim module knows how to run (the T8
rules unrolled against the forward pass, at a depth where they first differ). The search stays
with the claim; the verdict does not. :func:`refute_with_exact_witness` takes the two exact values
the search found, checks that they differ exactly (:func:`~symuat.kernel.evaluate.values_equal`,
integer/rational arithmetic), and draws the caller's float64 re-computations of the same instance
until one residual exceeds :data:`~symuat.kernel.decide.instances.TOLERANCE`.

Soundness: ``refuted`` is returned only for values that differ in exact arithmetic — a
counterexample by itself — and that a float64 computation on the same parameters also separates.
Two equal values, or no float64 re-computation above the tolerance, are a
:class:`~symuat.errors.KernelInconsistencyError` (the search and the kernel disagree: a bug, never a
verdict). The procedure never returns a positive status.

>>> import numpy as np
>>> v = refute_with_exact_witness(np.array([1, 2]), np.array([1, 3]), sizes={"n": 2}, values={},
...     reason="entry 1 differs", exact_recheck="exact integers",
...     float_rechecks=iter([("same values", 1 / 3)]), method="exact evaluation")
>>> v.status, v.counterexample.numeric_recheck
(<Status.REFUTED: 'refuted'>, 'float64, same values: relative residual 0.333 > tolerance 1e-12')
>>> refute_with_exact_witness(np.array([1]), np.array([1]), sizes={}, values={}, reason="", exact_recheck="",
...     float_rechecks=iter([("x", 1.0)]), method="m")
Traceback (most recent call last):
...
symuat.errors.KernelInconsistencyError: m: the witness's two sides are equal in exact arithmetic
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from symuat.errors import KernelInconsistencyError
from symuat.kernel.decide.instances import TOLERANCE
from symuat.kernel.evaluate import values_equal
from symuat.kernel.status import Corrected, Counterexample, Status, Verdict


def refute_with_exact_witness(lhs, rhs, *, sizes: dict[str, int], values: dict[str, Any], reason: str,
                              exact_recheck: str, float_rechecks: Iterable[tuple[str, float]], method: str,
                              quantities: dict | None = None, corrected: Corrected | None = None) -> Verdict:
    """``refuted`` at the exact instance (``lhs`` ≠ ``rhs`` exactly) with the first float64
    re-computation ``(description, relative residual)`` of ``float_rechecks`` above the tolerance."""
    if values_equal(np.asarray(lhs, dtype=object), np.asarray(rhs, dtype=object), "exact"):
        raise KernelInconsistencyError(f"{method}: the witness's two sides are equal in exact arithmetic")
    for description, res in float_rechecks:
        if res > TOLERANCE:
            break
    else:
        raise KernelInconsistencyError(f"{method}: the exact witness is not confirmed in float64")
    cex = Counterexample(
        sizes, values, lhs=lhs, rhs=rhs, reason=reason, exact_recheck=exact_recheck,
        numeric_recheck=f"float64, {description}: relative residual {res:.3g} > tolerance {TOLERANCE}",
    )
    return Verdict(Status.REFUTED, method, counterexample=cex, quantities=dict(quantities or {}),
                   corrected=corrected)
