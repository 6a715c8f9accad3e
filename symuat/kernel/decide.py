r"""Decision procedures: the only place where a status is produced.

Every verdict in symuat comes from one of these procedures, each of which returns
``refuted`` for a wrong statement:

:func:`check_identity`
    ``lhs = rhs`` for matrix expressions. In order:

    1. **symbolic** — equal index-level normal forms
       (:mod:`~symuat.kernel.index_calculus`) prove the identity for all dimensions → ``proved``,
       then cross-checked exactly on random integer instances and in float64; a disagreement
       raises :class:`~symuat.errors.KernelInconsistencyError` (a bug, never a verdict);
    2. **refutation** — exact evaluation on random small integer instances over a grid of
       sizes, then at sizes past each dimension's degree bound (:func:`degree_bounds`,
       :func:`probe_sizes`: a statement such as ``(n−1)(n−2)(n−3)(n−4)·A = 0`` or a degree-4
       Cayley–Hamilton identity holds at every small size and fails past it); a difference, or
       one side being undefined where the other is defined, is a counterexample → ``refuted``,
       re-checked exactly and in float64 with the same σ;
    3. **explicit sizes** — when the sizes are part of the claim (``explicit_sizes``) or there
       are no dimensions: every entry of both sides, with symbolic entries, expanded; all
       differences zero → ``proved-at-sizes`` (the sizes are listed). A statement over symbolic
       dimensions that holds at every size tried is never ``proved-at-sizes``: it is
       ``numeric-only`` (exact integer instances at the sizes listed, float64 confirmation).

    Bad input is an error, not a verdict: a node the kernel has no rule for
    (:class:`~symuat.errors.UnsupportedExpressionError`), two leaves with one name and two
    shapes (:class:`~symuat.errors.LeafConflictError`).
:func:`check_chain`
    a printed chain ``a = b = c``: every link is checked with :func:`check_identity`.
:func:`check_negation`
    "``lhs = rhs`` does not hold in general": ``proved`` by an exact witness, ``refuted`` by a
    proof of the identity — or, when the identity holds at every size checked without a proof,
    ``refuted`` at those sizes (never a positive status for a negation nobody established).
:func:`check_quantity`
    a claimed formula for a quantity (a density) against the one symuat derives; both are
    cross-checked by exact counting on materialised instances.
:func:`check_explicit`
    two explicit matrices built at listed sizes (for statements that only have meaning at
    explicit sizes, e.g. a printed row with an ellipsis).
:func:`define` / :func:`informal`
    a definition (checked to be well-typed and consistent with its rewrite) / a statement with
    no checkable formalisation, with the reason.

Tolerance (float64): a residual is ``max|lhs−rhs| / max(1, max|lhs|, max|rhs|)`` and must be
``≤ 1e-12``. Inputs are standard normal and every instance has at most a few chained products
with inner length ``k ≤ 64``; the forward error of such a product is at most ``γ_k ≈ k·u``
(``u = 2^-53 ≈ 1.1e-16``) relative to the magnitudes, so a true identity leaves ``≲ 3·10^-14``;
``1e-12`` keeps a 30× margin, while a false identity differs by an O(1) polynomial in O(1)
random values.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import lru_cache
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
from symuat.kernel.evaluate import Evaluator, exact_equal, size_at, sizes_key, values_equal
from symuat.kernel.hypotheses import assuming, impose_all, latex_list
from symuat.kernel.index_calculus import compare_entries
from symuat.printing import latex
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    NumericWitness,
    Status,
    Verdict,
)

TOLERANCE = 1e-12
TOLERANCE_REASON = (
    "relative residual max|lhs−rhs|/max(1,|lhs|,|rhs|) ≤ 1e-12: standard-normal inputs, inner "
    "lengths ≤ 64, forward error ≤ k·u ≈ 3e-14 for true identities (30× margin)"
)
SEEDS = (0, 1)
_UNDEFINED = (ShapeMismatchError, DiamondUndefinedError)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def leaf_shapes(*exprs) -> dict[str, tuple]:
    """The named leaves (matrix symbols, block symbols, head families) and their array shapes.

    Two leaves with one name must have one shape: ``A`` n×n and ``A`` m×m are two matrices
    that would otherwise be given one value (:class:`~symuat.errors.LeafConflictError`).
    """
    try:
        return dict(_leaf_shapes(exprs))
    except TypeError:  # an unhashable operand: no cache
        return dict(_leaf_shapes.__wrapped__(exprs))


@lru_cache(maxsize=4096)
def _leaf_shapes(exprs: tuple) -> dict[str, tuple]:  # pure in the expressions: cached (copied out)
    out: dict[str, tuple] = {}
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, MatrixSymbol):
                name, shape = node.name, (node.rows, node.cols)
            elif hasattr(node, "_symuat_leaf"):
                name, shape = node._symuat_leaf()
            else:
                continue
            if name in out and tuple(map(sp.sympify, out[name])) != tuple(map(sp.sympify, shape)):
                raise LeafConflictError(
                    f"two leaves are named {name} with different shapes {tuple(out[name])} and "
                    f"{tuple(shape)}: rename one"
                )
            out[name] = shape
    return dict(sorted(out.items()))


#: the matrix-expression node types the kernel has rules for (custom nodes bring their own)
_SUPPORTED = (MatrixSymbol, sp.Identity, sp.ZeroMatrix, sp.OneMatrix, sp.Transpose, sp.MatAdd,
              sp.MatMul, sp.KroneckerProduct)


def check_supported(*exprs) -> None:
    """Raise :class:`~symuat.errors.UnsupportedExpressionError` naming the first node of
    ``exprs`` that the kernel has no rule for (SymPy's ``Trace``, ``Inverse``, …)."""
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, MatrixExpr):
                if isinstance(node, _SUPPORTED) or hasattr(node, "_symuat_evaluate"):
                    continue
                if isinstance(node, sp.MatPow) and node.exp.is_Integer and int(node.exp) >= 1:
                    continue
                raise UnsupportedExpressionError(
                    f"unsupported: {type(node).__name__} ({_short(node)}) — the kernel has rules for "
                    "matrix symbols, identity/zero/ones, transpose, sums, products (positive integer "
                    "powers), scalar coefficients, Kronecker products and symuat's own nodes"
                )
            elif isinstance(node, sp.Basic) and not isinstance(node, (sp.Expr, sp.core.symbol.Str)) \
                    and not isinstance(node, (sp.Tuple, sp.logic.boolalg.BooleanAtom)):  # flags of custom nodes
                raise UnsupportedExpressionError(f"unsupported: {type(node).__name__} ({_short(node)})")
            elif isinstance(node, sp.Expr) and not isinstance(node, MatrixExpr) \
                    and any(isinstance(a, MatrixExpr) for a in node.args):
                raise UnsupportedExpressionError(
                    f"unsupported: {type(node).__name__} ({_short(node)}) — a scalar function of a "
                    "matrix (trace, determinant, entry) has no rule in the kernel; write a trace as "
                    "vec(I)ᵀ vec(·)"
                )


