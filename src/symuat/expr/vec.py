r"""Flattening a token matrix into a vector: ``vec`` and ``unvec``, both orders.

The papers' :math:`T_D` turns an :math:`N\times M` matrix into a column vector of length
:math:`NM`. Which order it uses is never said, so it is always an explicit argument here:

* ``"row"`` (C order): :math:`\operatorname{vec}_r(X)_{nM+m}=X_{nm}`;
* ``"col"`` (Fortran order): :math:`\operatorname{vec}_c(X)_{mN+n}=X_{nm}`.

This module holds the SymPy nodes :class:`Vec`, :class:`Unvec`, :class:`Commutation` (the
permutation :math:`K` with :math:`\operatorname{vec}_r(X)=K\operatorname{vec}_c(X)`), and their
NumPy twins :func:`vec`, :func:`unvec`, :func:`commutation_matrix`.

>>> import numpy as np
>>> X = np.arange(6).reshape(2, 3)
>>> vec(X, "row").ravel().tolist(), vec(X, "col").ravel().tolist()
([0, 1, 2, 3, 4, 5], [0, 3, 1, 4, 2, 5])
>>> np.array_equal(unvec(vec(X, "col"), (2, 3), "col"), X)
True
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.errors import ShapeMismatchError, describe
from symuat.kernel.index_calculus import Term, _delta, col_space, row_space, space_of

ORDERS = ("row", "col")
_NP_ORDER = {"row": "C", "col": "F"}


def check_order(order) -> str:
    order = order.name if isinstance(order, Str) else order
    if order not in ORDERS:
        raise ValueError(f"flattening order must be 'row' or 'col', not {order!r}")
    return order


# --------------------------------------------------------------------------------------------
# SymPy nodes
# --------------------------------------------------------------------------------------------


class Vec(MatrixExpr):
    r"""The flattening :math:`\operatorname{vec}_r(X)` or :math:`\operatorname{vec}_c(X)`.

    >>> from sympy import MatrixSymbol, symbols
    >>> N, M = symbols("N M", positive=True, integer=True)
    >>> Vec(MatrixSymbol("X", N, M), "row").shape
    (M*N, 1)
    """

    def __new__(cls, X, order: str):
        return Basic.__new__(cls, X, Str(check_order(order)))

    @property
    def arg(self):
        return self.args[0]

    @property
    def order(self) -> str:
        return self.args[1].name

    @property
    def shape(self):
        return (self.arg.rows * self.arg.cols, sp.Integer(1))

    def _symuat_row_space(self):
        rs, cs = row_space(self.arg), col_space(self.arg)
        return rs + cs if self.order == "row" else cs + rs

    def _symuat_col_space(self):
        return ()

    def _symuat_entry(self, ctx, I, J):
        nr = len(row_space(self.arg))
        nc = len(col_space(self.arg))
        if self.order == "row":
            return ctx.entry(self.arg, I[:nr], I[nr:])
        return ctx.entry(self.arg, I[nc:], I[:nc])

    def _symuat_evaluate(self, ev):
        return vec(ev(self.arg), self.order)

    def _latex(self, printer):
        sub = "r" if self.order == "row" else "c"
        return rf"\operatorname{{vec}}_{sub}\left({printer._print(self.arg)}\right)"


class Unvec(MatrixExpr):
    r"""The inverse of :class:`Vec`: a length-:math:`NM` column back to :math:`N\times M`."""

    def __new__(cls, v, rows, cols, order: str):
        return Basic.__new__(cls, v, sp.sympify(rows), sp.sympify(cols), Str(check_order(order)))

    @property
    def shape(self):
        return (self.args[1], self.args[2])

    @property
    def order(self) -> str:
        return self.args[3].name

    def _symuat_row_space(self):
        return space_of(self.args[1])

    def _symuat_col_space(self):
        return space_of(self.args[2])

    def _symuat_entry(self, ctx, I, J):
        v = self.args[0]
        want = I + J if self.order == "row" else J + I
        if row_space(v) != self._symuat_row_space() + self._symuat_col_space() and self.order == "row":
            from symuat.kernel.index_calculus import SpaceMismatch

            raise SpaceMismatch(f"unvec_r of {describe(v)}: its space {row_space(v)} is not (rows, cols)")
        if row_space(v) != self._symuat_col_space() + self._symuat_row_space() and self.order == "col":
            from symuat.kernel.index_calculus import SpaceMismatch

            raise SpaceMismatch(f"unvec_c of {describe(v)}: its space {row_space(v)} is not (cols, rows)")
        return ctx.entry(v, want, ())

    def _symuat_evaluate(self, ev):
        return unvec(ev(self.args[0]), (ev.size(self.args[1]), ev.size(self.args[2])), self.order)

    def _latex(self, printer):
        sub = "r" if self.order == "row" else "c"
        return rf"\operatorname{{vec}}_{sub}^{{-1}}\left({printer._print(self.args[0])}\right)"


class Commutation(MatrixExpr):
    r"""The commutation matrix :math:`K_{N,M}`: :math:`\operatorname{vec}_r(X)=K_{N,M}\operatorname{vec}_c(X)`.

    Its row space is :math:`(N,M)`, its column space :math:`(M,N)`, and
    :math:`K_{(a,b),(c,d)}=\delta_{ad}\,\delta_{bc}`.
    """

    def __new__(cls, rows, cols):
        return Basic.__new__(cls, sp.sympify(rows), sp.sympify(cols))

    @property
    def shape(self):
        n = self.args[0] * self.args[1]
        return (n, n)

    def _symuat_row_space(self):
        return space_of(self.args[0]) + space_of(self.args[1])

    def _symuat_col_space(self):
        return space_of(self.args[1]) + space_of(self.args[0])

    def _symuat_entry(self, ctx, I, J):
        # K[(a,b),(c,d)] = δ_ad δ_bc; a size-1 dimension has no index (and no delta)
        n_rows, n_cols = len(space_of(self.args[0])), len(space_of(self.args[1]))
        a, b = (I[0] if n_rows else None), (I[n_rows] if n_cols else None)
        c, d = (J[0] if n_cols else None), (J[n_cols] if n_rows else None)
        factors = tuple(_delta(p, q) for p, q in ((a, d), (b, c)) if p is not None)
        return [Term(sp.Integer(1), factors, ())]

    def _symuat_evaluate(self, ev):
        return commutation_matrix(ev.size(self.args[0]), ev.size(self.args[1]), ev.mode)

    def _latex(self, printer):
        return rf"K_{{{printer._print(self.args[0])},{printer._print(self.args[1])}}}"


# --------------------------------------------------------------------------------------------
# NumPy twins
# --------------------------------------------------------------------------------------------


def vec(X, order: str) -> np.ndarray:
    """Flatten a 2-D array into a column (shape ``(N*M, 1)``) in the given order."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ShapeMismatchError("vec", "X", X.shape, "a matrix", ("N", "M"), "vec takes a 2-D array")
    return X.reshape(-1, 1, order=_NP_ORDER[check_order(order)])


def unvec(v, shape: tuple[int, int], order: str) -> np.ndarray:
    """Inverse of :func:`vec`: a column (or 1-D array) of length ``N*M`` to ``shape``."""
    v = np.asarray(v)
    n, m = shape
    if v.ndim == 2 and v.shape[1] != 1 or v.ndim > 2 or v.size != n * m:
        raise ShapeMismatchError(
            "unvec", "v", v.shape, "target", (n, m), "v must be a column of length rows·cols"
        )
    return v.reshape(n, m, order=_NP_ORDER[check_order(order)])


def commutation_matrix(n: int, m: int, mode: str = "float") -> np.ndarray:
    """Dense :math:`K_{n,m}` (``nm×nm``), materialised on request."""
    K = np.zeros((n * m, n * m), dtype=float if mode == "float" else object)
    if mode != "float":
        K[...] = 0
    for a in range(n):
        for b in range(m):
            K[a * m + b, b * n + a] = 1
    return K
