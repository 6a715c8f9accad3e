r"""The basis vector :math:`e_p\in\mathbb R^{n}` at a *fixed* position ``p`` (0-based) of a symbolic length.

For the index engine :math:`(e_p)_i=\delta_{i,p}`: the position is a free name (``@p:n``) that is never
summed, so a normal form that holds with it free holds for **every** position in range — in
particular ``p``. A sum over ``i`` against it substitutes ``p`` (:math:`\sum_i\delta_{ip}f(i)=f(p)`).
Evaluated at sizes where ``p ≥ n`` the vector does not exist: a shape error, so a counterexample
search skips those sizes (:data:`symuat.kernel.decide.instances._UNDEFINED`).

>>> from sympy import MatrixSymbol
>>> from symuat.expr.algebra import T, dims, kron, mul
>>> from symuat.kernel.index_calculus import compare_entries
>>> N, M = dims("N M")
>>> W = MatrixSymbol("W", N, N)
>>> compare_entries(mul(kron(T(W), Identity(M)), kron(Basis(0, N), Basis(1, M))),
...                 kron(mul(T(W), Basis(0, N)), Basis(1, M))).equal
True
"""

from __future__ import annotations

import sympy as sp
from sympy import Basic, Identity
from sympy.matrices.expressions import MatrixExpr

from symuat.errors import ShapeMismatchError
from symuat.kernel.index_calculus import Term, _delta, space_of

__all__ = ["Basis", "Identity"]


class Basis(MatrixExpr):
    """:math:`e_p\\in\\mathbb R^n` (a column), ``p`` a fixed 0-based position."""

    def __new__(cls, p, n):
        return Basic.__new__(cls, sp.Integer(p), sp.sympify(n))

    @property
    def position(self) -> int:
        return int(self.args[0])

    @property
    def shape(self):
        return (self.args[1], sp.Integer(1))

    def _symuat_row_space(self):
        return space_of(self.args[1])

    def _symuat_col_space(self):
        return ()

    def _symuat_entry(self, ctx, I, J):
        if not I:  # n = 1: the only entry is position 0
            return [Term(sp.Integer(1 if self.position == 0 else 0), (), ())]
        name = f"@{self.position}:{self.args[1]}"
        ctx.dims[name] = sp.sympify(self.args[1])
        return [Term(sp.Integer(1), (_delta(I[0], name),), ())]

    def _symuat_evaluate(self, ev):
        n = ev.size(self.args[1])
        if self.position >= n:
            raise ShapeMismatchError(f"basis vector e_{self.position + 1}", "its position", (self.position + 1, 1),
                                     "the vector", (n, 1), f"e_{self.position + 1} needs a length ≥ {self.position + 1}")
        out = ev.const((n, 1), 0)
        out[self.position, 0] = 1
        return out

    def _latex(self, printer):
        return rf"e_{{{self.position + 1}}}^{{({printer._print(self.args[1])})}}"
