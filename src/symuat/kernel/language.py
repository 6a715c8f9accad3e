r"""SymPy's own matrix language, lowered onto the kernel's nodes.

A researcher writes ``Trace(A*B)``, ``HadamardProduct(X, Y)``, ``DiagMatrix(v)``, ``DiagonalOf(A)``,
``A.I`` / ``Inverse(A)`` / ``A**-2``, ``Determinant(A)`` and ``Eq(lhs, rhs)``; the kernel decides
statements in its own nodes. :func:`lower` rewrites the first into the second — one vocabulary:
SymPy's classes are the spelling, symuat's nodes the implementation — and leaves an expression
without them untouched (the very same object).

========================================  ==========================================================
SymPy                                     kernel node (its index rule)
========================================  ==========================================================
``Trace(M)``, ``trace(M)``                :class:`TraceOf`: a 1×1 matrix, :math:`\sum_k M_{kk}` over
                                          ``M``'s (multi-)index space (so ``tr(A⊗B)`` sums both)
``f(s)``, ``f`` an undefined function     :class:`symuat.expr.elementwise.Sigma` named ``f`` (an
(``Function("f")``), ``s`` a scalar       uninterpreted function: the statement is for every ``f``)
a scalar expression of traces             a 1×1 matrix expression: ``+`` → ``MatAdd``, ``·`` →
(``2*Trace(A)*Trace(B) + 1``)             ``MatMul``, a positive integer power → repeated product,
                                          a number ``c`` → ``c·I₁``; a scalar factor of a matrix
                                          (``Trace(A)*B``) is a Kronecker product with a 1×1 matrix
``M[0, 0]`` of a 1×1 ``M``                ``M``
``HadamardProduct``/``hadamard_product``  :class:`symuat.expr.decoder.Hadamard` (entries multiplied)
``DiagMatrix(v)`` (column or row)         :class:`symuat.expr.decoder.Diag` (an entry times a delta)
``DiagonalOf(M)``                         :class:`DiagonalVector`: :math:`v_i=M_{ii}`
``Inverse(M)``, ``M.I``, ``M**-k``        :class:`InverseOf` of a *named* square matrix: a fresh
                                          leaf :math:`A^{-1}` with the axioms
                                          :math:`AA^{-1}=A^{-1}A=I` (the hypothesis
                                          :class:`~symuat.kernel.hypotheses.Invertible`, implied);
                                          inverses of products, transposes, Kronecker products,
                                          powers and nonzero multiples are pushed to the leaves
``Matrix(...)``, ``diag(1, 2)``           :class:`ExplicitMatrix` (numbers; exact evaluation only)
``Determinant(M)`` at explicit sizes      :class:`DetOf` (exact evaluation only: decided by
                                          expansion at the sizes, or refuted by an instance)
========================================  ==========================================================

Refused, with an :class:`~symuat.errors.UnsupportedExpressionError` naming the node: the inverse
of anything else (a sum, a Hadamard product, a non-square product — name it as a matrix symbol
and state its hypotheses), a determinant of symbolic size, an entry other than ``[0, 0]`` of a
1×1 matrix, a concrete scalar function of a matrix (``exp(Trace(A))``: refuting it with a stand-in
function would be unsound; an undefined ``Function("f")`` is read as "for every f").

Soundness. Each lowering is the definition of the SymPy class (a trace is the sum of the
diagonal, …); the inverse rules hold whenever the inverted matrices are square and invertible:
:math:`(AB)^{-1}=B^{-1}A^{-1}` for square :math:`A,B` (then :math:`AB` is invertible iff both
are), :math:`(A^T)^{-1}=(A^{-1})^T`, :math:`(A\otimes B)^{-1}=A^{-1}\otimes B^{-1}`,
:math:`(cA)^{-1}=c^{-1}A^{-1}` for a number :math:`c\ne0`. The statement then speaks of the
invertible leaves only, whose instances are drawn invertible.

>>> from sympy import MatrixSymbol, Trace, HadamardProduct, symbols
>>> n = symbols("n", integer=True, positive=True)
>>> A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", n, n)
>>> lower(Trace(A * B))
TraceOf(A*B)
>>> lower(2 * Trace(A) * Trace(B))
2*TraceOf(A)*TraceOf(B)
>>> from sympy import Transpose
>>> lower(Transpose(HadamardProduct(A, B)))
Hadamard(A, B).T
>>> lower(MatrixSymbol("X", n, n) * A) == MatrixSymbol("X", n, n) * A
True
>>> lower((A * B).I)
InverseOf(B)*InverseOf(A)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.matrices.expressions import (
    DiagMatrix,
    DiagonalOf,
    Determinant,
    HadamardProduct,
    Identity,
    Inverse,
    KroneckerProduct,
    MatAdd,
    MatMul,
    MatPow,
    MatrixExpr,
    MatrixSymbol,
    Trace,
    Transpose,
)

from sympy.core.function import AppliedUndef
from sympy.matrices.expressions.matexpr import MatrixElement

from symuat.errors import KernelInconsistencyError, UnsupportedExpressionError, describe
from symuat.kernel.index_calculus import SpaceMismatch, Term, col_space, row_space


class NoIndexRule(TypeError):
    """A node with an exact evaluation but no index-level rule (a determinant): the normal form
    is skipped, the statement is decided by instances and expansion."""


def inverse_name(name: str) -> str:
    """The name of the fresh leaf standing for ``name``'s inverse (its entries in a normal form).

    >>> inverse_name("A")
    'A^{-1}'
    """
    return f"{name}^{{-1}}"


# --------------------------------------------------------------------------------------------
# the nodes
# --------------------------------------------------------------------------------------------


class TraceOf(MatrixExpr):
    """:math:`\\operatorname{tr}(M)` as a 1×1 matrix: :math:`\\sum_k M_{kk}` over ``M``'s index space."""

    def __new__(cls, m):
        return Basic.__new__(cls, m)

    @property
    def arg(self):
        return self.args[0]

    @property
    def shape(self):
        return (sp.Integer(1), sp.Integer(1))

    def _symuat_row_space(self):
        if row_space(self.arg) != col_space(self.arg):
            raise SpaceMismatch(f"tr({describe(self.arg)}): the matrix is not square")
        return ()

    def _symuat_col_space(self):
        return self._symuat_row_space()

    def _symuat_entry(self, ctx, I, J):
        space = row_space(self.arg)
        if space != col_space(self.arg):
            raise SpaceMismatch(f"tr({describe(self.arg)}): the matrix is not square")
        K = ctx.fresh_multi(space)
        return [Term(t.coeff, t.factors, t.bound + K) for t in ctx.entry(self.arg, K, K)]

    def _symuat_evaluate(self, ev):
        m = ev(self.arg)
        if m.shape[0] != m.shape[1]:
            from symuat.errors import ShapeMismatchError

            raise ShapeMismatchError("trace", describe(self.arg), m.shape, describe(self.arg), m.shape,
                                     "a trace needs a square matrix")
        out = ev.const((1, 1), 0)
        out[0, 0] = sum((m[k, k] for k in range(1, m.shape[0])), m[0, 0]) if m.shape[0] else 0
        return out

    def _latex(self, printer):
        return rf"\operatorname{{tr}}\left({printer._print(self.arg)}\right)"


