(** * SymuatFamily: A2's refuting families through σ — the deep readings' residual network and the units through tanh and GELU

    A2 reads "when the parameters of some layers are small enough, those layers can be removed"
    as [∀ η > 0, ∃ δ > 0]: the chosen parameters within δ ⇒ the contribution is at most η on
    [I_n = [0, 1]^n].  symuat refutes some readings by a family of parameters within δ whose
    contribution tends (SymPy limit) to ∞ or to a nonzero value as δ → 0⁺; the theorems exported
    by [src/symuat/certify/family.py] state the negation of the check's statement and prove it at
    the family, over any [realFieldType] [R] (an ordered field: ℝ is one; Coq's [Reals], which rest
    on axioms, are not used), with σ a function [s : R -> R] and as premises the few lower bounds of
    the real σ the family's value uses (said in each theorem's comment), or σ = ReLU itself
    ([Num.max 0 t]), which needs none.

    - Deep readings (a layer [x ↦ x + W3 σ(W2 x + b2) + b3] of a residual network, [removed] =
      replaced by the identity): the network is [SymuatDepth]'s [net] with [W1 = 1] (every layer),
      [forward] its forward pass and [forward_without N x0 k L] the same pass with layer [k] skipped;
      the claim is about every depth [L], widths [D], [F] and removed layer [k < L], the change of
      every entry of the output.  Its family ([fam2], [D = F = 1], two layers, [x_0 = 1]): layer 0
      with every parameter [e] (≤ δ), layer 1 with [W2 = K], [b2 = −K], [W3 = K], [b3 = 0],
      [K = 1/e]; the change is [e(1 + u) + (s(1 + u) − s 0)/e] with [u = s(2e)] ([fam_gap]), at
      least [c/e] once [s t >= 0] for [t >= 0] and [s t >= s 0 + c] for [t >= 1]
      ([deep_any_contra]).  With the outer parameters of the removed layer fixed ([a = b = 1], one
      layer) and its inner ones [e]: the change is [1 + s(2e) >= 1] once [s t >= 0] for [t >= 0]
      ([deep_fixed_contra]; [with_inner N k W2 b2] is [N] with layer [k]'s inner parameters set).
    - Units [α s(wᵀx + θ)] ([SymuatEnv]'s statement), [n = 1], [x = 1]: [w = e], [θ = 0],
      [α = 1/e] gives [s(e)/e >= 1/2] once [s t >= t/2] on [[0, 1]] ([unit_inner_contra]);
      [α = e], [w = 1/e²], [θ = 0] gives [e s(1/e²) >= 1/(2e)] once [s t >= t/2] for [t >= 0]
      ([unit_outer_contra]).
    Everything here is constructive: [Print Assumptions] lists no axiom. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix zmodp.
From Coq Require Import Ring.
From Symuat Require Import SymuatMx SymuatTac SymuatDepth.
Import Order.POrderTheory Order.TotalTheory GRing.Theory Num.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Removed.
Variables (R : comRingType) (D F : nat).

(** the forward pass with layer [k] removed (replaced by the identity): [x_{L+1} = x_L] at [L = k] *)
Fixpoint forward_without (sigma : R -> R) (N : net R D F) (x0 : mx R [:: D] [::]) (k L : nat)
    : mx R [:: D] [::] :=
  if L is L'.+1 then
    (if L' == k then forward_without sigma N x0 k L'
     else layer_app sigma (nW1 N L') (nW2 N L') (nb2 N L') (nW3 N L') (nb3 N L') (forward_without sigma N x0 k L'))
  else x0.

(** [N] with layer [k]'s inner parameters [W2], [b2] set (the others fixed: [rest=fixed]) *)
Definition with_inner (N : net R D F) (k : nat) (W2 : mx R [:: F] [:: D]) (b2 : mx R [:: F] [::]) : net R D F :=
  Net (nW1 N) (fun l => if l == k then W2 else nW2 N l) (fun l => if l == k then b2 else nb2 N l)
      (nW3 N) (nb3 N).
End Removed.

Definition fam_cst (R : comRingType) rs cs (a : R) : mx R rs cs := fun _ _ => a.

(** the two-layer family, [D = F = 1], [W1 = 1]: layer 0 with [(W2, b2, W3, b3) = (w, th, a, b)],
    every later layer with [(K, −K, K, 0)] *)
Definition fam2 (R : comRingType) (w th a b K : R) : net R 1 1 :=
  Net (fun _ => idm [:: 1%N])
      (fun l => fam_cst (if l == 0%N then w else K))
      (fun l => fam_cst (if l == 0%N then th else - K))
      (fun l => fam_cst (if l == 0%N then a else K))
      (fun l => fam_cst (if l == 0%N then b else 0)).

Section Rings.
Variable R : comRingType.
Add Ring symuat_ring_family : (R_ring_theory_ring R).
Add Ring symuat_ring_family_zmod : (R_ring_theory_zmod R).
Lemma fam_gap_eq (e i u p q : R) : (1 + e) + e * u + i * q - (1 + i * p) = e * (1 + u) + (q - p) * i.
Proof. symuat_ring_ops; symuat_ring. Qed.
End Rings.

Section Family.
Variable R : realFieldType.
Implicit Types (s : R -> R) (e c d u : R).

Lemma fam_sum1 (G : idx [:: 1%N] -> R) : sumI G = G (ord0, tt).
Proof. by rewrite /= big_ord1. Qed.

Lemma fam_idx1 (i : idx [:: 1%N]) : i = (ord0, tt).
Proof. by case: i => [[[|//] ?] []]; congr pair; apply: val_inj. Qed.

Lemma fam2_forward2 s w th a b K i j :
  forward s (fam2 w th a b K) (fam_cst 1) 2 i j
  = ((1 + b) + a * s (w + th)) + K * s (K * ((1 + b) + a * s (w + th)) + - K).
Proof.
rewrite (fam_idx1 i) /= /layer_app /add /mul /ew /fam_cst /idm /= !big_ord1 /= /delta eqxx mulr1n.
by rewrite ?mulr1 ?mul1r ?addr0.
Qed.

Lemma fam2_without2 s w th a b K i j :
  forward_without s (fam2 w th a b K) (fam_cst 1) 0 2 i j = 1 + K * s (K + - K).
Proof.
rewrite (fam_idx1 i) /= /layer_app /add /mul /ew /fam_cst /idm /= !big_ord1 /= /delta eqxx mulr1n.
by rewrite ?mulr1 ?mul1r ?addr0.
Qed.

Lemma fam1_forward s e i j :
  forward s (with_inner (fam2 0 0 1 1 0) 0 (fam_cst e) (fam_cst e)) (fam_cst 1) 1 i j = (1 + 1) + s (e + e).
Proof.
rewrite (fam_idx1 i) /= /layer_app /add /mul /ew /fam_cst /idm /= !big_ord1 /= /delta eqxx mulr1n.
by rewrite ?mulr1 ?mul1r ?addr0.
Qed.

Lemma fam1_without s e i j :
  forward_without s (with_inner (fam2 0 0 1 1 0) 0 (fam_cst e) (fam_cst e)) (fam_cst 1) 0 1 i j = 1.
Proof. by []. Qed.

(** the arithmetic of the two-layer family: with [u = s(2e) >= 0], [x_1 - 1 = e (1 + u) >= 0] and
    [K (x_1 - 1) = 1 + u] ([K = 1/e]), so the change is [e(1 + u) + (s(1 + u) - s 0)/e >= c/e] *)
Lemma fam_gap e u c p q : 0 < e -> 0 <= u -> p + c <= q ->
  c / e <= ((1 + e) + e * u + e^-1 * q) - (1 + e^-1 * p).
Proof.
move=> He Hu Hs.
have -> : (1 + e) + e * u + e^-1 * q - (1 + e^-1 * p) = e * (1 + u) + (q - p) / e.
  exact: fam_gap_eq.
apply: ler_paddl; first by apply: mulr_ge0; [exact: ltW | apply: addr_ge0; [exact: ler01 | exact: Hu]].
by rewrite ler_pmul2r ?invr_gt0 // ler_subr_addl.
Qed.

Lemma fam_arg e u : 0 < e -> e^-1 * ((1 + e) + e * u) + - e^-1 = 1 + u.
Proof.
move=> He; have e0 : e != 0 by rewrite gt_eqF.
by rewrite -addrA mulrDr mulr1 addrAC addrN add0r mulrDr mulrA mulVf // mul1r.
Qed.

(** [|x| <= b] is false once [x >= m > b] *)
Lemma fam_norm_gt (x m b : R) : m <= x -> b < m -> ~ (`|x| <= b).
Proof. move=> Hm Hb Hx; have := le_trans (le_trans Hm (ler_norm x)) Hx; by rewrite leNgt Hb. Qed.

Lemma fam_two_le c e : 0 < e -> e <= c / 2%:R -> 2%:R <= c / e.
Proof. by move=> He Hec; rewrite ler_pdivl_mulr // mulrC -ler_pdivl_mulr ?ltr0n. Qed.

(** a [δ > 0] shrunk below [c > 0] *)
Lemma fam_shrink d c : 0 < d -> 0 < c -> exists e, 0 < e /\ e <= d /\ e <= c.
Proof.
move=> Hd Hc; case: (lerP d c) => H; first by exists d; rewrite lexx.
by exists c; rewrite lexx ltW.
Qed.

(** ** deep, every parameter of layer 0 within δ: the family [fam2 e e e e (1/e)] at [x_0 = 1] changes by
    at least [c/e], above [1] once [e <= c/2]; the premises on [s]: [s t >= 0] for [t >= 0] and
    [s t >= s 0 + c] for [t >= 1] *)
Lemma deep_any_contra s c e : (forall t, 0 <= t -> 0 <= s t) -> (forall t, 1 <= t -> s 0 + c <= s t) ->
  0 < e -> e <= c / 2%:R ->
  ~ (forall i j, `|forward s (fam2 e e e e e^-1) (fam_cst 1) 2 i j
                  - forward_without s (fam2 e e e e e^-1) (fam_cst 1) 0 2 i j| <= 1).
Proof.
move=> H1 H2 He Hec H; move: (H (ord0, tt) tt); rewrite fam2_forward2 fam2_without2 addrN.
have Hu := H1 (e + e) (addr_ge0 (ltW He) (ltW He)).
rewrite (fam_arg _ He); apply: (@fam_norm_gt _ 2%:R); last by rewrite ltr1n.
apply: le_trans (fam_two_le He Hec) (fam_gap He Hu (H2 _ _)).
by rewrite ler_addl.
Qed.

Lemma fam2_W1 w th a b K l : nW1 (fam2 w th a b K) l =m idm (R:=R) [:: 1%N].
Proof. by []. Qed.

(** ** deep, the inner parameters of layer 0 within δ, its outer ones fixed ([a = b = 1], one layer):
    the change at [x_0 = 1] is [1 + s(2e) >= 1 > 1/2]; the premise: [s t >= 0] for [t >= 0] *)
Lemma deep_fixed_contra s e : (forall t, 0 <= t -> 0 <= s t) -> 0 < e ->
  ~ (forall i j, `|forward s (with_inner (fam2 0 0 1 1 0) 0 (fam_cst e) (fam_cst e)) (fam_cst 1) 1 i j
                  - forward_without s (with_inner (fam2 0 0 1 1 0) 0 (fam_cst e) (fam_cst e)) (fam_cst 1) 0 1 i j|
                 <= 2%:R^-1).
Proof.
move=> H1 He H; move: (H (ord0, tt) tt); rewrite fam1_forward fam1_without.
apply: (@fam_norm_gt _ 1); last by rewrite invf_lt1 ?ltr0n // ltr1n.
by rewrite addrAC addrK ler_addl H1 // addr_ge0 // ltW.
Qed.

(** ** a unit [α s(wᵀx + θ)], [n = 1], [x = 1]: the inner family [w = e], [θ = 0], [α = 1/e] is
    [s(e)/e >= 1/2] once [s t >= t/2] on [0 <= t <= 1] ([e <= 1]); the outer family [α = e],
    [w = 1/e²], [θ = 0] is [e s(1/e²) >= 1/(2e) >= 1/2] once [s t >= t/2] for [t >= 0] ([e <= 1]);
    both above [η = 1/4] *)
Lemma fam_quarter_pos : (0 : R) < 4%:R^-1.
Proof. by rewrite invr_gt0 ltr0n. Qed.

Lemma fam_quarter_lt_half : (4%:R^-1 : R) < 2%:R^-1.
Proof. by rewrite ltf_pinv ?posrE ?ltr0n // ltr_nat. Qed.

Lemma unit_inner_contra s e : (forall t, 0 <= t <= 1 -> t / 2%:R <= s t) -> 0 < e -> e <= 1 ->
  ~ (`|e^-1 * s (\sum_(i < 1) e * 1 + 0)| <= 4%:R^-1).
Proof.
move=> Hs He He1; rewrite big_ord1 mulr1 addr0.
apply: (fam_norm_gt _ fam_quarter_lt_half).
have e0 : e != 0 by rewrite gt_eqF.
apply: le_trans (_ : e^-1 * (e / 2%:R) <= _); first by rewrite mulrA mulVf // mul1r.
by rewrite ler_pmul2l ?invr_gt0 // Hs // ltW // He1.
Qed.

Lemma unit_outer_contra s e : (forall t, 0 <= t -> t / 2%:R <= s t) -> 0 < e -> e <= 1 ->
  ~ (`|e * s (\sum_(i < 1) (e * e)^-1 * 1 + 0)| <= 4%:R^-1).
Proof.
move=> Hs He He1; rewrite big_ord1 mulr1 addr0.
apply: (fam_norm_gt _ fam_quarter_lt_half).
have e0 : e != 0 by rewrite gt_eqF.
apply: le_trans (_ : e * ((e * e)^-1 / 2%:R) <= _).
  rewrite invrM ?unitfE // mulrA mulrA mulrV ?unitfE // mul1r.
  by rewrite -[X in X <= _]mul1r ler_pmul2r ?invr_gt0 ?ltr0n // invf_ge1.
by rewrite ler_pmul2l // Hs // ltW // invr_gt0 mulr_gt0.
Qed.

Lemma fam_one_pos : (0 : R) < 1. Proof. exact: ltr01. Qed.
Lemma fam_half_pos : (0 : R) < 2%:R^-1. Proof. by rewrite invr_gt0 ltr0n. Qed.

(** ReLU, [max(0, t)], meets the deep premises with [c = 1] *)
Lemma relu_nonneg t : 0 <= t -> (0 : R) <= Num.max 0 t.
Proof. by move=> Ht; rewrite le_maxr lexx. Qed.

Lemma relu_step t : 1 <= t -> Num.max 0 0 + 1 <= Num.max (0 : R) t.
Proof. by move=> Ht; rewrite maxxx add0r le_maxr Ht orbT. Qed.
End Family.

Arguments fam_shrink [R d c].
Arguments fam_one_pos {R}.
Arguments fam_half_pos {R}.
Arguments fam_quarter_pos {R}.

(** [0 < c] for a positive rational constant ([1], [1/k], [c/2]) *)
Ltac symuat_fam_pos := rewrite ?divr_gt0 ?invr_gt0 ?ltr0n ?ltr01.

(** the premises of a family's instance: [k < L], [W1 = 1], the constrained entries within δ
    ([|e| <= δ], [|0| <= δ]) and [x_0 = 1] in [I] *)
Ltac symuat_fam_close He Hed Hd :=
  rewrite /= ?/fam_cst ?normr0 ?(gtr0_norm He);
  first [ done | exact Hed | exact: (ltW Hd) | by rewrite ler01 lexx | by rewrite lexx ].

Ltac symuat_fam_premises He Hed Hd :=
  first [ done | by move=> * | by move=> *; symuat_fam_close He Hed Hd | symuat_fam_close He Hed Hd ].
