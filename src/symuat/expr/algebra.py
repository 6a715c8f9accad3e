"""Unevaluated constructors for statements.

SymPy's ``*`` and ``+`` on matrix expressions call ``.doit()``, which would rewrite the
paper's notation (a diamond becomes a transpose-product) before it is checked. Statements are
therefore built with these constructors, which keep exactly the tree that is written.
"""

from __future__ import annotations

from sympy import Identity, MatrixSymbol, OneMatrix, symbols
from sympy.matrices.expressions import KroneckerProduct, MatAdd, MatMul, Transpose


def mul(*factors):
    """The product, as written (no evaluation)."""
    return MatMul(*factors)


def add(*terms):
    """The sum, as written (no evaluation)."""
    return MatAdd(*terms)


def T(a):
    """The transpose, as written."""
    return Transpose(a)


def kron(*factors):
    """The Kronecker product, as written (never materialised)."""
    return KroneckerProduct(*factors)


def dims(names: str):
    """Positive integer dimension symbols."""
    return symbols(names, positive=True, integer=True)


__all__ = ["mul", "add", "T", "kron", "dims", "Identity", "MatrixSymbol", "OneMatrix"]
