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

:func:`refuted_by_proof` is the same boundary for a refutation whose witness is a theorem: a
numeric refutation (a prediction that float64 contradicts) whose contradiction another check
*proves*. It returns ``refuted`` only when it is given a ``refuted`` verdict and a ``proved`` one
(anything else is a :class:`ValueError`: the caller has no such witness), keeps everything of the
refutation but its witness and method, and states the proof as the exact re-check.

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

from dataclasses import replace
from typing import Any, Callable, Iterable

import numpy as np

from symuat.errors import KernelInconsistencyError
from symuat.kernel import certificates
from symuat.kernel.decide.instances import TOLERANCE
from symuat.kernel.evaluate import values_equal
from symuat.kernel.status import Corrected, Counterexample, Status, Verdict


def refute_with_exact_witness(lhs, rhs, *, sizes: dict[str, int], values: dict[str, Any], reason: str,
                              exact_recheck: str, float_rechecks: Iterable[tuple[str, float]], method: str,
                              quantities: dict | None = None, corrected: Corrected | None = None,
                              statement: Callable[[], dict] | None = None) -> Verdict:
    """``refuted`` at the exact instance (``lhs`` ≠ ``rhs`` exactly) with the first float64
    re-computation ``(description, relative residual)`` of ``float_rechecks`` above the tolerance.

    ``statement``, if given, builds (only when a certificate is listened for, the certify tier)
    the identity the witness refutes: ``{"lhs": expr, "rhs": expr, "values": {leaf name: exact
    value}, "sigma": the concrete σ of the evaluation}``, recorded with the sizes and the two
    exact values as a ``refutation_witness`` certificate (:mod:`symuat.certify.refutation`)."""
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
    if statement is not None and certificates.listened():
        certificates.record("refutation_witness", sizes=dict(sizes), lhs_value=lhs, rhs_value=rhs, **statement())
    return Verdict(Status.REFUTED, method, counterexample=cex, quantities=dict(quantities or {}),
                   corrected=corrected)


def refuted_by_proof(refuted: Verdict, proof: Verdict, *, reason: str, proved: str, numeric_recheck: str,
                     method: str) -> Verdict:
    """``refuted`` with the proved statement as its witness: ``reason`` (what the refuted
    prediction says and what is proved instead), exact re-check ``exact: {proved} ({proof's
    method})``; the rest of ``refuted`` (corrected statement, numeric witness, sizes) unchanged.

    >>> from symuat.kernel.status import Status, Verdict
    >>> v = refuted_by_proof(Verdict(Status.REFUTED, "float64"), Verdict(Status.PROVED, "normal form"),
    ...     reason="b is constant", proved="L proves it", numeric_recheck="float64: equal", method="by L")
    >>> v.status, v.counterexample.exact_recheck
    (<Status.REFUTED: 'refuted'>, 'exact: L proves it (normal form)')
    >>> refuted_by_proof(Verdict(Status.NUMERIC_ONLY, "m"), Verdict(Status.PROVED, "p"), reason="", proved="",
    ...     numeric_recheck="", method="")
    Traceback (most recent call last):
    ...
    ValueError: refuted_by_proof needs a refuted verdict and a proved one, not numeric-only and proved
    """
    if refuted.status is not Status.REFUTED or proof.status is not Status.PROVED:
        raise ValueError("refuted_by_proof needs a refuted verdict and a proved one, "
                         f"not {refuted.status} and {proof.status}")
    cex = Counterexample({}, {}, reason=reason, exact_recheck=f"exact: {proved} ({proof.method})",
                         numeric_recheck=numeric_recheck)
    return replace(refuted, counterexample=cex, method=method)
