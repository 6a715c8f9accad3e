r"""Identities of matrix expressions and the search for their counterexamples.

:func:`check_identity`
    ``lhs = rhs`` for matrix expressions. In order:

    1. **symbolic** — equal index-level normal forms
       (:mod:`~symuat.kernel.index_calculus`) prove the identity for all dimensions → ``proved``,
       then cross-checked exactly on random integer instances and in float64; a disagreement
       raises :class:`~symuat.errors.KernelInconsistencyError` (a bug, never a verdict);
    2. **refutation** — exact evaluation on random small integer instances over a grid of
       sizes, then at sizes past each dimension's degree bound (:func:`degree_bounds`,
       :func:`probe_sizes`); a difference, or one side being undefined where the other is
       defined, is a counterexample → ``refuted``, re-checked exactly and in float64 with the
       same σ, and against the statement's hypotheses;
    3. **explicit sizes** — when the sizes are part of the claim (``explicit_sizes``) or there
       are no dimensions: every entry of both sides, with symbolic entries, expanded; all
       differences zero → ``proved-at-sizes`` (the sizes are listed; every listed size is
       checked, or the call fails). A statement over symbolic dimensions that holds at every
       size tried is never ``proved-at-sizes``: it is ``numeric-only``.

Soundness of the search (why ``numeric-only`` is honest and a refutation is real). Fix the
random integer values of the leaves' entries as polynomials in the indices: an entry of
``lhs − rhs`` is then a polynomial in each dimension ``d`` of degree at most
:func:`degree_bounds` ``[d] = D`` (one sum per axis of length ``d``, plus the degree of the
coefficients). A nonzero polynomial of degree ``D`` in one variable has at most ``D`` roots, so
``D + 1`` *distinct* sizes of ``d`` with the others fixed see it; for several dimensions jointly
a tensor grid of ``D_i + 1`` distinct values per dimension does (Schwartz–Zippel / Combinatorial
Nullstellensatz on a grid). :func:`probe_sizes` adds those sizes; when the grid costs more than
the budget, the verdict says the search was *bounded* (not exhaustive in degree). A zero seen
by random values can still be luck (integers drawn from −3…3): several seeds are drawn. The
search never turns "no counterexample" into ``proved``: that needs the normal form.

A scalar constant (a closed form with π, √2, atan …) is compared exactly
(:mod:`~symuat.kernel.decide.constants`): a nonzero difference is *certified* by interval
arithmetic before it refutes anything; a difference nobody can decide leaves the statement
``numeric-only`` with the precision stated.

:func:`check_negation`
    "``lhs = rhs`` does not hold in general": ``proved`` by an exact counterexample, ``refuted``
    by a proof of the identity (``proved`` for all dimensions, or ``proved-at-sizes`` when the
    statement is about those sizes). Evidence without a proof (``numeric-only``) stays
    ``numeric-only``: a negation is never refuted by a search that found nothing.
:func:`check_chain`
    a printed chain ``a = b = c``: every link is checked with :func:`check_identity`.
:func:`check_explicit`
    two explicit matrices built at listed sizes (for statements that only have meaning at
    explicit sizes, e.g. a printed row with an ellipsis).
:func:`check_shape`, :func:`define` / :func:`informal`
    a shape for symbolic dimensions; a definition (checked to be well-typed and consistent with
    its rewrite) / a statement with no checkable formalisation, with the reason.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import sympy as sp
from sympy.matrices.expressions import MatrixExpr

from symuat.errors import (
    DiamondUndefinedError,
    KernelInconsistencyError,
    KernelInputError,
    SymuatError,
    describe,
)
from symuat.kernel import certificates
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    Status,
    Verdict,
)
from symuat.text.printing import latex

from symuat.kernel.evaluate import sizes_key, values_equal
from symuat.kernel.assumptions import assuming
from symuat.kernel.hypotheses import implied_hypotheses, latex_list
from symuat.kernel.index_calculus import EntryComparison, compare_entries
from symuat.kernel.language import NoIndexRule, rational_entries, sides_of
from symuat.kernel.minimise import small_assignments
from symuat.kernel.constants import collect_undecided, polynomial_is_zero, zero_status
from symuat.kernel.decide.recheck import exact_relative, recheck
from symuat.kernel.decide.instances import (
    SEEDS,
    TOLERANCE,
    _confirm_or_raise,
    _confirmation_grid,
    _defined_sizes,
    evaluate_at,
    _has_sigma,
    named_sizes,
    check_supported,
    dimension_symbols,
    leaf_shapes,
    random_values,
    scalar_symbols,
    size_grid,
)


# --------------------------------------------------------------------------------------------
# counterexamples
# --------------------------------------------------------------------------------------------


def degree_bounds(*exprs) -> dict:
    """For each dimension ``d``, a bound on how polynomially the statement can depend on ``d``.

    An entry of a matrix expression is built from sums over index ranges and from scalar
    coefficients; each axis of a leaf whose length involves ``d`` can contribute one sum over
    a range of length ``d`` (degree ≤ 1 each), and each coefficient or size argument its degree
    in ``d``. The sum of these, over both sides, bounds the degree in ``d`` of the dependence a
    difference can have (``(n−1)(n−2)(n−3)(n−4)·A`` vanishes at n = 1…4; a degree-4
    Cayley–Hamilton identity with traces holds up to n = 4). The search must go past it.
    """
    dims = dimension_symbols(*exprs)
    bound = {d: 0 for d in dims}

    def degree(e, d) -> int:
        e = sp.sympify(e)
        if d not in e.free_symbols:
            return 0
        num, den = sp.fraction(sp.together(e))
        try:
            return sp.Poly(num, d).degree() + sp.Poly(den, d).degree()
        except sp.PolynomialError:  # √d, 1/√d, …: count every occurrence generously
            return 1 + sum(1 for node in sp.preorder_traversal(e) if node == d)

    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if not isinstance(node, MatrixExpr):
                continue
            mats = [a for a in node.args if isinstance(a, MatrixExpr)]
            others = [a for a in node.args if isinstance(a, sp.Expr) and not isinstance(a, MatrixExpr)]
            for d in dims:
                if not mats:  # a leaf: one possible sum per axis of length involving d
                    try:
                        shape = node.shape
                    except Exception:
                        shape = ()
                    bound[d] += sum(degree(x, d) for x in shape)
                bound[d] += sum(degree(x, d) for x in others)
    return bound


#: exact evaluation budget of one large-size probe (scalar operations, estimated)
PROBE_BUDGET = 2_000_000
#: budget of an explicit expansion with symbolic entries at one size (beyond the first size)
EXPANSION_BUDGET = 20_000
#: beyond this estimated cost a listed size is not expanded: the call fails, naming the size
EXPANSION_LIMIT = 2_000_000


#: cost of evaluating one node, in scalar operations (SymPy size lookups, array allocation)
NODE_COST = 2000


def _cost(exprs, sizes) -> float:
    """Estimated cost of evaluating ``exprs`` at ``sizes`` in scalar operations: every node's
    entries, every product's multiply-adds, a fixed cost per node, and all of it once per head
    inside a head sum."""

    def dim(x):
        return int(sp.sympify(x).subs(sizes))

    def walk(node, mult) -> float:
        if not isinstance(node, MatrixExpr):
            return 0.0
        total = float(NODE_COST)
        try:
            total += dim(node.shape[0]) * dim(node.shape[1])
        except Exception:
            pass
        if isinstance(node, sp.MatMul):
            try:
                shapes = [(dim(a.shape[0]), dim(a.shape[1])) for a in node.args if isinstance(a, MatrixExpr)]
                total += sum(a[0] * a[1] * b[1] for a, b in zip(shapes, shapes[1:]))
            except Exception:
                pass
        inner = mult
        if hasattr(node, "_symuat_head"):
            try:
                inner = mult * dim(node.args[1])
            except Exception:
                pass
        return mult * total + sum(walk(a, inner) for a in node.args)

    return sum(walk(e, 1) for e in exprs)


def probe_sizes(lhs, rhs, budget: float = PROBE_BUDGET) -> list[dict]:
    """Sizes past each dimension's degree bound (:func:`degree_bounds`): each dimension alone at
    its bound + 1 (the others at 2), then all dimensions together at the largest bound + 1 (for
    statements defined only on a diagonal such as n = m). A probe over the exact-evaluation
    budget is lowered to the largest size within it."""
    bounds = degree_bounds(lhs, rhs)
    dims = list(bounds)
    out = []
    if _irrational_coefficients(lhs, rhs):  # exact arithmetic on SymPy numbers: ~100× dearer
        budget = budget / 100

    def fit(make, target):
        size = target
        while size > 4 and _cost((lhs, rhs), make(size)) > budget:
            size = max(4, (size * 2) // 3)
        return make(size) if size > 4 else None

    for d in dims:
        probe = fit(lambda k, d=d: {e: (k if e == d else 2) for e in dims}, bounds[d] + 1)
        if probe:
            out.append(probe)
    if len(dims) > 1:
        probe = fit(lambda k: {e: k for e in dims}, max(bounds.values()) + 1)
        if probe:
            out.append(probe)
    return out


#: total exact-evaluation budget of the degree-complete grid (scalar operations, estimated)
GRID_BUDGET = 30_000_000
#: at most this many size combinations are enumerated for the degree-complete grid
GRID_MAX = 20_000


@dataclass
class SearchPlan:
    """The sizes a counterexample search must visit to be complete in degree, and how many it
    visits: ``D_d + 1`` distinct sizes ``1 … D_d + 1`` for every dimension ``d`` (its degree bound
    :func:`degree_bounds`), jointly — the tensor grid — since a nonzero polynomial of degree
    ``≤ D_d`` in each variable does not vanish on such a grid."""

    bounds: dict
    needed: int
    grid: list[dict]
    complete: bool
    cost: float

    def describe(self) -> str:
        bounds = ", ".join(f"{d.name}: degree ≤ {b}" for d, b in self.bounds.items())
        if self.complete:
            return (f"search complete in degree ({bounds}): all {self.needed} combinations of "
                    f"D+1 distinct sizes per dimension tried, jointly")
        return (f"search bounded, not complete in degree ({bounds}): the degree bounds need "
                f"{self.needed} size combinations, {len(self.grid)} tried within the budget "
                f"({GRID_BUDGET:.0e} estimated operations)")

    def as_dict(self) -> dict:
        return {"degree bounds": {d.name: b for d, b in self.bounds.items()}, "size combinations needed":
                self.needed, "size combinations tried": len(self.grid), "complete in degree": self.complete}


def search_plan(lhs, rhs, budget: float = GRID_BUDGET) -> SearchPlan:
    """The degree-complete grid of sizes (cheapest first), cut at the budget (:class:`SearchPlan`)."""
    bounds = degree_bounds(lhs, rhs)
    dims = list(bounds)
    needed = 1
    for d in dims:
        needed *= bounds[d] + 1
    if _irrational_coefficients(lhs, rhs):
        budget = budget / 100
    if needed > GRID_MAX or rational_entries(lhs, rhs):
        # (an inverse's or a determinant's entries are not polynomial in the sizes: no degree
        # argument; the grid is then only the instances tried)
        return SearchPlan(bounds, needed, [], False, 0.0)
    grid = [dict(zip(dims, combo)) for combo in itertools.product(*(range(1, bounds[d] + 2) for d in dims))]
    grid.sort(key=lambda a: (sum(a.values()), tuple(a.values())))
    out, total = [], 0.0
    for sizes in grid:
        c = _cost((lhs, rhs), sizes) * len(SEEDS)
        if total + c > budget:
            return SearchPlan(bounds, needed, out, False, total)
        total += c
        out.append(sizes)
    return SearchPlan(bounds, needed, out, True, total)


def _lazy(make):
    yield from make()


def _irrational_coefficients(*exprs) -> bool:
    return any(isinstance(a, sp.Expr) and not isinstance(a, MatrixExpr) and a.has(sp.Pow)
               and any(isinstance(q, sp.Pow) and not q.exp.is_Integer for q in sp.preorder_traversal(a))
               for e in exprs for node in sp.preorder_traversal(e) if isinstance(node, sp.MatMul)
               for a in node.args)


def find_counterexample(lhs, rhs, grid: list[dict] | None = None, seeds=SEEDS,
                        sigma=None) -> Counterexample | None:
    """Exact search over random integer values at the sizes of ``grid``; by default small sizes
    (:func:`size_grid`) and then sizes past the degree bound of every dimension
    (:func:`probe_sizes`)."""
    syms = leaf_shapes(lhs, rhs)
    scalars = scalar_symbols(lhs, rhs)
    dims = dimension_symbols(lhs, rhs)
    if grid is None:  # the probes are computed only when the small sizes found nothing
        small = size_grid(dims)
        seen = {sizes_key(s) for s in small}
        grid = itertools.chain(
            small,
            _lazy(lambda: [q for q in search_plan(lhs, rhs).grid if sizes_key(q) not in seen]),
            _lazy(lambda: probe_sizes(lhs, rhs)))
    fallback = None
    for sizes in grid:
        for seed in seeds:
            values = random_values(syms, sizes, np.random.default_rng(seed), "exact", scalars)
            left, err_l = evaluate_at(lhs, sizes, values, "exact", sigma)
            right, err_r = evaluate_at(rhs, sizes, values, "exact", sigma)
            if err_l and err_r:
                break  # undefined on both sides at these sizes: not a counterexample
            if err_l or err_r:
                side = "right" if err_r else "left"
                return recheck(Counterexample(
                    named_sizes(sizes), values, left, right,
                    reason=f"the {side} side is undefined where the other is defined: {err_l or err_r}",
                ), lhs, rhs, sizes, sigma)
            if left.shape != right.shape:
                return recheck(Counterexample(
                    named_sizes(sizes), values, left, right,
                    reason=f"shapes differ: {left.shape} against {right.shape}",
                ), lhs, rhs, sizes, sigma)
            if not values_equal(left, right, "exact"):
                cex = Counterexample(named_sizes(sizes), values, left, right, reason="values differ")
                if exact_relative(left, right) > TOLERANCE:
                    return recheck(cex, lhs, rhs, sizes, sigma)
                # a difference too small for float64 to see (σ compounds magnitudes): keep it,
                # but look on for a witness that float64 can re-check too
                fallback = fallback or (cex, sizes)
    if fallback is not None:
        return recheck(fallback[0], lhs, rhs, fallback[1], sigma)
    return None


# --------------------------------------------------------------------------------------------
# the procedures
# --------------------------------------------------------------------------------------------


@dataclass
class Statement:
    """An identity ``lhs = rhs`` with its LaTeX (for corrected statements)."""

    lhs: object
    rhs: object
    latex: str = ""

    def __post_init__(self):
        if not self.latex:
            self.latex = f"{latex(self.lhs)} = {latex(self.rhs)}"


def explicit_expansion(lhs, rhs, sizes_list: list[dict]) -> tuple[list[dict], Counterexample | None]:
    """Expand every entry at each size with symbolic entries; return sizes proved or a witness."""
    syms = leaf_shapes(lhs, rhs)
    scalars = scalar_symbols(lhs, rhs)
    proved = []
    for sizes in sizes_list:
        if _cost((lhs, rhs), sizes) > EXPANSION_BUDGET:
            # dear to expand with symbolic entries: an exact search at this size first (it may
            # refute); then the expansion, up to a hard limit — every listed size is checked or
            # the call fails (a listed size is never skipped)
            if _cost((lhs, rhs), sizes) > EXPANSION_LIMIT:
                raise KernelInputError(
                    f"explicit size {named_sizes(sizes)} is beyond the expansion limit (estimated "
                    f"{_cost((lhs, rhs), sizes):.3g} > {EXPANSION_LIMIT:.0e} operations) and "
                    "exact evaluation there is beyond the search budget too: it cannot be checked; "
                    "list smaller sizes")
            cex = find_counterexample(lhs, rhs, [sizes], seeds=range(4))
            if cex is not None:
                return proved, cex
        values = random_values(syms, sizes, None, "symbolic", scalars)
        left, err_l = evaluate_at(lhs, sizes, values, "symbolic")
        right, err_r = evaluate_at(rhs, sizes, values, "symbolic")
        if err_l and err_r:
            continue
        if err_l or err_r or left.shape != right.shape:
            cex = find_counterexample(lhs, rhs, [sizes])
            if cex is None:
                raise KernelInconsistencyError("explicit expansion: undefined side not reproduced")
            return proved, cex
        rational = rational_entries(lhs, rhs)
        for l, r in zip(left.flat, right.flat):
            if not polynomial_is_zero(sp.numer(sp.together(l - r)) if rational else l - r):
                from symuat.expr.elementwise import sigma_alternative

                cex = find_counterexample(lhs, rhs, [sizes], seeds=range(20))
                if cex is None and _has_sigma(lhs, rhs):  # the first σ satisfies it; another does not
                    cex = find_counterexample(lhs, rhs, [sizes], seeds=range(20), sigma=sigma_alternative)
                if cex is None:
                    raise KernelInconsistencyError("nonzero expansion but no integer witness")
                return proved, cex
        proved.append(sizes)
    return proved, None


def check_identity(
    lhs,
    rhs=None,
    *,
    explicit_sizes: list[dict] | None = None,
    corrected: Statement | list[Statement] | None = None,
    construction: str | None = None,
    symbolic: bool = True,
    hypotheses: Iterable = (),
    minimise: bool = True,
) -> Verdict:
    """Decide ``lhs = rhs``; see the module docstring for the order of methods.

    A refutation's counterexample is then minimised (:mod:`symuat.kernel.minimise`: smallest
    sizes first, then smallest integer entries) unless ``minimise=False``.

    ``hypotheses`` (:mod:`symuat.kernel.hypotheses`): assumptions of the statement, used by the
    normal form as rewrite rules and imposed on every instance drawn; the verdict lists them.

    SymPy's own constructs (``Trace``, ``HadamardProduct``, ``DiagMatrix``, ``DiagonalOf``,
    ``Inverse``, negative powers, ``Determinant`` at explicit sizes) are read through
    :func:`symuat.kernel.language.lower`; ``lhs`` may be a SymPy ``Eq`` (then no ``rhs``). A
    matrix inverted in the statement is invertible by hypothesis (implied, and listed).
    """
    lhs, rhs = sides_of(lhs, rhs)
    hypotheses = tuple(hypotheses) + implied_hypotheses(lhs, rhs, hypotheses)
    if not hypotheses:
        with collect_undecided() as undecided:
            verdict = _check_identity(lhs, rhs, explicit_sizes, corrected, construction, symbolic)
        verdict = _capped(verdict, undecided)
        if verdict.status is Status.REFUTED and minimise:  # the counterexample a reader checks by hand
            from symuat.kernel.minimise import minimised

            verdict = minimised(verdict, lhs, rhs)
            verdict.sides = verdict.sides or applied_sides(lhs, rhs)
        return verdict
    _check_satisfiable(hypotheses, lhs, rhs, explicit_sizes)
    with assuming(hypotheses), collect_undecided() as undecided:
        verdict = _check_identity(lhs, rhs, explicit_sizes, corrected, construction, symbolic)
    verdict = _capped(verdict, undecided)
    verdict.hypotheses = latex_list(hypotheses)
    verdict.method += "; under the hypotheses (normal-form rule, instances drawn on them)"
    if verdict.corrected is not None and verdict.corrected.verdict is not None:
        verdict.corrected.verdict.hypotheses = latex_list(hypotheses)  # decided under them too
    return verdict


def applied_sides(lhs, rhs, most: int = 240) -> tuple[str, str, str, str] | None:
    """LaTeX of both sides as written (the reading's brackets explicit) and with every ``⋄``
    rewritten by its definition under the statement's reading (:meth:`symuat.expr.diamond.Diamond.doit`:
    ``W ⋄ x → Wᵀx``): ``(lhs, lhs applied, rhs, rhs applied)``; None when the statement uses no
    such definition, a side has none at its shapes, or they are too long for one line."""
    from symuat.expr.diamond import Diamond

    try:
        if not (lhs.has(Diamond) or rhs.has(Diamond)):
            return None
        out = (latex(lhs), latex(lhs.doit().doit()), latex(rhs), latex(rhs.doit().doit()))  # twice: (Wᵀ)ᵀ → W
    except Exception:  # a side the reading leaves undefined (shapes): the counterexample says so
        return None
    return out if sum(map(len, out)) <= most and out[1] != out[3] else None


def _check_satisfiable(hypotheses, lhs, rhs, explicit_sizes) -> None:
    """Hypotheses that cannot hold together make any statement vacuous (and their rules would
    rewrite a sum to two values): an error naming them, before anything is decided."""
    from symuat.kernel.decide.instances import shape_at
    from symuat.kernel.hypotheses import check_satisfiable

    shapes = leaf_shapes(lhs, rhs)

    def shape(name, sizes):
        if name not in shapes:
            return None
        try:
            return shape_at(shapes[name], sizes)
        except TypeError:
            return None

    dims = dimension_symbols(lhs, rhs)
    check_satisfiable(hypotheses, shape, explicit_sizes or size_grid(dims, (2, 3, 4), 27))


def _capped(verdict: Verdict, undecided: list[str]) -> Verdict:
    """A verdict reached with an undecided constant comparison (treated as equal) is at most
    ``numeric-only``, with the precision stated; a proof by normal form or a certified
    counterexample does not rest on it."""
    if not undecided or verdict.status in (Status.PROVED, Status.REFUTED):
        return verdict
    verdict.status = Status.NUMERIC_ONLY
    verdict.method += ("; a constant difference is undecided (" + "; ".join(undecided)
                       + "): not refuted on float noise, not proved either")
    return verdict


def _check_identity(lhs, rhs, explicit_sizes, corrected, construction, symbolic) -> Verdict:
    check_supported(lhs, rhs)
    leaf_shapes(lhs, rhs)  # one shape per leaf name
    dims = dimension_symbols(lhs, rhs)
    dim_names = ", ".join(d.name for d in dims) or "none"
    if symbolic:
        try:
            comparison = compare_entries(lhs, rhs)
        except DiamondUndefinedError as exc:  # a side with matrix ⋄ matrix and no definition
            comparison = EntryComparison(False, None, None, None, None, f"undefined: {exc}")
        except (ValueError, TypeError) as exc:
            if isinstance(exc, SymuatError):
                raise
            if isinstance(exc, NoIndexRule):  # a determinant: decided by instances and expansion
                comparison = EntryComparison(False, None, None, None, None, str(exc))
            else:
                raise KernelInputError(f"outside the kernel's fragment: {exc}") from exc
        if comparison.equal:
            grid = _defined_sizes(lhs, rhs, _confirmation_grid(dims), want=3)
            if not grid:
                raise KernelInputError(f"{describe(lhs)} = {describe(rhs)}: both sides are undefined (or of different "
                                       "shapes) at every size tried: the statement has no instance to check")
            cex = find_counterexample(lhs, rhs, grid)
            if cex is not None:
                raise KernelInconsistencyError(
                    f"normal forms agree but exact evaluation differs at {cex.sizes}: {cex.reason}"
                )
            witness = _confirm_or_raise(lhs, rhs, grid, "proved symbolically")
            return Verdict(
                Status.PROVED,
                f"index-level normal form, symbolic dimensions ({dim_names}); exact integer "
                f"cross-check at {len(grid)} sizes",
                numeric=witness,
                detail=f"entry: {comparison.lhs.latex()}",
                construction=construction,
            )
    def refuted(method: str, cex: Counterexample, detail: str = "") -> Verdict:
        return Verdict(Status.REFUTED, method, counterexample=cex, corrected=_check_corrected(corrected),
                       detail=detail, construction=construction)

    cex = find_counterexample(lhs, rhs)
    if cex is not None:
        return refuted("exact counterexample (integer entries), re-checked exactly and in float64", cex,
                       comparison.reason if symbolic and comparison.reason else "")
    differ = "" if not symbolic else "; the symbolic normal forms differ: " + (comparison.reason or "no match")
    if explicit_sizes is None and dims:
        # the statement is over symbolic dimensions: holding at the sizes tried proves nothing
        # about the others, so the outcome is evidence on instances, never proved-at-sizes; more
        # random integer instances at the small sizes stand in for an expansion there
        small = size_grid(dims, (1, 2, 3), 12)
        cex = find_counterexample(lhs, rhs, small, seeds=range(2, 6))
        if cex is None and _has_sigma(lhs, rhs):  # a statement for every σ, tried with a second σ
            from symuat.expr.elementwise import sigma_alternative

            cex = find_counterexample(lhs, rhs, small, seeds=range(4), sigma=sigma_alternative)
        if cex is not None:
            return refuted("exact counterexample (integer entries), re-checked exactly and in float64", cex)
        defined = _defined_sizes(lhs, rhs, small, want=4)
        if not defined:
            raise KernelInputError(f"{describe(lhs)} = {describe(rhs)}: undefined at every size tried: the "
                                   "statement has no instance to check")
        witness = _confirm_or_raise(lhs, rhs, defined, "holds at every size tried")
        probes = [named_sizes(q) for q in probe_sizes(lhs, rhs)]
        plan = search_plan(lhs, rhs)
        return Verdict(
            Status.NUMERIC_ONLY,
            "holds at every size tried, not proved for symbolic dimensions: exact integer instances "
            f"(6 seeds at small sizes; 2 on the degree grid and past each dimension's degree bound "
            f"{_bounds_text(lhs, rhs)}; {plan.describe()}), float64 at {len(defined)} sizes" + differ,
            sizes=[named_sizes(q) for q in small] + probes,
            numeric=witness,
            construction=construction,
            quantities={"counterexample search": plan.as_dict()},
        )
    sizes_list = explicit_sizes if explicit_sizes is not None else [{}]
    proved, cex = explicit_expansion(lhs, rhs, sizes_list)
    if cex is not None:
        return refuted("explicit expansion found a nonzero entry; exact integer witness", cex)
    if not proved:
        raise KernelInputError(f"{describe(lhs)} = {describe(rhs)}: undefined at every listed size "
                               f"{[named_sizes(x) for x in sizes_list]}")
    witness = _confirm_or_raise(lhs, rhs, proved[:4], "proved at sizes")
    return Verdict(
        Status.PROVED_AT_SIZES,
        "expansion of every entry with symbolic entries at explicit sizes" + differ,
        sizes=[named_sizes(s) for s in proved],
        numeric=witness,
        construction=construction,
    )


def _bounds_text(lhs, rhs) -> str:
    bounds = degree_bounds(lhs, rhs)
    reached: dict = {}
    for probe in probe_sizes(lhs, rhs):
        for d, v in probe.items():
            reached[d] = max(reached.get(d, 0), v)
    return "(" + ", ".join(f"{d.name}: degree ≤ {b}, tried up to {reached.get(d, 4)}"
                           for d, b in bounds.items()) + ")"


def _check_corrected(corrected) -> Corrected | None:
    if corrected is None:
        return None
    items = corrected if isinstance(corrected, list) else [corrected]
    verdicts = [check_identity(s.lhs, s.rhs) for s in items]
    if len(items) == 1:
        return Corrected(items[0].latex, verdicts[0])
    combined = combine_all(verdicts, [s.latex for s in items])
    return Corrected(r",\quad ".join(s.latex for s in items), combined)


def combine_all(verdicts: list[Verdict], labels: list[str]) -> Verdict:
    """A conjunction: refuted if any part is, else the weakest positive status."""
    for v, label in zip(verdicts, labels):
        if v.status is Status.REFUTED:
            return Verdict(
                Status.REFUTED, f"link {label} refuted: {v.method}",
                counterexample=v.counterexample, corrected=v.corrected, detail=label, sides=v.sides,
            )
    order = [Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY]
    weakest = max((v.status for v in verdicts), key=order.index)
    sizes = [s for v in verdicts if v.sizes for s in v.sizes] or None
    hyps = list(dict.fromkeys(h for v in verdicts for h in (v.hypotheses or ()))) or None
    return Verdict(
        weakest,
        "every link: " + "; ".join(sorted({v.method.split(';')[0] for v in verdicts})),
        sizes=sizes,
        numeric=verdicts[0].numeric,
        hypotheses=hyps,
    )


def check_chain(members: list, *, corrected=None, labels: list[str] | None = None) -> Verdict:
    """A printed chain ``m0 = m1 = …``: every consecutive pair must be equal."""
    verdicts = []
    names = labels or [f"{k}={k + 1}" for k in range(len(members) - 1)]
    for a, b in zip(members, members[1:]):
        verdicts.append(check_identity(a, b))
    out = combine_all(verdicts, names)
    if out.status is Status.REFUTED and corrected is not None:
        out.corrected = _check_corrected(corrected)
    return out


def check_negation(lhs, rhs, *, corrected: Statement | None = None) -> Verdict:
    """The claim "``lhs = rhs`` fails in general"."""
    inner = check_identity(lhs, rhs)
    if inner.status is Status.REFUTED:
        cex = inner.counterexample
        # what the ``proved`` rests on: the identity ``lhs = rhs`` fails at these exact values
        certificates.record("witness", lhs=lhs, rhs=rhs, sizes=dict(cex.sizes), values=dict(cex.values),
                            lhs_value=cex.lhs, rhs_value=cex.rhs)
        return Verdict(
            Status.PROVED,
            "exact witness: the identity fails at these values (re-checked exactly and in float64)",
            counterexample=None,
            quantities={"witness": inner.counterexample.as_dict()},
        )
    if inner.status is Status.PROVED:
        return Verdict(
            Status.REFUTED,
            "the identity the claim denies holds for all dimensions (index-level proof)",
            detail=inner.detail,
            numeric=inner.numeric,
            corrected=Corrected(
                corrected.latex if corrected else f"{latex(lhs)} = {latex(rhs)}", inner
            ),
        )
    if inner.status is Status.PROVED_AT_SIZES:  # no dimensions: the identity is proved outright
        return Verdict(
            Status.REFUTED,
            f"the identity the claim denies holds at every size it has ({inner.method})",
            sizes=inner.sizes, detail=inner.detail, numeric=inner.numeric,
            corrected=Corrected(corrected.latex if corrected else f"{latex(lhs)} = {latex(rhs)}", inner),
        )
    # the identity holds at every size checked, without a proof: evidence, not a decision —
    # the negation is neither proved (no counterexample) nor refuted (no proof of the identity)
    return Verdict(
        Status.NUMERIC_ONLY,
        f"undecided: no counterexample to the identity the claim denies, and no proof of it "
        f"({inner.method})",
        sizes=inner.sizes,
        detail=inner.detail,
        numeric=inner.numeric,
        quantities=dict(inner.quantities),
    )


def check_explicit(
    build: Callable[[dict], tuple[np.ndarray, np.ndarray]],
    sizes_list: list[dict],
    *,
    corrected_build: Callable | None = None,
    corrected_latex: str = "",
    construction: str | None = None,
) -> Verdict:
    """Compare two explicit matrices (entries SymPy expressions) built at each listed size."""
    with collect_undecided() as undecided:
        verdict = _check_explicit(build, sizes_list, corrected_build, corrected_latex, construction)
    return _capped(verdict, undecided)


def _check_explicit(build, sizes_list, corrected_build, corrected_latex, construction) -> Verdict:
    proved = []
    # smallest sizes first (by total, stably): a refutation reports the smallest listed size that fails
    for sizes in sorted(sizes_list, key=lambda s: sum(int(v) for v in s.values())):
        left, right = build(sizes)
        if left.shape != right.shape:
            cex = Counterexample(named_sizes(sizes), {}, reason=f"shapes {left.shape} ≠ {right.shape}",
                                 exact_recheck="shapes compared exactly",
                                 numeric_recheck="float64: shapes differ as well")
            return _explicit_refuted(cex, corrected_build, corrected_latex, sizes_list, construction)
        for idx, (l, r) in enumerate(zip(left.flat, right.flat)):
            diff = sp.expand(l - r)
            if not polynomial_is_zero(diff):
                cex = _witness_for(diff, l, r, sizes, np.unravel_index(idx, left.shape))
                return _explicit_refuted(cex, corrected_build, corrected_latex, sizes_list, construction)
        proved.append(named_sizes(sizes))
    return Verdict(
        Status.PROVED_AT_SIZES,
        "every entry expanded with symbolic entries at explicit sizes",
        sizes=[named_sizes(s) for s in sizes_list],
        construction=construction,
    )


def _explicit_refuted(cex, corrected_build, corrected_latex, sizes_list, construction):
    corrected = None
    if corrected_build is not None:
        corrected = Corrected(corrected_latex, check_explicit(corrected_build, sizes_list))
    return Verdict(
        Status.REFUTED, "explicit expansion at a listed size; exact integer witness",
        counterexample=cex, corrected=corrected, construction=construction,
    )


def _witness_for(diff, l, r, sizes, index) -> Counterexample:
    symbols = sorted(diff.free_symbols | sp.sympify(l).free_symbols | sp.sympify(r).free_symbols, key=str)
    rng = np.random.default_rng(0)
    draws = ({s: int(v) for s, v in zip(symbols, rng.integers(-3, 4, len(symbols)))} for _ in range(200))
    for assignment in itertools.chain(small_assignments(symbols, sorted(diff.free_symbols, key=str)), draws):
        dv = diff.subs(assignment)
        if dv != 0 and zero_status(dv)[0] is False:  # certified nonzero
            lv, rv = sp.sympify(l).subs(assignment), sp.sympify(r).subs(assignment)
            fl = float(sp.sympify(l).subs({k: float(v) for k, v in assignment.items()}))
            fr = float(sp.sympify(r).subs({k: float(v) for k, v in assignment.items()}))
            res = abs(fl - fr) / max(1.0, abs(fl), abs(fr))
            exact_rel = abs(float(sp.N(dv / sp.Max(1, sp.Abs(lv), sp.Abs(rv)))))
            if res > TOLERANCE:
                numeric = f"float64: relative residual {res:.3g} > tolerance {TOLERANCE}"
            elif np.isfinite(res) and exact_rel > 1e-6:  # float64 would see it: the evaluators disagree
                raise KernelInconsistencyError("explicit witness not confirmed in float64")
            else:  # below what float64 resolves (a certified constant difference), or an overflow
                numeric = (f"float64: residual {res:.3g} does not resolve the difference (exact relative "
                           f"size {exact_rel:.3g}); the exact re-check stands")
            return Counterexample(
                named_sizes(sizes), {str(k): v for k, v in assignment.items()},
                lhs=str(lv), rhs=str(rv),
                reason=f"entry {tuple(int(i) for i in index)}: {sp.sstr(l)} ≠ {sp.sstr(r)}",
                exact_recheck=f"exact: {lv} ≠ {rv}" + ("" if dv.is_Rational else "; " + zero_status(dv)[1]),
                numeric_recheck=numeric,
            )
    raise KernelInconsistencyError("no integer witness for a nonzero polynomial")


def define(expr, *, meaning=None, note: str = "") -> Verdict:
    """A definition: checked to be well-typed and, if ``meaning`` is given, to agree with it."""
    from symuat.kernel.index_calculus import col_space, row_space

    row_space(expr), col_space(expr)  # raises on an ill-typed definition
    if meaning is not None:
        comparison = compare_entries(expr, meaning)
        if not comparison.equal:
            raise KernelInconsistencyError(f"definition {expr} disagrees with its rewrite {meaning}")
    return Verdict(Status.DEFINITION, "definition: well-typed for symbolic dimensions"
                   + ("; agrees entrywise with its rewrite" if meaning is not None else ""),
                   detail=note)


def informal(reason: str) -> Verdict:
    """A statement with no checkable formalisation; the reason is reported."""
    return Verdict(Status.INFORMAL, "no checkable identity", detail=reason)


def timed(fn: Callable[[], Verdict]) -> tuple[Verdict, float]:
    start = time.perf_counter()
    verdict = fn()
    return verdict, time.perf_counter() - start


def check_shape(expr, claimed_shape: tuple, *, corrected_latex: str = "") -> Verdict:
    """The claim "``expr`` has shape ``claimed_shape``" for all values of the dimensions."""
    actual = tuple(sp.sympify(d) for d in expr.shape)
    claimed = tuple(sp.sympify(d) for d in claimed_shape)
    dims = dimension_symbols(expr) or sorted(
        set().union(*(d.free_symbols for d in claimed)), key=str)
    if all(sp.simplify(a - c) == 0 for a, c in zip(actual, claimed)):
        return Verdict(Status.PROVED, "shape computed for symbolic dimensions equals the claim")
    syms = leaf_shapes(expr)
    for sizes in size_grid(dims):
        values = random_values(syms, sizes, np.random.default_rng(0), "exact")
        value, err = evaluate_at(expr, sizes, values, "exact")
        if err:
            continue
        want = tuple(int(c.subs(sizes)) for c in claimed)
        if value.shape != want:
            fvalue, _ = evaluate_at(expr, sizes, {k: v.astype(float) for k, v in values.items()}, "float")
            cex = Counterexample(
                named_sizes(sizes), values, lhs=value, rhs=None,
                reason=f"the result has shape {value.shape}, the claim says {want}",
                exact_recheck=f"exact evaluation has shape {value.shape}",
                numeric_recheck=f"float64 evaluation has shape {fvalue.shape}",
            )
            corrected = Corrected(
                corrected_latex or f"shape {actual}",
                Verdict(Status.PROVED, "shape computed for symbolic dimensions"),
            )
            # what the ``refuted`` rests on: at these sizes the expression's shape is not the claim's
            certificates.record("shape_claim", expr=expr, claimed=claimed,
                                sizes={getattr(k, "name", str(k)): int(v) for k, v in sizes.items()})
            return Verdict(Status.REFUTED, "exact evaluation at explicit sizes",
                           counterexample=cex, corrected=corrected)
    raise KernelInconsistencyError(f"shape {actual} ≠ {claimed} symbolically but equal at every size")


def at_listed_sizes(verdicts: list[Verdict], sizes: list[dict], what: str) -> Verdict:
    """A claim for every size, checked at each listed size: the first refutation, else
    ``proved-at-sizes`` when every listed size is proved."""
    for v, s in zip(verdicts, sizes):
        if v.status is Status.REFUTED:
            v.detail = (v.detail + "; " if v.detail else "") + f"at {s}"
            return v
    positive = (Status.PROVED, Status.PROVED_AT_SIZES)
    if all(v.status in positive for v in verdicts):
        return Verdict(Status.PROVED_AT_SIZES, f"proved at each listed {what} ({verdicts[0].method})",
                       sizes=sizes, numeric=verdicts[-1].numeric)
    return Verdict(Status.NUMERIC_ONLY, f"not proved at every listed {what}", sizes=sizes)
