(** * SymuatSmall: A2's ReLU units over ℚ ("small parameters, so those parts can be removed")

    A unit of D1's sum, [alpha * Qmax 0 (w^T x + theta)] — ReLU is [Qmax 0] — with [n]
    coordinates for every [n] ([w x : nat -> Q], the coordinates [i < n]; [w^T x] is
    [qsum n (fun i => w i * x i)], a sum by recursion on [n]), on [I_n = [0, 1]^n] (exported by
    [src/symuat/certify/vanishing.py]).

    The lemmas the theorems rest on, each proved once: [qsum_dot_le] (|w^T x| <= n delta when
    every |w_i| <= delta and x in I_n, by induction on n), [qsum_dot_l1] (|w^T x| <= ||w||_1, by
    induction), [relu_abs] (|Qmax 0 t| <= |t|), [small_choice] (for C >= 0 and eta > 0, the
    delta := eta / (C + 1 + eta) is in (0, 1] and C delta <= eta: the delta a limit theorem
    exhibits). [symuat_relu] closes a bound: the sign split on [Qabs] (SymuatArith's
    [symuat_abs_cases]) and [nra] (a product of parameters: |alpha| |w^T x + theta|).
    Everything here is constructive: [Print Assumptions] lists no axiom. *)

From Symuat Require Export SymuatArith.
From Coq Require Export Qminmax.
From Coq Require Export Lqa.
From Coq Require Import Lia.
Local Open Scope Q_scope.

Fixpoint qsum (n : nat) (f : nat -> Q) : Q :=
  match n with O => 0 | S m => qsum m f + f m end.

(** [n] as a rational *)
Definition qnat (n : nat) : Q := inject_Z (Z.of_nat n).

Lemma qnat_S n : qnat (S n) == qnat n + 1.
Proof. unfold qnat. rewrite Nat2Z.inj_succ, <- Z.add_1_r, inject_Z_plus. reflexivity. Qed.

Lemma qnat_nonneg n : 0 <= qnat n.
Proof. unfold qnat, Qle; simpl; lia. Qed.

Lemma relu_abs t : Qabs (Qmax 0 t) <= Qabs t.
Proof.
  destruct (Qlt_le_dec t 0) as [c|c].
  - rewrite Q.max_l by lra. rewrite Qabs_pos by lra. apply Qabs_nonneg.
  - rewrite Q.max_r by lra. lra.
Qed.

Lemma qsum_dot_le (n : nat) (d : Q) (w x : nat -> Q) :
  (forall i, (i < n)%nat -> Qabs (w i) <= d) -> (forall i, (i < n)%nat -> 0 <= x i <= 1) ->
  Qabs (qsum n (fun i => w i * x i)) <= qnat n * d.
Proof.
  induction n as [|m IH]; intros Hw Hx; cbn [qsum].
  - unfold qnat; simpl. rewrite Qmult_0_l. apply Qle_refl.
  - rewrite qnat_S.
    assert (Hm : Qabs (qsum m (fun i => w i * x i)) <= qnat m * d)
      by (apply IH; intros i Hi; [apply Hw | apply Hx]; lia).
    specialize (Hw m (Nat.lt_succ_diag_r m)); specialize (Hx m (Nat.lt_succ_diag_r m)).
    eapply Qle_trans; [apply Qabs_triangle|]. rewrite Qabs_Qmult.
    assert (Qabs (x m) <= 1) by (rewrite Qabs_pos; lra).
    assert (0 <= Qabs (w m)) by apply Qabs_nonneg.
    assert (0 <= Qabs (x m)) by apply Qabs_nonneg.
    nra.
Qed.

Lemma qsum_dot_l1 (n : nat) (w x : nat -> Q) :
  (forall i, (i < n)%nat -> 0 <= x i <= 1) ->
  Qabs (qsum n (fun i => w i * x i)) <= qsum n (fun i => Qabs (w i)).
