r"""Quantities: a claimed formula against a derived one, and ranks.

:func:`check_quantity`
    a claimed formula for a quantity (a density) against the one symuat derives; the derived
    formula is cross-checked by exact counting on materialised instances (a disagreement is a
    kernel error). Soundness: ``proved`` only when claim − derived cancels to 0 as a rational
    function; ``refuted`` only at a size where the exact count differs from the claim.
:func:`exact_rank`
    rank over ℚ by Gaussian elimination on fractions (exact; non-finite or complex input is an
    error naming the entry).
:func:`check_rank`
    a claimed (generic) rank: the upper bound comes from a structure *about the rank* (a
    :class:`~symuat.kernel.decide.quantities.RankBound`-style statement: a factorisation through
    an inner dimension, proved for symbolic dimensions), the lower bound from exact rational
    witnesses (an instance's rank is at most the generic rank). A claim is ``proved`` (``≤``)
    only when claim ≥ bound is proved as an inequality of formulas over all positive sizes;
    ``refuted`` only by an exact witness or a bound below the claim; anything else is
    ``numeric-only`` with the sizes where it agreed (never a crash).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable

import numpy as np
import sympy as sp
from sympy.matrices.expressions import MatrixExpr, MatrixSymbol

from symuat.errors import (
    DiamondUndefinedError,
    KernelInconsistencyError,
    LeafConflictError,
    ShapeMismatchError,
    UnsupportedExpressionError,
)
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    NumericWitness,
    Status,
    Verdict,
)
from symuat.printing import latex

from symuat.kernel.decide.instances import (
    SEEDS,
    TOLERANCE,
    TOLERANCE_REASON,
    _UNDEFINED,
    _confirm_or_raise,
    _confirmation_grid,
    _defined_sizes,
    _evaluate,
    _has_sigma,
    _named_sizes,
    _residual,
    check_supported,
    dimension_symbols,
    leaf_shapes,
    numeric_confirmation,
    random_values,
    scalar_symbols,
    size_grid,
)


def check_quantity(
    name: str,
    claimed,
    derived,
    count: Callable[[dict], Fraction],
    dims: list,
    *,
    grid: list[dict] | None = None,
    how: str = "",
) -> Verdict:
    """A claimed formula for a quantity, against symuat's derived formula and exact counts.

    ``derived`` is symuat's formula (symbolic in ``dims``); ``count(sizes)`` computes the
    quantity exactly on a materialised instance. The derived formula is cross-checked against
    the counts on ``grid``; the claim is ``proved`` when it equals the derived formula as a
    rational function, else refuted at the first size where the count differs from it.
    """
    grid = grid if grid is not None else size_grid(dims, (1, 2, 3, 4), 40)
    counts = []
    for sizes in grid:
        exact = count(sizes)
        if sp.Rational(exact.numerator, exact.denominator) != sp.sympify(derived).subs(sizes):
            raise KernelInconsistencyError(
                f"{name}: derived formula {derived} gives {sp.sympify(derived).subs(sizes)} at "
                f"{sizes}, exact count {exact}"
            )
        counts.append((sizes, exact))
    quantities = {name: str(derived), "how": how}
    if sp.cancel(sp.sympify(claimed) - sp.sympify(derived)) == 0:
        return Verdict(
            Status.PROVED,
            f"derived formula equals the claim as a rational function of ({', '.join(map(str, dims))}); "
            f"exact counts at {len(counts)} sizes agree",
            quantities=quantities,
        )
    for sizes, exact in counts:
        claim_value = sp.sympify(claimed).subs(sizes)
        if sp.Rational(exact.numerator, exact.denominator) != claim_value:
            cex = Counterexample(
                _named_sizes(sizes), {}, lhs=str(exact), rhs=str(claim_value),
                reason=f"{name} is {exact} (exact count), the claim gives {claim_value}",
                exact_recheck=f"exact count on the materialised instance: {exact}",
                numeric_recheck=f"float64: {float(exact):.6g} vs {float(claim_value):.6g}",
            )
            corrected = Verdict(
                Status.PROVED, "symuat's derived formula (cross-checked by exact counts)",
                quantities={name: str(derived)},
            )
            return Verdict(
                Status.REFUTED, "exact count on a materialised instance differs from the claim",
                counterexample=cex, quantities=quantities,
                corrected=Corrected(f"{name} = {latex(sp.sympify(derived))}", corrected),
            )
    raise KernelInconsistencyError(f"{name}: claim differs symbolically but not at any tested size")


def exact_rank(matrix) -> int:
    """Rank over the rationals (Gaussian elimination on ``Fraction`` entries)."""
    rows = [[Fraction(x) if not isinstance(x, Fraction) else x for x in row] for row in np.asarray(matrix).tolist()]
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


def check_rank(
    name: str,
    claimed,
    bound,
    *,
    structure: Verdict,
    structure_reason: str,
    witness: Callable[[dict], tuple[np.ndarray, dict]],
    grid: list[dict],
    relation: str = "=",
) -> Verdict:
    """A claimed (generic) rank or dimension: ``name = claimed`` (``relation="="``) or ``≤``.

    The **upper bound** ``bound`` (a formula in the dimensions) follows from a structure that
    ``structure`` has proved for symbolic dimensions (a factorisation through an inner dimension,
    a sum of ``h`` fixed terms). A **lower bound** comes from exact witnesses: the rank (over ℚ) of
    one instance is at most the generic rank, so ``witness(sizes)`` attaining the bound shows the
    generic rank equals it at those sizes. ``≤``: proved when ``claimed ≥ bound`` as formulas;
    refuted by an exact instance of larger rank. ``=``: ``proved-at-sizes`` when the claim equals
    the bound and every witness attains it (the bound holds for all sizes); refuted by a witness of
    rank ≠ claimed attaining the bound, or when the claim exceeds the bound.
    """
    if structure.status is not Status.PROVED:
        raise KernelInconsistencyError(f"{name}: the structure of the upper bound is not proved ({structure.status})")
    claimed, bound = sp.sympify(claimed), sp.sympify(bound)
    quantities = {name + " (upper bound, structural)": str(bound), "how": structure_reason}
    attained = []
    for sizes in grid:
        matrix, values = witness(sizes)
        rk = exact_rank(matrix)
        b, c = int(bound.subs(sizes)), int(claimed.subs(sizes))
        if rk > b:
            raise KernelInconsistencyError(f"{name}: witness of rank {rk} exceeds the proved bound {b} at {sizes}")
        wrong = (relation == "=" and (rk == b or c > b) and c != rk) or (relation == "≤" and rk > c)
        if wrong:
            fl = int(np.linalg.matrix_rank(np.asarray(matrix, dtype=float)))
            cex = Counterexample(
                _named_sizes(sizes), values, lhs=rk, rhs=c,
                reason=(f"an exact instance has {name} = {rk} (the bound {b} is {'attained' if rk == b else 'not exceeded'})"
                        f", the claim gives {c}"),
                exact_recheck=f"exact rank over ℚ (Gaussian elimination on fractions): {rk}",
                numeric_recheck=f"float64 SVD rank: {fl}",
            )
            return Verdict(Status.REFUTED, f"exact witness against the claimed {name}", counterexample=cex,
                           quantities=quantities,
                           corrected=Corrected(f"{name} = {latex(bound)}", Verdict(
                               Status.PROVED if relation == "≤" else Status.PROVED_AT_SIZES,
                               "structural upper bound, attained by exact witnesses")))
        attained.append({**_named_sizes(sizes), "rank": rk, "bound": b})
    quantities["exact witnesses"] = attained
    if relation == "≤":
        if sp.simplify(claimed - bound).is_nonnegative or sp.simplify(claimed - bound) == 0:
            return Verdict(Status.PROVED, f"structural upper bound for symbolic dimensions ({structure_reason}); "
                           "exact witnesses attain it", quantities=quantities)
        raise KernelInconsistencyError(f"{name} ≤ {claimed}: neither proved nor refuted at the sizes tried")
    if sp.simplify(claimed - bound) == 0 and all(a["rank"] == a["bound"] for a in attained):
        return Verdict(Status.PROVED_AT_SIZES,
                       f"upper bound {latex(bound)} for all sizes ({structure_reason}); attained by an exact "
                       "rational witness at each listed size (an instance's rank is at most the generic rank); "
                       "not `proved`: a lower bound for symbolic sizes would need a rank rule for a witness family, "
                       "which the kernel does not have",
                       sizes=[{k: v for k, v in a.items() if k not in ("rank", "bound")} for a in attained],
                       quantities=quantities)
    raise KernelInconsistencyError(f"{name} = {claimed}: not decided at the sizes tried")
