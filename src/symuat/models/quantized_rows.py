"""A large tied embedding kept in its file's form: a ``(V, M)`` float64 matrix whose rows are
dequantized when they are read, a block at a time, never all at once.

Gemma-3-270M's token embedding (262,144 × 640, tied to the unembedding) is 1.34 GB in float64 and
178 MB as its GGUF stores it (Q8_0). :class:`QuantizedRows` keeps the stored bytes and gives the
float64 numbers of dequantizing the whole tensor — exactly those: a row's blocks are dequantized
from that row's bytes alone (``gguf``'s dequantizer; F16/F32/F64 rows are widened, which is exact):

* ``E[ids]`` — the rows a prompt embeds; ``E[token]`` one unembedding row (a readout, an attribution);
* ``X @ E.T`` — the logits, streamed over the vocabulary :data:`BLOCK_ROWS` rows at a time
  (dequantize a block, multiply, keep the block's logits, drop it): each logit is the same dot
  product over ``M`` as with the whole matrix;
* ``E @ y`` (the lenses) and ``G @ E`` (a transposed chain), streamed the same way;
* :meth:`QuantizedRows.sha256` — the digest of the whole float64 matrix's bytes, streamed;
* ``np.asarray(E)`` — the whole float64 matrix, for the code that needs all of it (``fold`` writes a
  checkpoint); nothing on the check's or the attribution's path calls it.

>>> import numpy as np
>>> W = np.arange(20.0).reshape(5, 4) / 8
>>> E = QuantizedRows.of_array(W.astype(np.float16))        # F16 rows, as a GGUF may store them
>>> E.shape, float(E[3][1]), E[[4, 0]].tolist() == W[[4, 0]].tolist()
((5, 4), 1.625, True)
>>> X = np.ones((2, 4))
>>> bool(np.array_equal(X @ E.T, X @ W.T)), bool(np.array_equal(E @ X[0], W @ X[0]))
(True, True)
>>> E.block_rows = 2                                        # three blocks: the same logits
>>> bool(np.array_equal(X @ E.T, X @ W.T)), np.asarray(E).tolist() == W.tolist()
(True, True)
"""

from __future__ import annotations

import hashlib

import numpy as np

#: vocabulary rows dequantized at a time: a float64 block of 8,192 × 640 is 42 MB (Gemma-3-270M)
BLOCK_ROWS = 8192

#: the unquantized GGUF types: the stored rows are these numbers, widened exactly
PLAIN = {"F16": np.float16, "F32": np.float32, "F64": np.float64}


def dequantize(data: np.ndarray, qtype: str) -> np.ndarray:
    """The float64 rows of ``data`` (``(rows, row bytes)`` uint8, GGUF type ``qtype``): F16/F32/F64
    widened, Q8_0 by :func:`dequantize_q8_0`, another quantized type through
    ``gguf.quants.dequantize`` (exact in float32, widened exactly). ``NotImplementedError`` for a
    type ``gguf`` cannot dequantize."""
    if qtype in PLAIN:
        return np.asarray(data.view(PLAIN[qtype]), dtype=np.float64)
    if qtype == "Q8_0":
        return dequantize_q8_0(data)
    import gguf

    return np.asarray(gguf.quants.dequantize(data, gguf.GGMLQuantizationType[qtype]), dtype=np.float64)


#: a Q8_0 block: a float16 scale ``d`` and 32 int8 ``q`` (34 bytes), the 32 numbers ``d·q``
Q8_0_BLOCK = 34


def dequantize_q8_0(data: np.ndarray) -> np.ndarray:
    """The float64 rows of Q8_0 ``data`` (``(rows, row bytes)`` uint8): each block's ``d·q``
    formed in float64. ``gguf`` forms it in float32 and widens; the numbers are the same, because
    the product of a float16 (11 significant bits) and an int8 (8 bits) is exact in either
    format, and so are inf and nan (``tests/test_quantized_rows.py`` compares every float16 scale
    against every int8 with ``gguf``). One pass over the float64 rows instead of three.

    >>> d = np.array([0.5], dtype=np.float16).view(np.uint8)
    >>> q = np.arange(-16, 16, dtype=np.int8).view(np.uint8)
    >>> dequantize_q8_0(np.concatenate([d, q])[None])[0, :3].tolist()
    [-8.0, -7.5, -7.0]
    """
    rows = data.shape[0]
    blocks = data.reshape(rows, -1, Q8_0_BLOCK)
    d = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float64)   # (rows, blocks, 1)
    out = blocks[..., 2:].view(np.int8).astype(np.float64)                          # (rows, blocks, 32)
    out *= d
    return out.reshape(rows, -1)


