r"""A printed picture → Coq: entries at their flat positions, so the layout is in the statement.

M1's picture draws ``W'`` and ``x'`` as flat arrays ("column 2 of ``W'`` is column 1 shifted down
by one"; ``x' = (x_{11}, …, x_{1M}, x_{21}, …)``). An identity of multi-indices
(``W'(e_1 ⊗ e_2) = (Wᵀe_1) ⊗ e_2``) holds in either flattening, so it does not certify the
picture; these theorems name the flat positions (``coq/SymuatFlat.v``: the position of the
multi-index ``(a, b)`` of ``[:: A; B]`` is ``a*B + b``) and state, for every flat position ``p``:

* kind ``"flat_column"`` — column ``q`` of the lift (0-based: the picture's column ``q + 1``) is
  the printed column, ``w_k`` at the positions ``k*B + offset`` and zeros elsewhere::

      forall p : nat, flatm_at W' p q%N = printed_col block offset%N w p

  (``block``: the picture's ``M``) under the premises ``0 < A`` and ``q < B`` for the lift's index
  space ``[:: A; B]`` (the multi-index ``(0, q)`` the position names);
* kind ``"flat_listing"`` — the flattened vector lists the matrix row by row::

      forall p : nat, flat_at (vec_r x) p = printed_rows x p.

The proof is ``symuat_picture``. In the column-major layout (the lift over ``[:: M; N]``,
``vec_c x``) the same statements are false and Coq rejects them (``tests/test_certify_picture.py``).

>>> from symuat.claims import linear
>>> from symuat.expr.algebra import T, mul
>>> from symuat.expr.basis import Basis
>>> from symuat.expr.linear import in_sense, lift_left
>>> from symuat.expr.vec import Vec
>>> Wp = in_sense(lift_left(linear._W, linear.M, "row"), "dia")
>>> w = mul(T(linear._W), Basis(0, linear.N))
>>> print(export_flat_column("c", {"lift": Wp, "column": 1, "offset": 1, "printed": w, "block": linear.M})[0].statement)
Theorem c (M N : nat) (h_M_1 : (1 < M)%N) (h_N_0 : (0 < N)%N) (W : mx R [:: N] [:: N]) :
  forall p : nat, flatm_at (tr (kron W (idm [:: M]))) p 1%N = printed_col M 1%N (mul (tr W) (selector (Ordinal h_N_0))) p.
>>> print(export_flat_listing("x", {"flat": Vec(linear._Xi, "row"), "matrix": linear._Xi})[0].statement)
Theorem x (M N : nat) (x_i : mx R [:: N] [:: M]) :
  forall p : nat, flat_at (vec_r x_i) p = printed_rows x_i p.
"""

from __future__ import annotations

from symuat.certify.coq_terms import Ctx, Unsupported, strip, term
from symuat.certify.export import Exported, binders_of
from symuat.kernel.index_calculus import col_space, row_space

PROOF = "symuat_picture."


def _pair(space, what: str) -> tuple:
    if len(space) != 2:
        raise Unsupported(f"{what}: flat positions are stated for a pair of indices, not {list(space)}")
    return tuple(space)


def _theorem(name: str, ctx: Ctx, body: str) -> Exported:
    head = f"Theorem {name} " + " ".join(binders_of(ctx)) + " :"
    return Exported(name, f"{head}\n  forall p : nat, {body}.", PROOF, probes=((name, "direct"),))


def export_flat_column(name: str, data: dict) -> list[Exported]:
    """Column ``data["column"]`` (a flat position, 0-based) of ``data["lift"]`` is the printed
    column: the entries of ``data["printed"]`` (a vector) at the flat positions
    ``k*block + data["offset"]``, ``block`` = ``data["block"]`` (the picture's blocks: one per
    token, of its ``M`` features). The premises ``0 < A``, ``q < B`` are read from the lift's
    index space ``[:: A; B]``."""
    lift, q, offset, printed = data["lift"], int(data["column"]), int(data["offset"]), data["printed"]
    rows, cols = row_space(lift), col_space(lift)
    if rows != cols:
        raise Unsupported(f"the lift's rows {rows} and columns {cols} are not one space")
    A, B = _pair(rows, "the lift")
    if len(row_space(printed)) != 1 or col_space(printed):
        raise Unsupported(f"the printed column's entries are not a vector ({row_space(printed)}×{col_space(printed)})")
    ctx = Ctx()
    W, w, block = strip(term(lift, ctx)), strip(term(printed, ctx)), ctx.dim(data["block"])
    a, b = ctx.dim(A), ctx.dim(B)
    # the multi-index (0, q) that flat position q names: the premises of fpos_front
    ctx.ranges[f"h_{a}_0"] = f"(0 < {a})%N"
    ctx.ranges[f"h_{b}_{q}"] = f"({q} < {b})%N"
    return [_theorem(name, ctx, f"flatm_at ({W}) p {q}%N = printed_col {block} {offset}%N ({w}) p")]


def export_flat_listing(name: str, data: dict) -> list[Exported]:
    """``data["flat"]`` (a flattening of ``data["matrix"]``) lists the matrix row by row."""
    flat, x = data["flat"], data["matrix"]
    _pair(row_space(flat), "the flattened vector")
    ctx = Ctx()
    v, m = strip(term(flat, ctx)), term(x, ctx)
    return [_theorem(name, ctx, f"flat_at ({v}) p = printed_rows {m} p")]
