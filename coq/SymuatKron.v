(** * SymuatKron: the rank of the lifted LoRA increment I_N ⊗ (B A)ᵀ (A3.rank, A3.lowrank)

    [lift_diag N M] is the block-diagonal matrix with N copies of M down its diagonal (token 0
    first), built by MathComp's [block_mx] by recursion on N: it is the Kronecker product
    I_N ⊗ M entry for entry, symuat's lift of X ↦ XW on the "row" order
    ([src/symuat/expr/linear.py], [lift_right]) for M = (B A)ᵀ. [rank_lift_diag]: its rank is
    N·rank M (MathComp's [rank_diag_block_mx], by induction). [rank_perm_mx]: reordering rows and
    columns (permutation matrices) keeps the rank — the "col" order's lift (B A)ᵀ ⊗ I_N is
    I_N ⊗ (B A)ᵀ with rows and columns reordered by the perfect shuffles (the commutation
    matrices); that identification is not proved here, the col theorems state the rank for every
    reordering. [rank_lora_le]: rank (B A)ᵀ ≤ r for B p×r, A r×q; [rank_lora_pid]: MathComp's
    selector [pid_mx r] for both factors attains r when r ≤ p, r ≤ q. Over any [fieldType]
    (a rank needs a field); exported theorems: [src/symuat/certify/kron_rank.py]. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix mxalgebra.
From mathcomp Require Import fingroup perm.
(* loaded, not imported: no name or scope changes here; the library's coqchk then checks MathComp's
   rat, which the batches' witnesses over ℚ load (certify/export.py IMPORTS) *)
From mathcomp Require rat.
Import GRing.Theory.
Local Open Scope ring_scope.

Fixpoint lift_diag {F : fieldType} (N : nat) {m n : nat} (M : 'M[F]_(m, n)) : 'M[F]_(N * m, N * n) :=
  match N return 'M[F]_(N * m, N * n) with
  | 0 => 0
  | N'.+1 => block_mx M 0 0 (lift_diag N' M)
  end.

Lemma rank_lift_diag (F : fieldType) N m n (M : 'M[F]_(m, n)) :
  \rank (lift_diag N M) = (N * \rank M)%N.
Proof.
elim: N => [|N IH] /=; first by rewrite mxrank0 mul0n.
by rewrite rank_diag_block_mx IH mulSn.
Qed.

(** a type for the reorderings, so that exported statements need not import [perm]'s notations *)
Definition perm_of (n : nat) := 'S_n.

Lemma rank_perm_mx (F : fieldType) m n (s : 'S_m) (t : 'S_n) (M : 'M[F]_(m, n)) :
  \rank (row_perm s (col_perm t M)) = \rank M.
Proof.
by rewrite row_permE col_permE mulmxA mxrankMfree ?row_free_unit ?unitmx_perm // eqmxMfull ?row_full_unit ?unitmx_perm.
Qed.

Lemma rank_lora_le (F : fieldType) p q r (B : 'M[F]_(p, r)) (A : 'M[F]_(r, q)) :
  (\rank (B *m A)^T <= r)%N.
Proof. by rewrite mxrank_tr; apply: leq_trans (mxrankM_maxl _ _) _; exact: rank_leq_col. Qed.

Lemma rank_lora_pid (F : fieldType) p q r : (r <= p)%N -> (r <= q)%N ->
  \rank ((pid_mx r : 'M[F]_(p, r)) *m (pid_mx r : 'M[F]_(r, q)))^T = r.
Proof. by move=> hp hq; rewrite mxrank_tr pid_mx_id // rank_pid_mx. Qed.