class QuantizedRows:
    """A ``(V, M)`` float64 matrix stored as its GGUF rows (``data``: ``(V, row bytes)`` uint8 of
    type ``qtype``), read by rows; see the module docstring for what it supports."""

    ndim = 2
    dtype = np.dtype(np.float64)
    streamed = True  # an operator keeps it as it is (:class:`symuat.numeric.operators.RowMap`)
    __array_ufunc__ = None  # ``X @ E``: NumPy defers to :meth:`__rmatmul__` rather than convert E

    def __init__(self, data: np.ndarray, qtype: str, shape: tuple[int, int]):
        self.data, self.qtype, self.shape = data, qtype, (int(shape[0]), int(shape[1]))
        self.block_rows = BLOCK_ROWS
        if data.shape[0] != self.shape[0]:
            raise ValueError(f"{data.shape[0]} stored rows for a ({self.shape[0]}, {self.shape[1]}) matrix")

    @classmethod
    def of_array(cls, W: np.ndarray) -> QuantizedRows:
        """A float16/32/64 matrix held as its bytes (the unquantized GGUF types; for tests)."""
        W = np.ascontiguousarray(W)
        name = {np.dtype(v): k for k, v in PLAIN.items()}[W.dtype]
        return cls(W.view(np.uint8).reshape(W.shape[0], -1), name, W.shape)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        """What it holds (the stored bytes), not the float64 matrix's size."""
        return int(self.data.nbytes)

    @property
    def T(self) -> Transposed:
        return Transposed(self)

    def __getitem__(self, index) -> np.ndarray:
        """Rows by an int, a slice or an integer array; a pair ``(rows, cols)`` reads those rows first."""
        if isinstance(index, tuple):
            out = self[index[0]]
            return out[(slice(None),) * (out.ndim - 1) + index[1:]]
        if isinstance(index, (int, np.integer)):
            return self.rows(np.array([int(index)]))[0]
        if isinstance(index, slice):
            return self.rows(np.arange(self.shape[0])[index])
        return self.rows(np.asarray(index))

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The float64 rows ``ids`` (any integer shape: the result has shape ``ids.shape + (M,)``)."""
        ids = np.asarray(ids)
        if ids.dtype == bool:
            ids = np.flatnonzero(ids)
        flat = ids.reshape(-1).astype(np.int64)
        if flat.size and (flat.min() < -self.shape[0] or flat.max() >= self.shape[0]):
            raise IndexError(f"row index out of range for {self.shape[0]} rows")
        out = dequantize(self.data[flat], self.qtype) if flat.size else np.empty((0, self.shape[1]))
        return out.reshape(ids.shape + (self.shape[1],))

    def blocks(self):
        """``(first row, float64 block)`` over the whole matrix, :attr:`block_rows` rows at a time."""
        for r0 in range(0, self.shape[0], self.block_rows):
            yield r0, dequantize(self.data[r0:r0 + self.block_rows], self.qtype)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.empty(self.shape)
        for r0, block in self.blocks():
            out[r0:r0 + block.shape[0]] = block
        return out if dtype is None else out.astype(dtype)

    def __matmul__(self, y) -> np.ndarray:
        """``E @ y``, ``y`` of shape ``(M,)`` or ``(M, k)``: a block of rows at a time."""
        y = np.asarray(y)
        out = np.empty((self.shape[0],) + y.shape[1:], dtype=np.result_type(y.dtype, np.float64))
        for r0, block in self.blocks():
            out[r0:r0 + block.shape[0]] = block @ y
        return out

    def __rmatmul__(self, G) -> np.ndarray:
        """``G @ E``, ``G`` of shape ``(…, V)``: the sum of the blocks' products."""
        G = np.asarray(G)
        out = None
        for r0, block in self.blocks():
            part = G[..., r0:r0 + block.shape[0]] @ block
            out = part if out is None else out + part
        return out

    def sha256(self) -> str:
        """The SHA-256 of the whole float64 matrix's bytes (C order), streamed by blocks."""
        h = hashlib.sha256()
        for _, block in self.blocks():
            h.update(np.ascontiguousarray(block).tobytes())
        return h.hexdigest()


class Transposed:
    """``E.T`` of a :class:`QuantizedRows` ``E``: ``X @ E.T`` streamed by vocabulary blocks."""

    ndim = 2
    dtype = np.dtype(np.float64)
    streamed = True
    __array_ufunc__ = None

    def __init__(self, rows: QuantizedRows):
        self.rows_of = rows
        self.shape = (rows.shape[1], rows.shape[0])

    @property
    def T(self) -> QuantizedRows:
        return self.rows_of

    def __rmatmul__(self, X) -> np.ndarray:
        """``X @ E.T`` (``X`` of shape ``(…, M)``): each block of logits formed, kept, its rows dropped."""
        X = np.asarray(X)
        out = np.empty(X.shape[:-1] + (self.shape[1],), dtype=np.result_type(X.dtype, np.float64))
        for r0, block in self.rows_of.blocks():
            out[..., r0:r0 + block.shape[0]] = X @ block.T
        return out

    def __matmul__(self, G) -> np.ndarray:
        """``E.T @ G`` = ``(Gᵀ E)ᵀ``."""
        G = np.asarray(G)
        return (G.T @ self.rows_of).T

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(self.rows_of, dtype=dtype).T
