r"""Head-indexed families, for statements about multi-head attention with symbolic :math:`h`.

* :class:`BlockSymbol` — a matrix symbol whose row/column index is a tuple (a *multi-index*):
  the token matrix :math:`X\in\mathbb R^{N\times M}` with :math:`M=hd` and column :math:`(i,j)`
  for feature :math:`id+j` of head :math:`i` (row-major, the spec's :math:`S_i=e_i\otimes I_d`);
* :class:`HeadMatrix` — member :math:`A_i` of a family :math:`A_1,\dots,A_h` (:math:`H_i`,
  :math:`W_{Vi}`), stored as one ``(h, rows, cols)`` array;
* :class:`Selector` — the basis vector :math:`e_i\in\mathbb R^h`;
* :class:`HeadSum` — :math:`\sum_{i=1}^{h}` of a body that mentions :math:`i`.

For the index engine a head sum is a sum over a bound index like any other, a family member is
an entry with one more index, and :math:`e_i` is a Kronecker delta — so identities between them
are proved for symbolic :math:`N,h,d,d_v`.

>>> from sympy import symbols
>>> from symuat.expr.algebra import dims, kron, mul
>>> N, h, d = dims("N h d")
>>> i = symbols("i", integer=True)
>>> X = BlockSymbol("X", (N,), (h, d))
>>> S_i = kron(Selector(i, h), Identity(d))
>>> HeadSum(i, h, mul(HeadMatrix("H", i, h, N, N), X, S_i)).shape
(N, d)
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic, Identity, Tuple
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.kernel.index_calculus import Term, _delta, col_space, row_space

__all__ = ["BlockSymbol", "HeadMatrix", "Selector", "HeadSum", "Identity"]


def _prod(space) -> sp.Expr:
    out = sp.Integer(1)
    for d in space:
        out *= d
    return out


def _name(name) -> str:
    return name.name if isinstance(name, Str) else name


class BlockSymbol(MatrixExpr):
    """A matrix symbol with multi-index row and column spaces."""

    def __new__(cls, name, row_space, col_space):
        return Basic.__new__(cls, Str(_name(name)), Tuple(*row_space), Tuple(*col_space))

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def shape(self):
        return (_prod(self.args[1]), _prod(self.args[2]))

    def _symuat_row_space(self):
        return tuple(d for d in self.args[1] if d != 1)

    def _symuat_col_space(self):
        return tuple(d for d in self.args[2] if d != 1)

    def _symuat_leaf(self):
        return self.name, self.shape

    def _symuat_entry(self, ctx, I, J):
        return [Term(sp.Integer(1), (("E", self.name, tuple(I), tuple(J)),), ())]

    def _symuat_evaluate(self, ev):
        return _leaf_value(ev, self.name, ev.shape(self))

    def _latex(self, printer):
        return printer._print(sp.Symbol(self.name))


class HeadMatrix(MatrixExpr):
    """Member ``A_i`` of a family ``A_1..A_h`` of ``rows×cols`` matrices."""

    def __new__(cls, name, head, h, rows, cols):
        return Basic.__new__(cls, Str(_name(name)), sp.sympify(head), sp.sympify(h),
                             sp.sympify(rows), sp.sympify(cols))

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def head(self):
        return self.args[1]

    @property
    def shape(self):
        return (self.args[3], self.args[4])

    def _symuat_leaf(self):
        return self.name, (self.args[2], self.args[3], self.args[4])

    def _symuat_entry(self, ctx, I, J):
        if self.head not in ctx.env:
            raise ValueError(f"{self.name}_{self.head} outside a sum over {self.head}")
        return [Term(sp.Integer(1), (("E", self.name, (ctx.env[self.head],) + tuple(I), tuple(J)),), ())]

    def _symuat_evaluate(self, ev):
        h, r, c = (ev.size(x) for x in self.args[2:])
        family = _leaf_value(ev, self.name, (h, r, c))
        return family[ev.env[self.head]]

    def _latex(self, printer):
        return f"{printer._print(sp.Symbol(self.name))}_{{{printer._print(self.head)}}}"


class Selector(MatrixExpr):
    """The basis vector :math:`e_i\\in\\mathbb R^h` (a column)."""

    def __new__(cls, head, h):
        return Basic.__new__(cls, sp.sympify(head), sp.sympify(h))

    @property
    def shape(self):
        return (self.args[1], sp.Integer(1))

    def _symuat_entry(self, ctx, I, J):
        return [Term(sp.Integer(1), (_delta(I[0], ctx.env[self.args[0]]),), ())]

    def _symuat_evaluate(self, ev):
        h = ev.size(self.args[1])
        out = ev.const((h, 1), 0)
        out[ev.env[self.args[0]], 0] = 1
        return out

    def _latex(self, printer):
        return f"e_{{{printer._print(self.args[0])}}}"


class HeadSum(MatrixExpr):
    """:math:`\\sum_{i=1}^{h}\\mathrm{body}(i)`."""

    def __new__(cls, head, h, body):
        return Basic.__new__(cls, sp.sympify(head), sp.sympify(h), body)

    @property
    def _symuat_head(self):
        return self.args[0]

    @property
    def body(self):
        return self.args[2]

    @property
    def shape(self):
        return self.body.shape

    def _symuat_row_space(self):
        return row_space(self.body)

    def _symuat_col_space(self):
        return col_space(self.body)

    def _symuat_entry(self, ctx, I, J):
        head = self.args[0]
        var = ctx.fresh(self.args[1], "k")
        saved = ctx.env.get(head)
        ctx.env[head] = var
        try:
            terms = ctx.entry(self.body, I, J)
        finally:
            if saved is None:
                ctx.env.pop(head)
            else:
                ctx.env[head] = saved
        return [Term(t.coeff, t.factors, t.bound + (var,)) for t in terms]

    def _symuat_evaluate(self, ev):
        head = self.args[0]
        total = None
        saved = ev.env.get(head)
        try:
            for k in range(ev.size(self.args[1])):
                ev.env[head] = k
                part = ev(self.body)
                total = part if total is None else total + part
        finally:
            if saved is None:
                ev.env.pop(head, None)
            else:
                ev.env[head] = saved
        return total

    def _latex(self, printer):
        i, h = printer._print(self.args[0]), printer._print(self.args[1])
        return rf"\sum_{{{i}=1}}^{{{h}}}\left({printer._print(self.body)}\right)"


def _leaf_value(ev, name: str, shape: tuple) -> np.ndarray:
    if name not in ev.values:
        raise KeyError(f"no value given for {name}")
    value = ev.values[name]
    if tuple(value.shape) != tuple(shape):
        from symuat.errors import ShapeMismatchError

        raise ShapeMismatchError("value", name, value.shape, f"the declared {name}", shape,
                                 "a value must have the declared shape")
    return value
