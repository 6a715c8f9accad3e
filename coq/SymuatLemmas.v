(** * SymuatLemmas: the matrix identities behind the papers' lifts, proved once.

    Shape-general statements (symbolic sizes), each proved by the same entrywise procedure
    the exported theorems use ([symuat_entry]). Names say what they prove, in the style of
    mathlib's [Matrix.kronecker_mulVec_vec]. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac.
Import GRing.Theory.
Local Open Scope ring_scope.

Section Lemmas.
Variable R : comRingType.
Add Ring symuat_ring : (R_ring_theory_ring R).
Variables (m n p q N M : nat).

(** vec of a product, row-major: [vec_r(A X B) = (A ⊗ Bᵀ) vec_r(X)] *)
Lemma vec_r_mul (A : mx R [:: m] [:: n]) (X : mx R [:: n] [:: p]) (B : mx R [:: p] [:: q]) :
  vec_r (mul (mul A X) B) =m mul (kron A (tr B)) (vec_r X).
Proof. symuat_entry. Qed.

(** vec of a product, column-major: [vec_c(A X B) = (Bᵀ ⊗ A) vec_c(X)]
    (mathlib's [kronecker_mulVec_vec]) *)
Lemma vec_c_mul (A : mx R [:: m] [:: n]) (X : mx R [:: n] [:: p]) (B : mx R [:: p] [:: q]) :
  vec_c (mul (mul A X) B) =m mul (kron (tr B) A) (vec_c X).
Proof. symuat_entry. Qed.

(** the mixed product: [(A ⊗ B)(C ⊗ D) = (AC) ⊗ (BD)] *)
Lemma kron_mixed (A : mx R [:: m] [:: n]) (B : mx R [:: p] [:: q])
      (C : mx R [:: n] [:: N]) (D : mx R [:: q] [:: M]) :
  mul (kron A B) (kron C D) =m kron (mul A C) (mul B D).
Proof. symuat_entry. Qed.

(** the transpose of a Kronecker product: [(A ⊗ B)ᵀ = Aᵀ ⊗ Bᵀ] *)
Lemma tr_kron (A : mx R [:: m] [:: n]) (B : mx R [:: p] [:: q]) :
  tr (kron A B) =m kron (tr A) (tr B).
Proof. symuat_entry. Qed.

(** the transpose of a product: [(AB)ᵀ = Bᵀ Aᵀ] *)
Lemma tr_mul (A : mx R [:: m] [:: n]) (B : mx R [:: n] [:: p]) :
  tr (mul A B) =m mul (tr B) (tr A).
Proof. symuat_entry. Qed.

(** the commutation matrix: [vec_r(X) = K_{N,M} vec_c(X)] *)
Lemma vec_r_commutation (X : mx R [:: N] [:: M]) :
  vec_r X =m mul (commutation N M) (vec_c X).
Proof. symuat_entry. Qed.

(** D4 read as matrix algebra (claim P1): [W ⋄ x = Wᵀ x] *)
Lemma diamond_mv (W : mx R [:: m] [:: n]) (x : mx R [:: m] [::]) :
  diamond W x =m mul (tr W) x.
Proof. symuat_entry. Qed.

End Lemmas.
