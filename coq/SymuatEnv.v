(** * SymuatEnv: A2's units through logistic, tanh and GELU, over any ordered field

    A unit of D1's sum, [alpha * s (\sum_(i < n) w i * x i + theta)], for every [n] ([w x : nat -> R],
    the coordinates [i < n]) on [I_n = [0, 1]^n], over any [realFieldType] [R] — an ordered
    field: ℝ is one, so the theorems hold of the real σ; Coq's [Reals] (which rest on axioms) are
    not used — with σ a function [s : R -> R] and the one fact about it that symuat's bound uses
    as a premise (exported by [src/symuat/certify/vanishing.py], [envelope_theorems]):
    - bounded, [forall t, |s t| <= 1]: the logistic sigmoid (1/(1 + e^(-t)) ∈ (0, 1)) and tanh
      (1 ∓ tanh t = 2e^(∓t)/(e^t + e^(-t)) > 0); the bound δ once [|alpha| <= δ]
      ([env_bounded_outer]);
    - contracting, [forall t, |s t| <= |t|]: tanh ((t − tanh t)' = tanh² t ≥ 0, 0 at 0, odd) and
      GELU (t (1 + erf(t/√2))/2 with erf ∈ (−1, 1)); the bounds δ²(n + 1) (every parameter within
      δ, [env_contracting_all]), δ(n + 1)|α| (w, θ within δ, [env_contracting_inner]) and
      (‖w‖₁ + |θ|)δ (α within δ, [env_contracting_outer]), from |α s(wᵀx + θ)| <= |α|(‖w‖₁ + |θ|)
      on [I_n] ([env_contracting], [env_dot_l1]).
    [env_choice]: δ := η/(C + 1 + η) is in (0, 1] with C δ <= η, the δ the ∀η ∃δ statements
    exhibit ([symuat_env_limit]; [symuat_env_close] then closes B(δ) <= C δ <= η).
    Everything here is constructive: [Print Assumptions] lists no axiom. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
Import Order.POrderTheory GRing.Theory Num.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Env.
Variable R : realFieldType.
Implicit Types (s : R -> R) (w x : nat -> R) (theta d alpha : R).

Lemma env_dot_l1 n w x : (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|\sum_(i < n) w i * x i| <= \sum_(i < n) `|w i|.
Proof.
move=> Hx; apply: le_trans (ler_norm_sum _ _ _) _; apply: ler_sum => i _.
have /andP[x0 x1] := Hx i (ltn_ord i).
by rewrite normrM (ger0_norm x0) ler_pimulr.
Qed.

Lemma env_l1_small n w theta d : (forall i, (i < n)%N -> `|w i| <= d) -> `|theta| <= d ->
  \sum_(i < n) `|w i| + `|theta| <= (n%:R + 1) * d.
Proof.
move=> Hw Ht; rewrite mulrDl mul1r ler_add //.
apply: le_trans (_ : \sum_(i < n) d <= _); first by apply: ler_sum => i _; exact: Hw.
by rewrite sumr_const card_ord mulr_natl.
Qed.

Lemma env_inner n w theta x : (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|\sum_(i < n) w i * x i + theta| <= \sum_(i < n) `|w i| + `|theta|.
Proof. by move=> Hx; apply: le_trans (ler_norm_add _ _) _; rewrite ler_add2r env_dot_l1. Qed.

(** a bounded σ ([|σ t| <= 1]): [|α σ(wᵀx + θ)| <= δ] once [|α| <= δ] *)
Lemma env_bounded_outer s n d alpha w theta x : (forall t, `|s t| <= 1) -> `|alpha| <= d ->
  `|alpha * s (\sum_(i < n) w i * x i + theta)| <= d.
Proof.
move=> Hs Ha; rewrite normrM; apply: le_trans Ha.
by rewrite ler_pimulr ?normr_ge0.
Qed.

