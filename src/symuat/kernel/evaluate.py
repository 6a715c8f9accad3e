"""Concrete evaluation of a matrix expression at explicit sizes.

One interpreter serves three uses, chosen by the arrays it is given:

* **exact**: NumPy ``object`` arrays of Python integers or ``fractions.Fraction``;
  arithmetic is exact. Used to search for and re-check counterexamples.
* **symbolic-explicit**: ``object`` arrays of SymPy symbols; every entry of the result is a
  polynomial (with opaque σ applications) that :mod:`symuat.kernel.decide` expands. Used for
  ``proved-at-sizes``.
* **float64**: numeric confirmation.

Shapes are checked at every operation; a mismatch raises
:class:`~symuat.errors.ShapeMismatchError` naming both operands. Nothing is broadcast.

A size budget (:data:`BUDGET`) is checked *before* anything is allocated: a node whose entries, or a
product whose multiply-adds, exceed it in the mode at hand is a
:class:`~symuat.errors.KernelInputError` naming the node and its size (``Identity(10**6)`` would be
7 TiB of Python objects). Exact products are computed in row blocks, so a signal (an alarm, Ctrl-C)
is handled within one block rather than after one uninterruptible NumPy call.

>>> from sympy import MatrixSymbol
>>> Evaluator({}, {}, "exact")(sp.Identity(10**6))
Traceback (most recent call last):
...
symuat.errors.KernelInputError: evaluation budget: I at sizes {} is 1000000×1000000 = 1e+12 entries in exact arithmetic, beyond 4e+06: list smaller sizes
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, reduce
from typing import Callable

import numpy as np
import sympy as sp
from sympy.matrices.expressions import (
    Identity,
    KroneckerProduct,
    MatAdd,
    MatMul,
    MatPow,
    MatrixExpr,
    MatrixSymbol,
    OneMatrix,
    Transpose,
    ZeroMatrix,
)

from symuat.errors import KernelInputError, ShapeMismatchError

#: per mode, what one evaluation may materialise: (entries of one array, multiply-adds of one
#: product). Exact: Python integers at ~50 ns a multiply-add (1e8 ≈ 5 s); symbolic: SymPy terms at
#: ~10 µs; float64: BLAS. Every budget of :mod:`symuat.kernel.decide` (probes 2e6, the degree grid
#: 3e7 in total, the expansion limit 2e6) lies below these.
BUDGET = {"exact": (4_000_000, 100_000_000), "symbolic": (1_000_000, 20_000_000),
          "float": (50_000_000, 20_000_000_000)}
#: multiply-adds of one block of an exact (object) product between two signal checks
BLOCK = 1_000_000


def check_entries(what, shape, mode: str, sizes=None) -> None:
    """A :class:`~symuat.errors.KernelInputError` when an array of ``shape`` would exceed the entry
    budget of ``mode`` (:data:`BUDGET`), before it is allocated. ``what`` names it (a string, or a
    callable giving one: printing an expression costs more than the check)."""
    entries = 1
    for k in shape:
        entries *= int(k)
    limit = BUDGET.get(mode, BUDGET["exact"])[0]
    if entries > limit:
        at = {str(k): int(v) for k, v in (sizes or {}).items()}
        what = what() if callable(what) else what
        raise KernelInputError(f"evaluation budget: {what} at sizes {at} is {'×'.join(str(int(k)) for k in shape)} "
                               f"= {entries:.3g} entries in {mode} arithmetic, beyond {limit:.0e}: list smaller sizes")


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b``; for Python-object arrays in row blocks of about :data:`BLOCK` multiply-adds, so that
    a pending signal is handled between blocks (NumPy's object loop never checks for one)."""
    rows, inner = a.shape
    cols = b.shape[1]
    if a.dtype != object or rows * inner * cols <= BLOCK:
        return a @ b
    step = max(1, BLOCK // max(1, inner * cols))
    return np.concatenate([a[i:i + step] @ b for i in range(0, rows, step)], axis=0)


def kron(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.kron(a, b)`` of two 2-D arrays: the same products ``a[i, j] * b[k, l]`` at the same
    places, without ``np.kron``'s n-dimensional bookkeeping (most of its time on the small
    arrays of the checks).

    >>> a, b = np.arange(6).reshape(2, 3), np.arange(4).reshape(4, 1) - 1
    >>> bool((kron(a, b) == np.kron(a, b)).all()), kron(a, b).shape
    (True, (8, 3))
    """
    return np.multiply(a[:, None, :, None], b[None, :, None, :]).reshape(a.shape[0] * b.shape[0],
                                                                          a.shape[1] * b.shape[1])


@lru_cache(maxsize=1 << 16)
def size_at(dim, sizes: tuple):
    """``dim`` (an int or a SymPy expression in the dimension symbols) at the sizes ``sizes``
    (a tuple of ``(symbol, int)`` pairs), or None when it has no integer value there.

    Pure, hence cached: dimension bookkeeping (the shapes of every node at every size tried) is
    the same handful of substitutions repeated many thousand times across the checks.
    """
    value = sp.sympify(dim).subs(dict(sizes))
    return int(value) if value.is_Integer else None


@lru_cache(maxsize=1 << 16)
def _shape_at_sizes(expr, sizes: tuple):
    """The integer shape of ``expr`` at ``sizes`` (None when it has none): the budget's question,
    cached — a node's symbolic shape (a head family's, a Kronecker product's) is dear to compute."""
    try:
        rows, cols = size_at(expr.rows, sizes), size_at(expr.cols, sizes)
    except Exception:  # no shape at these sizes: the evaluation itself says why
        return None
    return None if rows is None or cols is None else (rows, cols)


def sizes_key(sizes: dict) -> tuple:
    """A hashable form of a size assignment, for :func:`size_at`."""
    return tuple(sizes.items())


def _name(expr) -> str:
    from symuat.errors import describe

    return describe(expr, 60)


@dataclass
class Evaluator:
    """Evaluate matrix expressions with concrete dimensions and values.

    ``dims`` maps dimension symbols to integers; ``values`` maps matrix-symbol names to 2-D
    arrays; ``sigma`` is the elementwise function used for σ nodes; ``mode`` is ``"exact"``,
    ``"symbolic"`` or ``"float"``.
    """

    dims: dict
    values: dict
    mode: str = "exact"
    sigma: Callable | None = None
    cache: dict = field(default_factory=dict)
    scalars: dict = field(default_factory=dict)  # name of a scalar symbol (not a dimension) -> value
    env: dict = field(default_factory=dict)  # head symbol -> head number, inside a head sum
    _dims_key: tuple | None = field(default=None, repr=False, compare=False)

    # -- helpers ---------------------------------------------------------------------------
    def size(self, dim) -> int:
        if isinstance(dim, int):
            return dim
        key = self._dims_key
        if key is None:
            key = self._dims_key = sizes_key(self.dims)
        value = size_at(dim, key)
        if value is None:
            raise ValueError(f"dimension {dim} has no value (given {self.dims})")
        return value

    def shape(self, expr) -> tuple[int, int]:
        key = self._dims_key
        if key is None:
            key = self._dims_key = sizes_key(self.dims)
        shape = _shape_at_sizes(expr, key)  # one memo look-up for both sizes
        return shape if shape is not None else (self.size(expr.rows), self.size(expr.cols))  # (the error)

    def eye(self, n: int) -> np.ndarray:
        if self.mode == "float":
            return np.eye(n)
        out = np.zeros((n, n), dtype=object)
        out[...] = 0
        for k in range(n):
            out[k, k] = 1
        return out

    def const(self, shape, value) -> np.ndarray:
        if self.mode == "float":
            return np.full(shape, float(value))
        out = np.empty(shape, dtype=object)
        out[...] = value
        return out

    def scalar(self, c):
        c = sp.sympify(c).subs(self.dims)
        if self.scalars and c.free_symbols:
            c = c.subs({s: self.scalars[s.name] for s in c.free_symbols if s.name in self.scalars})
        if c.free_symbols and self.mode != "symbolic":
            from symuat.errors import UnsupportedExpressionError

            raise UnsupportedExpressionError(
                f"scalar coefficient {c} has no value: {', '.join(sorted(map(str, c.free_symbols)))} "
                "is neither a dimension nor a given scalar"
            )
        if self.mode == "float":
            if not c.is_number or c.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
                from symuat.errors import UnsupportedExpressionError

                raise UnsupportedExpressionError(f"scalar coefficient {c} is not a finite number")
            return float(c)
        if self.mode == "exact" and c.is_Rational:
            from fractions import Fraction

            return int(c) if c.is_Integer else Fraction(int(c.p), int(c.q))
        return c

    # -- evaluation ------------------------------------------------------------------------
    def _budget(self, expr) -> None:
        key = self._dims_key
        if key is None:
            key = self._dims_key = sizes_key(self.dims)
        shape = _shape_at_sizes(expr, key)
        if shape is not None:
            check_entries(lambda: _name(expr), shape, self.mode, self.dims)

    def _product_budget(self, left, right, a: np.ndarray, b: np.ndarray) -> None:
        work = a.shape[0] * a.shape[1] * b.shape[1]
        limit = BUDGET.get(self.mode, BUDGET["exact"])[1]
        if work > limit:
            left, right = left(), right()
            at = {str(k): int(v) for k, v in self.dims.items()}
            raise KernelInputError(
                f"evaluation budget: {left} · {right} at sizes {at} is {a.shape[0]}×{a.shape[1]} times "
                f"{b.shape[0]}×{b.shape[1]} = {work:.3g} multiply-adds in {self.mode} arithmetic, beyond "
                f"{limit:.0e}: list smaller sizes")

    def __call__(self, expr) -> np.ndarray:
        key = (expr, frozenset(self.env.items())) if self.env else expr
        if key in self.cache:
            return self.cache[key]
        out = self._eval(expr)
        if out.ndim != 2:
            raise TypeError(f"evaluation of {expr} gave a {out.ndim}-D array")
        self.cache[key] = out
        return out

    def _eval(self, expr) -> np.ndarray:
        if hasattr(expr, "_symuat_evaluate"):
            self._budget(expr)  # a node of symuat's own allocates its result itself
            return expr._symuat_evaluate(self)
        if isinstance(expr, MatrixSymbol):
            if expr.name not in self.values:
                raise KeyError(f"no value given for {expr.name}")
            value = self.values[expr.name]
            want = self.shape(expr)
            if tuple(value.shape) != want:
                raise ShapeMismatchError(
                    "value", expr.name, value.shape, f"the declared {expr.name}", want,
                    "a value must have the declared shape",
                )
            return value
        if isinstance(expr, (Identity, ZeroMatrix, OneMatrix)):
            self._budget(expr)
        if isinstance(expr, Identity):
            return self.eye(self.size(expr.rows))
        if isinstance(expr, ZeroMatrix):
            return self.const(self.shape(expr), 0)
        if isinstance(expr, OneMatrix):
            return self.const(self.shape(expr), 1)
        if isinstance(expr, Transpose):
            return self(expr.arg).T
        if isinstance(expr, MatAdd):
            parts = [self(a) for a in expr.args]
            total = parts[0]
            for arg, part in zip(expr.args[1:], parts[1:]):
                if part.shape != total.shape:
                    raise ShapeMismatchError(
                        "sum", _name(expr.args[0]), total.shape, _name(arg), part.shape,
                        "terms of a sum must have equal shapes",
                    )
                total = total + part
            return total
        if isinstance(expr, MatMul):
            coeff = 1
            result = None
            prev = None
            for arg in expr.args:
                if not isinstance(arg, MatrixExpr):
                    coeff = self.scalar(arg) if coeff == 1 else coeff * self.scalar(arg)
                    continue
                value = self(arg)
                if result is None:
                    result, prev = value, (arg,)
                    continue
                if result.shape[1] != value.shape[0]:
                    raise ShapeMismatchError(
                        "product", _name(reduce(MatMul, prev)), result.shape, _name(arg), value.shape,
                        "columns of the left factor must equal rows of the right",
                    )
                self._product_budget(lambda: _name(reduce(MatMul, prev)), lambda: _name(arg), result, value)
                result = matmul(result, value)
                prev = prev + (arg,)  # the product so far, built as SymPy only to name it in an error
            return result if coeff == 1 else result * coeff
        if isinstance(expr, MatPow):
            base, exp = expr.args
            if not (sp.sympify(exp).is_Integer and int(exp) >= 1):
                from symuat.errors import UnsupportedExpressionError

                raise UnsupportedExpressionError(f"{_name(expr)}: only positive integer powers are supported")
            value = self(base)
            if value.shape[0] != value.shape[1]:
                raise ShapeMismatchError("power", _name(base), value.shape, _name(base), value.shape,
                                         "a power needs a square matrix")
            result = value
            for _ in range(int(exp) - 1):
                self._product_budget(lambda: _name(base), lambda: _name(base), result, value)
                result = matmul(result, value)
            return result
        if isinstance(expr, KroneckerProduct):
            result = self(expr.args[0])
            for arg in expr.args[1:]:
                factor = self(arg)
                check_entries(lambda: _name(expr), (result.shape[0] * factor.shape[0], result.shape[1] * factor.shape[1]),
                              self.mode, self.dims)
                result = kron(result, factor)
            return result
        raise TypeError(f"no evaluation rule for {type(expr).__name__}: {expr}")


def exact_equal(x, y) -> bool:
    """Equality of two exact scalars (integers, fractions, or SymPy numbers such as ``√2/2``)."""
    if x == y:
        return True
    if isinstance(x, sp.Basic) or isinstance(y, sp.Basic):
        # a closed-form constant: False only when the difference is certified nonzero
        # (interval arithmetic); undecided counts as equal and is recorded (kernel.constants)
        from symuat.kernel.constants import constants_equal

        return constants_equal(x, y)
    return False


def values_equal(a: np.ndarray, b: np.ndarray, mode: str) -> bool:
    """Exact equality for ``exact``; expansion to zero for ``symbolic``."""
    if a.shape != b.shape:
        return False
    if mode == "symbolic":
        return all(sp.expand(x - y) == 0 for x, y in zip(a.flat, b.flat))
    return bool(all(exact_equal(x, y) for x, y in zip(a.flat, b.flat)))
