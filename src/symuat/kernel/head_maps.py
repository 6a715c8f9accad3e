r"""Head-axis index maps and layout permutations, as matrices the index engine understands (spec §9).

Checkpoint rewrites move whole blocks of columns: a grouped K/V head is repeated for the query
heads that read it, a fused projection's columns are regrouped, a RoPE converter reorders the rows
of every head. Each is a 0/1 matrix with Kronecker structure, so statements about them are proved
for symbolic head counts and widths by the index-level normal form:

* :func:`repeat_interleave_map` — the :math:`h\times g` matrix with entry :math:`[a=\lfloor i/r\rfloor]`
  (PyTorch ``repeat_interleave`` / HF ``repeat_kv``): :math:`I_g\otimes\mathbf 1_r`;
* :func:`tile_map` — the :math:`h\times g` matrix with entry :math:`[a=i\bmod g]` (``repeat`` /
  ``tile``): :math:`\mathbf 1_r\otimes I_g`; the same flat index set, another multi-index (so the
  engine never mistakes one for the other);
* :func:`fused_to_separate` — the column permutation from a head-major fused layout
  :math:`(h,c,d)` (``[q_1k_1v_1\cdots]``, :math:`c` fused projections) to the separate one
  :math:`(c,h,d)` (``[Q|K|V]``): :math:`K_{h,c}\otimes I_d`;
* :class:`AxisBlock` — the embedding :math:`[u=j+o]` of a block :math:`[o,o+m)` of one axis
  (symbolic :math:`n,o,m`), and :func:`per_group_split`, the columns of :math:`W_Q`, :math:`W_K` or
  :math:`W_V` in a per-group fused layout :math:`[q_{j,1}\cdots q_{j,r}\,k_j\,v_j]_{j<g}`:
  :math:`I_g\otimes E\otimes I_d`;
* :func:`rope_permutation` — llama.cpp's per-head ``permute`` of :math:`W_Q,W_K` columns (rows of
  the stored ``weight``): half-split order :math:`(2,e)` to interleaved pairs :math:`(e,2)` in
  every head, :math:`I_h\otimes K_{2,e}`.

NumPy twins on flat indices (what the converters and inference engines actually compute) are
:func:`repeat_interleave_index`, :func:`tile_index`, :func:`llama_cpp_permute` (a transcription
of ``convert_hf_to_gguf.py``'s ``LlamaModel.permute``) and :func:`fused_column_order`.

>>> repeat_interleave_index(6, 2).tolist(), tile_index(6, 2).tolist()
([0, 0, 0, 1, 1, 1], [0, 1, 0, 1, 0, 1])
>>> import numpy as np
>>> w = np.arange(8)[:, None]            # one head, d = 8: rows 0..7
>>> llama_cpp_permute(w, 1).ravel().tolist()
[0, 4, 1, 5, 2, 6, 3, 7]
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic, Identity, OneMatrix
from sympy.matrices.expressions import MatrixExpr

from symuat.expr.algebra import kron
from symuat.kernel.index_calculus import Term, space_of
from symuat.expr.vec import Commutation

__all__ = ["AxisBlock", "per_group_split", "repeat_interleave_map", "tile_map", "fused_to_separate", "rope_permutation",
           "repeat_interleave_index", "tile_index", "llama_cpp_permute", "llama_cpp_unpermute",
           "fused_column_order"]


# --------------------------------------------------------------------------------------------
# symbolic (index engine)
# --------------------------------------------------------------------------------------------


def repeat_interleave_map(g, r):
    r""":math:`R=I_g\otimes\mathbf 1_r` (``h×g``, :math:`h=gr`): row :math:`i=ar+b` has its 1 in column
    :math:`a=\lfloor i/r\rfloor`. Row space :math:`(g,r)`, column space :math:`(g,)`."""
    return kron(Identity(g), OneMatrix(r, 1))


def tile_map(g, r):
    r""":math:`R=\mathbf 1_r\otimes I_g` (``h×g``): row :math:`i=bg+a` has its 1 in column
    :math:`a=i\bmod g`. Row space :math:`(r,g)` — the mutant of :func:`repeat_interleave_map`."""
    return kron(OneMatrix(r, 1), Identity(g))


def fused_to_separate(h, c, d):
    r""":math:`P=K_{h,c}\otimes I_d`: ``F @ P`` regroups the columns of a head-major fused
    projection (multi-index :math:`(i,t,j)`: head, projection, feature) into the separate layout
    :math:`(t,i,j)`."""
    return kron(Commutation(h, c), Identity(d))


def rope_permutation(h, e):
    r""":math:`P=I_h\otimes K_{2,e}`: ``W @ P`` takes a half-split head layout :math:`(t,k)`
    (pair :math:`(k,k+e)`) to the interleaved one :math:`(k,t)` (pair :math:`(2k,2k+1)`), head by
    head — llama.cpp's ``permute`` on the columns of :math:`W` (rows of the stored ``weight``)."""
    return kron(Identity(h), Commutation(2, e))


