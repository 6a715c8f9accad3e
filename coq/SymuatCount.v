(** * SymuatCount: generic zero patterns and their counts (the density statements).

    symuat's density of a construction [E] (symuat.kernel.structure.generic_density) reads a
    constraint pattern off the normal form of the generic entry: a product [pat I J] of Kronecker
    deltas [delta a b] and causal indicators [(b <= a)%:R] on free indices, shared by every term.
    Its conclusion "the generic density of [E] is P/Q" is exported as three theorems:
    - support: [E I J = pat I J * E I J] for every value of the leaves (zero off the pattern;
      not stated for an empty pattern, where it would be the tautology [E I J = 1 * E I J]);
    - witness: at the all-ones leaves [E I J = pat I J * c%:R] with [0 < c] for positive sizes
      (every pattern entry is a polynomial in the leaves' entries that is nonzero at one point,
      so nonzero for generic leaves);
    - count: [(Σ_I Σ_J pat I J) * Q = P * (the product of the ranges)].
    The tactics below prove them for every check; [tri_2] is the one counting fact they need
    beyond delta elimination: [2 · #{(a, b) : b ≤ a < n} = n (n + 1)]. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

(** [ring] finds its structure from the type of the sides: a side whose head is [+] is typed in
    the additive group; [1 * _] types both in the ring *)
Ltac symuat_ring1 :=
  match goal with |- ?a = ?b => rewrite -[a]mul1r -[b]mul1r end; symuat_ring.

Section Count.
Variable R : comRingType.
Add Ring symuat_count_ring : (R_ring_theory_ring R).

Lemma natr_true : (true%:R : R) = 1. Proof. exact: mulr1n. Qed.
Lemma natr_false : (false%:R : R) = 0. Proof. exact: mulr0n. Qed.
Lemma delta_aa n (a : 'I_n) : delta a a = 1 :> R.
Proof. by rewrite /delta eqxx natr_true. Qed.
Lemma sum_zero n : \sum_(b < n) (0 : R) = 0. Proof. exact: big1_eq. Qed.
(** a factor that does not depend on the summed index, out of the sum (left, right) *)
Lemma sum_const_mul n (x : R) (F : 'I_n -> R) : \sum_(b < n) (x * F b) = x * \sum_(b < n) F b.
Proof. by rewrite big_distrr. Qed.
Lemma sum_mul_const n (x : R) (F : 'I_n -> R) : \sum_(b < n) (F b * x) = (\sum_(b < n) F b) * x.
Proof. by rewrite big_distrl. Qed.

(** the causal count: the pairs [(a, b)] with [b ≤ a < n] *)
Definition tri n : R := \sum_(a < n) \sum_(b < n) (b <= a)%N%:R.
Lemma sum_tri_l n : \sum_(a < n) \sum_(b < n) ((b <= a)%N%:R : R) = tri n. Proof. by []. Qed.
Lemma sum_tri_u n : \sum_(a < n) \sum_(b < n) ((a <= b)%N%:R : R) = tri n.
Proof. by rewrite exchange_big. Qed.

Lemma count_le n (a : 'I_n) : \sum_(b < n) ((b <= a)%N%:R : R) = (a.+1)%:R.
Proof.
rewrite -natr_sum; congr (_ %:R).
rewrite -(big_mkord xpredT (fun b => nat_of_bool (b <= a)%N)).
rewrite (big_cat_nat _ _ _ (leq0n a.+1)) ?ltn_ord //=.
rewrite (eq_big_nat _ _ (F2 := fun _ => 1%N)); last by move=> i /andP[_]; rewrite ltnS => ->.
rewrite sum_nat_const_nat subn0 muln1 big_nat_cond big1 ?addn0 // => i /andP[/andP[ai _] _].
by rewrite leqNgt ai.
Qed.

Lemma tri_2 n : 2%:R * tri n = n%:R * (n%:R + 1).
Proof.
rewrite /tri (eq_bigr (fun a : 'I_n => (a.+1)%:R)); last by move=> a _; exact: count_le.
elim: n => [|n IH]; first by rewrite big_ord0 mulr0 mul0r.
have e : (n.+1)%:R = n%:R + 1 :> R by rewrite mulrSr.
rewrite big_ord_recr /= mulrDr IH e mulr2n; symuat_ring1.
Qed.
End Count.

Global Opaque tri.

(** The atoms of a pattern, split by cases: a delta [delta a b] (equal: substituted, the delta
    is [1]; different: kept as a hypothesis), a causal indicator [(b <= a)%:R] (true: [1];
    false: [0]). *)
Ltac symuat_cases :=
  repeat match goal with
  | |- context [@delta _ _ ?a ?b] =>
      let H := fresh "Hd" in
      case: (eqVneq a b) => H; [subst; rewrite ?delta_aa | rewrite /delta (negbTE H) natr_false]
  | |- context [nat_of_bool (leq ?b ?a)] =>
      let H := fresh "Hc" in
      case: (boolP (b <= a)%N) => H; rewrite ?natr_true ?natr_false
  end.

(** every atom the case split decided, rewritten in the (unfolded) goal *)
Ltac symuat_atoms :=
  repeat match goal with
  | H : is_true (?a != ?b) |- _ =>
      let H' := fresh "Hs" in have H' := H; rewrite eq_sym in H';
      symuat_rw dl_unfold; rewrite /delta ?(negbTE H) ?(negbTE H'); clear H H'
  | H : is_true (~~ (?b <= ?a)%N) |- _ => rewrite ?(negbTE H); clear H
  | H : is_true (?b <= ?a)%N |- _ => rewrite ?H; clear H
  end;
  symuat_rw natr_true; symuat_rw natr_false.

Ltac symuat_unfold :=
  symuat_unfold_nodes;
  cbn [sumI splitI deltaI cat fst snd].

Ltac symuat_normal_with dls := symuat_prenex; dls; cbn [fst snd]; symuat_prenex.
Ltac symuat_normal := symuat_normal_with ltac:(idtac; symuat_deltas).

Ltac symuat_zeros :=
  repeat progress (symuat_rw mul0r; symuat_rw mulr0; symuat_rw sum_zero; symuat_rw add0r;
                   symuat_rw addr0; symuat_rw mulr_one_l; symuat_rw mulr_one_r).

(** support: [E I J = pat * E I J] *)
Ltac symuat_support_with dls :=
  intros; symuat_cases; rewrite ?mul1r ?mulr1 ?mul0r ?mulr0; try reflexivity;
  symuat_destruct; symuat_unfold; symuat_normal_with dls; symuat_atoms; symuat_zeros; reflexivity.
(** the deltas first eliminated by computation ([symuat_deltas_el], as [symuat_entry] does: A5's
    witness 4.2 s of rewrites → 0.1 s), the rewrites ([symuat_deltas]) where that does not close *)
Ltac symuat_support :=
  first [ symuat_support_with ltac:(idtac; symuat_deltas_el)
        | symuat_support_with ltac:(idtac; symuat_deltas) ].

(** nat literals and sums/products of sizes as ring expressions in the atoms [N%:R] *)
Ltac symuat_natr := rewrite ?natrM ?natrD ?mulrS ?mulr0n ?addr0.

(** witness: at the all-ones leaves (the hypotheses [forall .., leaf .. = 1]),
    [E I J = pat * c%:R] *)
Ltac symuat_ones_witness_with dls :=
  intros; symuat_cases; rewrite ?mul1r ?mulr1 ?mul0r ?mulr0;
  symuat_destruct; symuat_unfold;
  repeat match goal with H : forall _, _ |- _ => setoid_rewrite H; clear H end;
  symuat_normal_with dls; symuat_atoms; symuat_zeros;
  repeat (setoid_rewrite sum_const_ord); symuat_rw dl_unfold; rewrite ?delta_aa;
  symuat_natr; first [ reflexivity | symuat_ring1 ].
Ltac symuat_ones_witness :=
  first [ symuat_ones_witness_with ltac:(idtac; symuat_deltas_el)
        | symuat_ones_witness_with ltac:(idtac; symuat_deltas) ].

(** positivity of a polynomial with natural coefficients at positive sizes *)
Ltac symuat_pos :=
  intros; rewrite ?muln_gt0 ?addn_gt0 /=;
  repeat match goal with H : is_true (0 < _)%N |- _ => rewrite H /=; clear H end;
  rewrite ?orbT ?andbT ?orTb //.

(** count: the pattern summed over every free index, in closed form [C * Π tri n] *)
Ltac symuat_count :=
  symuat_deltas; cbn [fst snd];
  repeat progress (symuat_rw mulr_assoc_r; symuat_rw mulr_one_l; symuat_rw mulr_one_r;
                   symuat_rw sum_const_ord; symuat_rw sum_const_mul; symuat_rw sum_mul_const);
  symuat_rw sum_tri_l; symuat_rw sum_tri_u;
  symuat_natr; first [ reflexivity | symuat_ring1 ].
