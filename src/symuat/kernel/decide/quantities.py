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
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
import sympy as sp
from sympy.matrices.expressions import MatrixExpr

from symuat.errors import (
    KernelInconsistencyError,
    KernelInputError,
)
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    Status,
    Verdict,
)
from symuat.kernel import certificates
from symuat.kernel.rank import exact_rank
from symuat.text.printing import latex

from symuat.kernel.decide.instances import (
    named_sizes,
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
    density_of=None,
    complement: bool = False,
) -> Verdict:
    """A claimed formula for a quantity, against symuat's derived formula and exact counts.

    ``derived`` is symuat's formula (symbolic in ``dims``); ``count(sizes)`` computes the
    quantity exactly on a materialised instance. The derived formula is cross-checked against
    the counts on ``grid``; the claim is ``proved`` when it equals the derived formula as a
    rational function, else refuted at the first size where the count differs from it.

    ``density_of``: the expression whose generic density (:func:`symuat.kernel.structure.
    generic_density`) ``derived`` is; a ``proved`` then records a ``density`` certificate (the
    expression, the claim, the derived formula) for the certify tier, a ``refuted`` a
    ``density_refutation`` one (with the counterexample's sizes). ``complement``: the quantity is
    the fraction of *zero* entries of ``density_of`` (1 − its density); the certificates say so.
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
        if density_of is not None:
            # a zero fraction c is the density 1 − c: the certificate states the density
            flip = (lambda v: sp.cancel(1 - sp.sympify(v))) if complement else sp.sympify
            certificates.record("density", expr=density_of, claimed=flip(claimed),
                                derived=flip(derived), name=name)
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
                named_sizes(sizes), {}, lhs=str(exact), rhs=str(claim_value),
                reason=f"{name} is {exact} (exact count), the claim gives {claim_value}",
                exact_recheck=f"exact count on the materialised instance: {exact}",
                numeric_recheck=f"float64: {float(exact):.6g} vs {float(claim_value):.6g}",
            )
            corrected = Verdict(
                Status.PROVED, "symuat's derived formula (cross-checked by exact counts)",
                quantities={name: str(derived)},
            )
            if density_of is not None:
                # what the ``refuted`` rests on: the count of the expression's generic pattern at
                # these sizes is not the claim (and the derived formula, its correction)
                certificates.record("density_refutation", expr=density_of, claimed=sp.sympify(claimed),
                                    derived=sp.sympify(derived), name=name, complement=complement,
                                    sizes={getattr(k, "name", str(k)): int(v) for k, v in sizes.items()})
            return Verdict(
                Status.REFUTED, "exact count on a materialised instance differs from the claim",
                counterexample=cex, quantities=quantities,
                corrected=Corrected(f"{name} = {latex(sp.sympify(derived))}", corrected),
            )
    raise KernelInconsistencyError(f"{name}: claim differs symbolically but not at any tested size")


@dataclass
class RankBound:
    """A statement *about the rank*: ``rank ≤ bound`` for symbolic dimensions, with the proof of
    the structure it rests on (``verdict``, which must be ``proved``) and why that structure
    bounds the rank (``reason``). Built by :func:`rank_bound_of_product` (derived) or stated by
    the caller (a span of ``h`` fixed matrices has dimension ≤ h)."""

    bound: object
    verdict: Verdict
    reason: str
    #: the expression whose rank is bounded (a witness family assigns its leaves)
    expr: object = None


def rank_bound_of_product(expr) -> RankBound:
    """``rank(F_1 ⋯ F_k) ≤ min`` over the factors of their row and column counts (the rank of a
    product is at most the rank of each factor, which is at most its sides) — derived from the
    expression, proved for symbolic dimensions.

    >>> from symuat.expr.algebra import dims, mul, T
    >>> from sympy import MatrixSymbol
    >>> d, k = dims("d k")
    >>> rank_bound_of_product(mul(MatrixSymbol("Q", d, k), T(MatrixSymbol("K", d, k)))).bound
    Min(d, k)
    """
    if not isinstance(expr, sp.MatMul):
        raise KernelInputError(f"rank_bound_of_product: {expr} is not a product of matrices")
    mats = [a for a in expr.args if isinstance(a, MatrixExpr)]
    sides = [x for m in mats for x in m.shape]
    bound = sp.Min(*sides)
    return RankBound(bound, Verdict(Status.PROVED, "rank of a product ≤ the rank of each factor ≤ its sides"),
                     f"{latex(expr)} is a product through the inner dimension(s): rank ≤ {bound}", expr)


def check_rank(
    name: str,
    claimed,
    bound=None,
    *,
    structure: RankBound,
    structure_reason: str = "",
    witness: Callable[[dict], tuple[np.ndarray, dict]],
    grid: list[dict],
    relation: str = "=",
    family=None,
) -> Verdict:
    """A claimed (generic) rank or dimension: ``name = claimed`` (``relation="="``) or ``≤``.

    The **upper bound** comes from ``structure``, a :class:`RankBound` — a statement about the
    rank (derived by :func:`rank_bound_of_product`, or stated with the proof of the structure);
    a bare verdict (a shape proof, say) is refused. ``bound``, if given, must equal the
    structure's. A **lower bound** comes from exact witnesses: the rank (over ℚ) of one instance
    is at most the generic rank, so ``witness(sizes)`` attaining the bound shows the generic rank
    equals it at those sizes. Beyond ``grid``, sizes where the claim and the bound differ as
    numbers are searched (small sizes of the formulas' dimensions), so a false claim that agrees
    on the grid is still refuted by a witness there.

    ``≤``: ``proved`` when ``claimed ≥ bound`` holds as formulas for all positive sizes;
    ``refuted`` by an exact instance of larger rank. ``=``: ``proved-at-sizes`` when the claim
    equals the bound and every witness attains it; ``refuted`` by a witness attaining the bound
    ≠ the claim, or when the claim exceeds the bound. Otherwise ``numeric-only`` (never a crash).

    ``family`` (a list of :class:`~symuat.kernel.decide.rank_family.WitnessCase`, one per case of
    the sizes) is a *parametric* witness of selector blocks for the leaves of ``structure``'s
    expression: when its structural rank equals the bound in every case and the cases cover every
    size (:func:`~symuat.kernel.decide.rank_family.rank_lower_bound`), ``=`` is ``proved`` for
    symbolic sizes; a family that falls short leaves the verdict at ``proved-at-sizes``.
    """
    if not isinstance(structure, RankBound):
        raise KernelInputError(
            f"{name}: check_rank needs a statement about the rank (RankBound, e.g. rank_bound_of_product), "
            f"not {type(structure).__name__}: a proof of something else does not bound a rank")
    if structure.verdict.status is not Status.PROVED:
        raise KernelInputError(f"{name}: the structure of the upper bound is not proved ({structure.verdict.status})")
    if relation not in ("=", "≤"):
        raise KernelInputError(f"{name}: relation must be '=' or '≤', not {relation!r}")
    structure_reason = structure_reason or structure.reason
    claimed = sp.sympify(claimed)
    if bound is None:
        bound = structure.bound
    bound = sp.sympify(bound)
    if sp.simplify(bound - sp.sympify(structure.bound)) != 0:
        raise KernelInputError(f"{name}: the bound {bound} is not the structure's ({structure.bound})")
    quantities = {name + " (upper bound, structural)": str(bound), "how": structure_reason}

    def value(expr, sizes, what):
        v = expr.subs(sizes)
        if not v.is_Integer:
            raise KernelInputError(f"{name}: the {what} {expr} has no integer value at {sizes} ({v})")
        return int(v)

    def refuted(sizes, values, rk, b, c):
        fl = int(np.linalg.matrix_rank(np.asarray(values[0], dtype=float)))
        cex = Counterexample(
            named_sizes(sizes), values[1], lhs=rk, rhs=c,
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

    def wrong(rk, b, c):
        return (relation == "=" and (rk == b or c > b) and c != rk) or (relation == "≤" and rk > c)

    attained = []
    for sizes in grid:
        matrix, values = witness(sizes)
        rk = exact_rank(matrix)
        b, c = value(bound, sizes, "bound"), value(claimed, sizes, "claim")
        if rk > b:
            raise KernelInconsistencyError(f"{name}: witness of rank {rk} exceeds the proved bound {b} at {sizes}")
        if wrong(rk, b, c):
            return refuted(sizes, (matrix, values), rk, b, c)
        attained.append({**named_sizes(sizes), "rank": rk, "bound": b})
    quantities["exact witnesses"] = attained
    diff = sp.simplify(claimed - bound)

    def at_least(c, b) -> bool:  # c ≥ b for all positive sizes (b = Min(...): c ≥ one argument)
        dd = sp.simplify(c - b)
        if dd == 0 or dd.is_nonnegative:
            return True
        return isinstance(b, sp.Min) and any(at_least(c, a) for a in b.args)

    if relation == "≤" and at_least(claimed, bound):
        return Verdict(Status.PROVED, f"structural upper bound for symbolic dimensions ({structure_reason}); "
                       "exact witnesses attain it", quantities=quantities)
    if relation == "=" and diff == 0 and all(a["rank"] == a["bound"] for a in attained):
        lower = None
        if family is not None:
            from symuat.kernel.decide.rank_family import rank_lower_bound

            if structure.expr is None:
                raise KernelInputError(f"{name}: a witness family needs the structure's expression (rank_bound_of_product)")
            lower = rank_lower_bound(structure.expr, bound, family)
            if lower.status is Status.PROVED:
                quantities["witness family"] = lower.quantities.get("witness family")
                # what it rests on, for the Coq exporter (certify/rank.py): the product and its bound
                from symuat.kernel import certificates

                certificates.record("rank_product", expr=structure.expr, bound=bound)
                return Verdict(Status.PROVED,
                               f"upper bound {latex(bound)} for all sizes ({structure_reason}); lower bound for all "
                               f"sizes: {lower.method} (an instance's rank is at most the generic rank); exact "
                               "rational witnesses at the listed sizes agree",
                               quantities=quantities)
            quantities["witness family"] = lower.method
        return Verdict(Status.PROVED_AT_SIZES,
                       f"upper bound {latex(bound)} for all sizes ({structure_reason}); attained by an exact "
                       "rational witness at each listed size (an instance's rank is at most the generic rank); "
                       "not `proved`: " + ("no parametric witness family was given (rank_family)" if lower is None
                                           else lower.method),
                       sizes=[{k: v for k, v in a.items() if k not in ("rank", "bound")} for a in attained],
                       quantities=quantities)
    # the claim and the bound differ as formulas but agreed on the grid: look for sizes where
    # they differ as numbers, and a witness there
    free = sorted((claimed.free_symbols | bound.free_symbols), key=str)
    base = dict(grid[0]) if grid else {}
    tried = 0
    if free:
        combos = sorted(itertools.product(range(1, 9), repeat=len(free)), key=lambda t: (sum(t), t))
        for combo in combos[:4000]:
            sizes = {**base, **dict(zip(free, combo))}
            b, c = value(bound, sizes, "bound"), value(claimed, sizes, "claim")
            if (relation == "=" and b == c) or (relation == "≤" and c >= b):
                continue
            try:
                matrix, values = witness(sizes)
            except Exception as exc:  # the witness family is not defined there: not evidence
                quantities.setdefault("sizes without a witness", []).append(f"{named_sizes(sizes)}: {exc}")
                continue
            rk = exact_rank(matrix)
            if rk > b:
                raise KernelInconsistencyError(f"{name}: witness of rank {rk} exceeds the proved bound {b} at {sizes}")
            if wrong(rk, b, c):
                return refuted(sizes, (matrix, values), rk, b, c)
            tried += 1
            if tried >= 3:
                break
    return Verdict(Status.NUMERIC_ONLY,
                   f"{name} {relation} {claimed}: agrees with the exact witnesses at the sizes tried, but the claim "
                   f"is not the structural bound {latex(bound)} as a formula and no witness decided it "
                   f"({tried} further sizes tried where they differ)",
                   sizes=[named_sizes(s) for s in grid], quantities=quantities)
