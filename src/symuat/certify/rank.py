r"""A generic rank of a product as a Coq theorem over MathComp's ``\rank`` (H8.rank).

:func:`~symuat.kernel.decide.check_rank` proves ``rank W_QK = min(d, d_k)`` for symbolic sizes from
two facts and records them (kind ``"rank_product"``: the product and its bound): the **upper
bound**, the rank of a product of a d×d_k and a d_k×d factor is at most ``min(d, d_k)`` for every
weight, and the **lower bound**, a parametric witness — the selector ``E`` (``E_ij = δ_ij``, d×d_k)
for both factors — attains it at every size. :func:`export_rank_product` states both over any field
(``F : fieldType``; a rank needs one — the other theorems are over a commutative ring) for
``A Bᵀ`` with ``A, B`` of one shape ``r×c``:

``(∀ F r c (A B : 'M[F]_(r, c)), \rank (A *m Bᵀ) ≤ minn r c) ∧ (∀ F r c, ∃ A B, \rank (A *m Bᵀ) = minn r c)``,

the witness being MathComp's ``pid_mx (minn r c)`` (the selector). The proof is MathComp's rank
lemmas (``rank_leq_row``, ``mxrankM_maxl``, ``rank_leq_col``, ``tr_pid_mx``, ``pid_mx_id``,
``rank_pid_mx``): no library file. A bound one less, or the witness claimed to reach ``r`` (not
``min``), is rejected (``tests/test_certify_rank.py``).

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> d, k = sp.symbols("d d_k", positive=True, integer=True)
>>> Q, K = MatrixSymbol("W_Qi", d, k), MatrixSymbol("W_Ki", d, k)
>>> t, = export_rank_product("h8", {"expr": Q * K.T, "bound": sp.Min(d, k)})
>>> print(t.statement.splitlines()[-2])
  (forall (F : fieldType) (d d_k : nat) (W_Qi W_Ki : 'M[F]_(d, d_k)), (\rank (W_Qi *m W_Ki^T) <= minn d d_k)%nat) /\
"""

from __future__ import annotations

import sympy as sp
from sympy import MatrixSymbol, Transpose

from symuat.certify.coq_terms import Unsupported, ident
from symuat.certify.export import Exported

PROOF = ("split=> [F r c A B|F r c].\n"
         "  rewrite leq_min; apply/andP; split; first exact: rank_leq_row.\n"
         "  by apply: leq_trans (mxrankM_maxl _ _) _; exact: rank_leq_col.\n"
         "exists (pid_mx (minn r c)), (pid_mx (minn r c)).\n"
         "by rewrite tr_pid_mx pid_mx_id ?geq_minr // rank_pid_mx ?geq_minl ?geq_minr.")


def export_rank_product(name: str, data: dict) -> list[Exported]:
    """``rank(A Bᵀ) = min(r, c)`` generically, ``A, B`` of shape ``r×c``: the bound for every
    weight and a witness attaining it, as :func:`~symuat.kernel.decide.check_rank` concluded."""
    expr, bound = data.get("expr"), sp.sympify(data.get("bound"))
    args = [a for a in getattr(expr, "args", ()) if not a.is_number] if isinstance(expr, sp.MatMul) else []
    if (len(args) != 2 or not isinstance(args[0], MatrixSymbol) or not isinstance(args[1], Transpose)
            or not isinstance(args[1].arg, MatrixSymbol)):
        raise Unsupported(f"a rank of {expr}: the exporter states A Bᵀ of two leaves only")
    A, B = args[0], args[1].arg
    r, c = A.shape
    if B.shape != A.shape or not all(isinstance(s, sp.Symbol) for s in (r, c)) or r == c:
        raise Unsupported(f"a rank of {expr}: two leaves of one shape r×c, r and c distinct size symbols")
    if sp.simplify(bound - sp.Min(r, c)) != 0:
        raise Unsupported(f"a rank of {expr} with the bound {bound}, not min of the sides")
    a, b, rr, cc = ident(A.name), ident(B.name), ident(str(r)), ident(str(c))
    prod = f"{a} *m {b}^T"
    statement = (
        f"Theorem {name} :\n"
        f"  (* the rank of {A.name} {B.name}ᵀ ({A.name}, {B.name}: {r}×{c}) over any field: at most min({r}, {c}) "
        f"for every weight, and attained by the selector E_ij = δ_ij (pid_mx) for both — its generic rank *)\n"
        f"  (forall (F : fieldType) ({rr} {cc} : nat) ({a} {b} : 'M[F]_({rr}, {cc})), "
        f"(\\rank ({prod}) <= minn {rr} {cc})%nat) /\\\n"
        f"  (forall (F : fieldType) ({rr} {cc} : nat), exists {a} {b} : 'M[F]_({rr}, {cc}), "
        f"\\rank ({prod}) = minn {rr} {cc}).")
    return [Exported(name, statement, PROOF)]


SPAN_PROOF = ("move=> F N h M H B.\n"
              "have -> : (\\matrix_(k < (N * N)%nat, l < (M * M)%nat) \\sum_(i < h) mxvec (H i) ord0 k * mxvec (B i)^T ord0 l) =\n"
              "          (\\matrix_(k < (N * N)%nat, i < h) mxvec (H i) ord0 k) *m (\\matrix_(i < h, l < (M * M)%nat) mxvec (B i)^T ord0 l).\n"
              "  by apply/matrixP => k l; rewrite !mxE; apply: eq_bigr => i _; rewrite !mxE.\n"
              "by apply: leq_trans (mxrankM_maxl _ _) _; exact: rank_leq_col.")


def export_token_block_span(name: str, data: dict) -> list[Exported]:
    """H6.corr: the N² token blocks ``Σ_i H_i(n, n') B_iᵀ`` (H5.entry) span at most ``h`` dimensions —
    stated as the rank of the N²×M² matrix whose row ``(n, n')`` (MathComp's ``mxvec`` order, row-major)
    is the block flattened, for every ``H_i`` (N×N) and ``B_i`` (M×M) over any field."""
    tokens, heads = data.get("tokens"), data.get("heads")
    if not tokens or not heads:
        raise Unsupported("a token-block span without its sizes")
    statement = (
        f"Theorem {name} :\n"
        f"  (* H6.corr: the N² token blocks of (W'_HVO)ᵀ are Σ_i H_i(n, n') B_iᵀ (H5.entry's identity, certified "
        f"with H5); flattened (mxvec) as the rows of an N²×M² matrix, its rank — the dimension of their span — is at "
        f"most h, for every H_i and every B_i (the check's B_i, blocks of W_V W_O, are a case) *)\n"
        f"  forall (F : fieldType) (N h M : nat) (H : 'I_h -> 'M[F]_N) (B : 'I_h -> 'M[F]_M),\n"
        f"  (\\rank (\\matrix_(k < (N * N)%nat, l < (M * M)%nat) (\\sum_(i < h) mxvec (H i) ord0 k * mxvec (B i)^T ord0 l)%R) <= h)%nat.")
    return [Exported(name, statement, SPAN_PROOF)]
