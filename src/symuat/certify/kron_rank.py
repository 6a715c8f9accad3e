r"""A3's ranks of the lifted LoRA increment as Coq theorems over MathComp's ``\rank`` (``coq/SymuatKron.v``).

A3.rank and A3.lowrank conclude, from the structure of the lift (:func:`symuat.numeric.lora.structural_rank`),
``rank(I_N ⊗ (BA)ᵀ) = rank(I_N)·rank(BA) = N·min(p, q, r) = N·r`` (LoRA: ``r ≤ min(p, q)``) — on the
"row" order the lift of ``X ↦ XW`` is ``I_N ⊗ (BA)ᵀ``, on the "col" order ``(BA)ᵀ ⊗ I_N`` — and compare
it with the claim: ``N r`` (rank), or the fraction ``rank/(N·min(p, q)) = r/min(p, q)`` (lowrank, shown for
``q ≤ p``). When the check is proved it records (kind ``"rank_kron"``) the lift, its order, the claim and
the derived value; :func:`export_rank_kron` states, over any field, for ``B : p×r`` and ``A : r×q``:

* the **bound**: ``\rank (lift_diag N (B *m A)^T) ≤ N * r`` for every ``B, A``;
* the **witness**: with ``r ≤ p, r ≤ q``, ``B = A = pid_mx r`` (the selector) attains ``N * r`` —
  for lowrank, the ratio ``rank / (N * minn p q) = r / minn p q`` in ``rat`` (``0 < N``);

where ``lift_diag N M`` (``coq/SymuatKron.v``) is N copies of ``M`` down the diagonal, MathComp's
``block_mx`` by recursion on ``N``: ``I_N ⊗ M`` itself. For the "col" order the theorem states the same
for ``row_perm s (col_perm t (lift_diag …))``, every reordering ``s, t`` of rows and columns:
``(BA)ᵀ ⊗ I_N`` is ``I_N ⊗ (BA)ᵀ`` reordered by the perfect shuffles (commutation matrices), an
identification the theorem does not prove — said in its comment and in the record's reason
(:func:`reason`). A bound ``N·r − 1``, a witness claimed to reach ``N·q``, or a rank ``N`` for ``N·r``
is rejected (``tests/test_certify_kron_rank.py``).

>>> import sympy as sp
>>> from sympy import Identity, KroneckerProduct, MatrixSymbol
>>> N, p, q, r = sp.symbols("N p q r", positive=True, integer=True)
>>> B, A = MatrixSymbol("B", p, r), MatrixSymbol("A", r, q)
>>> t, = export_rank_kron("a3", {"expr": KroneckerProduct(Identity(N), (B * A).T), "order": "row",
...                              "claim": "value", "claimed": N * r})
>>> print(t.statement.splitlines()[-3])
  (forall (F : fieldType) (N p q r : nat) (B : 'M[F]_(p, r)) (A : 'M[F]_(r, q)), (\rank (lift_diag N (B *m A)^T) <= N * r)%nat) /\
"""

from __future__ import annotations

import sympy as sp
from sympy import Identity, KroneckerProduct, MatMul, MatrixSymbol, Transpose

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

LIBRARY = "SymuatKron"

_PROOF_BOUND = "  by move=> F N p q r B A; rewrite {}rank_lift_diag leq_mul2l rank_lora_le orbT.\n"


def reason(data: dict) -> str:
    """What the theorem states and how its objects correspond to symuat's lift (the record's reason)."""
    base = ("stated over MathComp's rank for any field: lift_diag N M is N copies of M = (B A)ᵀ down the "
            "diagonal (block_mx by recursion on N), i.e. I_N ⊗ (B A)ᵀ; rank ≤ N·r for every B, A and "
            "B = A = pid_mx r attains N·r when r ≤ p, r ≤ q")
    if data.get("claim") == "low-rank":
        base += "; the claim as the ratio rank/(N·min(p, q)) = r/min(p, q) in rat (0 < N)"
    if data.get("order") == "col":
        base += ("; col order: symuat's lift (B A)ᵀ ⊗ I_N is I_N ⊗ (B A)ᵀ with rows and columns reordered by "
                 "the perfect shuffles (commutation matrices) — not proved in Coq: the theorem states the rank "
                 "for every reordering of rows and columns (row_perm s, col_perm t)")
    return base


