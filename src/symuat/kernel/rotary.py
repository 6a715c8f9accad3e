r"""RoPE as a block-diagonal family of 2×2 blocks, in either layout, for symbolic head widths.

:class:`PairRotation` is the matrix :math:`R` (``d×d``, :math:`d=2e`) acting on a row vector
(:math:`q\mapsto qR`) that mixes coordinate pair :math:`k` through the 2×2 block
:math:`\rho_k` and nothing else. The blocks are a leaf (``name``, an ``(e·2)×2`` array: block
:math:`k` in rows :math:`2k,2k+1`), left generic: an identity proved with generic blocks holds in
particular for rotations by :math:`n\theta_k` at every position :math:`n` and every frequency.
The layout says where pair :math:`k` lives:

* ``"half"`` (HF ``rotate_half``): coordinates :math:`(k,\ k+e)` — multi-index :math:`(t,k)`;
* ``"interleaved"`` (GGUF / Meta): coordinates :math:`(2k,\ 2k+1)` — multi-index :math:`(k,t)`.

For the index engine an entry is :math:`\rho[(k,t),t']\,\delta_{kk'}`; numerically the matrix is
built from the leaf's value.

>>> from symuat.expr.algebra import dims
>>> e = dims("e")
>>> PairRotation("rho", e, "half").shape
(2*e, 2*e)
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.kernel.index_calculus import Term, _delta, space_of

LAYOUTS = ("half", "interleaved")


class PairRotation(MatrixExpr):
    """``d×d`` block matrix of 2×2 blocks ``name[k]`` on pair ``k`` (``layout`` half or interleaved)."""

    def __new__(cls, name, e, layout: str = "half"):
        name = name.name if isinstance(name, Str) else name
        layout = layout.name if isinstance(layout, Str) else layout
        if layout not in LAYOUTS:
            raise ValueError(f"RoPE layout must be one of {LAYOUTS}, not {layout!r}")
        return Basic.__new__(cls, Str(name), sp.sympify(e), Str(layout))

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def layout(self) -> str:
        return self.args[2].name

    @property
    def shape(self):
        return (2 * self.args[1], 2 * self.args[1])

    def _space(self):
        e = space_of(self.args[1])
        return (sp.Integer(2),) + e if self.layout == "half" else e + (sp.Integer(2),)

    _symuat_row_space = _space
    _symuat_col_space = _space

    def _symuat_leaf(self):
        return self.name, (self.args[1] * 2, sp.Integer(2))

    def _split(self, idx):
        if len(idx) == 1:  # e = 1: the pair axis only
            return None, idx[0]
        return (idx[1], idx[0]) if self.layout == "half" else (idx[0], idx[1])

    def _symuat_entry(self, ctx, I, J):
        k, t = self._split(I)
        k2, t2 = self._split(J)
        row = (k, t) if k is not None else (t,)
        factors = (("E", self.name, row, (t2,)),)
        if k is not None:
            factors += (_delta(k, k2),)
        return [Term(sp.Integer(1), factors, ())]

    def _symuat_evaluate(self, ev):
        from symuat.expr.heads import _leaf_value

        e = ev.size(self.args[1])
        blocks = _leaf_value(ev, self.name, (2 * e, 2)).reshape(e, 2, 2)
        out = ev.const((2 * e, 2 * e), 0)
        for k in range(e):
            for t in range(2):
                for t2 in range(2):
                    i = t * e + k if self.layout == "half" else 2 * k + t
                    j = t2 * e + k if self.layout == "half" else 2 * k + t2
                    out[i, j] = blocks[k, t, t2]
        return out

    def _latex(self, printer):
        return rf"R^{{\rm {self.layout}}}_{{{printer._print(sp.Symbol(self.name))}}}"


def rotation_blocks(angles: np.ndarray) -> np.ndarray:
    """The leaf value for rotations by ``angles`` (one per pair) acting on rows: block
    :math:`[[\\cos,\\sin],[-\\sin,\\cos]]` (so that :math:`(a,b)\\mapsto(a\\cos-b\\sin,\\ a\\sin+b\\cos)`)."""
    c, s = np.cos(angles), np.sin(angles)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2).reshape(-1, 2)


def rotation_leaves(*exprs) -> dict:
    """``{leaf name: e}`` for every :class:`PairRotation` in the expressions."""
    out = {}
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, PairRotation):
                out[node.name] = node.args[1]
    return out