Proof.
  induction n as [|m IH]; intros Hx; cbn [qsum].
  - apply Qle_refl.
  - assert (Hm : Qabs (qsum m (fun i => w i * x i)) <= qsum m (fun i => Qabs (w i)))
      by (apply IH; intros i Hi; apply Hx; lia).
    specialize (Hx m (Nat.lt_succ_diag_r m)).
    eapply Qle_trans; [apply Qabs_triangle|]. rewrite Qabs_Qmult.
    assert (Qabs (x m) <= 1) by (rewrite Qabs_pos; lra).
    assert (0 <= Qabs (w m)) by apply Qabs_nonneg.
    assert (0 <= Qabs (x m)) by apply Qabs_nonneg.
    nra.
Qed.

Lemma qsum_abs_nonneg (n : nat) (w : nat -> Q) : 0 <= qsum n (fun i => Qabs (w i)).
Proof.
  induction n as [|m IH]; cbn [qsum]; [apply Qle_refl|].
  assert (0 <= Qabs (w m)) by apply Qabs_nonneg. lra.
Qed.

Lemma small_choice (C eta : Q) : 0 <= C -> 0 < eta ->
  0 < eta / (C + 1 + eta) /\ eta / (C + 1 + eta) <= 1 /\ C * (eta / (C + 1 + eta)) <= eta.
Proof.
  intros HC He. assert (Hp : 0 < C + 1 + eta) by lra.
  assert (Hd : eta / (C + 1 + eta) * (C + 1 + eta) == eta)
    by (field; intro E; rewrite E in Hp; discriminate).
  assert (Hd0 : 0 < eta / (C + 1 + eta)) by (apply Qlt_shift_div_l; lra).
  repeat split; [exact Hd0 | nra | nra].
Qed.

(** a unit's bound: every hypothesis on the unit in context; the facts about [qsum] and ReLU
    added for each sum of the goal, then the sign split and [nra] *)
Ltac symuat_relu :=
  intros;
  repeat match goal with
  | |- context [Qabs (?a * Qmax 0 ?t)] => rewrite (Qabs_Qmult a (Qmax 0 t));
      let h := fresh "r" in pose proof (relu_abs t) as h;
      let g := fresh "g" in pose proof (Qabs_nonneg a) as g;
      let k := fresh "k" in pose proof (Qabs_nonneg (Qmax 0 t)) as k
  end;
  repeat match goal with
  | |- context [qsum ?n (fun i => ?w i * ?x i)] =>
      let h := fresh "s" in
      first [ assert (h := qsum_dot_le n _ w x ltac:(eassumption) ltac:(eassumption))
            | assert (h := qsum_dot_l1 n w x ltac:(eassumption)) ];
      let p := fresh "p" in pose proof (qsum_abs_nonneg n w) as p;
      let q := fresh "q" in pose proof (qnat_nonneg n) as q;
      set (qsum n (fun i => w i * x i)) in *
  end;
  symuat_abs_cases; nra.

(** [0 <= qnat n], [0 <= Qabs a], [0 <= qsum n (fun i => Qabs (w i))] for each in the goal *)
Ltac symuat_nonneg_facts :=
  repeat match goal with
  | |- context [qnat ?n] =>
      lazymatch goal with _ : 0 <= qnat n |- _ => fail | _ => pose proof (qnat_nonneg n) end
  | |- context [Qabs ?a] =>
      lazymatch goal with _ : 0 <= Qabs a |- _ => fail | _ => pose proof (Qabs_nonneg a) end
  | |- context [qsum ?n (fun i => Qabs (?w i))] =>
      lazymatch goal with _ : 0 <= qsum n (fun i => Qabs (w i)) |- _ => fail
      | _ => pose proof (qsum_abs_nonneg n w) end
  end.

