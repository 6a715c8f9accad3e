r"""The parts of a causal decoder LLM the papers never treat, as SymPy nodes for the proofs (spec §8).

* :class:`Diag` — :math:`\operatorname{diag}(v)` of a column vector (RMSNorm's frozen scales, the
  SwiGLU gate as a dynamic weight);
* :class:`Hadamard` — the entrywise product :math:`A\odot B` (SwiGLU's gate);
* :class:`PairHeadMatrix` — a family indexed by a *pair* of heads, :math:`H_{ab}` with
  :math:`a` the K/V group and :math:`b` the query head inside it (grouped-query attention:
  query head :math:`i=ar+b` reads the values of group :math:`a=\lfloor i/r\rfloor`);
* :func:`rotation` — RoPE's :math:`R_n` at explicit head widths and *symbolic* positions; an
  angle :math:`(n'-n)\theta_j` is expanded by the addition theorem, so products of rotations
  compare by polynomial expansion in :math:`\cos(n\theta_j),\sin(n\theta_j)`.

For the index engine a :class:`Diag` is an entry times Kronecker deltas, a :class:`Hadamard` the
product of two entries at the same indices, and a :class:`PairHeadMatrix` an entry with two more
indices — so identities between them are proved for symbolic dimensions.

>>> from sympy import MatrixSymbol
>>> from symuat.expr.algebra import dims, mul
>>> N, M = dims("N M")
>>> s, Z = MatrixSymbol("s", N, 1), MatrixSymbol("Z", N, M)
>>> mul(Diag(s), Z).shape
(N, M)
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.expr.heads import _leaf_value, _name
from symuat.kernel.index_calculus import SpaceMismatch, Term, _delta, _mul, col_space, row_space


class Diag(MatrixExpr):
    """:math:`\\operatorname{diag}(v)` for a column vector ``v`` (``n×1``)."""

    def __new__(cls, v):
        return Basic.__new__(cls, v)

    @property
    def arg(self):
        return self.args[0]

    @property
    def shape(self):
        return (self.arg.shape[0], self.arg.shape[0])

    def _symuat_row_space(self):
        if col_space(self.arg) != ():
            raise SpaceMismatch(f"diag({self.arg}): the argument must be a column vector")
        return row_space(self.arg)

    _symuat_col_space = _symuat_row_space

    def _symuat_entry(self, ctx, I, J):
        terms = ctx.entry(self.arg, I, ())
        deltas = tuple(_delta(a, b) for a, b in zip(I, J))
        return [Term(t.coeff, t.factors + deltas, t.bound) for t in terms]

    def _symuat_evaluate(self, ev):
        v = ev(self.arg)
        n = v.shape[0]
        out = ev.const((n, n), 0)
        for k in range(n):
            out[k, k] = v[k, 0]
        return out

    def _latex(self, printer):
        return rf"\operatorname{{diag}}\left({printer._print(self.arg)}\right)"


class Hadamard(MatrixExpr):
    """The entrywise product :math:`A\\odot B` of two matrices of one shape."""

    def __new__(cls, a, b):
        return Basic.__new__(cls, a, b)

    @property
    def shape(self):
        return self.args[0].shape

    def _symuat_row_space(self):
        a, b = self.args
        if row_space(a) != row_space(b) or col_space(a) != col_space(b):
            raise SpaceMismatch(f"{a} ⊙ {b}: the shapes differ")
        return row_space(a)

    def _symuat_col_space(self):
        self._symuat_row_space()
        return col_space(self.args[0])

    def _symuat_entry(self, ctx, I, J):
        return _mul(ctx.entry(self.args[0], I, J), ctx.entry(self.args[1], I, J))

    def _symuat_evaluate(self, ev):
        a, b = ev(self.args[0]), ev(self.args[1])
        if a.shape != b.shape:
            from symuat.errors import ShapeMismatchError

            raise ShapeMismatchError("Hadamard product", "A", a.shape, "B", b.shape, "A ⊙ B needs one shape")
        return a * b

    def _latex(self, printer):
        return rf"\left({printer._print(self.args[0])}\odot {printer._print(self.args[1])}\right)"


class PairHeadMatrix(MatrixExpr):
    """Member :math:`A_{ab}` of a family indexed by (K/V group ``a`` of ``g``, query ``b`` of ``r``).

    ``causal=True`` masks entry :math:`(n,n')` for :math:`n'>n` (as :class:`~symuat.expr.attention.CausalHeadMatrix`).
    """

    def __new__(cls, name, a, b, g, r, rows, cols, causal=False):
        return Basic.__new__(cls, Str(_name(name)), sp.sympify(a), sp.sympify(b), sp.sympify(g), sp.sympify(r),
                             sp.sympify(rows), sp.sympify(cols), sp.true if causal else sp.false)

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def causal(self) -> bool:
        return bool(self.args[7])

    @property
    def shape(self):
        return (self.args[5], self.args[6])

    def _symuat_leaf(self):
        return self.name, (self.args[3], self.args[4], self.args[5], self.args[6])

    def _symuat_entry(self, ctx, I, J):
        a, b = self.args[1], self.args[2]
        for head in (a, b):
            if head not in ctx.env:
                raise ValueError(f"{self.name}_{{{a}{b}}} outside a sum over {head}")
        factors = (("E", self.name, (ctx.env[a], ctx.env[b]) + tuple(I), tuple(J)),)
        if self.causal:
            factors += (("T", I[0], J[0]),)
        return [Term(sp.Integer(1), factors, ())]

    def _symuat_evaluate(self, ev):
        g, r, rows, cols = (ev.size(x) for x in self.args[3:7])
        family = _leaf_value(ev, self.name, (g, r, rows, cols))
        value = family[ev.env[self.args[1]], ev.env[self.args[2]]]
        if self.causal:
            value = value.copy()
            value[~np.tril(np.ones(value.shape, dtype=bool))] = 0
        return value

    def _latex(self, printer):
        return (f"{printer._print(sp.Symbol(self.name))}_{{{printer._print(self.args[1])}"
                f"{printer._print(self.args[2])}}}")


# --------------------------------------------------------------------------------------------
# RoPE at explicit head widths, symbolic positions
# --------------------------------------------------------------------------------------------


def rotation(n, d: int, convention: str = "interleaved", thetas=None) -> sp.Matrix:
    """RoPE's :math:`R_n` (``d×d``) acting on a column :math:`q`: pair :math:`j` rotated by :math:`n\\theta_j`.

    ``interleaved`` pairs :math:`(2j,2j+1)` (GGUF/Meta), ``half`` pairs :math:`(j,j+d/2)` (HF). The
    entries are :math:`\\cos`, :math:`\\sin` of the angle with its sum expanded by the addition theorem
    (``sympy.expand_trig``), so products of rotations at symbolic positions compare by expansion.

    >>> import sympy as sp
    >>> n, m = sp.symbols("n m", integer=True)
    >>> R = lambda k: rotation(k, 2)
    >>> (R(n).T * R(m) - R(m - n)).applyfunc(sp.expand) == sp.zeros(2, 2)
    True
    """
    if d % 2:
        raise ValueError(f"RoPE needs an even head width, not {d}")
    thetas = thetas or sp.symbols(f"theta0:{d // 2}", real=True)
    R = sp.zeros(d, d)
    for j in range(d // 2):
        angle = sp.expand(n * thetas[j])
        c, s = sp.expand_trig(sp.cos(angle)), sp.expand_trig(sp.sin(angle))
        p, q = (2 * j, 2 * j + 1) if convention == "interleaved" else (j, j + d // 2)
        R[p, p], R[p, q], R[q, p], R[q, q] = c, -s, s, c
    return R