(** a contracting σ ([|σ t| <= |t|]): [|α σ(wᵀx + θ)| <= |α| (‖w‖₁ + |θ|)] on [I_n] *)
Lemma env_contracting s n alpha w theta x : (forall t, `|s t| <= `|t|) ->
  (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|alpha * s (\sum_(i < n) w i * x i + theta)| <= `|alpha| * (\sum_(i < n) `|w i| + `|theta|).
Proof.
move=> Hs Hx; rewrite normrM ler_wpmul2l ?normr_ge0 //.
exact: le_trans (Hs _) (env_inner _ _ Hx).
Qed.

Lemma env_sum_ge0 n w : 0 <= \sum_(i < n) `|w i|.
Proof. by apply: sumr_ge0 => i _; exact: normr_ge0. Qed.

Lemma env_contracting_all s n d alpha w theta x : (forall t, `|s t| <= `|t|) ->
  `|alpha| <= d -> (forall i, (i < n)%N -> `|w i| <= d) -> `|theta| <= d ->
  (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|alpha * s (\sum_(i < n) w i * x i + theta)| <= d ^+ 2 * (n%:R + 1).
Proof.
move=> Hs Ha Hw Ht Hx; apply: le_trans (env_contracting _ _ _ Hs Hx) _.
rewrite expr2 -mulrA; apply: ler_pmul; rewrite ?normr_ge0 ?addr_ge0 ?normr_ge0 ?env_sum_ge0 //.
by rewrite mulrC env_l1_small.
Qed.

Lemma env_contracting_inner s n d alpha w theta x : (forall t, `|s t| <= `|t|) ->
  (forall i, (i < n)%N -> `|w i| <= d) -> `|theta| <= d ->
  (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|alpha * s (\sum_(i < n) w i * x i + theta)| <= d * (n%:R + 1) * `|alpha|.
Proof.
move=> Hs Hw Ht Hx; apply: le_trans (env_contracting _ _ _ Hs Hx) _.
by rewrite mulrC ler_wpmul2r ?normr_ge0 // mulrC env_l1_small.
Qed.

Lemma env_contracting_outer s n d alpha w theta x : (forall t, `|s t| <= `|t|) ->
  `|alpha| <= d -> (forall i, (i < n)%N -> 0 <= x i <= 1) ->
  `|alpha * s (\sum_(i < n) w i * x i + theta)| <= (\sum_(i < n) `|w i| + `|theta|) * d.
Proof.
move=> Hs Ha Hx; apply: le_trans (env_contracting _ _ _ Hs Hx) _.
by rewrite mulrC ler_wpmul2l ?addr_ge0 ?normr_ge0 ?env_sum_ge0.
Qed.

(** the δ a limit exhibits: for [C >= 0] and [η > 0], [δ := η / (C + 1 + η)] is in (0, 1] and [C δ <= η] *)
Lemma env_choice (C eta : R) : 0 <= C -> 0 < eta ->
  0 < eta / (C + 1 + eta) /\ eta / (C + 1 + eta) <= 1 /\ C * (eta / (C + 1 + eta)) <= eta.
Proof.
move=> HC He; have H1 : 0 < C + 1 by rewrite ltr_paddl ?ltr01.
have Hp : 0 < C + 1 + eta by rewrite addr_gt0.
split; first by rewrite divr_gt0.
split; first by rewrite ler_pdivr_mulr // mul1r ler_paddl // ltW.
rewrite mulrA ler_pdivr_mulr // mulrC ler_wpmul2l ?ltW //.
by rewrite -addrA ltr_addl addr_gt0 ?ltr01.
Qed.


Lemma env_le_trans (a b c : R) : a <= b -> b <= c -> a <= c.
Proof. exact: le_trans. Qed.

End Env.

Arguments env_bounded_outer [R s n d alpha w theta x].
Arguments env_contracting_all [R s n d alpha w theta x].
Arguments env_contracting_inner [R s n d alpha w theta x].
Arguments env_contracting_outer [R s n d alpha w theta x].

(** [δ² k <= k δ] for [0 <= δ <= 1], [k >= 0] *)
Lemma env_sq_le (R : realFieldType) (d k : R) : 0 <= d -> d <= 1 -> 0 <= k -> d ^+ 2 * k <= k * d.
Proof.
move=> H0 H1 Hk; rewrite expr2 -mulrA [k * d]mulrC.
by rewrite ler_pimull // mulr_ge0.
Qed.

