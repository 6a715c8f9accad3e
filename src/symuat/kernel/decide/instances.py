r"""Instances of a statement: its leaves, dimensions and scalars, random values on its hypotheses,
and the float64 numeric confirmation every procedure reports.

Soundness: nothing here produces a status. Values are drawn exactly (small integers), as symbolic
entries, or in float64 (standard normal), always *on the statement's hypotheses*
(:func:`~symuat.kernel.hypotheses.impose_all`): every hypothesis holds on every instance at once,
or drawing fails with a clear error, so a counterexample is never one the hypotheses exclude.

Tolerance (float64): a residual is ``max|lhs−rhs| / max(1, max|lhs|, max|rhs|)`` and must be
``≤ 1e-12``. Inputs are standard normal and every instance has at most a few chained products
with inner length ``k ≤ 64``; the forward error of such a product is at most ``γ_k ≈ k·u``
(``u = 2^-53 ≈ 1.1e-16``) relative to the magnitudes, so a true identity leaves ``≲ 3·10^-14``;
``1e-12`` keeps a 30× margin, while a false identity differs by an O(1) polynomial in O(1)
random values. A numeric confirmation records every instance's residual (sizes and seed), not
only their maximum.
"""

from __future__ import annotations

import itertools
from typing import Iterable

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
    NumericWitness,
)
from functools import lru_cache

from symuat.kernel.evaluate import Evaluator, size_at, sizes_key
from symuat.kernel.hypotheses import impose_all


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
            if isinstance(node, sp.MatMul):
                for c in node.args:
                    if not isinstance(c, MatrixExpr) and any(_not_real(q) for q in sp.preorder_traversal(c)):
                        from symuat.errors import describe

                        raise UnsupportedExpressionError(
                            f"unsupported: the coefficient {_short(c)} is not real (SymPy's power of a negative "
                            f"number is the principal complex root: ≈ {describe(sp.N(c, 4))}) — the kernel decides "
                            "statements over the reals; for a real root write sympy.real_root")
            if isinstance(node, MatrixExpr):
                if isinstance(node, _SUPPORTED) or hasattr(node, "_symuat_evaluate"):
                    continue
                if isinstance(node, sp.MatPow) and node.exp.is_Integer and int(node.exp) >= 1:
                    continue
                raise UnsupportedExpressionError(
                    f"unsupported: {type(node).__name__} ({_short(node)}) — the kernel has rules for "
                    "matrix symbols, identity/zero/ones, transpose, sums, products (integer powers), "
                    "scalar coefficients, Kronecker products, Trace, HadamardProduct, DiagMatrix, "
                    "DiagonalOf, Inverse of named matrices, Determinant at explicit sizes (symuat.kernel."
                    "language) and symuat's own nodes"
                )
            elif isinstance(node, sp.Basic) and not isinstance(node, (sp.Expr, sp.core.symbol.Str)) \
                    and not isinstance(node, (sp.Tuple, sp.logic.boolalg.BooleanAtom)):  # flags of custom nodes
                raise UnsupportedExpressionError(f"unsupported: {type(node).__name__} ({_short(node)})")
            elif isinstance(node, sp.Expr) and not isinstance(node, MatrixExpr) \
                    and any(isinstance(a, MatrixExpr) for a in node.args):
                raise UnsupportedExpressionError(
                    f"unsupported: {type(node).__name__} ({_short(node)}) — a scalar function of a "
                    "matrix has no rule in the kernel beyond traces, determinants at explicit sizes and "
                    "1×1 entries (symuat.kernel.language)"
                )


def _not_real(node) -> bool:
    """A scalar constant that is not real by construction: the imaginary unit, or a non-integer power
    of a negative number (``(−8)^(1/3)`` is SymPy's principal root ``1 + √3·i``, not −2). Structural,
    so it never asks SymPy's assumptions anything dear."""
    if node is sp.I:
        return True
    return (isinstance(node, sp.Pow) and node.base.is_number and node.base.is_Rational
            and node.base.is_negative and node.exp.is_Rational and not node.exp.is_Integer)


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
                out |= sp.sympify(node.args[1]).free_symbols  # the range of a head sum (2r+1 taps)
            if isinstance(node, MatrixExpr) and hasattr(node, "_symuat_evaluate"):
                # a size argument of a custom node that occurs in no shape (a shift's r)
                for arg in node.args:
                    if isinstance(arg, sp.Expr) and not isinstance(arg, MatrixExpr):
                        out |= {x for x in arg.free_symbols if x.is_integer and x.is_positive}
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


def shape_at(shape: tuple, sizes: dict) -> tuple[int, ...]:
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
    from symuat.kernel.evaluate import check_entries

    for name, shape_exprs in syms.items():
        shape = shape_at(shape_exprs, sizes)
        check_entries(name, shape, mode, sizes)  # before the leaf is drawn
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


def evaluate_at(expr, sizes, values, mode, sigma=None):
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
    from symuat.expr.elementwise import Sigma

    return any(isinstance(node, Sigma) for e in exprs for node in sp.preorder_traversal(e))


def named_sizes(sizes: dict) -> dict[str, int]:
    return {str(k): int(v) for k, v in sizes.items()}


def relative_residual(a: np.ndarray, b: np.ndarray) -> float:
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
    measured = []
    for sizes in sizes_list:
        for seed in seeds:
            rng = np.random.default_rng(seed)
            values = random_values(syms, sizes, rng, "float", scalars)
            left, err_l = evaluate_at(lhs, sizes, values, "float")
            right, err_r = evaluate_at(rhs, sizes, values, "float")
            if err_l or err_r:
                raise KernelInconsistencyError(
                    f"numeric confirmation at {sizes}: a side is undefined ({err_l or err_r})"
                )
            if left.shape != right.shape:
                raise KernelInconsistencyError(f"numeric confirmation at {sizes}: shapes differ")
            res = relative_residual(left, right)
            measured.append({"sizes": named_sizes(sizes), "seed": int(seed), "residual": res})
            worst = res if not np.isfinite(res) else max(worst, res)  # NaN must not be skipped
            if not np.isfinite(worst):
                break
        used.append(named_sizes(sizes))
    return NumericWitness(used, list(seeds), worst, TOLERANCE, TOLERANCE_REASON, instances=measured)


def _confirm_or_raise(lhs, rhs, sizes_list, what: str) -> NumericWitness:
    from symuat.kernel.constants import _UNDECIDED

    witness = numeric_confirmation(lhs, rhs, sizes_list)
    if _UNDECIDED.get():  # an undecided constant comparison: float64 cannot contradict what was not decided
        return witness  # (the verdict is capped at numeric-only, the comparison and residual stated)
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
        left, err_l = evaluate_at(lhs, sizes, values, "exact")
        right, err_r = evaluate_at(rhs, sizes, values, "exact")
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