(** the limit, once [n], the fixed parameters and [eta], [0 < eta] are introduced: the goal
    [exists delta, 0 < delta /\ forall (constrained…) (x : nat -> Q), hypotheses -> |unit| <= eta],
    given [c] (a coefficient with [b delta <= c delta] for [0 < delta <= 1]) and the bound [b] (a
    function of delta): delta := eta / (c + 1 + eta) ([small_choice]), the bound [b delta] by
    [symuat_relu] at it, then [b delta <= c delta <= eta] by [nra] *)
Ltac symuat_relu_limit c b :=
  lazymatch goal with He : 0 < ?eta |- exists _, _ =>
    let H0 := fresh "d0" in let H1 := fresh "d1" in let H2 := fresh "d2" in let Hc := fresh "c0" in
    assert (Hc : 0 <= c) by (symuat_nonneg_facts; nra);
    destruct (small_choice c eta Hc He) as (H0 & H1 & H2);
    exists (eta / (c + 1 + eta)); split; [exact H0|];
    intros; apply (Qle_trans _ (b (eta / (c + 1 + eta))));
    [clear H2; cbv beta; symuat_relu
    | cbv beta; set (eta / (c + 1 + eta)) in *; symuat_nonneg_facts;
      nra]
  end.

(** ** Refutations: a family of parameters within delta whose unit stays above eta

    The negated statement [~ (forall n … eta, 0 < eta -> exists delta, 0 < delta /\ forall …,
    … -> |unit| <= eta)] is proved at symuat's family: [n] and [eta] instantiated, the delta the
    statement would give shrunk to [e <= c] ([shrink]: [e] := [Qmin delta c]), [i] the inverse of
    [e] ([inverse]: the family's [1/delta]), the parameters the family's values at [e], the point
    [x = 1]; each premise (a parameter within delta, the point in [I_n]) and the contradiction
    [|unit| > eta] by the case split on [Qmax] and [Qabs] and [nra] over [e], [i] with [e * i == 1]
    (a family whose unit does not exceed [eta] leaves [nra] a satisfiable case: rejected). *)

Lemma shrink (d c : Q) : 0 < d -> 0 < c -> exists e, 0 < e /\ e <= d /\ e <= c.
Proof.
  intros Hd Hc. exists (Qmin d c). destruct (Q.min_spec d c) as [[h1 h2]|[h1 h2]]; rewrite h2; lra.
Qed.

Lemma inverse (e : Q) : 0 < e -> exists i, 0 < i /\ e * i == 1.
Proof.
  intros He. exists (/ e). split; [apply Qinv_lt_0_compat; exact He|].
  apply Qmult_inv_r. intro E. rewrite E in He. discriminate.
Qed.

(** every [Qmax 0 t] of the context and the goal, split: [t <= 0] (it is [0]) or [0 <= t] (it is [t]) *)
Ltac symuat_max_case t :=
  let c := fresh "m" in let h := fresh "h" in let a := fresh "a" in
  destruct (Q.max_spec 0 t) as [[c h]|[c h]]; set (a := Qmax 0 t) in *; clearbody a.

Ltac symuat_max_cases :=
  repeat match goal with
  | H : context [Qmax 0 ?t] |- _ => symuat_max_case t
  | |- context [Qmax 0 ?t] => symuat_max_case t
  end.

(** [H] an implication: each premise proved by [tac], until its conclusion is left *)
Ltac symuat_discharge H tac :=
  repeat match type of H with ?P -> _ =>
    let h := fresh "p" in assert (h : P) by tac; specialize (H h) end.

(** [Hu]: the statement's instance at the family (its premises, then [|unit| <= eta]); every
    premise (linear: [lra]) and the contradiction ([nra]) by the case split on [Qmax], [Qabs] *)
Ltac symuat_refute_unit Hu :=
  symuat_discharge Hu ltac:(intros; cbn [qsum] in *; symuat_max_cases; symuat_abs_cases; lra);
  cbn [qsum] in Hu; symuat_max_cases; symuat_abs_cases; nra.