class DiagonalVector(MatrixExpr):
    """The diagonal of a square matrix as a column vector: :math:`v_i=M_{ii}` (SymPy's ``DiagonalOf``)."""

    def __new__(cls, m):
        return Basic.__new__(cls, m)

    @property
    def arg(self):
        return self.args[0]

    @property
    def shape(self):
        return (self.arg.shape[0], sp.Integer(1))

    def _symuat_row_space(self):
        if row_space(self.arg) != col_space(self.arg):
            raise SpaceMismatch(f"diagonal of {describe(self.arg)}: the matrix is not square")
        return row_space(self.arg)

    def _symuat_col_space(self):
        return ()

    def _symuat_entry(self, ctx, I, J):
        self._symuat_row_space()
        return ctx.entry(self.arg, I, I)

    def _symuat_evaluate(self, ev):
        m = ev(self.arg)
        n = min(m.shape)
        out = ev.const((m.shape[0], 1), 0)
        for k in range(n):
            out[k, 0] = m[k, k]
        return out

    def _latex(self, printer):
        return rf"\operatorname{{diagonal}}\left({printer._print(self.arg)}\right)"


def _exact_inverse(m: np.ndarray) -> np.ndarray:
    """The inverse of an exact square matrix (integers, fractions), by Gauss–Jordan over ℚ."""
    n = m.shape[0]
    a = [[Fraction(x) for x in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(m.tolist())]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col] != 0), None)
        if pivot is None:
            raise ZeroDivisionError("singular")
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            x = a[i][n + j]
            out[i, j] = x.numerator if x.denominator == 1 else x
    return out


