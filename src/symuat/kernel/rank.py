"""The rank of a numeric matrix over the rationals, exactly.

:func:`exact_rank` is Gaussian elimination on :class:`~fractions.Fraction` entries: no float
rounding, so a rank it reports is the rank (over ℚ, hence over ℝ, of a rational matrix). Every
rank lower bound of :mod:`symuat.kernel.decide.quantities` and
:mod:`symuat.kernel.decide.rank_family` rests on it; an entry that is not a finite rational
(a NaN, an infinity, a complex number, an irrational SymPy number, a string) is an error naming the
entry, never a rank.

>>> exact_rank([[1, 2], [2, 4]])
1
>>> exact_rank([[0.5, 1], [1, 2.0]])
1
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from symuat.errors import KernelInputError, NonFiniteError


def _fraction(x, where) -> Fraction:
    """An exact rational from an entry (int, Fraction, SymPy rational, finite float), or an error
    naming the entry."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (bool, np.bool_)):
        return Fraction(int(x))
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, sp.Basic):
        if x.is_Rational:
            return Fraction(int(x.p), int(x.q))
        raise KernelInputError(f"exact_rank: entry {where} is {x}, not a rational number")
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise NonFiniteError(f"exact_rank: entry {where} is {x} (not finite)")
        return Fraction(float(x))
    if isinstance(x, (complex, np.complexfloating)):
        raise KernelInputError(f"exact_rank: entry {where} is complex ({x}); the rank is over ℚ")
    raise KernelInputError(f"exact_rank: entry {where} is {x!r} ({type(x).__name__}), not a number")


def exact_rank(matrix) -> int:
    """Rank over the rationals (Gaussian elimination on ``Fraction`` entries); a NaN, an infinity,
    a complex or non-numeric entry is an error naming it.

    >>> exact_rank([[1, 2], [2, 4]])
    1
    """
    array = np.asarray(matrix, dtype=object)
    if array.ndim != 2:
        raise KernelInputError(f"exact_rank: a matrix (2 axes) is needed, not shape {array.shape}")
    rows = [[_fraction(x, (i, j)) for j, x in enumerate(row)] for i, row in enumerate(array.tolist())]
    rank, ncols = 0, len(rows[0]) if rows else 0
    for col in range(ncols):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                f = rows[r][col] / rows[rank][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank
