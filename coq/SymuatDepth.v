(** * SymuatDepth: the inductions over the number of layers, as Coq theorems for every depth.

    Lemma 2 (claim L2: a residual network unrolls into a (D)UAT form), the Transformer→DUAT
    recursion (T7: Eq. 33 = main Eq. 11 for Transformer blocks) and the dynamic bias recursion
    (T9: Eq. 34 = main Eq. 12) are stated here for a network of any depth [L] (a [nat], not a
    size symuat enumerates), symbolic sizes [D], [F], any commutative ring and any σ, and proved
    by induction on [L].

    A network is a function from the layer index to the layer's raw parameters (DUAT Eq. 20):
    layer [l] (0-based; the papers' layer [l+1]) maps [x_l] to
    [x_{l+1} = (W1_l x_l + b3_l) + W3_l σ(W2_l x_l + b2_l)] ([layer_app]).  symuat's combined
    parameters (symuat.residual) are defined by their recursion: [cW1 L = W1_{L-1} ⋯ W1_0]
    (W'_{L,1}), [cb1] (b'_{L,1}), [cW3 L j] (W'_{j,3} after [L] layers), [cW2 j] (W'_{j,2}),
    [cb2 j] (b'_{j,2}, which depends on [x_0]).

    The inductive step is the one-layer identity symuat's normal form proves for a symbolic layer
    index (check [L2.8[front=raw]]), stated as [one_layer_step]: every theorem here takes it as a
    premise.  [symuat certify] discharges it with that identity as exported and proved from
    symuat's normal form (symuat.certify.depth); [one_layer_step_holds] proves it here too, from
    distributivity and associativity of the product and congruence.  What else the proofs use is
    proved here once: congruence of the operations for [=m], the sum over the earlier layers
    ([mul_headsum_assoc]: L2.8.sum, by [symuat_entry]) and, for Transformer blocks, the block as
    an Eq. 20 layer ([block_both_eq30], [block_ffn_eq30]: T3.1; [layer30_eq20]: T3.2 and
    T4.match). *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Depth.
Variable R : comRingType.
Add Ring symuat_ring_depth : (R_ring_theory_ring R).

(** ** Congruence of the operations for entrywise equality *)
Lemma meq_refl rs cs (A : mx R rs cs) : A =m A. Proof. by []. Qed.
Lemma meq_sym rs cs (A B : mx R rs cs) : A =m B -> B =m A. Proof. by move=> E i j; rewrite E. Qed.
Lemma meq_trans rs cs (A B C : mx R rs cs) : A =m B -> B =m C -> A =m C.
Proof. by move=> E1 E2 i j; rewrite E1 E2. Qed.
Lemma sumI_ext s (F G : idx s -> R) : (forall k, F k = G k) -> sumI F = sumI G.
Proof.
elim: s F G => [|d s IH] F G E /=; first exact: E.
by apply: eq_bigr => a _; apply: IH => k; exact: E.
Qed.
Lemma add_meq rs cs (A A' B B' : mx R rs cs) : A =m A' -> B =m B' -> add A B =m add A' B'.
Proof. by move=> E1 E2 i j; rewrite /add E1 E2. Qed.
Lemma mul_meq rs ks cs (A A' : mx R rs ks) (B B' : mx R ks cs) :
  A =m A' -> B =m B' -> mul A B =m mul A' B'.
Proof. by move=> E1 E2 i j; apply: sumI_ext => k; rewrite E1 E2. Qed.
Lemma ew_meq rs cs (f : R -> R) (A A' : mx R rs cs) : A =m A' -> ew f A =m ew f A'.
Proof. by move=> E i j; rewrite /ew E. Qed.
Lemma headsum_meq h rs cs (G G' : 'I_h -> mx R rs cs) :
  (forall j, G j =m G' j) -> headsum G =m headsum G'.
Proof. by move=> E i k; apply: eq_bigr => j _; exact: E. Qed.

Variables D F : nat.

(** ** One layer (DUAT Eq. 20) and the UAT form *)
Definition layer_app (sigma : R -> R) (W1 : mx R [:: D] [:: D]) (W2 : mx R [:: F] [:: D])
    (b2 : mx R [:: F] [::]) (W3 : mx R [:: D] [:: F]) (b3 : mx R [:: D] [::]) (x : mx R [:: D] [::]) :=
  add (add (mul W1 x) b3) (mul W3 (ew sigma (add (mul W2 x) b2))).
(** [(A x_0 + c) + Rm]: a linear part and a remainder (the state of the induction hypothesis) *)
Definition uat_form (A : mx R [:: D] [:: D]) (c : mx R [:: D] [::]) (Rm : mx R [:: D] [::])
    (x0 : mx R [:: D] [::]) := add (add (mul A x0) c) Rm.
(** the Eq. 34 form of a bias: [(W2 c + b2) + W2 Rm] *)
Definition eq34_form (W2 : mx R [:: F] [:: D]) (b2 : mx R [:: F] [::]) (c Rm : mx R [:: D] [::]) :=
  add (add (mul W2 c) b2) (mul W2 Rm).

(** The inductive step (L2.8[front=raw], Eq. 26–27 with the settings applied simultaneously):
    layer [i+1] applied to the hypothesis [x_i = (A x_0 + c) + Rm] is again of that form, with
    [A' = W1 A], [c' = W1 c + b3], [Rm' = W1 Rm + W3 σ((W2 A) x_0 + ((W2 c + b2) + W2 Rm))]. *)
Definition one_layer_step := forall (sigma : R -> R) (W1 A : mx R [:: D] [:: D])
    (W2 : mx R [:: F] [:: D]) (b2 : mx R [:: F] [::]) (W3 : mx R [:: D] [:: F])
    (b3 x0 c Rm : mx R [:: D] [::]),
  layer_app sigma W1 W2 b2 W3 b3 (uat_form A c Rm x0) =m
  uat_form (mul W1 A) (add (mul W1 c) b3)
           (add (mul W1 Rm) (mul W3 (ew sigma (add (mul (mul W2 A) x0) (eq34_form W2 b2 c Rm))))) x0.

Lemma layer_app_meq sigma W1 W2 b2 W3 b3 x x' :
  x =m x' -> layer_app sigma W1 W2 b2 W3 b3 x =m layer_app sigma W1 W2 b2 W3 b3 x'.
Proof.
move=> E; apply: add_meq; first by apply: add_meq => //; apply: mul_meq.
by apply: mul_meq => //; apply: ew_meq; apply: add_meq => //; apply: mul_meq.
Qed.

(** The step, proved here as well (the certify tier uses symuat's exported identity instead): from
    distributivity and associativity of the product (each by [symuat_entry] or by its index rule)
    and congruence. *)
Lemma sumI_add s (G H : idx s -> R) : sumI (fun k => G k + H k) = sumI G + sumI H.
Proof. elim: s G H => [|d s IH] G H //=; rewrite -big_split; apply: eq_bigr => a _; exact: IH. Qed.
Lemma mul_addr rs ks cs (W : mx R rs ks) (X Y : mx R ks cs) :
  mul W (add X Y) =m add (mul W X) (mul W Y).
Proof. move=> i j; rewrite /mul /add -sumI_add; apply: sumI_ext => k; exact: mulrDr. Qed.
Lemma mul_assoc3 n (W : mx R [:: n] [:: D]) (A : mx R [:: D] [:: D]) (x : mx R [:: D] [::]) :
  mul (mul W A) x =m mul W (mul A x).
Proof. symuat_entry. Qed.
Lemma mul_uat n (W : mx R [:: n] [:: D]) A c Rm x0 :
  mul W (uat_form A c Rm x0) =m add (add (mul (mul W A) x0) (mul W c)) (mul W Rm).
Proof.
apply: meq_trans (mul_addr _ _ _) _; apply: add_meq => //.
apply: meq_trans (mul_addr _ _ _) _; apply: add_meq => //; exact: meq_sym (mul_assoc3 _ _ _).
Qed.
Lemma add_rearr_in rs cs (a b r b2 : mx R rs cs) : add (add (add a b) r) b2 =m add a (add (add b b2) r).
Proof. by move=> i j; rewrite /add -!addrA (addrC (r i j)). Qed.
Lemma add_rearr_out rs cs (P Q S b3 T : mx R rs cs) :
  add (add (add (add P Q) S) b3) T =m add (add P (add Q b3)) (add S T).
Proof. by move=> i j; rewrite /add -!addrA (addrCA (S i j)). Qed.

Lemma one_layer_step_holds : one_layer_step.
Proof.
move=> sigma W1 A W2 b2 W3 b3 x0 c Rm; rewrite /layer_app.
apply: meq_trans _ (add_rearr_out _ _ _ _ _).
apply: add_meq; first by apply: add_meq => //; exact: mul_uat.
apply: mul_meq => //; apply: ew_meq.
apply: meq_trans _ (add_rearr_in _ _ _ _); apply: add_meq => //; exact: mul_uat.
Qed.

(** the sum over the earlier layers absorbs a new [W1] (L2.8.sum[W3=multiplied]) *)
Lemma mul_headsum_assoc n (W : mx R [:: D] [:: D]) (U : 'I_n -> mx R [:: D] [:: F])
    (s : 'I_n -> mx R [:: F] [::]) :
  mul W (headsum (fun j => mul (U j) (s j))) =m headsum (fun j => mul (mul W (U j)) (s j)).
Proof. symuat_entry. Qed.

(** ** A network of Eq. 20 layers, [nat]-indexed *)
Record net := Net {
  nW1 : nat -> mx R [:: D] [:: D]; nW2 : nat -> mx R [:: F] [:: D]; nb2 : nat -> mx R [:: F] [::];
  nW3 : nat -> mx R [:: D] [:: F]; nb3 : nat -> mx R [:: D] [::] }.

Section Net.
Variables (sigma : R -> R) (N : net) (x0 : mx R [:: D] [::]).

(** the forward pass, layer by layer: [x_0], [x_{L+1} = layer_L(x_L)] *)
Fixpoint forward L := if L is L'.+1
  then layer_app sigma (nW1 N L') (nW2 N L') (nb2 N L') (nW3 N L') (nb3 N L') (forward L') else x0.

(** symuat's combined parameters (symuat.residual), by their recursion *)
Fixpoint cW1 L : mx R [:: D] [:: D] := if L is L'.+1 then mul (nW1 N L') (cW1 L') else idm [:: D].
Fixpoint cb1 L : mx R [:: D] [::] :=
  if L is L'.+1 then add (mul (nW1 N L') (cb1 L')) (nb3 N L') else zero [:: D] [::].
(** [W'_{j,3}] after [L] layers: [W1_{L-1} ⋯ W1_{j+1} W3_j] *)
Fixpoint cW3 L j : mx R [:: D] [:: F] :=
  if L is L'.+1 then (if (j < L')%N then mul (nW1 N L') (cW3 L' j) else nW3 N L') else nW3 N j.
Definition cW2 j : mx R [:: F] [:: D] := mul (nW2 N j) (cW1 j).
(** the remainder [UAT^R_L] by the step's rule, and the bias [b'_{j,2}] (depends on [x_0]) *)
Fixpoint rem L : mx R [:: D] [::] := if L is L'.+1
  then add (mul (nW1 N L') (rem L'))
           (mul (nW3 N L') (ew sigma (add (mul (cW2 L') x0) (eq34_form (nW2 N L') (nb2 N L') (cb1 L') (rem L')))))
  else zero [:: D] [::].
Definition cb2 j : mx R [:: F] [::] := eq34_form (nW2 N j) (nb2 N j) (cb1 j) (rem j).

Hypothesis step : one_layer_step.

Lemma forward_state L : forward L =m uat_form (cW1 L) (cb1 L) (rem L) x0.
Proof.
elim: L => [|L IH] /=.
  move=> [i []] [] /=; rewrite /uat_form /add /zero /mul /idm /= !addr0.
  rewrite (bigD1 i) //= big1 => [|k /negbTE nk]; first by rewrite /delta eqxx mulr1 mul1r addr0.
  by rewrite /delta /= eq_sym nk !mul0r.
apply: meq_trans (layer_app_meq _ _ _ _ _ _ IH) _; exact: step.
Qed.

(** [UAT^R_L] is the sum of the [L] σ-terms, each earlier [W'_{j,3}] multiplied by every later [W1] *)
Lemma rem_sum L :
  rem L =m headsum (fun j : 'I_L => mul (cW3 L j) (ew sigma (add (mul (cW2 j) x0) (cb2 j)))).
Proof.
elim: L => [|L IH]; first by move=> i k; rewrite /headsum big_ord0.
move=> i k; rewrite /headsum big_ord_recr /= ltnn.
have -> : \sum_(j < L) mul (cW3 L.+1 (widen_ord (leqnSn L) j))
                         (ew sigma (add (mul (cW2 (widen_ord (leqnSn L) j)) x0) (cb2 (widen_ord (leqnSn L) j)))) i k
        = \sum_(j < L) mul (mul (nW1 N L) (cW3 L j)) (ew sigma (add (mul (cW2 j) x0) (cb2 j))) i k.
  by apply: eq_bigr => j _ /=; rewrite ltn_ord.
rewrite /add; congr (_ + _).
rewrite (mul_meq (meq_refl (nW1 N L)) IH i k).
exact: (mul_headsum_assoc (nW1 N L) (cW3 L) (fun j => ew sigma (add (mul (cW2 j) x0) (cb2 j))) i k).
Qed.

(** ** Lemma 2 (claim L2.main): for every depth [L],
    [x'_L = (W'_{L,1} x'_0 + b'_{L,1}) + Σ_{j<L} W'_{j,3} σ(W'_{j,2} x'_0 + b'_{j,2})] *)
Theorem residual_unrolling L :
  forward L =m add (add (mul (cW1 L) x0) (cb1 L))
                   (headsum (fun j : 'I_L => mul (cW3 L j) (ew sigma (add (mul (cW2 j) x0) (cb2 j))))).
Proof. apply: meq_trans (forward_state L) _; apply: add_meq => //; exact: rem_sum. Qed.

(** ** Eq. 34 (T9) under the reading W2in34=layer, W3in34=stage, b3in34=acc: the bias of layer
    [j] from the earlier ones, [b'_{j,2} = (W2_j b'_{j-1,3} + b2_j) + W2_j Σ_{k<j} W'_{k,3} σ(W'_{k,2} x_0 + b'_{k,2})]
    with [b'_{j-1,3}] the accumulated [cb1 j] and [W'_{k,3}] its value after the updates of the
    [j] earlier layers ([cW3 j k]).  [eq34s j] holds the biases of the first [j] layers. *)
Fixpoint eq34s j : nat -> mx R [:: F] [::] :=
  if j is j'.+1 then fun k => if (k < j')%N then eq34s j' k else
    eq34_form (nW2 N j') (nb2 N j') (cb1 j')
      (headsum (fun k' : 'I_j' => mul (cW3 j' k') (ew sigma (add (mul (cW2 k') x0) (eq34s j' k')))))
  else fun _ => zero [:: F] [::].
Definition eq34 j := eq34s j.+1 j.

Lemma eq34s_earlier j k : (k < j)%N -> eq34s j k = eq34 k.
Proof.
elim: j => [//|j IH] lt /=.
case: (ltnP k j) => [lt'|ge]; first exact: IH.
have e : k = j by apply/eqP; rewrite eqn_leq ge -ltnS lt.
by rewrite e /eq34 /= ltnn.
Qed.

(** Eq. 34 as printed (this reading): the defining equation of [eq34] *)
Lemma eq34_printed j :
  eq34 j =m eq34_form (nW2 N j) (nb2 N j) (cb1 j)
    (headsum (fun k : 'I_j => mul (cW3 j k) (ew sigma (add (mul (cW2 k) x0) (eq34 k))))).
Proof.
rewrite /eq34 /= ltnn; apply: add_meq => //; apply: mul_meq => //; apply: headsum_meq => k.
by rewrite eq34s_earlier.
Qed.

Lemma eq34_meq_cb2 j : eq34 j =m cb2 j.
Proof.
elim/ltn_ind: j => j IH.
rewrite /eq34 /= ltnn /cb2; apply: add_meq => //; apply: mul_meq => //.
apply: meq_trans _ (meq_sym (rem_sum j)); apply: headsum_meq => k.
apply: mul_meq => //; apply: ew_meq; apply: add_meq => //.
rewrite eq34s_earlier //; exact: IH.
Qed.

(** ** T9: the paper's Eq. 34 biases give the forward pass for every depth *)
Theorem eq34_unrolling L :
  forward L =m add (add (mul (cW1 L) x0) (cb1 L))
                   (headsum (fun j : 'I_L => mul (cW3 L j) (ew sigma (add (mul (cW2 j) x0) (eq34 j))))).
Proof.
apply: meq_trans (residual_unrolling L) _; apply: add_meq => //; apply: headsum_meq => j.
by apply: mul_meq => //; apply: ew_meq; apply: add_meq => //; apply: meq_sym; exact: eq34_meq_cb2.
Qed.

(** ** X6.telescope: a readout [ρ] of [x_L], by the transposed chain [ρ_L = ρ],
    [ρ_{j-1} = W1_jᵀ ρ_j] ([rho_chain ρ L k] = [ρ_k] for the first [L] layers: the last layer
    peeled off, [ρ] becomes [W1_{L-1}ᵀ ρ]) *)
Fixpoint rho_chain (rho : mx R [:: D] [::]) L k : mx R [:: D] [::] :=
  if L is L'.+1 then (if (k <= L')%N then rho_chain (mul (tr (nW1 N L')) rho) L' k else rho) else rho.

Lemma mul_idm_vec (x : mx R [:: D] [::]) : mul (idm [:: D]) x =m x.
Proof.
move=> [i []] [] /=; rewrite /mul /idm /=.
rewrite (bigD1 i) //= big1 => [|k /negbTE nk]; first by rewrite /delta eqxx mulr1 mul1r addr0.
by rewrite /delta /= eq_sym nk !mul0r.
Qed.
Lemma readout_assoc K (rho : mx R [:: D] [::]) (W : mx R [:: D] [:: D]) (M : mx R [:: D] [:: K])
    (s : mx R [:: K] [::]) :
  mul (tr rho) (mul (mul W M) s) =m mul (tr (mul (tr W) rho)) (mul M s).
Proof. symuat_entry. Qed.
Lemma readout_last (rho : mx R [:: D] [::]) (W3 : mx R [:: D] [:: F]) (s : mx R [:: F] [::]) :
  mul (tr rho) (mul W3 s) =m mul (tr (mul (tr W3) rho)) s.
Proof. symuat_entry. Qed.
Lemma readout_headsum n (rho : mx R [:: D] [::]) (G : 'I_n -> mx R [:: D] [::]) :
  mul (tr rho) (headsum G) =m headsum (fun j => mul (tr rho) (G j)).
Proof. symuat_entry. Qed.

Lemma readout_linear L rho : mul (tr rho) (mul (cW1 L) x0) =m mul (tr (rho_chain rho L 0)) x0.
Proof.
elim: L rho => [|L IH] rho /=; first by apply: mul_meq => //; exact: mul_idm_vec.
apply: meq_trans (readout_assoc _ _ _ _) _; exact: IH.
Qed.

Lemma readout_term L rho j (s : mx R [:: F] [::]) : (j < L)%N ->
  mul (tr rho) (mul (cW3 L j) s) =m mul (tr (mul (tr (nW3 N j)) (rho_chain rho L j.+1))) s.
Proof.
elim: L rho => [//|L IH] rho lt /=.
case: (ltnP j L) => [lt'|ge].
  apply: meq_trans (readout_assoc _ _ _ _) _; exact: IH.
have e : j = L by apply/eqP; rewrite eqn_leq ge -ltnS lt.
rewrite e; exact: readout_last.
Qed.

(** [ρᵀ x'_L = ρ_0ᵀ x'_0 + ρᵀ c_L + Σ_{j<L} (W3_jᵀ ρ_{j+1})ᵀ σ(W'_{j,2} x'_0 + b'_{j,2})] for every depth *)
Theorem readout_telescope L (rho : mx R [:: D] [::]) :
  mul (tr rho) (forward L) =m
  add (add (mul (tr (rho_chain rho L 0)) x0) (mul (tr rho) (cb1 L)))
      (headsum (fun j : 'I_L => mul (tr (mul (tr (nW3 N j)) (rho_chain rho L j.+1)))
                                    (ew sigma (add (mul (cW2 j) x0) (cb2 j))))).
Proof.
apply: meq_trans (mul_meq (meq_refl (tr rho)) (residual_unrolling L)) _.
apply: meq_trans (mul_addr _ _ _) _; apply: add_meq.
  apply: meq_trans (mul_addr _ _ _) _; apply: add_meq => //; exact: readout_linear.
apply: meq_trans (readout_headsum _ _) _; apply: headsum_meq => j.
exact: readout_term (ltn_ord j).
Qed.

(** Any sequence of states that follows the layers is the forward pass *)
Lemma follows_forward (y : nat -> mx R [:: D] [::]) :
  y 0%N =m x0 ->
  (forall l, y l.+1 =m layer_app sigma (nW1 N l) (nW2 N l) (nb2 N l) (nW3 N l) (nb3 N l) (y l)) ->
  forall L, y L =m forward L.
Proof.
move=> y0 ys; elim=> [|L IH] //=.
exact: meq_trans (ys L) (layer_app_meq _ _ _ _ _ _ IH).
Qed.
End Net.

(** ** Transformer blocks (T3, T4, T7) *)
Lemma mul_assoc (W2 : mx R [:: F] [:: D]) (W1 : mx R [:: D] [:: D]) (x : mx R [:: D] [::]) :
  mul (mul W2 W1) x =m mul W2 (mul W1 x).
Proof. symuat_entry. Qed.
Lemma mul_idm_add (Wm : mx R [:: D] [:: D]) (x : mx R [:: D] [::]) :
  mul (add (idm [:: D]) Wm) x =m add x (mul Wm x).
Proof. symuat_entry. Qed.
(** Eq. 30, line 1: [W1 x + W3 σ(W2 (W1 x) + b2) + b3] *)
Definition layer30 (sigma : R -> R) (W1 : mx R [:: D] [:: D]) (W2 : mx R [:: F] [:: D])
    (b2 : mx R [:: F] [::]) (W3 : mx R [:: D] [:: F]) (b3 : mx R [:: D] [::]) (x : mx R [:: D] [::]) :=
  add (add (mul W1 x) (mul W3 (ew sigma (add (mul W2 (mul W1 x)) b2)))) b3.
(** T3.2 and T4.match: an Eq. 30 layer is the Eq. 20 layer with [W2] absorbed, [W2 W1] (Eq. 31) *)
Lemma layer30_eq20 sigma W1 W2 b2 W3 b3 x :
  layer30 sigma W1 W2 b2 W3 b3 x =m layer_app sigma W1 (mul W2 W1) b2 W3 b3 x.
Proof.
apply: meq_trans (_ : _ =m add (add (mul W1 x) b3) (mul W3 (ew sigma (add (mul W2 (mul W1 x)) b2)))) _.
  by move=> i j; rewrite /layer30 /add addrAC.
apply: add_meq => //; apply: mul_meq => //; apply: ew_meq; apply: add_meq => //.
exact: meq_sym (mul_assoc W2 W1 x).
Qed.

(** a Transformer block on the lifted input, no LayerNorm, no attention bias ([Wm]: the lifted
    attention matrix [(W'_{HVO})ᵀ] at the block's input, H5): both skips, [y = x + Wm x] (B-both),
    or the FFN skip only, [y = Wm x] (B-ffn); then [y + W3 σ(W2 y + b2) + b3] *)
Definition block_both (sigma : R -> R) (Wm : mx R [:: D] [:: D]) (W2 : mx R [:: F] [:: D])
    (b2 : mx R [:: F] [::]) (W3 : mx R [:: D] [:: F]) (b3 : mx R [:: D] [::]) (x : mx R [:: D] [::]) :=
  add (add (add x (mul Wm x)) (mul W3 (ew sigma (add (mul W2 (add x (mul Wm x))) b2)))) b3.
Definition block_ffn (sigma : R -> R) (Wm : mx R [:: D] [:: D]) (W2 : mx R [:: F] [:: D])
    (b2 : mx R [:: F] [::]) (W3 : mx R [:: D] [:: F]) (b3 : mx R [:: D] [::]) (x : mx R [:: D] [::]) :=
  add (add (mul Wm x) (mul W3 (ew sigma (add (mul W2 (mul Wm x)) b2)))) b3.
(** T3.1[B-both,W1=id+mha] and T3.1[B-ffn,W1=mha] *)
Lemma block_both_eq30 sigma Wm W2 b2 W3 b3 x :
  block_both sigma Wm W2 b2 W3 b3 x =m layer30 sigma (add (idm [:: D]) Wm) W2 b2 W3 b3 x.
Proof.
have E : add x (mul Wm x) =m mul (add (idm [:: D]) Wm) x by apply: meq_sym; exact: mul_idm_add.
apply: add_meq => //; apply: add_meq => //; apply: mul_meq => //; apply: ew_meq; apply: add_meq => //.
exact: mul_meq.
Qed.
Lemma block_ffn_eq30 sigma Wm W2 b2 W3 b3 x :
  block_ffn sigma Wm W2 b2 W3 b3 x =m layer30 sigma Wm W2 b2 W3 b3 x.
Proof. by []. Qed.

Section Eq30.
Variables (sigma : R -> R) (N : net) (x0 : mx R [:: D] [::]).
(** a network of Eq. 30 layers ([nW2 N l]: the FFN's own matrix) and its Eq. 20 network, [W2] absorbed *)
Fixpoint forward30 L := if L is L'.+1
  then layer30 sigma (nW1 N L') (nW2 N L') (nb2 N L') (nW3 N L') (nb3 N L') (forward30 L') else x0.
Definition absorbed := Net (nW1 N) (fun l => mul (nW2 N l) (nW1 N l)) (nb2 N) (nW3 N) (nb3 N).
Hypothesis step : one_layer_step.

(** T9 for Eq. 30 networks: the Eq. 34 biases of the absorbed parameters give the forward pass *)
Theorem eq30_eq34_unrolling L :
  forward30 L =m add (add (mul (cW1 absorbed L) x0) (cb1 absorbed L))
    (headsum (fun j : 'I_L => mul (cW3 absorbed L j)
                                 (ew sigma (add (mul (cW2 absorbed j) x0) (eq34 sigma absorbed x0 j))))).
Proof.
apply: meq_trans _ (eq34_unrolling sigma absorbed x0 step L).
apply: follows_forward => // l /=; exact: layer30_eq20.
Qed.
End Eq30.

Section Transformer.
Variables (sigma : R -> R) (att : nat -> mx R [:: D] [::] -> mx R [:: D] [:: D])
  (W2 : nat -> mx R [:: F] [:: D]) (b2 : nat -> mx R [:: F] [::]) (W3 : nat -> mx R [:: D] [:: F])
  (b3 : nat -> mx R [:: D] [::]) (x0 : mx R [:: D] [::]).
(** the forward pass of [L] blocks; block [l]'s attention matrix is [att l] at the block's own
    input (input-dependent) *)
Fixpoint xboth L := if L is L'.+1
  then block_both sigma (att L' (xboth L')) (W2 L') (b2 L') (W3 L') (b3 L') (xboth L') else x0.
Fixpoint xffn L := if L is L'.+1
  then block_ffn sigma (att L' (xffn L')) (W2 L') (b2 L') (W3 L') (b3 L') (xffn L') else x0.
(** their Eq. 20 networks: [W'_{l,1} = I + W^mha_l(x_l)] (B-both) or [W^mha_l(x_l)] (B-ffn), and
    [W'_{l,2} = W2_l W'_{l,1}] (Eq. 31) *)
Definition both_net := absorbed (Net (fun l => add (idm [:: D]) (att l (xboth l))) W2 b2 W3 b3).
Definition ffn_net := absorbed (Net (fun l => att l (xffn l)) W2 b2 W3 b3).
Hypothesis step : one_layer_step.

(** T7 (Eq. 33 = main Eq. 11) for blocks with both skips, for every depth [L] *)
Theorem transformer_both_unrolling L :
  xboth L =m add (add (mul (cW1 both_net L) x0) (cb1 both_net L))
    (headsum (fun j : 'I_L => mul (cW3 both_net L j)
                                 (ew sigma (add (mul (cW2 both_net j) x0) (cb2 sigma both_net x0 j))))).
Proof.
apply: meq_trans _ (residual_unrolling sigma both_net x0 step L).
apply: follows_forward => // l /=.
exact: meq_trans (block_both_eq30 _ _ _ _ _ _ _) (layer30_eq20 _ _ _ _ _ _ _).
Qed.

(** T7 for blocks with the FFN skip only *)
Theorem transformer_ffn_unrolling L :
  xffn L =m add (add (mul (cW1 ffn_net L) x0) (cb1 ffn_net L))
    (headsum (fun j : 'I_L => mul (cW3 ffn_net L j)
                                 (ew sigma (add (mul (cW2 ffn_net j) x0) (cb2 sigma ffn_net x0 j))))).
Proof.
apply: meq_trans _ (residual_unrolling sigma ffn_net x0 step L).
apply: follows_forward => // l /=.
exact: meq_trans (block_ffn_eq30 _ _ _ _ _ _ _) (layer30_eq20 _ _ _ _ _ _ _).
Qed.
End Transformer.
End Depth.

(** ** Lemma 2 over multi-index spaces (X4.recursion[alpha(x)], X9.unrolling)

    The same network, forward pass, combined parameters and induction as above, for a layer that
    acts on a vector of any index space [Ds] (a [seq nat]: [vec_r X] of an [N×M] matrix lives in
    [[:: N; M]]) with a hidden space [Fs].  The one-layer step ([one_layer_step_m]) is proved here
    ([one_layer_step_m_holds], from distributivity, associativity and congruence, as
    [one_layer_step_holds]): the exported L2.8 step is over one axis, so it is not the premise. *)
Section DepthM.
Variable R : comRingType.

Lemma sumI_mulr s (G : idx s -> R) c : sumI G * c = sumI (fun k => G k * c).
Proof. elim: s G => [|d s IH] G //=; rewrite big_distrl; apply: eq_bigr => a _; exact: IH. Qed.
Lemma sumI_mull s (G : idx s -> R) c : c * sumI G = sumI (fun k => c * G k).
Proof. elim: s G => [|d s IH] G //=; rewrite big_distrr; apply: eq_bigr => a _; exact: IH. Qed.
Lemma sumI_big s n (G : idx s -> 'I_n -> R) :
  sumI (fun k => \sum_(j < n) G k j) = \sum_(j < n) sumI (fun k => G k j).
Proof.
elim: s G => [|d s IH] G //=.
rewrite (eq_bigr (fun a => \sum_(j < n) sumI (fun k => G (a, k) j))) => [|a _]; last exact: IH.
exact: exchange_big.
Qed.
Lemma sumI_swap s t (G : idx s -> idx t -> R) :
  sumI (fun k => sumI (fun l => G k l)) = sumI (fun l => sumI (fun k => G k l)).
Proof.
elim: s G => [|d s IH] G //=.
rewrite (eq_bigr (fun a => sumI (fun l => sumI (fun k => G (a, k) l)))) => [|a _]; last exact: IH.
by rewrite -(sumI_big (fun l a => sumI (fun k => G (a, k) l))).
Qed.
Lemma sumI_deltaI s (i : idx s) (G : idx s -> R) : sumI (fun k => deltaI i k * G k) = G i.
Proof.
elim: s i G => [|d s IH] i G /=; first by case: i; rewrite mul1r.
case: i => a i /=.
rewrite (eq_bigr (fun b => delta a b * G (b, i))) => [|b _].
  rewrite (bigD1 a) //= big1 => [|b /negbTE nb]; first by rewrite /delta eqxx mul1r addr0.
  by rewrite /delta eq_sym nb mul0r.
rewrite -(IH i (fun k => G (b, k))) sumI_mull; apply: sumI_ext => k; by rewrite mulrA.
Qed.

Lemma mul_idm_m rs cs (x : mx R rs cs) : mul (idm rs) x =m x.
Proof. move=> i j; exact: sumI_deltaI. Qed.
Lemma mul_assoc_m rs ks ls cs (A : mx R rs ks) (B : mx R ks ls) (C : mx R ls cs) :
  mul (mul A B) C =m mul A (mul B C).
Proof.
move=> i j; rewrite /mul.
rewrite (sumI_ext (G := fun l => sumI (fun k => A i k * B k l * C l j))) => [|l]; last exact: sumI_mulr.
rewrite sumI_swap; apply: sumI_ext => k; rewrite sumI_mull; apply: sumI_ext => l; by rewrite mulrA.
Qed.
Lemma mul_headsum_m h rs ks ls cs (W : mx R rs ks) (U : 'I_h -> mx R ks ls) (s : 'I_h -> mx R ls cs) :
  mul W (headsum (fun j => mul (U j) (s j))) =m headsum (fun j => mul (mul W (U j)) (s j)).
Proof.
move=> i k; rewrite /headsum.
rewrite (eq_bigr (fun j => mul W (mul (U j) (s j)) i k)) => [|j _]; last by rewrite (mul_assoc_m W (U j) (s j)).
rewrite /mul -sumI_big; apply: sumI_ext => a; rewrite /mul; exact: mulr_sumr.
Qed.
Lemma mul_addr_m rs ks cs (W : mx R rs ks) (X Y : mx R ks cs) :
  mul W (add X Y) =m add (mul W X) (mul W Y).
Proof. move=> i j; rewrite /mul /add -sumI_add; apply: sumI_ext => k; exact: mulrDr. Qed.
Lemma mul_addl_m rs ks cs (W V : mx R rs ks) (X : mx R ks cs) :
  mul (add W V) X =m add (mul W X) (mul V X).
Proof. move=> i j; rewrite /mul /add -sumI_add; apply: sumI_ext => k; exact: mulrDl. Qed.
End DepthM.

Section NetsM.
Variable R : comRingType.
Variables Ds Fs : seq nat.

Definition layer_app_m (sigma : R -> R) (W1 : mx R Ds Ds) (W2 : mx R Fs Ds) (b2 : mx R Fs [::])
    (W3 : mx R Ds Fs) (b3 : mx R Ds [::]) (x : mx R Ds [::]) :=
  add (add (mul W1 x) b3) (mul W3 (ew sigma (add (mul W2 x) b2))).
Definition uat_form_m (A : mx R Ds Ds) (c Rm x0 : mx R Ds [::]) := add (add (mul A x0) c) Rm.
Definition eq34_form_m (W2 : mx R Fs Ds) (b2 : mx R Fs [::]) (c Rm : mx R Ds [::]) :=
  add (add (mul W2 c) b2) (mul W2 Rm).

Lemma layer_app_m_meq sigma W1 W2 b2 W3 b3 x x' :
  x =m x' -> layer_app_m sigma W1 W2 b2 W3 b3 x =m layer_app_m sigma W1 W2 b2 W3 b3 x'.
Proof.
move=> E; apply: add_meq; first by apply: add_meq => //; apply: mul_meq.
by apply: mul_meq => //; apply: ew_meq; apply: add_meq => //; apply: mul_meq.
Qed.

Lemma mul_uat_m rs (W : mx R rs Ds) A c Rm x0 :
  mul W (uat_form_m A c Rm x0) =m add (add (mul (mul W A) x0) (mul W c)) (mul W Rm).
Proof.
apply: meq_trans (mul_addr_m _ _ _) _; apply: add_meq => //.
apply: meq_trans (mul_addr_m _ _ _) _; apply: add_meq => //; exact: meq_sym (mul_assoc_m _ _ _).
Qed.

(** Lemma 2's step (L2.8[front=raw]) on the index space [Ds], proved *)
Lemma one_layer_step_m_holds sigma W1 A W2 b2 W3 b3 (x0 c Rm : mx R Ds [::]) :
  layer_app_m sigma W1 W2 b2 W3 b3 (uat_form_m A c Rm x0) =m
  uat_form_m (mul W1 A) (add (mul W1 c) b3)
             (add (mul W1 Rm) (mul W3 (ew sigma (add (mul (mul W2 A) x0) (eq34_form_m W2 b2 c Rm))))) x0.
Proof.
rewrite /layer_app_m.
apply: meq_trans _ (add_rearr_out _ _ _ _ _).
apply: add_meq; first by apply: add_meq => //; exact: mul_uat_m.
apply: mul_meq => //; apply: ew_meq.
apply: meq_trans _ (add_rearr_in _ _ _ _); apply: add_meq => //; exact: mul_uat_m.
Qed.

(** a network of Eq. 20 layers on [Ds], [nat]-indexed *)
Record net_m := NetM {
  mW1 : nat -> mx R Ds Ds; mW2 : nat -> mx R Fs Ds; mb2 : nat -> mx R Fs [::];
  mW3 : nat -> mx R Ds Fs; mb3 : nat -> mx R Ds [::] }.

Section NetM.
Variables (sigma : R -> R) (N : net_m) (x0 : mx R Ds [::]).
Fixpoint forward_m L := if L is L'.+1
  then layer_app_m sigma (mW1 N L') (mW2 N L') (mb2 N L') (mW3 N L') (mb3 N L') (forward_m L') else x0.
Fixpoint cW1_m L : mx R Ds Ds := if L is L'.+1 then mul (mW1 N L') (cW1_m L') else idm Ds.
Fixpoint cb1_m L : mx R Ds [::] :=
  if L is L'.+1 then add (mul (mW1 N L') (cb1_m L')) (mb3 N L') else zero Ds [::].
Fixpoint cW3_m L j : mx R Ds Fs :=
  if L is L'.+1 then (if (j < L')%N then mul (mW1 N L') (cW3_m L' j) else mW3 N L') else mW3 N j.
Definition cW2_m j : mx R Fs Ds := mul (mW2 N j) (cW1_m j).
Fixpoint rem_m L : mx R Ds [::] := if L is L'.+1
  then add (mul (mW1 N L') (rem_m L'))
           (mul (mW3 N L') (ew sigma (add (mul (cW2_m L') x0) (eq34_form_m (mW2 N L') (mb2 N L') (cb1_m L') (rem_m L')))))
  else zero Ds [::].
Definition cb2_m j : mx R Fs [::] := eq34_form_m (mW2 N j) (mb2 N j) (cb1_m j) (rem_m j).

Lemma forward_m_state L : forward_m L =m uat_form_m (cW1_m L) (cb1_m L) (rem_m L) x0.
Proof.
elim: L => [|L IH] /=.
  move=> i j; rewrite /uat_form_m /add /zero /= !addr0; by rewrite (mul_idm_m x0 i j).
apply: meq_trans (layer_app_m_meq _ _ _ _ _ _ IH) _; exact: one_layer_step_m_holds.
Qed.

Lemma rem_m_sum L :
  rem_m L =m headsum (fun j : 'I_L => mul (cW3_m L j) (ew sigma (add (mul (cW2_m j) x0) (cb2_m j)))).
Proof.
elim: L => [|L IH]; first by move=> i k; rewrite /headsum big_ord0.
move=> i k; rewrite /headsum big_ord_recr /= ltnn.
have -> : \sum_(j < L) mul (cW3_m L.+1 (widen_ord (leqnSn L) j))
                         (ew sigma (add (mul (cW2_m (widen_ord (leqnSn L) j)) x0) (cb2_m (widen_ord (leqnSn L) j)))) i k
        = \sum_(j < L) mul (mul (mW1 N L) (cW3_m L j)) (ew sigma (add (mul (cW2_m j) x0) (cb2_m j))) i k.
  by apply: eq_bigr => j _ /=; rewrite ltn_ord.
rewrite /add; congr (_ + _).
rewrite (mul_meq (meq_refl (mW1 N L)) IH i k).
exact: (mul_headsum_m (mW1 N L) (cW3_m L) (fun j => ew sigma (add (mul (cW2_m j) x0) (cb2_m j))) i k).
Qed.

(** Lemma 2 on [Ds], for every depth [L] *)
Theorem residual_unrolling_m L :
  forward_m L =m add (add (mul (cW1_m L) x0) (cb1_m L))
                   (headsum (fun j : 'I_L => mul (cW3_m L j) (ew sigma (add (mul (cW2_m j) x0) (cb2_m j))))).
Proof. apply: meq_trans (forward_m_state L) _; apply: add_meq => //; exact: rem_m_sum. Qed.

Lemma follows_forward_m (y : nat -> mx R Ds [::]) :
  y 0%N =m x0 ->
  (forall l, y l.+1 =m layer_app_m sigma (mW1 N l) (mW2 N l) (mb2 N l) (mW3 N l) (mb3 N l) (y l)) ->
  forall L, y L =m forward_m L.
Proof.
move=> y0 ys; elim=> [|L IH] //=.
exact: meq_trans (ys L) (layer_app_m_meq _ _ _ _ _ _ IH).
Qed.
End NetM.
End NetsM.
