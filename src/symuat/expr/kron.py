r"""A Kronecker product kept factored: :class:`KroneckerOperator`.

:math:`A\otimes B` of size :math:`(pq)\times(rs)` is never built unless asked
(:meth:`KroneckerOperator.dense`). It is applied with the vec trick
:math:`(A\otimes B)\operatorname{vec}_r(X)=\operatorname{vec}_r(AXB^\top)` — :math:`O(pqr+qrs)`
work and no :math:`pq\times rs` array — the way TransformerLens keeps a ``FactoredMatrix``.
Structure (nonzeros, density, the transpose) is computed from the factors.

>>> import numpy as np
>>> A, B = np.array([[1., 2.], [3., 4.]]), np.array([[0., 1.], [1., 0.], [2., 2.]])
>>> K = KroneckerOperator(A, B)
>>> K.shape
(6, 4)
>>> v = np.arange(4.0)
>>> np.allclose(K @ v, np.kron(A, B) @ v)
True
>>> K.nnz() == int(np.count_nonzero(np.kron(A, B))), K.density()
(True, Fraction(2, 3))
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symuat.errors import ShapeMismatchError


class KroneckerOperator:
    """:math:`A\\otimes B` (NumPy's ``np.kron`` index order), applied matrix-free."""

    def __init__(self, A, B, *, names: tuple[str, str] = ("A", "B")):
        A = np.asarray(A)
        B = np.asarray(B)
        for name, arr in zip(names, (A, B)):
            if arr.ndim != 2:
                raise ShapeMismatchError(
                    "KroneckerOperator", name, arr.shape, "a matrix factor", ("rows", "cols"),
                    "both factors must be 2-D",
                )
        self.A, self.B = A, B
        self.names = names

    @property
    def shape(self) -> tuple[int, int]:
        (p, r), (q, s) = self.A.shape, self.B.shape
        return (p * q, r * s)

    @property
    def T(self) -> "KroneckerOperator":
        """:math:`(A\\otimes B)^\\top=A^\\top\\otimes B^\\top`, still factored."""
        return KroneckerOperator(self.A.T, self.B.T, names=(f"{self.names[0]}ᵀ", f"{self.names[1]}ᵀ"))

    def matvec(self, v) -> np.ndarray:
        """``(A ⊗ B) v`` for a vector (1-D, or a column) or a stack of columns ``(rs, k)``."""
        v = np.asarray(v)
        rows, cols = self.shape
        column = v.ndim == 2
        if v.ndim not in (1, 2) or v.shape[0] != cols:
            raise ShapeMismatchError(
                "Kronecker matvec", f"{self.names[0]}⊗{self.names[1]}", self.shape, "v", v.shape,
                "v must have as many rows as the operator has columns",
            )
        r, s = self.A.shape[1], self.B.shape[1]
        k = v.shape[1] if column else 1
        X = v.reshape(r, s, k) if column else v.reshape(r, s, 1)
        # (A ⊗ B) vec_r(X) = vec_r(A X Bᵀ), for each of the k columns
        Y = np.einsum("pr,rsk,qs->pqk", self.A, X, self.B, optimize=True)
        out = Y.reshape(rows, k)
        return out if column else out[:, 0]

    __matmul__ = matvec

    def dense(self) -> np.ndarray:
        """Materialise :math:`A\\otimes B` (only when asked)."""
        return np.kron(self.A, self.B)

    def nnz(self) -> int:
        """Nonzero entries, from the factors: ``nnz(A)·nnz(B)`` (no zero divisors in ℝ)."""
        return int(np.count_nonzero(self.A)) * int(np.count_nonzero(self.B))

    def density(self) -> Fraction:
        rows, cols = self.shape
        return Fraction(self.nnz(), rows * cols)

    def __repr__(self) -> str:
        return f"KroneckerOperator({self.names[0]}{self.A.shape} ⊗ {self.names[1]}{self.B.shape})"


class KroneckerSum:
    """:math:`\\sum_t A_t\\otimes B_t`, each term kept factored (a banded convolution lift, say)."""

    def __init__(self, terms: list[KroneckerOperator]):
        if not terms:
            raise ValueError("a KroneckerSum needs at least one term")
        shapes = {t.shape for t in terms}
        if len(shapes) != 1:
            first, other = terms[0], next(t for t in terms if t.shape != terms[0].shape)
            raise ShapeMismatchError("KroneckerSum", repr(first), first.shape, repr(other),
                                     other.shape, "all terms must have one shape")
        self.terms = list(terms)

    @property
    def shape(self) -> tuple[int, int]:
        return self.terms[0].shape

    def matvec(self, v) -> np.ndarray:
        out = self.terms[0] @ v
        for term in self.terms[1:]:
            out = out + term @ v
        return out

    __matmul__ = matvec

    def dense(self) -> np.ndarray:
        out = self.terms[0].dense()
        for term in self.terms[1:]:
            out = out + term.dense()
        return out

    def __repr__(self) -> str:
        return " + ".join(map(repr, self.terms))
