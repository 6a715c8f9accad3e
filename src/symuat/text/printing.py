"""LaTeX for statements: SymPy's printer, with sizes on identities and all-ones matrices.

>>> from sympy import Identity, symbols
>>> M = symbols("M")
>>> latex(Identity(M))
'I_{M}'
"""

from __future__ import annotations

from sympy.printing.latex import LatexPrinter


class SymuatLatexPrinter(LatexPrinter):
    def _print_Identity(self, expr):
        return rf"I_{{{self._print(expr.rows)}}}"

    def _print_OneMatrix(self, expr):
        rows, cols = expr.shape
        if cols == 1:
            return rf"\mathbf 1_{{{self._print(rows)}}}"
        if rows == 1:
            return rf"\mathbf 1_{{{self._print(cols)}}}^{{T}}"
        return rf"\mathbf 1_{{{self._print(rows)}\times{self._print(cols)}}}"


def latex(expr) -> str:
    return SymuatLatexPrinter().doprint(expr)