def _factors(expr, order):
    if not isinstance(expr, KroneckerProduct) or len(expr.args) != 2:
        raise Unsupported(f"a rank of {expr}: not a Kronecker product of two factors")
    ident, inc = expr.args if order == "row" else reversed(expr.args)
    if isinstance(inc, MatMul) and len(inc.args) == 2 and all(isinstance(a, Transpose) for a in inc.args):
        inc = Transpose(MatMul(inc.args[1].arg, inc.args[0].arg))  # Aᵀ Bᵀ, as SymPy may write (B A)ᵀ
    if not isinstance(ident, Identity) or not isinstance(inc, Transpose) or not isinstance(inc.arg, MatMul):
        raise Unsupported(f"a rank of {expr}: not the {order} lift I_N ⊗ (B A)ᵀ / (B A)ᵀ ⊗ I_N")
    args = inc.arg.args
    if len(args) != 2 or not all(isinstance(a, MatrixSymbol) for a in args):
        raise Unsupported(f"a rank of {expr}: the increment is not a product of two leaves")
    B, A = args
    (p, r), (r2, q), N = B.shape, A.shape, ident.rows
    sizes = (N, p, q, r)
    if r2 != r or not all(isinstance(s, sp.Symbol) for s in sizes) or len(set(sizes)) != 4:
        raise Unsupported(f"a rank of {expr}: B p×r, A r×q, I_N with N, p, q, r distinct size symbols")
    return sizes


def export_rank_kron(name: str, data: dict) -> list[Exported]:
    """The rank of the lifted LoRA increment: the bound ``N·r`` for every ``B, A`` and the selector
    attaining it (lowrank: as the fraction of ``N·min(p, q)``), as A3's checks concluded."""
    order, claim, expr = data.get("order"), data.get("claim"), data.get("expr")
    if order not in ("row", "col") or claim not in ("value", "low-rank"):
        raise Unsupported(f"a lifted rank with order {order!r} and claim {claim!r}")
    N, p, q, r = _factors(expr, order)
    claimed = sp.sympify(data.get("claimed"))
    expected = N * r if claim == "value" else r / q
    if sp.cancel(claimed - expected) != 0:
        raise Unsupported(f"a lifted rank claimed {claimed}: the theorem states {expected}")
    lift = "lift_diag N (B *m A)^T"
    binders, intro = "", ""
    if order == "col":
        lift = f"row_perm s (col_perm t ({lift}))"
        binders, intro = " (s : perm_of (N * q)) (t : perm_of (N * p))", " s t"
    mats = "(B : 'M[F]_(p, r)) (A : 'M[F]_(r, q))"
    if claim == "value":
        reached = f"\\rank ({lift}) = (N * r)%nat"
        pre, wit_intro, close = "", "hp hq", "rank_lift_diag rank_lora_pid"
    else:
        reached = f"((\\rank ({lift}))%:R / (N * minn p q)%:R = r%:R / (minn p q)%:R :> rat)%R"
        pre, wit_intro = "(0 < N)%nat -> ", "hN hp hq"
        close = ("rank_lift_diag rank_lora_pid // !natrM -mulf_div divff ?mul1r // Num.Theory.pnatr_eq0 -lt0n")
    perm = "rank_perm_mx " if order == "col" else ""
    what = ("row order: symuat's lift I_N ⊗ (B A)ᵀ is lift_diag N (B A)ᵀ, N diagonal copies (block_mx)"
            if order == "row" else
            "col order: symuat's lift (B A)ᵀ ⊗ I_N is lift_diag N (B A)ᵀ, N diagonal copies (block_mx), with rows "
            "and columns reordered (perfect shuffles) — NOT proved here: stated for every reordering s, t")
    claim_text = ("" if claim == "value" else
                  "; the claim as rank/(N min(p,q)) = r/min(p,q) in rat, 0 < N (checked for q ≤ p)")
    statement = (
        f"Theorem {name} :\n"
        f"  (* A3, {what}; B p×r, A r×q, any field: rank ≤ N r for all B, A; B = A = pid_mx r attains it "
        f"(r ≤ p, r ≤ q){claim_text} *)\n"
        f"  (forall (F : fieldType) (N p q r : nat) {mats}{binders}, (\\rank ({lift}) <= N * r)%nat) /\\\n"
        f"  (forall (F : fieldType) (N p q r : nat){binders}, {pre}(r <= p)%nat -> (r <= q)%nat ->\n"
        f"     exists {mats}, {reached}).")
    proof = ("split.\n"
             + _PROOF_BOUND.replace("F N p q r B A;", f"F N p q r B A{intro};").format(perm)
             + f"move=> F N p q r{intro} {wit_intro}; exists (pid_mx r), (pid_mx r).\n"
             f"by rewrite {perm}{close}.")
    return [Exported(name, statement, proof, requires=LIBRARY)]