def _short(node) -> str:
    from symuat.errors import describe

    return describe(node)


def scalar_symbols(*exprs) -> list[sp.Symbol]:
    """Symbols in scalar coefficients that are not dimensions (``alpha`` in ``alpha·X``): they
    are values, drawn at random like the entries of a leaf."""
    dims = set(dimension_symbols(*exprs))
    heads = {node._symuat_head for expr in exprs for node in sp.preorder_traversal(expr)
             if hasattr(node, "_symuat_head")}
    out: set = set()
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.MatMul):
                for arg in node.args:
                    if not isinstance(arg, MatrixExpr):
                        out |= sp.sympify(arg).free_symbols
    return sorted(out - dims - heads, key=lambda s: s.name)


def dimension_symbols(*exprs) -> list[sp.Symbol]:
    """The dimension symbols of the expressions (not head indices), sorted by name."""
    try:
        return list(_dimension_symbols(exprs))
    except TypeError:  # an unhashable operand: no cache
        return list(_dimension_symbols.__wrapped__(exprs))


@lru_cache(maxsize=4096)
def _dimension_symbols(exprs: tuple) -> list[sp.Symbol]:  # pure in the expressions: cached (copied out)
    out: set = set()
    heads: set = set()
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if hasattr(node, "_symuat_head"):
                heads.add(node._symuat_head)
            if isinstance(node, MatrixExpr):
                try:
                    shape = node.shape
                except DiamondUndefinedError:
                    continue
                for d in shape:
                    out |= sp.sympify(d).free_symbols
        for shape in leaf_shapes(expr).values():
            for d in shape:
                out |= sp.sympify(d).free_symbols
    return sorted(out - heads, key=lambda s: s.name)


def size_grid(dims: list, values=(1, 2, 3, 4), limit: int = 80) -> list[dict]:
    """Assignments of small sizes, most telling first: every dim ≥ 2 and all distinct (so a
    conformability failure shows), then the rest by total size, degenerate (1) sizes last."""
    grid = [dict(zip(dims, combo)) for combo in itertools.product(values, repeat=len(dims))]
    grid.sort(key=lambda a: (
        min(a.values(), default=2) < 2,
        len(set(a.values())) < len(a),
        sum(a.values()),
        tuple(a.values()),
    ))
    return grid[:limit]


def _shape_at(shape: tuple, sizes: dict) -> tuple[int, ...]:
    key = sizes_key(sizes)
    out = []
    for d in shape:
        value = size_at(d, key)
        if value is None:
            raise TypeError(f"dimension {d} has no integer value at {sizes}")
        out.append(value)
    return tuple(out)


def random_values(syms: dict, sizes: dict, rng, mode: str, scalars=()) -> dict[str, np.ndarray]:
    """Random values for every named leaf: float64, small integers, or symbolic entries; and
    for every scalar symbol in ``scalars`` a nonzero integer (its float, or itself, symbolically)."""
    values = {}
    for sym in scalars:
        if mode == "symbolic":
            values[sym.name] = sym
        else:
            # a symbol declared positive (a size that only occurs in a coefficient, 1/√d) stays
            # positive; any other scalar takes either sign
            sign = 1 if sym.is_positive or sym.is_nonnegative else int(rng.choice([-1, 1]))
            v = int(rng.integers(1, 4)) * sign
            values[sym.name] = float(v) if mode == "float" else v
    for name, shape_exprs in syms.items():
        shape = _shape_at(shape_exprs, sizes)
        if mode == "float":
            values[name] = rng.standard_normal(shape)
        elif mode == "exact":
            values[name] = rng.integers(-3, 4, size=shape).astype(object)
        else:  # symbolic entries
            arr = np.empty(shape, dtype=object)
            for idx in itertools.product(*(range(k) for k in shape)):
                arr[idx] = sp.Symbol(f"{name}[{','.join(map(str, idx))}]")
            values[name] = arr
    return impose_all(values, mode)  # instances on the statement's hypotheses, if any


def _evaluate(expr, sizes, values, mode, sigma=None):
    """Evaluate; ``values`` holds arrays for leaves and 0-d values for scalar symbols."""
    leaves = {k: v for k, v in values.items() if np.ndim(v) > 0}
    scalars = {k: (v.item() if isinstance(v, np.ndarray) else v)
               for k, v in values.items() if np.ndim(v) == 0}
    if mode == "float":
        scalars = {k: float(v) for k, v in scalars.items()}
    try:
        return Evaluator(sizes, leaves, mode, sigma=sigma, scalars=scalars)(expr), None
    except _UNDEFINED as exc:
        return None, str(exc)


def _has_sigma(*exprs) -> bool:
    from symuat.elementwise import Sigma

    return any(isinstance(node, Sigma) for e in exprs for node in sp.preorder_traversal(e))


def _named_sizes(sizes: dict) -> dict[str, int]:
    return {str(k): int(v) for k, v in sizes.items()}


