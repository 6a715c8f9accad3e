r"""The diamond product :math:`W\diamond x` (UAT/AAAI Eq. 4, spec D4) and its readings.

D4 defines :math:`W\diamond x` for a matrix :math:`W\in\mathbb R^{m\times n}` and a vector
:math:`x\in\mathbb R^{m}`: entry :math:`i` of the result is the sum of the products of column
:math:`i` of :math:`W` with :math:`x`; :math:`x\diamond W` "is computed the same way". The
papers also apply ⋄ to two matrices (D5) without defining it; symuat makes the candidate
definitions explicit:

* ``"C-col"``: :math:`A\diamond B := A^\top B` (D4 applied to each column of :math:`B`);
* ``"C-prod"``: :math:`A\diamond B := AB`.

An unbracketed chain :math:`a\diamond b\diamond c` is a :class:`DiamondChain` until a parse is
chosen: ``"LR"`` gives :math:`(a\diamond b)\diamond c`, ``"RL"`` gives :math:`a\diamond(b\diamond c)`.

The index rule of :class:`Diamond` is the D4 prose itself (a sum over the rows), not
:math:`W^\top x`; that the two agree is claim P1, which symuat proves rather than assumes.

>>> from sympy import MatrixSymbol, symbols, latex
>>> m, n = symbols("m n", positive=True, integer=True)
>>> W, x = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)
>>> latex(Diamond(W, x))
'W \\diamond x'
>>> Diamond(W, x).doit()
W.T*x
>>> import numpy as np
>>> diamond(np.array([[1, 2], [3, 4]]), np.array([[1], [1]])).ravel().tolist()
[4, 6]
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatAdd, MatMul, MatrixExpr, Transpose

from symuat.errors import DiamondUndefinedError, ShapeMismatchError, SymuatError, describe
from symuat.kernel.index_calculus import SpaceMismatch, Term, col_space, row_space

#: the candidate definitions of matrix ⋄ matrix (spec D5)
MM_DEFINITIONS = ("C-col", "C-prod")
#: parses of an unbracketed chain
PARSES = ("LR", "RL")


def _is_vector(expr) -> bool:
    return sp.sympify(expr.cols) == 1


def _check_mm(mm):
    mm = mm.name if isinstance(mm, Str) else mm
    if mm is not None and mm not in MM_DEFINITIONS:
        raise ValueError(f"matrix ⋄ matrix definition must be one of {MM_DEFINITIONS}, not {mm!r}")
    return mm


class Diamond(MatrixExpr):
    """``A ⋄ B``; for two matrices it needs ``mm`` (a D5 candidate definition)."""

    def __new__(cls, A, B, mm: str | None = None):
        A, B, mm = sp.sympify(A), sp.sympify(B), _check_mm(mm)
        args = (A, B) if mm is None else (A, B, Str(mm))
        return Basic.__new__(cls, *args)

    @property
    def left(self):
        return self.args[0]

    @property
    def right(self):
        return self.args[1]

    @property
    def mm(self) -> str | None:
        return self.args[2].name if len(self.args) > 2 else None

    @property
    def kind(self) -> str:
        """``"mv"`` (matrix ⋄ vector), ``"vm"`` (vector ⋄ matrix) or ``"mm"``."""
        if _is_vector(self.right):
            return "mv"
        if _is_vector(self.left):
            return "vm"
        return "mm"

    def _need_mm(self) -> str:
        if self.mm is None:
            raise DiamondUndefinedError(
                f"{self.left} ⋄ {self.right} is matrix ⋄ matrix, which the papers never define "
                f"(spec D5); choose one of {MM_DEFINITIONS}"
            )
        return self.mm

    @property
    def shape(self):
        A, B = self.left, self.right
        kind = self.kind
        if kind == "mv":
            return (A.cols, B.cols)
        if kind == "vm":
            return (B.cols, A.cols)
        return (A.cols, B.cols) if self._need_mm() == "C-col" else (A.rows, B.cols)

    def with_mm(self, mm: str) -> "Diamond":
        return Diamond(self.left, self.right, mm if self.kind == "mm" else None)

    # -- meaning ---------------------------------------------------------------------------
    def doit(self, **hints):
        """Rewrite into ordinary matrix algebra (``W ⋄ x → Wᵀx``)."""
        deep = hints.get("deep", True)
        A = self.left.doit(**hints) if deep else self.left
        B = self.right.doit(**hints) if deep else self.right
        kind = self.kind
        if kind == "mv":
            return MatMul(Transpose(A), B)
        if kind == "vm":
            return MatMul(Transpose(B), A)
        mm = self.mm or hints.get("mm")
        if mm is None:
            self._need_mm()
        return MatMul(Transpose(A), B) if mm == "C-col" else MatMul(A, B)

    def _symuat_row_space(self):
        kind = self.kind
        if kind == "mv":
            return col_space(self.left)
        if kind == "vm":
            return col_space(self.right)
        return col_space(self.left) if self._need_mm() == "C-col" else row_space(self.left)

    def _symuat_col_space(self):
        kind = self.kind
        if kind == "mv":
            return col_space(self.right)
        if kind == "vm":
            return ()
        return col_space(self.right)

    def _symuat_entry(self, ctx, I, J):
        """The D4 prose: entry i = Σ_k (column i of the matrix)_k · (vector)_k."""
        A, B = self.left, self.right
        kind = self.kind
        if kind == "vm":  # "x ⋄ W is computed the same way": columns of W against x
            A, B = B, A
        if kind in ("mv", "vm") or self._need_mm() == "C-col":
            if row_space(A) != row_space(B):
                raise SpaceMismatch(
                    f"{describe(self)}: rows of {describe(A)} {row_space(A)} ≠ rows of {describe(B)} {row_space(B)}"
                )
            K = ctx.fresh_multi(row_space(A))
            terms = []
            for s in ctx.entry(A, K, I):
                for t in ctx.entry(B, K, J):
                    terms.append(Term(sp.expand(s.coeff * t.coeff), s.factors + t.factors,
                                      s.bound + t.bound + K))
            return terms
        # C-prod
        if col_space(A) != row_space(B):
            raise SpaceMismatch(f"{describe(self)}: columns of {describe(A)} ≠ rows of {describe(B)}")
        K = ctx.fresh_multi(col_space(A))
        return [
            Term(sp.expand(s.coeff * t.coeff), s.factors + t.factors, s.bound + t.bound + K)
            for s in ctx.entry(A, I, K)
            for t in ctx.entry(B, K, J)
        ]

    def _symuat_evaluate(self, ev):
        left, right = ev(self.left), ev(self.right)
        mm, side = self.mm if self.kind == "mm" else None, {"mv": "right", "vm": "left", "mm": "neither"}[self.kind]
        try:
            return diamond(left, right, mm, vector_side=side)
        except SymuatError:
            # the operands' names only for the message: printing them on every evaluation cost
            # a seventh of a fresh report
            return diamond(left, right, mm, names=(describe(self.left), describe(self.right)), vector_side=side)

    def _latex(self, printer):
        return rf"{_wrap(self.left, printer)} \diamond {_wrap(self.right, printer)}"


class DiamondChain(MatrixExpr):
    r"""An unbracketed chain :math:`a_1\diamond a_2\diamond\cdots` as printed; see :func:`parse_chain`."""

    def __new__(cls, *args):
        if len(args) < 3:
            raise ValueError("a chain has at least three members; use Diamond for two")
        return Basic.__new__(cls, *map(sp.sympify, args))

    @property
    def shape(self):
        raise DiamondUndefinedError(
            f"the chain {self} has no meaning until a parse (LR or RL) is chosen"
        )

    def parse(self, parse: str, mm: str | None = None) -> Diamond:
        return parse_chain(self.args, parse, mm)

    def _latex(self, printer):
        return r" \diamond ".join(_wrap(a, printer) for a in self.args)


def parse_chain(members, parse: str, mm: str | None = None) -> Diamond:
    """Bracket a chain ``LR`` (from the left) or ``RL`` (from the right)."""
    members = list(members)
    if parse == "LR":
        out = members[0]
        for m in members[1:]:
            out = Diamond(out, m)
            out = out.with_mm(mm) if out.kind == "mm" and mm else out
        return out
    if parse == "RL":
        out = members[-1]
        for m in reversed(members[:-1]):
            out = Diamond(m, out)
            out = out.with_mm(mm) if out.kind == "mm" and mm else out
        return out
    raise ValueError(f"parse must be one of {PARSES}, not {parse!r}")


def resolve(expr, mm: str | None = None, parse: str | None = None):
    """Give every matrix ⋄ matrix the definition ``mm`` and every chain the parse ``parse``."""
    if isinstance(expr, DiamondChain):
        if parse is None:
            raise DiamondUndefinedError(f"the chain {expr} needs a parse (LR or RL)")
        members = [resolve(a, mm, parse) for a in expr.args]
        return parse_chain(members, parse, mm)
    if isinstance(expr, Diamond):
        node = Diamond(resolve(expr.left, mm, parse), resolve(expr.right, mm, parse))
        if node.kind == "mm":
            return node.with_mm(mm) if mm else node
        return node
    if not expr.args or not isinstance(expr, Basic) or isinstance(expr, (sp.Symbol, Str)):
        return expr
    if isinstance(expr, MatrixExpr) and hasattr(expr, "func"):
        new_args = [resolve(a, mm, parse) if isinstance(a, MatrixExpr) else a for a in expr.args]
        return expr.func(*new_args) if new_args != list(expr.args) else expr
    return expr


def ambiguities(expr) -> set[str]:
    """Which reading axes a printed expression depends on: ``"parse"`` and/or ``"mm"``."""
    out: set[str] = set()
    if any(isinstance(n, DiamondChain) for n in sp.preorder_traversal(expr)):
        out.add("parse")
        parses: tuple[str | None, ...] = PARSES
    else:
        parses = (None,)
    for p in parses:
        try:
            resolved = resolve(expr, None, p)
        except DiamondUndefinedError:
            continue
        for node in sp.preorder_traversal(resolved):
            if isinstance(node, Diamond) and node.kind == "mm":
                out.add("mm")
    return out


def _wrap(arg, printer) -> str:
    text = printer._print(arg)
    if isinstance(arg, (MatAdd, MatMul, Diamond, DiamondChain)):
        return rf"\left[{text}\right]"
    return text


# --------------------------------------------------------------------------------------------
# NumPy twin
# --------------------------------------------------------------------------------------------


def diamond(a, b, mm: str | None = None, *, names=("a", "b"), vector_side: str | None = None):
    """``a ⋄ b`` on arrays.

    A 2-D operand with one column is a vector. For (matrix, vector) and (vector, matrix) this is
    D4: the columns of the matrix against the vector. For two matrices ``mm`` must be one of
    ``"C-col"`` (``aᵀb``) and ``"C-prod"`` (``ab``). ``vector_side`` overrides the detection
    (the SymPy node knows which side is the vector from the declared shapes, even at size 1):
    ``"left"``, ``"right"``, or ``"neither"`` to treat two one-column operands as matrices.

    >>> import numpy as np
    >>> W = np.array([[1, 2, 3], [4, 5, 6]])
    >>> diamond(W, np.array([[1], [0]])).ravel().tolist()
    [1, 2, 3]
    >>> diamond(W, np.ones((3, 1)))
    Traceback (most recent call last):
    ...
    symuat.errors.ShapeMismatchError: diamond: a has shape (2, 3) and b has shape (3, 1); a ⋄ b needs rows(a) == rows(b)
    """
    a = np.asarray(a)
    b = np.asarray(b)
    for name, arr in zip(names, (a, b)):
        if arr.ndim != 2:
            raise ShapeMismatchError(
                "diamond", name, arr.shape, "a 2-D operand", ("rows", "cols"),
                "operands must be 2-D (a vector is a column)",
            )
    side = None if vector_side == "neither" else vector_side
    if vector_side is None:
        side = "right" if b.shape[1] == 1 else "left" if a.shape[1] == 1 else None
    if side == "left":  # x ⋄ W: columns of W against x
        a, b = b, a
        names = names[::-1]
    if side is None:
        mm = _check_mm(mm)
        if mm is None:
            raise DiamondUndefinedError(
                f"{names[0]} {a.shape} ⋄ {names[1]} {b.shape} is matrix ⋄ matrix, which the papers "
                f"never define (spec D5); pass mm='C-col' or mm='C-prod'"
            )
        if mm == "C-prod":
            if a.shape[1] != b.shape[0]:
                raise ShapeMismatchError(
                    "diamond (C-prod)", names[0], a.shape, names[1], b.shape,
                    f"{names[0]} ⋄ {names[1]} = {names[0]}{names[1]} needs cols({names[0]}) == rows({names[1]})",
                )
            return a @ b
    if a.shape[0] != b.shape[0]:
        raise ShapeMismatchError(
            "diamond", names[0], a.shape, names[1], b.shape,
            f"{names[0]} ⋄ {names[1]} needs rows({names[0]}) == rows({names[1]})",
        )
    return a.T @ b
