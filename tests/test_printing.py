"""symuat.text.printing: the quick answer to "does this product start with a minus sign?" prints the same
LaTeX as SymPy's own method, and SymPy's method is back after printing."""

from sympy import Identity, MatrixSymbol, OneMatrix, Rational, Transpose, symbols
from sympy.matrices.expressions.matmul import MatMul

from symuat.text.printing import SymuatLatexPrinter, latex

N, M = symbols("N M", positive=True)
A, B, C = MatrixSymbol("A", N, N), MatrixSymbol("B", N, N), MatrixSymbol("C", N, M)
EXPRESSIONS = [A * B, -A * B, -2 * A * B * C, Rational(-1, 3) * A * C, A * (-B) * C, Transpose(-A * B) * C,
               A * B + (-A) * B, (A + B) * C - A * C, -(A * B).T, Identity(N) - A * B, OneMatrix(N, N) * (-A),
               MatMul(A, B, evaluate=False), MatMul(-1, A, evaluate=False), MatMul(0, A, evaluate=False) * B]


def test_latex_is_sympys_printing_character_for_character():
    for expr in EXPRESSIONS:
        assert latex(expr) == SymuatLatexPrinter().doprint(expr), expr


def test_sympys_own_method_is_back_after_printing():
    before = MatMul.could_extract_minus_sign
    latex(-A * B)
    assert MatMul.could_extract_minus_sign is before
    assert "could_extract_minus_sign" not in MatMul.__dict__
