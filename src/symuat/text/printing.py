"""LaTeX for statements: SymPy's printer, with sizes on identities and all-ones matrices.

>>> from sympy import Identity, MatrixSymbol, symbols
>>> M = symbols("M")
>>> latex(Identity(M))
'I_{M}'
>>> A, B = MatrixSymbol("A", M, M), MatrixSymbol("B", M, M)
>>> latex(-2 * A * B.T), latex(A * B)
('- 2 A B^{T}', 'A B')
"""

from __future__ import annotations

from contextlib import contextmanager

from sympy import Mul
from sympy.matrices.expressions.matmul import MatMul
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
    with _quick_minus_sign():
        return SymuatLatexPrinter().doprint(expr)


@contextmanager
def _quick_minus_sign():
    """While printing: ``MatMul.could_extract_minus_sign`` answers at once when the leading factor
    is not a negative number. SymPy's answer (``Mul.could_extract_minus_sign``) is then falsy too —
    it is ``c.is_Number and c.is_extended_negative`` for the leading factor ``c``, after a test
    ``self == -self`` that builds and simplifies ``-self`` (most of the time of printing a matrix
    product, which the printer asks about for every product and every precedence). The same
    strings, sooner; SymPy's own method is put back after printing, and nothing is changed when
    ``MatMul`` has a method of its own."""
    slow = Mul.could_extract_minus_sign
    if MatMul.could_extract_minus_sign is not slow:  # not inherited from Mul: nothing known of it
        yield
        return

    def quick(self):
        c = self.args[0]
        return c.is_Number and c.is_extended_negative and slow(self)

    MatMul.could_extract_minus_sign = quick
    try:
        yield
    finally:
        del MatMul.could_extract_minus_sign