class AxisBlock(MatrixExpr):
    r"""The embedding of the block :math:`[o,o+m)` of one axis of length ``n``: entry :math:`[u=o+j]`.

    ``F @ kron(I_g, AxisBlock(r + 2, 0, r), I_d)`` takes, in every group, the first ``r`` of the
    ``r+2`` column blocks of a per-group fused layout :math:`(g,\,r+2,\,d)`; ``AxisBlock(r + 2, r, 1)``
    the next one. ``block`` is the width :math:`m` or a tuple, the block's own multi-index space
    (row-major: ``(2, e)`` is a half-split RoPE head inside a wider head, :math:`j=te+k`). The block
    must fit, :math:`0\le o` and :math:`o+m\le n` for every value of the dimensions (SymPy's sign
    rules on positive dimension symbols), else ``ValueError``. The index engine sums a block index
    by the rules of :mod:`symuat.kernel.index_calculus` (same block: :math:`E^TE=I`; disjoint
    blocks: :math:`E^TE'=0`).

    >>> from symuat.expr.algebra import dims
    >>> r = dims("r")
    >>> AxisBlock(r + 2, r, 1).shape
    (r + 2, 1)
    >>> AxisBlock(r, 1, r)
    Traceback (most recent call last):
    ...
    ValueError: the block [1, r + 1) does not fit in an axis of r for every value of the dimensions
    """

    def __new__(cls, n, offset, block):
        n, offset = sp.sympify(n), sp.sympify(offset)
        widths = tuple(sp.sympify(w) for w in (block if isinstance(block, (tuple, list, sp.Tuple)) else (block,)))
        m = sp.Mul(*widths)
        if sp.simplify(offset).is_nonnegative is not True or any(sp.simplify(w - 1).is_nonnegative is not True
                                                                  for w in widths):
            raise ValueError(f"the block's offset {offset} must be ≥ 0 and its widths {widths} ≥ 1 for every value")
        if sp.simplify(n - offset - m).is_nonnegative is not True:
            raise ValueError(f"the block [{offset}, {offset + m}) does not fit in an axis of {n} for every "
                             "value of the dimensions")
        return Basic.__new__(cls, n, offset, sp.Tuple(*widths))

    @property
    def widths(self) -> tuple:
        return tuple(self.args[2])

    @property
    def shape(self):
        return (self.args[0], sp.Mul(*self.widths))

    def _symuat_row_space(self):
        return space_of(self.args[0])

    def _symuat_col_space(self):
        return sum((space_of(w) for w in self.widths), ())

    def _symuat_entry(self, ctx, I, J):
        if not I:  # n = 1: the whole axis
            return [Term(sp.Integer(1), (), ())]
        return [Term(sp.Integer(1), (("B", I[0], tuple(J), self.args[1], self._symuat_col_space()),), ())]

    def _symuat_evaluate(self, ev):
        n, o, m = ev.size(self.args[0]), ev.size(self.args[1]), ev.size(self.shape[1])
        out = ev.const((n, m), 0)
        for j in range(m):
            out[o + j, j] = 1
        return out

    def _latex(self, printer):
        n, o, m = (printer._print(x) for x in (self.args[0], self.args[1], self.shape[1]))
        return rf"E^{{{n}}}_{{[{o},\,{o}+{m})}}"


def per_group_split(g, r, d, part: str):
    r"""The columns of one projection in a per-group fused layout :math:`(g,\,r+2,\,d)` =
    :math:`[q_{j,1}\cdots q_{j,r}\,k_j\,v_j]_{j<g}`: ``F @ per_group_split(g, r, d, "q")`` is
    :math:`W_Q` (columns :math:`(g,r,d)`), ``"k"``/``"v"`` give :math:`W_K`, :math:`W_V` (columns :math:`(g,d)`)."""
    offset, width = {"q": (0, r), "k": (r, 1), "v": (r + 1, 1)}[part]
    return kron(Identity(g), AxisBlock(r + 2, offset, width), Identity(d))


# --------------------------------------------------------------------------------------------
# NumPy twins (flat indices, as the converters compute them)
# --------------------------------------------------------------------------------------------


def _check_group(h: int, g: int) -> int:
    if g < 1 or h % g:
        raise ValueError(f"{h} query heads are not a multiple of {g} key/value heads")
    return h // g


def repeat_interleave_index(h: int, g: int) -> np.ndarray:
    """K/V head read by each query head under ``repeat_interleave``: :math:`\\lfloor i/r\\rfloor`."""
    return np.arange(h) // _check_group(h, g)


def tile_index(h: int, g: int) -> np.ndarray:
    """K/V head read by each query head under tiling: :math:`i\\bmod g` (the shipped mistake of WP5)."""
    _check_group(h, g)
    return np.arange(h) % g


def llama_cpp_permute(weights: np.ndarray, n_head: int, n_head_kv: int | None = None) -> np.ndarray:
    """``LlamaModel.permute`` of llama.cpp's ``convert_hf_to_gguf.py`` (rows of a stored ``weight``)::

        if n_head_kv is not None and n_head != n_head_kv:
            n_head = n_head_kv
        return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
                .swapaxes(1, 2).reshape(weights.shape))
    """
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    rows = weights.shape[0]
    if rows % (2 * n_head):
        raise ValueError(f"{rows} rows cannot be split into {n_head} heads of pairs")
    return (weights.reshape(n_head, 2, rows // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def llama_cpp_unpermute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """The inverse of :func:`llama_cpp_permute` (GGUF's interleaved rows back to HF's half-split)."""
    rows = weights.shape[0]
    if rows % (2 * n_head):
        raise ValueError(f"{rows} rows cannot be split into {n_head} heads of pairs")
    return (weights.reshape(n_head, rows // n_head // 2, 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def fused_column_order(h: int, c: int, d: int) -> np.ndarray:
    """Column ``order`` with ``F[:, order]`` = ``[W_0 | … | W_{c-1}]`` for a head-major fused ``F``."""
    return np.arange(h * c * d).reshape(h, c, d).transpose(1, 0, 2).reshape(-1)