Lemma env_rot3 (R : comRingType) (a b c : R) : a * b * c = b * c * a.
Proof. by rewrite [RHS]mulrC mulrA. Qed.



(** [0 <= C] for a coefficient built of [n%:R], [1], norms, sums of norms *)
Ltac symuat_env_nonneg :=
  repeat first [ apply: addr_ge0 | apply: mulr_ge0 | apply: normr_ge0 | apply: env_sum_ge0
               | apply: ler0n | apply: ler01 ].

(** the limit, once [eta], [He : 0 < eta] are introduced: the goal [exists delta, 0 < delta /\ P delta]
    becomes [P (eta / (C + 1 + eta))] with [H0 : 0 < δ], [H1 : δ <= 1], [H2 : C δ <= η] ([env_choice]) *)
Ltac symuat_env_limit C He H0 H1 H2 :=
  let HC := fresh "HC" in
  assert (HC : 0 <= C); [symuat_env_nonneg|];
  have [H0 [H1 H2]] := env_choice HC He;
  eexists; split; [exact H0|].

(** the limit at δ := η / (C + 1 + η) ([env_choice]), once the bound [B δ <= C δ]: the goal [B δ <= η] *)
Ltac symuat_env_close H0 H1 H2 :=
  first [ exact H2
        | by apply: (env_le_trans _ H2); rewrite env_rot3
        | by apply: (env_le_trans _ H2); apply: env_sq_le; [exact: (ltW H0) | exact H1 | symuat_env_nonneg] ].

(** ** H9.dep's witness through softmax (exported by [src/symuat/certify/witness.py],
    [export_softmax_witness]): the two patterns' entries [1/2] and [2/3] differ in a field of
    characteristic 0 ([numFieldType]: ℝ is one), times a nonzero [b] *)
Lemma env_half_two_thirds (F : numFieldType) (b : F) : b != 0 ->
  (1 + 1)^-1 * b != (1 + 2%:R^-1)^-1 * b.
Proof.
move=> Hb; apply/negP => /eqP /(mulIf Hb) /invr_inj /addrI E.
have H2 : (2%:R : F) != 0 by rewrite pnatr_eq0.
move: (congr1 (fun x => x * 2%:R) E) => /= /eqP.
by rewrite mul1r mulVf // pnatr_eq1.
Qed.

(** ** A2's refuting families through logistic (exported by [vanishing.envelope_refutation]):
    [σ(0) = 1/2] as the premise (1/(1 + e^0)); the unit at [w = 0], [θ = 0], [α = 1] is [1/2], above [η = 1/4] *)
Lemma env_half_gt_quarter (R : realFieldType) : ~ (`|(2%:R : R)^-1| <= 4%:R^-1).
Proof. by rewrite ger0_norm ?invr_ge0 ?ler0n // lef_pinv ?posrE ?ltr0n // ler_nat. Qed.

Lemma env_quarter_pos (R : realFieldType) : (0 : R) < 4%:R^-1.
Proof. by rewrite invr_gt0 ltr0n. Qed.

(** the family's premises ([|0| <= δ], [0 <= 1 <= 1]) and [1/4 > 0] *)
Ltac symuat_env_premises :=
  repeat first [ progress rewrite ?normr0 | apply: ltW; assumption | apply/andP; split
               | apply: ler01 | apply: lexx | move=> ? ? ].

(** [Hu]: the statement at the family (w = 0, θ = 0, α = 1, n = 1, x = 1, η = 1/4); with [Hs : s 0 = 1/2]
    its conclusion is [|1/2| <= 1/4], false ([env_half_gt_quarter]) once its premises are proved *)
Ltac symuat_env_refute_half Hs Hu :=
  move: Hu; rewrite big_ord_recr big_ord0 /= !(mul0r, add0r, addr0, mul1r, normr0) Hs;
  move=> Hu; apply: env_half_gt_quarter; apply: Hu; symuat_env_premises.