def _residual(a: np.ndarray, b: np.ndarray) -> float:
    """Relative residual; ``nan`` when either side is not finite (never silently small)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    return float(np.max(np.abs(a - b), initial=0.0)) / scale


# --------------------------------------------------------------------------------------------
# numeric confirmation and exact cross-checks
# --------------------------------------------------------------------------------------------


def numeric_confirmation(lhs, rhs, sizes_list: list[dict], seeds=SEEDS) -> NumericWitness:
    """float64 residuals on random standard-normal instances (both sides must be defined)."""
    syms = leaf_shapes(lhs, rhs)
    scalars = scalar_symbols(lhs, rhs)
    worst = 0.0
    used = []
    for sizes in sizes_list:
        for seed in seeds:
            rng = np.random.default_rng(seed)
            values = random_values(syms, sizes, rng, "float", scalars)
            left, err_l = _evaluate(lhs, sizes, values, "float")
            right, err_r = _evaluate(rhs, sizes, values, "float")
            if err_l or err_r:
                raise KernelInconsistencyError(
                    f"numeric confirmation at {sizes}: a side is undefined ({err_l or err_r})"
                )
            if left.shape != right.shape:
                raise KernelInconsistencyError(f"numeric confirmation at {sizes}: shapes differ")
            res = _residual(left, right)
            worst = res if not np.isfinite(res) else max(worst, res)  # NaN must not be skipped
            if not np.isfinite(worst):
                break
        used.append(_named_sizes(sizes))
    return NumericWitness(used, list(seeds), worst, TOLERANCE, TOLERANCE_REASON)


def _confirm_or_raise(lhs, rhs, sizes_list, what: str) -> NumericWitness:
    witness = numeric_confirmation(lhs, rhs, sizes_list)
    if not witness.max_residual <= TOLERANCE:  # NaN fails too
        raise KernelInconsistencyError(
            f"{what}, but float64 residual {witness.max_residual:.3g} > {TOLERANCE}"
        )
    return witness


def _defined_sizes(lhs, rhs, grid: Iterable[dict], want: int = 3) -> list[dict]:
    """Sizes from ``grid`` at which both sides are defined."""
    syms = leaf_shapes(lhs, rhs)
    scalars = scalar_symbols(lhs, rhs)
    out = []
    for sizes in grid:
        values = random_values(syms, sizes, np.random.default_rng(0), "exact", scalars)
        left, err_l = _evaluate(lhs, sizes, values, "exact")
        right, err_r = _evaluate(rhs, sizes, values, "exact")
        if err_l is None and err_r is None and left.shape == right.shape:
            out.append(sizes)
        if len(out) >= want:
            break
    return out


def _confirmation_grid(dims) -> list[dict]:
    base = [2, 3, 4, 5]
    grid = [dict(zip(dims, [base[(k + s) % 4] for k in range(len(dims))])) for s in range(4)]
    grid += size_grid(dims, values=(1, 2, 3))
    return grid


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
        grid = itertools.chain(size_grid(dims), _lazy(lambda: probe_sizes(lhs, rhs)))
    fallback = None
    for sizes in grid:
        for seed in seeds:
            values = random_values(syms, sizes, np.random.default_rng(seed), "exact", scalars)
            left, err_l = _evaluate(lhs, sizes, values, "exact", sigma)
            right, err_r = _evaluate(rhs, sizes, values, "exact", sigma)
            if err_l and err_r:
                break  # undefined on both sides at these sizes: not a counterexample
            if err_l or err_r:
                side = "right" if err_r else "left"
                return _recheck(Counterexample(
                    _named_sizes(sizes), values, left, right,
                    reason=f"the {side} side is undefined where the other is defined: {err_l or err_r}",
                ), lhs, rhs, sizes, sigma)
            if left.shape != right.shape:
                return _recheck(Counterexample(
                    _named_sizes(sizes), values, left, right,
                    reason=f"shapes differ: {left.shape} against {right.shape}",
                ), lhs, rhs, sizes, sigma)
            if not values_equal(left, right, "exact"):
                cex = Counterexample(_named_sizes(sizes), values, left, right, reason="values differ")
                if _exact_relative(left, right) > TOLERANCE:
                    return _recheck(cex, lhs, rhs, sizes, sigma)
                # a difference too small for float64 to see (σ compounds magnitudes): keep it,
                # but look on for a witness that float64 can re-check too
                fallback = fallback or (cex, sizes)
    if fallback is not None:
        return _recheck(fallback[0], lhs, rhs, fallback[1], sigma)
    return None


def _exact_relative(left, right) -> float:
    """max|l − r| / max(1, |l|, |r|) of two exact arrays, as a float (0 when not comparable)."""
    try:
        diff = max((abs(x - y) for x, y in zip(left.flat, right.flat)), default=0)
        scale = max([1] + [abs(x) for x in left.flat] + [abs(y) for y in right.flat])
        return float(sp.Rational(diff) / sp.Rational(scale)) if not isinstance(diff, sp.Basic) \
            else float(sp.N(diff / scale))
    except (TypeError, ValueError):
        return 1.0


def _recheck(cex: Counterexample, lhs, rhs, sizes, sigma=None) -> Counterexample:
    """Re-evaluate the counterexample exactly (fresh evaluator) and in float64, with the same σ."""
    if _has_sigma(lhs, rhs):
        from symuat.elementwise import SIGMA_WITNESS, sigma_exact

        used = SIGMA_WITNESS if sigma in (None, sigma_exact) else getattr(sigma, "__doc__", None) or "σ"
        cex.reason += f" (the opaque σ evaluated as {used}: a counterexample for one σ refutes a claim for every σ)"
    exact = {k: (v.astype(object) if isinstance(v, np.ndarray) else v) for k, v in cex.values.items()}
    left, err_l = _evaluate(lhs, sizes, exact, "exact", sigma)
    right, err_r = _evaluate(rhs, sizes, exact, "exact", sigma)
    floats = {k: np.asarray(v, dtype=float) for k, v in cex.values.items()}
    fl, ferr_l = _evaluate(lhs, sizes, floats, "float", sigma)
    fr, ferr_r = _evaluate(rhs, sizes, floats, "float", sigma)
    if err_l or err_r:
        if (err_l is None) == (err_r is None):
            raise KernelInconsistencyError(f"counterexample did not re-check: {cex.reason}")
        cex.exact_recheck = f"exact: {'right' if err_r else 'left'} side undefined ({err_l or err_r})"
        if (ferr_l is None) == (ferr_r is None):
            raise KernelInconsistencyError("float64 re-check disagrees on definedness")
        cex.numeric_recheck = f"float64: {'right' if ferr_r else 'left'} side undefined as well"
        return cex
    if left.shape != right.shape:
        cex.exact_recheck = f"exact: shapes {left.shape} ≠ {right.shape}"
        cex.numeric_recheck = f"float64: shapes {fl.shape} ≠ {fr.shape}"
        return cex
    diff = [(idx, x - y) for (idx, x), y in zip(np.ndenumerate(left), right.flat) if not exact_equal(x, y)]
    if not diff:
        raise KernelInconsistencyError("counterexample did not re-check exactly")
    idx, d = diff[0]
    cex.exact_recheck = f"exact: entry {idx} differs by {d} ({len(diff)} of {left.size} entries differ)"
    res = _residual(fl, fr)
    exact_rel = _exact_relative(left, right)
    if not res > TOLERANCE:
        if exact_rel > 1e-6:  # float64 would see a difference this large: a real disagreement
            raise KernelInconsistencyError(
                "counterexample not confirmed in float64" + (" (not finite)" if np.isnan(res) else ""))
        cex.numeric_recheck = (
            f"float64: the difference (exact relative size {exact_rel:.3g}) is below what float64 "
            f"resolves at these magnitudes (residual {res:.3g}); the exact re-check stands")
        return cex
    cex.numeric_recheck = f"float64: relative residual {res:.3g} > tolerance {TOLERANCE}"
    return cex


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
        if proved and _cost((lhs, rhs), sizes) > EXPANSION_BUDGET:
            continue  # symbolic entries: expand only where it is cheap (the first size always)
        values = random_values(syms, sizes, None, "symbolic", scalars)
        left, err_l = _evaluate(lhs, sizes, values, "symbolic")
        right, err_r = _evaluate(rhs, sizes, values, "symbolic")
        if err_l and err_r:
            continue
        if err_l or err_r or left.shape != right.shape:
            cex = find_counterexample(lhs, rhs, [sizes])
            if cex is None:
                raise KernelInconsistencyError("explicit expansion: undefined side not reproduced")
            return proved, cex
        for l, r in zip(left.flat, right.flat):
            if sp.expand(l - r) != 0:
                from symuat.elementwise import sigma_alternative

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
    rhs,
    *,
    explicit_sizes: list[dict] | None = None,
    corrected: Statement | list[Statement] | None = None,
    construction: str | None = None,
    symbolic: bool = True,
    hypotheses: Iterable = (),
) -> Verdict:
    """Decide ``lhs = rhs``; see the module docstring for the order of methods.

    ``hypotheses`` (:mod:`symuat.kernel.hypotheses`): assumptions of the statement, used by the
    normal form as rewrite rules and imposed on every instance drawn; the verdict lists them.
    """
    hypotheses = tuple(hypotheses)
    if not hypotheses:
        return _check_identity(lhs, rhs, explicit_sizes, corrected, construction, symbolic)
    with assuming(hypotheses):
        verdict = _check_identity(lhs, rhs, explicit_sizes, corrected, construction, symbolic)
    verdict.hypotheses = latex_list(hypotheses)
    verdict.method += "; under the hypotheses (normal-form rule, instances drawn on them)"
    if verdict.corrected is not None and verdict.corrected.verdict is not None:
        verdict.corrected.verdict.hypotheses = latex_list(hypotheses)  # decided under them too
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
            from symuat.kernel.index_calculus import EntryComparison

            comparison = EntryComparison(False, None, None, None, None, f"undefined: {exc}")
        if comparison.equal:
            grid = _defined_sizes(lhs, rhs, _confirmation_grid(dims), want=3)
            if not grid:
                raise KernelInconsistencyError("proved, but undefined at every tested size")
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
            from symuat.elementwise import sigma_alternative

            cex = find_counterexample(lhs, rhs, small, seeds=range(4), sigma=sigma_alternative)
        if cex is not None:
            return refuted("exact counterexample (integer entries), re-checked exactly and in float64", cex)
        defined = _defined_sizes(lhs, rhs, small, want=4)
        if not defined:
            raise KernelInconsistencyError(f"{lhs} = {rhs}: undefined at every tried size")
        witness = _confirm_or_raise(lhs, rhs, defined, "holds at every size tried")
        probes = [_named_sizes(q) for q in probe_sizes(lhs, rhs)]
        return Verdict(
            Status.NUMERIC_ONLY,
            "holds at every size tried, not proved for symbolic dimensions: exact integer instances "
            f"(6 seeds at small sizes; 2 at sizes past each dimension's degree bound "
            f"{_bounds_text(lhs, rhs)}), float64 at {len(defined)} sizes" + differ,
            sizes=[_named_sizes(q) for q in small] + probes,
            numeric=witness,
            construction=construction,
        )
    sizes_list = explicit_sizes if explicit_sizes is not None else [{}]
    proved, cex = explicit_expansion(lhs, rhs, sizes_list)
    if cex is not None:
        return refuted("explicit expansion found a nonzero entry; exact integer witness", cex)
    if not proved:
        raise KernelInconsistencyError(f"{lhs} = {rhs}: undefined at every listed size")
    witness = _confirm_or_raise(lhs, rhs, proved[:4], "proved at sizes")
    return Verdict(
        Status.PROVED_AT_SIZES,
        "expansion of every entry with symbolic entries at explicit sizes" + differ,
        sizes=[_named_sizes(s) for s in proved],
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
                counterexample=v.counterexample, corrected=v.corrected, detail=label,
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
    # the identity holds at every size checked: that is evidence against the negation, never
    # for it — refuted at those sizes (not for all dimensions), the identity as the correction
    return Verdict(
        Status.REFUTED,
        f"the identity the claim denies holds at every size checked ({inner.method}); the "
        "negation fails there (not proved for all dimensions)",
        sizes=inner.sizes,
        detail=inner.detail,
        numeric=inner.numeric,
        corrected=Corrected(corrected.latex if corrected else f"{latex(lhs)} = {latex(rhs)}", inner),
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


def check_explicit(
    build: Callable[[dict], tuple[np.ndarray, np.ndarray]],
    sizes_list: list[dict],
    *,
    corrected_build: Callable | None = None,
    corrected_latex: str = "",
    construction: str | None = None,
) -> Verdict:
    """Compare two explicit matrices (entries SymPy expressions) built at each listed size."""
    proved = []
    for sizes in sizes_list:
        left, right = build(sizes)
        if left.shape != right.shape:
            cex = Counterexample(_named_sizes(sizes), {}, reason=f"shapes {left.shape} ≠ {right.shape}",
                                 exact_recheck="shapes compared exactly",
                                 numeric_recheck="float64: shapes differ as well")
            return _explicit_refuted(cex, corrected_build, corrected_latex, sizes_list, construction)
        for idx, (l, r) in enumerate(zip(left.flat, right.flat)):
            diff = sp.expand(l - r)
            if diff != 0:
                cex = _witness_for(diff, l, r, sizes, np.unravel_index(idx, left.shape))
                return _explicit_refuted(cex, corrected_build, corrected_latex, sizes_list, construction)
        proved.append(_named_sizes(sizes))
    return Verdict(
        Status.PROVED_AT_SIZES,
        "every entry expanded with symbolic entries at explicit sizes",
        sizes=proved,
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
    for _ in range(200):
        assignment = {s: int(v) for s, v in zip(symbols, rng.integers(-3, 4, len(symbols)))}
        dv = diff.subs(assignment)
        if dv != 0:
            lv, rv = sp.sympify(l).subs(assignment), sp.sympify(r).subs(assignment)
            fl = float(sp.sympify(l).subs({k: float(v) for k, v in assignment.items()}))
            fr = float(sp.sympify(r).subs({k: float(v) for k, v in assignment.items()}))
            res = abs(fl - fr) / max(1.0, abs(fl), abs(fr))
            if not res > TOLERANCE:  # NaN (an overflowed float re-check) is not a confirmation
                raise KernelInconsistencyError("explicit witness not confirmed in float64")
            return Counterexample(
                _named_sizes(sizes), {str(k): v for k, v in assignment.items()},
                lhs=str(lv), rhs=str(rv),
                reason=f"entry {tuple(int(i) for i in index)}: {sp.sstr(l)} ≠ {sp.sstr(r)}",
                exact_recheck=f"exact: {lv} ≠ {rv}",
                numeric_recheck=f"float64: relative residual {res:.3g} > tolerance {TOLERANCE}",
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
        value, err = _evaluate(expr, sizes, values, "exact")
        if err:
            continue
        want = tuple(int(c.subs(sizes)) for c in claimed)
        if value.shape != want:
            fvalue, _ = _evaluate(expr, sizes, {k: v.astype(float) for k, v in values.items()}, "float")
            cex = Counterexample(
                _named_sizes(sizes), values, lhs=value, rhs=None,
                reason=f"the result has shape {value.shape}, the claim says {want}",
                exact_recheck=f"exact evaluation has shape {value.shape}",
                numeric_recheck=f"float64 evaluation has shape {fvalue.shape}",
            )
            corrected = Corrected(
                corrected_latex or f"shape {actual}",
                Verdict(Status.PROVED, "shape computed for symbolic dimensions"),
            )
            return Verdict(Status.REFUTED, "exact evaluation at explicit sizes",
                           counterexample=cex, corrected=corrected)
    raise KernelInconsistencyError(f"shape {actual} ≠ {claimed} symbolically but equal at every size")


def check_numeric(trial: Callable, sizes_list: list[dict], *, seeds=SEEDS, what: str = "") -> Verdict:
    """A property with no symbolic formalisation here, tried on random float64 instances.

    ``trial(sizes, seed)`` returns ``(holds, description, values)``. The status is
    ``numeric-only`` when it holds on every instance, ``refuted`` (with the instance) otherwise.
    """
    for sizes in sizes_list:
        for seed in seeds:
            holds, description, values = trial(sizes, seed)
            if not holds:
                cex = Counterexample(
                    {str(k): v for k, v in sizes.items()}, values, reason=f"fails: {description}",
                    numeric_recheck=f"float64 instance, seed {seed}",
                )
                return Verdict(Status.REFUTED, f"float64 instance ({what})", counterexample=cex)
    return Verdict(
        Status.NUMERIC_ONLY,
        f"{what}; holds on every instance",
        numeric=NumericWitness([{str(k): v for k, v in s.items()} for s in sizes_list], list(seeds),
                               0.0, 0.0, "exact zero test: structural zeros are exact 0.0 in float64"),
        detail=description,
        quantities={"last_instance": values},
    )


def check_dependence(expr, var: str, *, depends: bool, equal_to=None, hypotheses: Iterable = ()) -> Verdict:
    """The claim "``expr`` depends on the leaf ``var``" (``depends=True``) or "does not".

    Structural independence (``var`` does not occur in ``expr``) is a proof that it does not
    depend; a dependence is shown by an exact witness: two values of ``var``, everything else
    equal, giving different values of ``expr``. If ``var`` occurs but no witness is found, the
    verdict is ``numeric-only``.

    ``equal_to``: a form of ``expr`` without ``var``; when :func:`check_identity` proves
    ``expr = equal_to`` (under ``hypotheses``), the independence is structural. ``hypotheses``
    also constrain the witness search (both values of ``var`` satisfy them).
    """
    hypotheses = tuple(hypotheses)
    if hypotheses:
        with assuming(hypotheses):
            verdict = check_dependence(expr, var, depends=depends, equal_to=equal_to)
        verdict.hypotheses = latex_list(hypotheses)
        return verdict
    leaves = leaf_shapes(expr)
    occurs = var in leaves
    witness = None
    if occurs and equal_to is not None and var not in leaf_shapes(equal_to):
        from symuat.kernel.hypotheses import active

        rewrite = check_identity(expr, equal_to, hypotheses=active())
        if rewrite.status is Status.PROVED:
            fact = Verdict(Status.PROVED, f"structural: the expression equals a form in which {var} does not "
                           f"occur ({rewrite.method})", detail=rewrite.detail, numeric=rewrite.numeric)
            if not depends:
                return fact
            return Verdict(Status.REFUTED, "the expression does not depend on " + var,
                           corrected=Corrected("does not depend on " + var, fact))
    if occurs:
        dims = dimension_symbols(expr)
        for sizes in size_grid(dims, (2, 3), 8):
            rng = np.random.default_rng(1)
            values = random_values(leaves, sizes, rng, "exact")
            a, err = _evaluate(expr, sizes, values, "exact")
            if err:
                continue
            other = dict(values)
            other[var] = random_values({var: leaves[var]}, sizes, np.random.default_rng(7), "exact")[var]
            b, _ = _evaluate(expr, sizes, other, "exact")
            if not values_equal(a, b, "exact"):
                witness = Counterexample(
                    _named_sizes(sizes), {"first": values, f"second {var}": other[var]}, lhs=a, rhs=b,
                    reason=f"changing only {var} changes the value",
                    exact_recheck="exact integer evaluation of both",
                    numeric_recheck=f"float64: relative difference {_residual(a.astype(float), b.astype(float)):.3g}",
                )
                break
    if not occurs:
        fact = Verdict(Status.PROVED, f"structural: {var} does not occur in the expression")
    elif witness is not None:
        fact = Verdict(Status.PROVED, f"exact witness: the value changes with {var}",
                       quantities={"witness": witness.as_dict()})
    else:
        return Verdict(Status.NUMERIC_ONLY, f"{var} occurs but no exact witness of dependence was found")
    holds = occurs == depends
    if holds:
        return fact
    return Verdict(Status.REFUTED,
                   ("the expression depends on " if occurs else "the expression does not depend on ") + var,
                   counterexample=witness, corrected=Corrected(
                       ("depends on " if occurs else "does not depend on ") + var, fact))


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


def check_instances(kind: str, trial: Callable, sizes_list: list[dict], *, seeds=range(8), what: str = "") -> Verdict:
    """A statement about all instances (``kind="forall"``) or some instance (``"exists"``), decided
    on exact instances.

    ``trial(sizes, seed)`` evaluates the property exactly (rationals; no rounding) and returns
    ``(holds, description, values, numeric_recheck)`` — ``numeric_recheck`` the same instance in
    float64, a string, which must agree. ``forall``: an instance where it fails refutes it (the
    counterexample is exact), else ``numeric-only`` (no proof for all instances). ``exists``: an
    instance where it holds proves it (an exact witness), else ``numeric-only``.
    """
    if kind not in ("forall", "exists"):
        raise ValueError(f"kind must be 'forall' or 'exists', not {kind!r}")
    for sizes in sizes_list:
        for seed in seeds:
            holds, description, values, numeric = trial(sizes, seed)
            decisive = (not holds) if kind == "forall" else holds
            if not decisive:
                continue
            cex = Counterexample(_named_sizes(sizes), values, reason=description,
                                 exact_recheck=f"exact rational arithmetic, seed {seed}",
                                 numeric_recheck=numeric)
            if kind == "forall":
                return Verdict(Status.REFUTED, f"exact instance ({what})", counterexample=cex)
            return Verdict(Status.PROVED, f"exact witness ({what})", quantities={"witness": cex.as_dict()})
    return Verdict(Status.NUMERIC_ONLY, f"{what}: not decided on the exact instances tried",
                   sizes=[_named_sizes(s) for s in sizes_list])

# --------------------------------------------------------------------------------------------
# real arithmetic with absolute values (A1): sign cases + Fourier–Motzkin, exact rationals
# --------------------------------------------------------------------------------------------
#
# A statement ``∀ vars: H_1 ∧ … ∧ H_k ⇒ C`` whose atoms are (strict or non-strict) inequalities
# between linear expressions, possibly under (nested) absolute values. It is false iff
# ``H_1 ∧ … ∧ H_k ∧ ¬C`` has a real solution. Every ``|e|`` splits into the cases ``e ≥ 0`` (it
# is ``e``) and ``e < 0`` (it is ``−e``); each case is a conjunction of linear inequalities,
# decided exactly by Fourier–Motzkin elimination over the rationals, which also returns a
# solution (back-substitution). Both steps are complete for linear real arithmetic, so the
# procedure is a decision procedure: ``proved`` means no case is satisfiable, ``refuted`` comes
# with a rational model, re-checked exactly on the original formulas (absolute values and all)
# and in float64.


def _linear_coeffs(expr, variables) -> tuple[dict, Fraction]:
    """``expr`` (linear in ``variables``, rational coefficients) as ({var: coeff}, constant)."""
    terms = sp.expand(sp.sympify(expr)).as_coefficients_dict()
    allowed = set(variables)
    coeffs, c0 = {}, Fraction(0)
    for mono, c in terms.items():
        if not c.is_Rational:
            raise ValueError(f"non-rational coefficient {c} in {expr}")
        value = Fraction(int(c.p), int(c.q))
        if mono == 1:
            c0 += value
        elif mono in allowed:
            coeffs[mono] = coeffs.get(mono, Fraction(0)) + value
        else:
            raise ValueError(f"not linear in {variables}: term {mono} of {expr}")
    return {k: v for k, v in coeffs.items() if v != 0}, c0


def _as_constraints(rel) -> list[tuple[sp.Expr, bool]]:
    """A relational as ``(e, strict)`` meaning ``e > 0`` (strict) or ``e ≥ 0``."""
    if isinstance(rel, sp.And):
        return [c for a in rel.args for c in _as_constraints(a)]
    if isinstance(rel, (sp.StrictLessThan, sp.StrictGreaterThan)):
        big, small = (rel.rhs, rel.lhs) if isinstance(rel, sp.StrictLessThan) else (rel.lhs, rel.rhs)
        return [(big - small, True)]
    if isinstance(rel, (sp.LessThan, sp.GreaterThan)):
        big, small = (rel.rhs, rel.lhs) if isinstance(rel, sp.LessThan) else (rel.lhs, rel.rhs)
        return [(big - small, False)]
    if isinstance(rel, sp.Equality):
        return [(rel.lhs - rel.rhs, False), (rel.rhs - rel.lhs, False)]
    raise ValueError(f"not an inequality: {rel}")


def _negate(rel):
    """``¬rel`` for one inequality (a conclusion)."""
    table = {sp.StrictLessThan: sp.GreaterThan, sp.LessThan: sp.StrictGreaterThan,
             sp.StrictGreaterThan: sp.LessThan, sp.GreaterThan: sp.StrictLessThan}
    for cls, neg in table.items():
        if isinstance(rel, cls):
            return neg(rel.lhs, rel.rhs, evaluate=False)
    raise ValueError(f"the conclusion must be one inequality, not {rel}")


def _sign_cases(constraints: list[tuple[sp.Expr, bool]]):
    """Every sign case: (linear constraints, the case split made)."""
    def inner_abs(exprs):
        for e in exprs:
            for node in sp.preorder_traversal(e):
                if isinstance(node, sp.Abs) and not node.args[0].has(sp.Abs):
                    return node
        return None

    stack = [(constraints, [])]
    while stack:
        cons, split = stack.pop()
        atom = inner_abs([e for e, _ in cons])
        if atom is None:
            yield cons, split
            continue
        arg = atom.args[0]
        for sign, extra in ((1, (arg, False)), (-1, (-arg, True))):
            new = [(e.xreplace({atom: sign * arg}), s) for e, s in cons] + [extra]
            stack.append((new, split + [(sign, arg)]))


def fourier_motzkin(constraints: list[tuple[dict, Fraction, bool]], variables: list):
    """A rational solution of ``Σ a_v v + c > 0`` / ``≥ 0`` (strict flag), or None.

    Exact Fourier–Motzkin elimination, then back-substitution choosing an integer inside each
    interval when there is one (else the midpoint).
    """
    levels = []  # constraints still containing variables[k] when it is eliminated
    cons = [(dict(a), Fraction(c), s) for a, c, s in constraints]
    for v in variables:
        with_v = [x for x in cons if x[0].get(v, 0) != 0]
        rest = [x for x in cons if x[0].get(v, 0) == 0]
        levels.append(with_v)
        lower = [x for x in with_v if x[0][v] > 0]
        upper = [x for x in with_v if x[0][v] < 0]
        new = []
        for la, lc, ls in lower:
            for ua, uc, us in upper:
                p, q = -ua[v], la[v]  # p·(lower) + q·(upper) eliminates v
                a = {k: p * la.get(k, 0) + q * ua.get(k, 0) for k in set(la) | set(ua) if k != v}
                a = {k: x for k, x in a.items() if x != 0}
                new.append((a, p * lc + q * uc, ls or us))
        seen, cons = set(), []
        for a, c, s in rest + new:
            key = (frozenset(a.items()), c, s)
            if key not in seen:
                seen.add(key)
                cons.append((a, c, s))
    for a, c, s in cons:  # no variables left
        if (c <= 0) if s else (c < 0):
            return None
    model: dict = {}
    for v, with_v in reversed(list(zip(variables, levels))):
        lo = hi = None
        lo_strict = hi_strict = False
        for a, c, s in with_v:
            rest = c + sum(x * model.get(k, Fraction(0)) for k, x in a.items() if k != v)
            bound = -rest / a[v]
            if a[v] > 0:  # v > bound
                if lo is None or bound > lo or (bound == lo and s):
                    lo, lo_strict = bound, s
            else:
                if hi is None or bound < hi or (bound == hi and s):
                    hi, hi_strict = bound, s
        model[v] = _pick(lo, lo_strict, hi, hi_strict)
    return model


def _pick(lo, lo_strict, hi, hi_strict) -> Fraction:
    import math

    if lo is None and hi is None:
        return Fraction(0)
    if lo is None:
        cand = Fraction(math.floor(hi))
        return cand if cand < hi or (cand == hi and not hi_strict) else cand - 1
    if hi is None:
        cand = Fraction(math.ceil(lo))
        return cand if cand > lo or (cand == lo and not lo_strict) else cand + 1
    if lo == hi:
        if lo_strict or hi_strict:
            raise KernelInconsistencyError("Fourier–Motzkin: empty interval after elimination")
        return lo
    for cand in (Fraction(0), Fraction(math.ceil(lo)), Fraction(math.floor(hi))):
        if (cand > lo or (cand == lo and not lo_strict)) and (cand < hi or (cand == hi and not hi_strict)):
            return cand
    return (lo + hi) / 2


def _holds_exact(rel, values: dict) -> bool:
    out = rel.xreplace({k: sp.Rational(v.numerator, v.denominator) for k, v in values.items()})
    if out not in (sp.true, sp.false):
        raise KernelInconsistencyError(f"exact re-check did not evaluate: {out}")
    return bool(out)


def _holds_float(rel, values: dict) -> bool:
    out = rel.xreplace({k: sp.Float(float(v)) for k, v in values.items()})
    if out not in (sp.true, sp.false):
        raise KernelInconsistencyError(f"float64 re-check did not evaluate: {out}")
    return bool(out)


def check_real_implication(variables: list, hypotheses: list, conclusion, *, realise: Callable | None = None,
                           corrected: tuple[str, Callable[[], Verdict]] | None = None,
                           sample: Callable | None = None, samples: int = 200) -> Verdict:
    """Decide ``∀ variables: ∧ hypotheses ⇒ conclusion`` over the reals (atoms: linear
    inequalities under absolute values); see the comment above.

    ``realise(model)`` turns a rational model into a concrete object (e.g. a network) and
    re-checks it there, returning a description; ``sample(rng)`` draws float values for the
    variables (numeric confirmation of a proved statement: every draw that satisfies the
    hypotheses satisfies the conclusion); ``corrected`` is ``(latex, procedure)``.
    """
    variables = list(variables)
    base = [c for h in hypotheses for c in _as_constraints(h)]
    negated = _as_constraints(_negate(conclusion))
    cases = 0
    for cons, split in _sign_cases(base + negated):
        cases += 1
        linear = [(*_linear_coeffs(e, variables), s) for e, s in cons]
        model = fourier_motzkin(linear, variables)
        if model is None:
            continue
        model = {v: model.get(v, Fraction(0)) for v in variables}
        if not all(_holds_exact(h, model) for h in hypotheses) or _holds_exact(conclusion, model):
            raise KernelInconsistencyError("Fourier–Motzkin model does not re-check exactly")
        if not all(_holds_float(h, model) for h in hypotheses) or _holds_float(conclusion, model):
            raise KernelInconsistencyError("Fourier–Motzkin model not confirmed in float64")
        lhs = conclusion.lhs.xreplace({k: sp.Rational(v.numerator, v.denominator) for k, v in model.items()})
        rhs = conclusion.rhs.xreplace({k: sp.Rational(v.numerator, v.denominator) for k, v in model.items()})
        cex = Counterexample(
            {}, {str(k): v for k, v in model.items()}, lhs=lhs, rhs=rhs,
            reason=f"the hypotheses hold and {latex(conclusion)} fails (sign case "
                   f"{'; '.join(('≥0: ' if sg > 0 else '<0: ') + str(a) for sg, a in split) or 'none'})",
            exact_recheck=f"exact (rationals): hypotheses true, conclusion {lhs} vs {rhs} false",
            numeric_recheck="float64: hypotheses true, conclusion false",
        )
        if realise is not None:
            cex.exact_recheck += "; " + realise(model)
        corr = None
        if corrected is not None:
            corr = Corrected(corrected[0], corrected[1]())
        return Verdict(Status.REFUTED, "sign-case split + Fourier–Motzkin elimination over the rationals "
                       "(a decision procedure for linear real arithmetic); rational model",
                       counterexample=cex, corrected=corr)
    numeric = None
    if sample is not None:
        rng = np.random.default_rng(0)
        f_h = sp.lambdify(variables, sp.And(*hypotheses), "math")
        f_c = sp.lambdify(variables, conclusion, "math")
        tried = 0
        for _ in range(samples):
            vals = sample(rng)
            if bool(f_h(*vals)):
                tried += 1
                if not bool(f_c(*vals)):
                    raise KernelInconsistencyError(f"proved, but a float64 sample violates it: {vals}")
        numeric = NumericWitness([{"draws satisfying the hypotheses": tried}], [0], 0.0, 0.0,
                                 "inequalities evaluated in float64 at random draws")
    return Verdict(Status.PROVED, f"sign-case split ({cases} cases) + Fourier–Motzkin elimination over the "
                   "rationals: hypotheses ∧ ¬conclusion unsatisfiable in every case (for all real values)"
                   + (f"; float64: the conclusion holds at all {numeric.sizes[0]['draws satisfying the hypotheses']} "
                      "random draws satisfying the hypotheses" if numeric else ""),
                   numeric=numeric)


# --------------------------------------------------------------------------------------------
# a formula against a reference computation on listed instances (A4)
# --------------------------------------------------------------------------------------------


@dataclass
class Instance:
    """One instance of "``formula`` reproduces ``reference``": ``compute()`` returns the pair
    ``(formula value, reference value)`` (object arrays of ints/fractions when ``exact``, else
    float64) or raises :class:`~symuat.errors.ShapeMismatchError` when the formula is ill-typed."""

    name: str
    sizes: dict
    exact: bool
    compute: Callable[[], tuple]
    values: dict | None = None


def check_matches_reference(instances: list[Instance], *, what: str, corrected: tuple[str, Callable[[], Verdict]] | None = None,
                    stop_at_exact_failure: bool = True) -> Verdict:
    """Decide "the formula equals the reference on every listed instance".

    An ill-typed formula (the computation raises a shape error) is ``refuted`` as such; an exact
    instance that differs is a counterexample re-checked exactly (recomputed) and in float64; a
    float64 instance whose relative residual exceeds :data:`TOLERANCE` is a numeric
    counterexample. When every instance agrees: ``proved-at-sizes`` if every instance is exact,
    else ``numeric-only``. The relative error of every instance is reported (``quantities``).
    """
    errors: dict[str, str] = {}
    failure = float_failure = None
    def values_of(inst):
        return (inst.values() if callable(inst.values) else inst.values) or {}

    for inst in sorted(instances, key=lambda i: i.exact):  # float64 first: their errors are all reported
        try:
            got, want = inst.compute()
        except ShapeMismatchError as exc:
            cex = Counterexample(inst.sizes, values_of(inst), reason=f"ill-typed: {exc}",
                                 exact_recheck="exact: the shapes are not conformable (no value exists)",
                                 numeric_recheck="float64: the same shapes")
            return Verdict(Status.REFUTED, f"{what}: the formula is ill-typed", counterexample=cex,
                           corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
        if inst.exact:
            diff = [(idx, x - y) for (idx, x), y in zip(np.ndenumerate(got), np.asarray(want).flat) if x != y]
            err = _residual(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
            errors[inst.name] = "0 (exact)" if not diff else (
                f"{err:.3g} (relative; exact: max |Δ| = {float(max(abs(d) for _, d in diff)):.6g}, a nonzero rational)")
            if diff and failure is None:
                again, want2 = inst.compute()  # re-check: recomputed from scratch
                if not any(x != y for x, y in zip(np.asarray(again).flat, np.asarray(want2).flat)):
                    raise KernelInconsistencyError(f"{inst.name}: exact difference not reproduced")
                if err <= TOLERANCE:
                    raise KernelInconsistencyError(f"{inst.name}: exact difference not seen in float64")
                idx, d = diff[0]
                failure = Counterexample(
                    inst.sizes, values_of(inst), lhs=got, rhs=want,
                    reason=f"{inst.name}: the formula differs from the reference",
                    exact_recheck=f"exact: entry {idx} differs by {d} ({len(diff)} of {np.asarray(got).size} entries differ)",
                    numeric_recheck=f"float64 of the same values: relative residual {err:.3g} > tolerance {TOLERANCE}")
                if stop_at_exact_failure:
                    break
        else:
            got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
            if not (np.all(np.isfinite(got)) and np.all(np.isfinite(want))):
                raise KernelInconsistencyError(f"{inst.name}: non-finite value")
            err = _residual(got, want)
            errors[inst.name] = f"{err:.3g} (float64, relative)"
            if err > TOLERANCE and float_failure is None:
                float_failure = Counterexample(inst.sizes, values_of(inst), lhs=got, rhs=want,
                                         reason=f"{inst.name}: the formula differs from the reference",
                                         exact_recheck="none (float64 instance)",
                                         numeric_recheck=f"float64: relative residual {err:.3g} > tolerance {TOLERANCE}")
    quantities = {"relative error per instance": errors,
                  "reproduced on": [k for k, v in errors.items() if v.startswith("0 (exact)")
                                    or ("float64" in v and float(v.split()[0]) <= TOLERANCE)]}
    failure = failure or float_failure
    if failure is not None:
        return Verdict(Status.REFUTED, f"{what}: an instance differs from the reference", counterexample=failure,
                       quantities=quantities, corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
    if all(i.exact for i in instances):
        return Verdict(Status.PROVED_AT_SIZES, f"{what}: exact (rational) evaluation equals the reference on every instance",
                       sizes=[i.sizes for i in instances], quantities=quantities)
    return Verdict(Status.NUMERIC_ONLY, f"{what}: equal to the reference on every instance "
                   f"({sum(i.exact for i in instances)} exact, {sum(not i.exact for i in instances)} float64)",
                   sizes=[i.sizes for i in instances], quantities=quantities,
                   numeric=NumericWitness([i.sizes for i in instances], [], 0.0, TOLERANCE, TOLERANCE_REASON))


# --------------------------------------------------------------------------------------------
# "small parameters ⇒ small contribution" (A2): a vanishing bound, or a witness family
# --------------------------------------------------------------------------------------------


import functools  # noqa: E402  (kept with the procedure that uses it, for clean merges)


@functools.lru_cache(maxsize=256)
def _limit_right(expr, var):
    """``lim_{var→0⁺} expr`` (SymPy), memoised: several readings share one witness family."""
    return sp.limit(expr, var, 0, "+")


def check_vanishing(delta: sp.Symbol, *, witness: dict | None = None, bound: dict | None = None,
                    what: str = "", corrected: tuple[str, Callable[[], Verdict]] | None = None) -> Verdict:
    r"""Decide ":math:`\forall\eta>0\ \exists\delta>0`: parameters bounded by δ ⇒ contribution ≤ η".

    ``witness``: ``{"value": c(δ), "constrained": {name: p(δ)}, "free": {…}, "point": …}`` — a
    family of parameters, the constrained ones within δ (checked exactly at δ = 1/10, 1/1000), and
    the contribution :math:`c(\delta)` at a point of :math:`\mathbf I_n`; it refutes the claim when
    :math:`\lim_{\delta\to0^+}c(\delta)>0` (SymPy limit), confirmed by 30-digit and float64
    evaluation at δ = 1/10, 1/1000.
    ``bound``: ``{"expr": B(δ, …), "facts": [(text, proof)], "confirm": f(rng) → [(|c|, B)]}`` —
    proves the claim when every fact's proof returns True and :math:`\lim_{\delta\to0^+}B=0`;
    float64 draws must respect the bound (else the bound is wrong: a kernel error). A bound
    whose facts are not all proved gives ``numeric-only``.
    """
    refutation = proof = None
    facts_ok = False
    if witness is not None:
        for name, p in witness["constrained"].items():
            for dv in (sp.Rational(1, 10), sp.Rational(1, 1000)):
                val = sp.sympify(p).subs(delta, dv)
                if not bool(sp.Abs(val) <= dv):
                    raise KernelInconsistencyError(f"witness parameter {name} = {val} exceeds δ = {dv}")
        c = sp.sympify(witness["value"])
        lim = _limit_right(c, delta)
        if lim in (sp.oo, -sp.oo) or (lim.is_real and lim.is_nonzero):
            at = {}
            for dv in (sp.Rational(1, 10), sp.Rational(1, 1000)):
                hi = sp.N(c.subs(delta, dv), 30)
                fl = float(sp.lambdify(delta, c, "mpmath")(float(dv)))
                if not (abs(hi) > 0 and abs(fl) > 0 and np.isfinite(fl)):
                    raise KernelInconsistencyError(f"witness value at δ = {dv} not positive: {hi}, {fl}")
                at[f"δ = {dv}"] = f"{sp.N(hi, 12)}"
            refutation = Counterexample(
                {}, {k: str(v) for k, v in {**witness["constrained"], **witness.get("free", {})}.items()},
                lhs=str(c), rhs=str(lim),
                reason=f"constrained parameters within δ, yet the contribution at {witness.get('point', 'x')} "
                       f"tends to {lim} as δ → 0⁺",
                exact_recheck=f"exact: lim_(δ→0⁺) {sp.sstr(c)} = {lim} (SymPy limit); values {at}",
                numeric_recheck="float64 at δ = 1/10, 1/1000: nonzero")
    if bound is not None:
        B = sp.sympify(bound["expr"])
        facts = [(text, bool(prove())) for text, prove in bound.get("facts", [])]
        lim = _limit_right(B, delta)
        if lim != 0:
            raise KernelInconsistencyError(f"bound {B} does not vanish as δ → 0⁺ (limit {lim})")
        rng = np.random.default_rng(0)
        pairs = bound["confirm"](rng)
        worst = max((lhs - rhs) / max(1.0, abs(rhs)) for lhs, rhs in pairs)
        if not all(np.isfinite([x for pr in pairs for x in pr])):
            raise KernelInconsistencyError("non-finite value in the bound's confirmation")
        if worst > TOLERANCE:
            raise KernelInconsistencyError(f"bound {B} violated in float64 (excess {worst:.3g})")
        facts_ok = all(ok for _, ok in facts)
        numeric = NumericWitness([{"draws": len(pairs)}], [0], max(worst, 0.0), TOLERANCE,
                                 "|contribution| ≤ bound at random parameters within δ and points of I_n")
        proof = Verdict(Status.PROVED if facts_ok else Status.NUMERIC_ONLY,
                        ("bound proved: " if facts_ok else "bound confirmed in float64 only (unproved facts: "
                         + "; ".join(t for t, ok in facts if not ok) + "): ")
                        + f"|contribution| ≤ {sp.sstr(B)} → 0 as δ → 0⁺",
                        numeric=numeric, quantities={"bound": str(B), "facts": [t for t, _ in facts]})
    if refutation is not None and proof is not None and facts_ok:
        raise KernelInconsistencyError(f"{what}: both a proved bound and a witness")
    if refutation is not None:
        return Verdict(Status.REFUTED, f"{what}: a witness family within δ whose contribution does not vanish",
                       counterexample=refutation,
                       corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
    if proof is not None:
        return proof
    raise KernelInconsistencyError(f"{what}: neither a witness nor a bound to decide with")