def exact_det(m: np.ndarray):
    """The determinant of an exact square matrix (integers, fractions), by elimination over ℚ."""
    n = m.shape[0]
    a = [[Fraction(x) for x in row] for row in m.tolist()]
    det = Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col] != 0), None)
        if pivot is None:
            return 0
        if pivot != col:
            a[col], a[pivot] = a[pivot], a[col]
            det = -det
        det *= a[col][col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return det.numerator if det.denominator == 1 else det


class InverseOf(MatrixExpr):
    """:math:`A^{-1}` of a named square matrix: a fresh leaf ``A^{-1}`` for the index calculus (the
    axioms :math:`AA^{-1}=A^{-1}A=I` are the rule of
    :class:`~symuat.kernel.hypotheses.Invertible`), the exact inverse when evaluated."""

    def __new__(cls, a):
        if not isinstance(a, MatrixSymbol):
            raise UnsupportedExpressionError(f"InverseOf({describe(a)}): only a matrix symbol is inverted")
        return Basic.__new__(cls, a)

    @property
    def arg(self):
        return self.args[0]

    @property
    def shape(self):
        return self.arg.shape

    def _symuat_row_space(self):
        return row_space(self.arg)

    def _symuat_col_space(self):
        return col_space(self.arg)

    def _symuat_entry(self, ctx, I, J):
        return [Term(sp.Integer(1), (("E", inverse_name(self.arg.name), tuple(I), tuple(J)),), ())]

    def _symuat_evaluate(self, ev):
        m = ev(self.arg)
        if ev.mode == "float":
            return np.linalg.inv(np.asarray(m, dtype=float))
        if ev.mode == "symbolic":
            inv = sp.Matrix(m.tolist()).inv(method="LU")
            out = np.empty(m.shape, dtype=object)
            for i in range(m.shape[0]):
                for j in range(m.shape[1]):
                    out[i, j] = inv[i, j]
            return out
        try:
            return _exact_inverse(m)
        except ZeroDivisionError:  # instances of an inverted leaf are drawn invertible
            raise KernelInconsistencyError(f"{self.arg.name} was drawn singular although it is inverted") from None

    def _latex(self, printer):
        return rf"{printer._print(self.arg)}^{{-1}}"


class DetOf(MatrixExpr):
    """:math:`\\det M` as a 1×1 matrix, at explicit sizes: exact evaluation only (no index rule)."""

    def __new__(cls, m):
        return Basic.__new__(cls, m)

    @property
    def arg(self):
        return self.args[0]

    @property
    def shape(self):
        return (sp.Integer(1), sp.Integer(1))

    def _symuat_row_space(self):
        return ()

    _symuat_col_space = _symuat_row_space

    def _symuat_entry(self, ctx, I, J):
        raise NoIndexRule(f"det({describe(self.arg)}) has no index-level rule")

    def _symuat_evaluate(self, ev):
        m = ev(self.arg)
        out = ev.const((1, 1), 0)
        if ev.mode == "float":
            out[0, 0] = float(np.linalg.det(np.asarray(m, dtype=float)))
        elif ev.mode == "symbolic":
            out[0, 0] = sp.expand(sp.Matrix(m.tolist()).det(method="berkowitz"))
        else:
            out[0, 0] = exact_det(m)
        return out

    def _latex(self, printer):
        return rf"\det\left({printer._print(self.arg)}\right)"


class ExplicitMatrix(MatrixExpr):
    """A matrix of numbers (``Matrix([[1, 2], [3, 4]])``, ``diag(1, 2)``): exact evaluation only (no
    index rule: a statement with one is decided at its explicit sizes)."""

    def __new__(cls, m):
        m = sp.ImmutableMatrix(m)
        if not all(x.is_number for x in m):
            raise UnsupportedExpressionError(f"explicit matrix {m.tolist()}: only numbers as entries")
        return Basic.__new__(cls, sp.Tuple(*[sp.Tuple(*row) for row in m.tolist()]))  # no matrix inside

    @property
    def matrix(self) -> sp.ImmutableMatrix:
        return sp.ImmutableMatrix([list(row) for row in self.args[0]])

    @property
    def shape(self):
        return self.matrix.shape

    def _symuat_row_space(self):
        from symuat.kernel.index_calculus import space_of

        return space_of(self.shape[0])

    def _symuat_col_space(self):
        from symuat.kernel.index_calculus import space_of

        return space_of(self.shape[1])

    def _symuat_entry(self, ctx, I, J):
        raise NoIndexRule(f"the explicit matrix {self.matrix.tolist()} has no index-level rule")

    def _symuat_evaluate(self, ev):
        m = self.matrix
        out = ev.const(m.shape, 0)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                out[i, j] = ev.scalar(m[i, j])
        return out

    def _latex(self, printer):
        return printer._print(self.matrix)


# --------------------------------------------------------------------------------------------
# lowering
# --------------------------------------------------------------------------------------------

_SYMPY_ONLY = (Trace, Determinant, HadamardProduct, DiagMatrix, DiagonalOf, MatrixElement, Inverse,
               sp.ImmutableDenseMatrix)


def needs_lowering(expr) -> bool:
    """Whether ``expr`` uses a SymPy construct the kernel reads through :func:`lower`."""
    if isinstance(expr, sp.Expr) and not isinstance(expr, MatrixExpr) and expr.has(MatrixExpr):
        return True
    for node in sp.preorder_traversal(expr):
        if isinstance(node, _SYMPY_ONLY):
            return True
        if isinstance(node, MatPow) and not (node.exp.is_Integer and int(node.exp) >= 1):
            return True
        if isinstance(node, MatMul) and any(
                not isinstance(a, MatrixExpr) and a.has(MatrixExpr) for a in node.args):
            return True
    return False


def lower(expr):
    """``expr`` in the kernel's nodes (see the module docstring); ``expr`` itself when it uses none
    of SymPy's constructs above. A scalar expression of matrices becomes a 1×1 matrix expression."""
    if isinstance(expr, sp.MatrixBase) and not isinstance(expr, MatrixExpr):  # a mutable Matrix
        return ExplicitMatrix(expr)
    if not needs_lowering(expr):
        return expr
    if isinstance(expr, MatrixExpr):
        return _matrix(expr)
    return _scalar(expr)


def _refuse(node, what: str):
    raise UnsupportedExpressionError(f"unsupported: {type(node).__name__} ({describe(node)}) — {what}")


def _scalar(e) -> MatrixExpr:
    """A scalar expression (possibly with traces, …) as a 1×1 matrix expression."""
    if isinstance(e, MatrixExpr):
        m = _matrix(e)
        if m.shape != (1, 1):
            _refuse(e, f"a {m.shape[0]}×{m.shape[1]} matrix where a scalar is expected")
        return m
    if not e.has(MatrixExpr):
        return MatMul(e, Identity(1))
    if isinstance(e, Trace):
        return TraceOf(_matrix(e.arg))
    if isinstance(e, Determinant):
        arg = _matrix(e.arg)
        if not all(sp.sympify(d).is_Integer for d in arg.shape):
            _refuse(e, "a determinant of symbolic size has no rule in the kernel (it is not a finite "
                       "sum of products of entries for all sizes); state it at explicit sizes, e.g. "
                       "MatrixSymbol('A', 3, 3)")
        return DetOf(arg)
    if isinstance(e, MatrixElement):
        parent = _matrix(e.parent)
        if parent.shape == (1, 1) and e.i == 0 and e.j == 0:
            return parent
        _refuse(e, "an entry M[i, j] has no rule in the kernel (only [0, 0] of a 1×1 matrix)")
    if isinstance(e, sp.Add):
        return MatAdd(*[_scalar(a) for a in e.args])
    if isinstance(e, sp.Mul):
        coeff = sp.Mul(*[a for a in e.args if not a.has(MatrixExpr)])
        mats = [_scalar(a) for a in e.args if a.has(MatrixExpr)]
        return MatMul(coeff, *mats) if coeff != 1 else MatMul(*mats)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and int(e.exp) >= 1:
        base = _scalar(e.base)
        return MatMul(*[base] * int(e.exp))
    if isinstance(e, AppliedUndef) and len(e.args) == 1:  # f(tr(AB)) for an undefined f: for every f
        from symuat.expr.elementwise import Sigma

        return Sigma(_scalar(e.args[0]), e.func.__name__)
    _refuse(e, "a scalar function of a matrix has no rule in the kernel beyond sums, products and "
               "positive integer powers of traces, determinants (explicit sizes) and 1×1 matrices, and "
               "an undefined function f = Function('f') of one (a statement for every f; a concrete "
               "function such as exp is refused: refuting it with a stand-in would be unsound)")


def _matrix(e) -> MatrixExpr:
    if isinstance(e, sp.MatrixBase):  # numbers, explicitly
        return ExplicitMatrix(e)
    if isinstance(e, (MatrixSymbol, Identity)) or not isinstance(e, MatrixExpr):
        return e
    from symuat.expr.decoder import Diag, Hadamard

    if isinstance(e, HadamardProduct):
        args = [_matrix(a) for a in e.args]
        out = args[0]
        for a in args[1:]:
            out = Hadamard(out, a)
        return out
    if isinstance(e, DiagMatrix):
        v = _matrix(e.args[0])
        if v.shape[1] == 1:
            return Diag(v)
        if v.shape[0] == 1:
            return Diag(Transpose(v))
        _refuse(e, "diag of a matrix that is not a vector")
    if isinstance(e, DiagonalOf):
        return DiagonalVector(_matrix(e.arg))
    if isinstance(e, Inverse):
        return _invert(_matrix(e.arg), e)
    if isinstance(e, MatPow):
        k = sp.sympify(e.exp)
        if not k.is_Integer:
            _refuse(e, "only integer powers of a matrix have a rule")
        base = _matrix(e.base)
        if k == 0:
            return Identity(base.shape[0])
        if k < 0:
            base, k = _invert(base, e), -k
        return base if k == 1 else MatPow(base, k)
    if isinstance(e, MatMul):
        coeff = sp.Mul(*[a for a in e.args if not isinstance(a, MatrixExpr) and not a.has(MatrixExpr)])
        scalar_mats = [_scalar(a) for a in e.args if not isinstance(a, MatrixExpr) and a.has(MatrixExpr)]
        mats = [_matrix(a) for a in e.args if isinstance(a, MatrixExpr)]
        out = MatMul(coeff, *mats) if coeff != 1 else (MatMul(*mats) if len(mats) > 1 else mats[0])
        if scalar_mats:  # tr(A)·B = tr(A) ⊗ B: a 1×1 factor of a Kronecker product
            return KroneckerProduct(*scalar_mats, out)
        return out
    args = [(_matrix(a) if isinstance(a, MatrixExpr) else a) for a in e.args]
    if all(x is y for x, y in zip(args, e.args)):
        return e
    if isinstance(e, (MatAdd, Transpose, KroneckerProduct)):
        return type(e)(*args)
    return e.func(*args)


def _square(m) -> bool:
    return sp.simplify(sp.sympify(m.shape[0]) - sp.sympify(m.shape[1])) == 0


def _invert(m, node) -> MatrixExpr:
    """:math:`m^{-1}` pushed to the leaves (the rules of the module docstring), or a refusal."""
    if not _square(m):
        _refuse(node, f"the inverse of a {m.shape[0]}×{m.shape[1]} (non-square) matrix")
    if isinstance(m, MatrixSymbol):
        return InverseOf(m)
    if isinstance(m, Identity):
        return m
    if isinstance(m, InverseOf):
        return m.arg
    if isinstance(m, Transpose):
        return Transpose(_invert(m.arg, node))
    if isinstance(m, MatPow) and m.exp.is_Integer:
        return MatPow(_invert(m.base, node), m.exp)
    if isinstance(m, KroneckerProduct) and all(_square(a) for a in m.args):
        return KroneckerProduct(*[_invert(a, node) for a in m.args])
    if isinstance(m, MatMul):
        coeff = sp.Mul(*[a for a in m.args if not isinstance(a, MatrixExpr)])
        mats = [a for a in m.args if isinstance(a, MatrixExpr)]
        if all(_square(a) for a in mats) and coeff.is_number and coeff != 0:
            inv = [_invert(a, node) for a in reversed(mats)]
            prod = MatMul(*inv) if len(inv) > 1 else inv[0]
            return MatMul(1 / coeff, prod) if coeff != 1 else prod
    _refuse(node, "symuat inverts matrix symbols and their products (square factors), transposes, "
                  "Kronecker products, powers and nonzero multiples; the inverse of anything else "
                  "(a sum, a Hadamard product, …) has no rule: name the matrix as a MatrixSymbol and "
                  "state its hypotheses (Invertible)")


# --------------------------------------------------------------------------------------------
# a statement in SymPy's words
# --------------------------------------------------------------------------------------------


def sides_of(lhs, rhs):
    """The two sides in the kernel's nodes (:func:`~symuat.kernel.language.lower`): an ``Eq`` split,
    a plain number next to a 1×1 matrix expression made a 1×1 matrix."""
    from sympy.matrices.expressions import ZeroMatrix

    from symuat.errors import KernelInputError

    if rhs is None:
        if isinstance(lhs, sp.logic.boolalg.BooleanAtom):
            raise KernelInputError(f"SymPy evaluated the equation to {lhs} before symuat saw it: pass the two "
                                   "sides, check_identity(lhs, rhs), or Eq(lhs, rhs, evaluate=False)")
        if not isinstance(lhs, sp.Equality):
            raise KernelInputError(f"check_identity({describe(lhs)}): give two sides, or one SymPy Eq")
        lhs, rhs = lhs.lhs, lhs.rhs
    lhs, rhs = lower(lhs), lower(rhs)
    for a, b in ((lhs, rhs), (rhs, lhs)):
        if isinstance(b, MatrixExpr) and not isinstance(a, MatrixExpr) and b.shape == (1, 1):
            a_matrix = ZeroMatrix(1, 1) if sp.sympify(a) == 0 else MatMul(sp.sympify(a), Identity(1))
            return (a_matrix, b) if a is lhs else (b, a_matrix)
    return lhs, rhs


def rational_entries(*exprs) -> bool:
    """Whether the statement has an inverse or a determinant: entries not polynomial in the sizes."""
    return any(isinstance(node, (InverseOf, DetOf, ExplicitMatrix)) for e in exprs
               for node in sp.preorder_traversal(e))
