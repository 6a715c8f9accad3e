r"""An opaque elementwise function :math:`\sigma` as a matrix-expression node.

SymPy has no elementwise-function node for matrix expressions that it will leave alone;
:class:`Sigma` is one. The index engine treats :math:`\sigma(Y)_{ij}=\sigma(Y_{ij})` with σ an
uninterpreted function (so an identity proved with it holds for *every* σ); the explicit-size
prover applies an undefined SymPy function ``sigma``; every concrete evaluation — the exact
counterexample search *and* its float64 re-check — uses one fixed integer polynomial,
:data:`SIGMA_WITNESS` (a counterexample for one σ refutes a claim made for every σ, and both
backends must evaluate the same σ or a true witness would fail to re-check).

>>> from sympy import MatrixSymbol, latex
>>> latex(Sigma(MatrixSymbol("Y", 2, 3)))
'\\sigma\\left(Y\\right)'
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.kernel.index_calculus import Term, col_space, normal_form, row_space

#: the concrete σ of every evaluation (exact and float64): an integer polynomial, so exact
#: evaluation stays exact; neither odd nor zero at 0, so σ(0) = 0 and σ(−x) = −σ(x) are refuted.
SIGMA_WITNESS = "σ(t) = t³ − 2t + 1"


def sigma_exact(t):
    return t * t * t - 2 * t + 1


#: a second concrete σ, tried when the first happens to satisfy a false statement
def sigma_alternative(t):
    """σ(t) = t² + 3t + 2"""
    return t * t + 3 * t + 2



sigma_symbolic = sp.Function("sigma")


class Sigma(MatrixExpr):
    """Elementwise σ applied to a matrix expression."""

    def __new__(cls, arg, name="sigma"):
        return Basic.__new__(cls, arg, name if isinstance(name, Str) else Str(name))

    @property
    def arg(self):
        return self.args[0]

    @property
    def fname(self) -> str:
        return self.args[1].name

    @property
    def shape(self):
        return self.arg.shape

    def _symuat_row_space(self):
        return row_space(self.arg)

    def _symuat_col_space(self):
        return col_space(self.arg)

    def _symuat_entry(self, ctx, I, J):
        ctx.depth += 1
        try:
            inner = normal_form(ctx.entry(self.arg, I, J), ctx.dims, prefix=f"~{ctx.depth}_")
        finally:
            ctx.depth -= 1
        return [Term(sp.Integer(1), (("F", self.fname, inner.key),), ())]

    def _symuat_evaluate(self, ev):
        value = ev(self.arg)
        f = sigma_symbolic if ev.mode == "symbolic" else (ev.sigma or sigma_exact)
        if ev.mode == "float":
            return f(np.asarray(value, dtype=float))
        out = np.empty(value.shape, dtype=object)
        for idx, v in np.ndenumerate(value):
            out[idx] = f(v)
        return out

    def _latex(self, printer):
        return rf"\sigma\left({printer._print(self.arg)}\right)"
