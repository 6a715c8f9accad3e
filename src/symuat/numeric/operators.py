"""Lazy linear operators on flattened token matrices: compose, add, apply — never materialise.

The combined DUAT parameters are long products of input-dependent maps (``A_L = W1_L ⋯ W1_1``);
they are kept as :class:`Composed` chains and applied right to left. ``dense()`` is there for
tests and small pictures only.

>>> import numpy as np
>>> A = Dense(np.array([[2., 0.], [0., 3.]]))
>>> (Composed([A, Identity(2)]) @ np.ones(2)).tolist()
[2.0, 3.0]
"""

from __future__ import annotations

import numpy as np

from symuat.errors import ShapeMismatchError


class Operator:
    """A linear map with ``shape`` and ``matvec``; ``@`` applies it to a vector."""

    shape: tuple[int, int]

    def matvec(self, v: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def __matmul__(self, v):
        v = np.asarray(v)
        if v.ndim != 1 or v.shape[0] != self.shape[1]:
            raise ShapeMismatchError("operator", repr(self), self.shape, "v", v.shape,
                                     "v must be a vector as long as the operator has columns")
        return self.matvec(v)

    def dense(self) -> np.ndarray:
        return np.stack([self.matvec(e) for e in np.eye(self.shape[1])], axis=1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.shape}"


class Identity(Operator):
    def __init__(self, n: int):
        self.shape = (n, n)

    def matvec(self, v):
        return v


class Dense(Operator):
    def __init__(self, matrix):
        self.matrix = np.asarray(matrix, dtype=float)
        self.shape = self.matrix.shape

    def matvec(self, v):
        return self.matrix @ v

    def dense(self):
        return self.matrix


class Wrap(Operator):
    """Any object with ``shape`` and ``@`` (KroneckerOperator, MHAOperator, …)."""

    def __init__(self, op, name: str = ""):
        self.op = op
        self.shape = tuple(op.shape)
        self.name = name or type(op).__name__

    def matvec(self, v):
        return self.op @ v

    def __repr__(self):
        return f"{self.name}{self.shape}"


class Composed(Operator):
    """``ops[0] ∘ ops[1] ∘ …`` (the last is applied first)."""

    ops: list[Operator]

    def __init__(self, ops: list[Operator]):
        flat: list[Operator] = []
        for op in ops:
            inner = op.ops if isinstance(op, Composed) else [] if isinstance(op, Identity) else [op]
            # a Composed was checked when it was built: only the junctions are new (this keeps
            # U_{L,j} = W1_L U_{L-1,j} cheap to build for every depth)
            if flat and inner and flat[-1].shape[1] != inner[0].shape[0]:
                a, b = flat[-1], inner[0]
                raise ShapeMismatchError("composition", repr(a), a.shape, repr(b), b.shape,
                                         "columns of the left map must equal rows of the right")
            flat += inner
        self.ops = flat
        self.shape = (ops[0].shape[0], ops[-1].shape[1])

    def matvec(self, v):
        for op in reversed(self.ops):
            v = op.matvec(v)
        return v


class Sum(Operator):
    def __init__(self, ops: list[Operator]):
        shapes = {op.shape for op in ops}
        if len(shapes) != 1:
            raise ShapeMismatchError("sum of operators", repr(ops[0]), ops[0].shape, repr(ops[-1]),
                                     ops[-1].shape, "all terms must have one shape")
        self.ops = ops
        self.shape = ops[0].shape

    def matvec(self, v):
        out = self.ops[0].matvec(v)
        for op in self.ops[1:]:
            out = out + op.matvec(v)
        return out


class TokenAffine(Operator):
    r"""LayerNorm's linear part at a fixed input: :math:`Z\mapsto\operatorname{diag}(s)\,Z\,C_M\operatorname{diag}(\gamma)`
    on :math:`\operatorname{vec}_r(Z)`, with :math:`C_M=I_M-\tfrac1M\mathbf 1\mathbf 1^\top` (per-token
    centring) and :math:`s_n=1/\sqrt{\operatorname{var}(z_n)+\epsilon}` frozen at that input."""

    def __init__(self, scales, gamma):
        self.scales = np.asarray(scales, dtype=float)
        self.gamma = np.asarray(gamma, dtype=float)
        n, m = self.scales.size, self.gamma.size
        self.shape = (n * m, n * m)

    def matvec(self, v):
        Z = v.reshape(self.scales.size, self.gamma.size)
        return (self.scales[:, None] * (Z - Z.mean(axis=1, keepdims=True)) * self.gamma).reshape(-1)


class RowMap(Operator):
    """:math:`Z\\mapsto ZW` on :math:`\\operatorname{vec}_r(Z)`, i.e. :math:`I_N\\otimes W^\\top` (a per-token Linear)."""

    def __init__(self, W, N: int):
        # a streamed matrix (a vocabulary kept quantized, symuat.models.quantized_rows) is kept as it is
        self.W = W if getattr(W, "streamed", False) else np.asarray(W, dtype=float)
        self.N = N
        self.shape = (N * self.W.shape[1], N * self.W.shape[0])

    def matvec(self, v):
        return (v.reshape(self.N, self.W.shape[0]) @ self.W).reshape(-1)

    def rmatvec(self, v):
        """The adjoint, :math:`I_N\\otimes W`: :math:`G\\mapsto GW^\\top` (transposed chains, e.g.
        the exact logit decomposition)."""
        return (v.reshape(self.N, self.W.shape[1]) @ self.W.T).reshape(-1)
