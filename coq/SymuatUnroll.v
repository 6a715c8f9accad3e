(** * SymuatUnroll: the inductions over depth of the checks that build their own layer.

    [SymuatDepth] states Lemma 2 and the Transformer→DUAT recursion for a network of any depth.
    Other checks conclude something for every depth from those inductions and a one-layer
    identity of their own (symuat's normal form proves it for symbolic sizes); each is one
    theorem here, quantified over the depth [L], that takes that identity as a premise
    ([x7_step], [x5_step], [a4_eq20_step], [a4_corr_step], [x8_additive], [t10_step]: the
    identity exactly as [symuat certify] exports it, so the exported theorem discharges it, and no
    other identity does; [a4_eq20_step] and [t10_step], which the exporter's proof does not close,
    are proved here too, and symuat certify uses those proofs), besides [one_layer_step] when it
    rests on [residual_unrolling]:

    - [stream_readout] (X7.telescope): the residual stream with the norm scales frozen,
      [x_{l+1} = x_l + Σ_i O_{l,i} V_{l,i} X_l P_{l,i}ᵀ e_n + m_l + b_l] (T7's recursion with
      [W1 = I]: nothing multiplies an earlier write), read through a frozen readout [r]:
      [rᵀ x_L = rᵀ x_0 + Σ_{l<L} (Σ_i (V_{l,i}ᵀ O_{l,i}ᵀ r)ᵀ X_l (P_{l,i}ᵀ e_n) + rᵀ m_l + rᵀ b_l)];
    - [readout_unrolling] (X5.combined): a readout [P] of [x'_L] in T7's form is T7's form with
      [P A_L], [P c_L], [P U_{L,j}] and the same [V_j], [e_j];
    - [lora_eq20_unrolling] (A4.eq20, the reading Δ=induced, b2=recomputed, idx=j, op=times):
      an Eq. 20 network fine-tuned by increments [ΔW2_l], [ΔW3_l] is Eq. 18 under that reading —
      the base's [A_L], [c_L], [W'_{j,3} + ΔW_{j,3}], [W'_{j,2} + ΔW_{j,2}] with the induced
      increments (the fine-tuned combined parameter minus the base's) and the bias recomputed from
      the fine-tuned network;
    - [lora_corrected_unrolling] (A4.corr[symbolic]): the same network, any [W1] per layer, unrolls
      with [W'_{j,3} + ΔW_{j,3}] (the later [W1] times [ΔW3_j]), [W'_{j,2} + ΔW2_j A_j] and the
      recomputed bias, by an induction whose step is the check's tuned-layer identity;
    - [golden_linear] (X8.linear-symbolic): [L] bias-free detached layers composed are additive
      and homogeneous (linear);
    - [shared_bias] (T10.c[token-shared]): with every row of every pattern summing to one, the
      combined bias [c_L] is [1_N⊗g_L], [g_L] a recursion without the patterns. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac SymuatDepth.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Unroll.
Variable R : comRingType.
Add Ring symuat_ring_unroll_zmod : (R_ring_theory_zmod R).
Lemma add_swap5 (a b c d e : R) : a + b + c + (d + e) = a + d + c + (b + e).
Proof. by rewrite -!addrA; congr (_ + _); rewrite addrCA [in RHS]addrCA; congr (_ + _); rewrite addrCA. Qed.

(** ** X7.telescope: the residual stream read through a frozen readout, for every depth *)
Section Stream.
Variables D K N : nat.

(** The one-layer identity of X7.telescope (its check's step, [attribution.x7_step_statement]):
    [rᵀ(x + Σ_i O_iV_iXP_iᵀe_n + m + b) = rᵀx + Σ_i (V_iᵀO_iᵀr)ᵀ X (P_iᵀe_n) + rᵀm + rᵀb], two heads *)
Definition x7_step := forall (r x_prev : mx R [:: D] [::]) (O_1 : mx R [:: D] [:: K]) (V_1 : mx R [:: K] [:: D])
    (X : mx R [:: D] [:: N]) (P_1 : mx R [:: N] [:: N]) (e_n : mx R [:: N] [::]) (O_2 : mx R [:: D] [:: K])
    (V_2 : mx R [:: K] [:: D]) (P_2 : mx R [:: N] [:: N]) (m_l b_l : mx R [:: D] [::]),
  mul (tr r) (add (add (add (add x_prev (mul (mul (mul (mul O_1 V_1) X) (tr P_1)) e_n))
                                 (mul (mul (mul (mul O_2 V_2) X) (tr P_2)) e_n)) m_l) b_l) =m
  add (add (add (add (mul (tr r) x_prev) (mul (mul (tr (mul (mul (tr V_1) (tr O_1)) r)) X) (mul (tr P_1) e_n)))
                (mul (mul (tr (mul (mul (tr V_2) (tr O_2)) r)) X) (mul (tr P_2) e_n)))
           (mul (tr r) m_l)) (mul (tr r) b_l).

(** layer [l]'s frozen operators: two heads' [O], [V], pattern [P], the tokens' states [X] it
    reads, its MLP write [m], its bias [b]; the position [e] read is the same at every layer *)
Variables (O1 O2 : nat -> mx R [:: D] [:: K]) (V1 V2 : nat -> mx R [:: K] [:: D])
  (P1 P2 : nat -> mx R [:: N] [:: N]) (X : nat -> mx R [:: D] [:: N]) (e : mx R [:: N] [::])
  (m b : nat -> mx R [:: D] [::]) (x0 : mx R [:: D] [::]).

(** the stream at the position read: [x_{l+1} = x_l + (heads' writes) + m_l + b_l] *)
Fixpoint stream L := if L is L'.+1
  then add (add (add (add (stream L') (mul (mul (mul (mul (O1 L') (V1 L')) (X L')) (tr (P1 L'))) e))
                      (mul (mul (mul (mul (O2 L') (V2 L')) (X L')) (tr (P2 L'))) e)) (m L')) (b L')
  else x0.

Hypothesis step : x7_step.

(** [rᵀ x_L = rᵀ x_0 + Σ_{l<L} (Σ_i (V_{l,i}ᵀ O_{l,i}ᵀ r)ᵀ X_l (P_{l,i}ᵀ e) + rᵀ m_l + rᵀ b_l)] for every depth *)
Theorem stream_readout L (r : mx R [:: D] [::]) :
  mul (tr r) (stream L) =m
  add (mul (tr r) x0)
      (headsum (fun l : 'I_L =>
         add (add (add (mul (mul (tr (mul (mul (tr (V1 l)) (tr (O1 l))) r)) (X l)) (mul (tr (P1 l)) e))
                       (mul (mul (tr (mul (mul (tr (V2 l)) (tr (O2 l))) r)) (X l)) (mul (tr (P2 l)) e)))
                  (mul (tr r) (m l))) (mul (tr r) (b l)))).
Proof.
elim: L => [|L IH] i k /=; first by rewrite /add /headsum big_ord0 addr0.
rewrite (step r (stream L) (O1 L) (V1 L) (X L) (P1 L) e (O2 L) (V2 L) (P2 L) (m L) (b L) i k).
rewrite /add (IH i k) /headsum big_ord_recr /= /add.
by rewrite !addrA.
Qed.
End Stream.

Section Nets.
Variables D F : nat.

(** ** X5.combined: a readout of the unrolled form *)
(** The identity X5.combined's check proves ([decoder.combined_logits_statement]): [P] distributes
    over T7's form, for a symbolic number [n] of σ-terms *)
Definition x5_step V := forall n (P : mx R [:: V] [:: D]) (A_L : mx R [:: D] [:: D]) (x_0 c_L : mx R [:: D] [::])
    (U : 'I_n -> mx R [:: D] [:: F]) (s : 'I_n -> mx R [:: F] [::]),
  mul P (add (add (mul A_L x_0) c_L) (headsum (fun h_j : 'I_n => (mul (U h_j) (s h_j))))) =m
  add (add (mul (mul P A_L) x_0) (mul P c_L)) (headsum (fun h_j : 'I_n => (mul (mul P (U h_j)) (s h_j)))).

Theorem readout_unrolling V (sigma : R -> R) (N : net R D F) (x0 : mx R [:: D] [::]) (P : mx R [:: V] [:: D])
    (step : one_layer_step R D F) (hstep : x5_step V) L :
  mul P (forward sigma N x0 L) =m
  add (add (mul (mul P (cW1 N L)) x0) (mul P (cb1 N L)))
      (headsum (fun j : 'I_L => mul (mul P (cW3 N L j)) (ew sigma (add (mul (cW2 N j) x0) (cb2 sigma N x0 j))))).
Proof.
apply: meq_trans (mul_meq (meq_refl P) (residual_unrolling sigma N x0 step L)) _.
exact: (hstep L P (cW1 N L) x0 (cb1 N L) (fun j : 'I_L => cW3 N L j)
          (fun j : 'I_L => ew sigma (add (mul (cW2 N j) x0) (cb2 sigma N x0 j)))).
Qed.

(** ** A4.eq20: LoRA in an Eq. 20 network, for every depth *)
(** the fine-tuned network: [W2_l + ΔW2_l], [W3_l + ΔW3_l] ([W1], [b2], [b3] kept) *)
Definition lora (N : net R D F) (dW2 : nat -> mx R [:: F] [:: D]) (dW3 : nat -> mx R [:: D] [:: F]) :=
  Net (nW1 N) (fun l => add (nW2 N l) (dW2 l)) (nb2 N) (fun l => add (nW3 N l) (dW3 l)) (nb3 N).

(** [A_L] and [c_L] involve neither [W2] nor [W3]: the fine-tuned network has the base's *)
Lemma cW1_lora N dW2 dW3 L : cW1 (lora N dW2 dW3) L = cW1 N L.
Proof. by elim: L => //= L ->. Qed.
Lemma cb1_lora N dW2 dW3 L : cb1 (lora N dW2 dW3) L = cb1 N L.
Proof. by elim: L => //= L ->. Qed.

(** The identity A4.eq20's check proves ([applications.a4_eq20_statement]): with the induced
    increments, [A x'_0 + c + Σ_j (U_j + (U^ft_j − U_j)) σ((V_j + (V^ft_j − V_j)) x'_0 + e^ft_j)] is
    the fine-tuned form [A x'_0 + c + Σ_j U^ft_j σ(V^ft_j x'_0 + e^ft_j)], a symbolic number [n] of
    layers *)
Definition a4_eq20_step := forall (sigma : R -> R) n (A_L : mx R [:: D] [:: D]) (x_0 c_L : mx R [:: D] [::])
    (U U_ft : 'I_n -> mx R [:: D] [:: F]) (V V_ft : 'I_n -> mx R [:: F] [:: D]) (e_ft : 'I_n -> mx R [:: F] [::]),
  add (add (mul A_L x_0) c_L) (headsum (fun h_j : 'I_n => (mul (add (U h_j) (add (U_ft h_j) (scale (-1)%:~R (U h_j))))
      (ew sigma (add (mul (add (V h_j) (add (V_ft h_j) (scale (-1)%:~R (V h_j)))) x_0) (e_ft h_j)))))) =m
  add (add (mul A_L x_0) c_L) (headsum (fun h_j : 'I_n => (mul (U_ft h_j) (ew sigma (add (mul (V_ft h_j) x_0) (e_ft h_j)))))).

(** The step proved here too: [U + (U^ft + (-1) U) = U^ft] entrywise, and congruence.  The certify
    tier uses this proof: the exported identity's normal-form replay ([symuat_nf]) does not close
    it — inside σ the sums [Σ V x'_0] and [Σ (-1) V x'_0] cancel, and the closing matches summands
    of the two sides, it does not cancel summands of one side. *)
Lemma intr_m1 : ((-1)%:~R : R) = -1. Proof. by rewrite intr_Negz. Qed.
Lemma add_induced rs cs (U Uf : mx R rs cs) : add U (add Uf (scale (-1)%:~R U)) =m Uf.
Proof. by move=> a b; rewrite /add /scale intr_m1 mulN1r addrCA subrr addr0. Qed.
Lemma a4_eq20_step_holds : a4_eq20_step.
Proof.
move=> sigma n A x c U Uf V Vf e; apply: add_meq => //; apply: headsum_meq => j.
apply: mul_meq; first exact: add_induced.
by apply: ew_meq; apply: add_meq => //; apply: mul_meq => //; exact: add_induced.
Qed.

(** Eq. 18 (Δ=induced, b2=recomputed, idx=j, op=times) is the fine-tuned network's [x'_L] for
    every depth: the base's [A_L], [c_L]; [W'_{j,3} + ΔW_{j,3}] and [W'_{j,2} + ΔW_{j,2}] with
    [ΔW_{j,·}] the fine-tuned combined parameter minus the base's; [b'_{j,2}] recomputed *)
Theorem lora_eq20_unrolling (sigma : R -> R) (N : net R D F) dW2 dW3 (x0 : mx R [:: D] [::])
    (step : one_layer_step R D F) (hstep : a4_eq20_step) L :
  forward sigma (lora N dW2 dW3) x0 L =m
  add (add (mul (cW1 N L) x0) (cb1 N L))
      (headsum (fun j : 'I_L =>
         mul (add (cW3 N L j) (add (cW3 (lora N dW2 dW3) L j) (scale (-1)%:~R (cW3 N L j))))
             (ew sigma (add (mul (add (cW2 N j) (add (cW2 (lora N dW2 dW3) j) (scale (-1)%:~R (cW2 N j)))) x0)
                            (cb2 sigma (lora N dW2 dW3) x0 j))))).
Proof.
apply: meq_trans (residual_unrolling sigma (lora N dW2 dW3) x0 step L) _.
rewrite cW1_lora cb1_lora; apply: meq_sym.
exact: (hstep sigma L (cW1 N L) x0 (cb1 N L) (fun j : 'I_L => cW3 N L j)
          (fun j : 'I_L => cW3 (lora N dW2 dW3) L j) (fun j : 'I_L => cW2 N j)
          (fun j : 'I_L => cW2 (lora N dW2 dW3) j) (fun j : 'I_L => cb2 sigma (lora N dW2 dW3) x0 j)).
Qed.
(** ** A4.corr[symbolic]: the corrected Eq. 18, for every depth *)
(** The identity A4.corr's check proves ([applications._a4_corrected_symbolic]): the tuned layer
    ([W2 + ΔW2], [W3 + ΔW3]) on the hypothesis [x = A x'_0 + c + R] gives [ΔW_{k,3} = ΔW3],
    [ΔW_{k,2} = ΔW2 A] and the bias [e_k + ΔW2 (c + R)] *)
Definition a4_corr_step := forall (sigma : R -> R) (W__k_1_ A_i : mx R [:: D] [:: D])
    (x_0 c_i R_i b__k_3_ : mx R [:: D] [::]) (W__k_3_ v_Delta_W3_k : mx R [:: D] [:: F])
    (W__k_2_ v_Delta_W2_k : mx R [:: F] [:: D]) (b__k_2_ : mx R [:: F] [::]),
  add (add (mul W__k_1_ (add (add (mul A_i x_0) c_i) R_i)) b__k_3_)
      (mul (add W__k_3_ v_Delta_W3_k) (ew sigma (add (mul (add W__k_2_ v_Delta_W2_k) (add (add (mul A_i x_0) c_i) R_i)) b__k_2_))) =m
  add (add (add (mul (mul W__k_1_ A_i) x_0) (add (mul W__k_1_ c_i) b__k_3_)) (mul W__k_1_ R_i))
      (mul (add W__k_3_ v_Delta_W3_k) (ew sigma (add (mul (add (mul W__k_2_ A_i) (mul v_Delta_W2_k A_i)) x_0)
                                                    (add (add (mul W__k_2_ (add c_i R_i)) b__k_2_) (mul v_Delta_W2_k (add c_i R_i)))))).

(** the increments alone: [ΔW3] in place of [W3] ([cW3 (dnet N dW3) L j] = [ΔW_{j,3}] after [L] layers) *)
Definition dnet (N : net R D F) (dW3 : nat -> mx R [:: D] [:: F]) := Net (nW1 N) (nW2 N) (nb2 N) dW3 (nb3 N).

Section Corr.
Variables (sigma : R -> R) (N : net R D F) (dW2 : nat -> mx R [:: F] [:: D]) (dW3 : nat -> mx R [:: D] [:: F])
  (x0 : mx R [:: D] [::]).
(** the remainder by the tuned step's rule *)
Fixpoint remT L : mx R [:: D] [::] := if L is L'.+1
  then add (mul (nW1 N L') (remT L'))
           (mul (add (nW3 N L') (dW3 L'))
                (ew sigma (add (mul (add (mul (nW2 N L') (cW1 N L')) (mul (dW2 L') (cW1 N L'))) x0)
                               (add (add (mul (nW2 N L') (add (cb1 N L') (remT L'))) (nb2 N L'))
                                    (mul (dW2 L') (add (cb1 N L') (remT L')))))))
  else zero [:: D] [::].

Lemma lora_state (hstep : a4_corr_step) L :
  forward sigma (lora N dW2 dW3) x0 L =m uat_form (cW1 N L) (cb1 N L) (remT L) x0.
Proof.
elim: L => [|L IH] /=.
  move=> [i []] [] /=; rewrite /uat_form /add /zero /mul /idm /= !addr0.
  rewrite (bigD1 i) //= big1 => [|k /negbTE nk]; first by rewrite /delta eqxx mulr1 mul1r addr0.
  by rewrite /delta /= eq_sym nk !mul0r.
apply: meq_trans (layer_app_meq _ _ _ _ _ _ IH) _.
apply: meq_trans (hstep sigma (nW1 N L) (cW1 N L) x0 (cb1 N L) (remT L) (nb3 N L) (nW3 N L) (dW3 L)
                     (nW2 N L) (dW2 L) (nb2 N L)) _.
by move=> i j; rewrite /uat_form /add !addrA.
Qed.

Lemma mul_addl rs ks cs (X Y : mx R rs ks) (W : mx R ks cs) : mul (add X Y) W =m add (mul X W) (mul Y W).
Proof. move=> i j; rewrite /mul /add -sumI_add; apply: sumI_ext => k; exact: mulrDl. Qed.

Lemma remT_sum L :
  remT L =m headsum (fun j : 'I_L => mul (add (cW3 N L j) (cW3 (dnet N dW3) L j))
    (ew sigma (add (mul (add (cW2 N j) (mul (dW2 j) (cW1 N j))) x0)
                   (add (add (mul (nW2 N j) (add (cb1 N j) (remT j))) (nb2 N j)) (mul (dW2 j) (add (cb1 N j) (remT j))))))).
Proof.
elim: L => [|L IH]; first by move=> i k; rewrite /headsum big_ord0.
move=> i k; rewrite /headsum big_ord_recr /= ltnn.
set s := fun j : nat => ew sigma (add (mul (add (cW2 N j) (mul (dW2 j) (cW1 N j))) x0)
                   (add (add (mul (nW2 N j) (add (cb1 N j) (remT j))) (nb2 N j)) (mul (dW2 j) (add (cb1 N j) (remT j))))).
have -> : \sum_(j < L) mul (add (cW3 N L.+1 (widen_ord (leqnSn L) j)) (cW3 (dnet N dW3) L.+1 (widen_ord (leqnSn L) j)))
                         (s (widen_ord (leqnSn L) j)) i k
        = \sum_(j < L) mul (mul (nW1 N L) (add (cW3 N L j) (cW3 (dnet N dW3) L j))) (s j) i k.
  apply: eq_bigr => j _ /=; rewrite ltn_ord.
  by apply: mul_meq => //; apply: meq_sym; exact: mul_addr.
rewrite /add; congr (_ + _).
rewrite (mul_meq (meq_refl (nW1 N L)) IH i k).
exact: (mul_headsum_assoc (nW1 N L) (fun j : 'I_L => add (cW3 N L j) (cW3 (dnet N dW3) L j)) (fun j : 'I_L => s j) i k).
Qed.

Lemma uat_form_cancel (A : mx R [:: D] [:: D]) c Rm Rm' : uat_form A c Rm x0 =m uat_form A c Rm' x0 -> Rm =m Rm'.
Proof. by move=> E i j; move: (E i j); rewrite /uat_form /add; move/addrI. Qed.

(** the bias the tuned step gives is the fine-tuned network's Eq. 34 bias, recomputed ([cb2]) *)
Lemma remT_bias (step : one_layer_step R D F) (hstep : a4_corr_step) j :
  add (add (mul (nW2 N j) (add (cb1 N j) (remT j))) (nb2 N j)) (mul (dW2 j) (add (cb1 N j) (remT j))) =m
  cb2 sigma (lora N dW2 dW3) x0 j.
Proof.
have E : remT j =m rem sigma (lora N dW2 dW3) x0 j.
  apply: (@uat_form_cancel (cW1 N j) (cb1 N j)); apply: meq_trans (meq_sym (lora_state hstep j)) _.
  by rewrite -(cW1_lora N dW2 dW3) -(cb1_lora N dW2 dW3); exact: forward_state.
rewrite /cb2 /eq34_form /= cb1_lora => i k.
rewrite /add (mul_addl (nW2 N j) (dW2 j) (cb1 N j) i k) (mul_addl (nW2 N j) (dW2 j) (rem sigma (lora N dW2 dW3) x0 j) i k).
rewrite (mul_addr (nW2 N j) (cb1 N j) (remT j) i k) (mul_addr (dW2 j) (cb1 N j) (remT j) i k) /add.
rewrite (mul_meq (meq_refl (nW2 N j)) E i k) (mul_meq (meq_refl (dW2 j)) E i k).
exact: add_swap5.
Qed.
End Corr.

(** The corrected Eq. 18 for every depth: an Eq. 20 network (any [W1] per layer: a Transformer's
    are its fine-tuned stream's, T7) fine-tuned by [ΔW2_l], [ΔW3_l] unrolls with
    [W'_{j,3} + ΔW_{j,3}] ([ΔW_{j,3}]: the later [W1] times [ΔW3_j]), [W'_{j,2} + ΔW_{j,2}]
    ([ΔW_{j,2} = ΔW2_j A_j]) and the bias recomputed from the fine-tuned network *)
Theorem lora_corrected_unrolling (sigma : R -> R) (N : net R D F) dW2 dW3 (x0 : mx R [:: D] [::])
    (step : one_layer_step R D F) (hstep : a4_corr_step) L :
  forward sigma (lora N dW2 dW3) x0 L =m
  add (add (mul (cW1 N L) x0) (cb1 N L))
      (headsum (fun j : 'I_L =>
         mul (add (cW3 N L j) (cW3 (dnet N dW3) L j))
             (ew sigma (add (mul (add (cW2 N j) (mul (dW2 j) (cW1 N j))) x0) (cb2 sigma (lora N dW2 dW3) x0 j))))).
Proof.
apply: meq_trans (lora_state sigma N dW2 dW3 x0 hstep L) _; apply: add_meq => //.
apply: meq_trans (remT_sum sigma N dW2 dW3 x0 L) _; apply: headsum_meq => j.
apply: mul_meq => //; apply: ew_meq; apply: add_meq => //; exact: remT_bias.
Qed.
End Nets.

(** ** X8.linear-symbolic: Golden's detached layers, linear for every depth *)
Section Golden.
Variables D F K N : nat.
Add Ring symuat_ring_golden : (R_ring_theory_ring R).
Add Ring symuat_ring_golden_zmod : (R_ring_theory_zmod R).

(** The additivity X8's check proves ([attribution.x8_statement("linear")]): a bias-free detached
    layer (pattern [P], gate [G] and norm scales frozen), [f(X + Y) = f(X) + f(Y)] *)
Definition x8_additive := forall (X Y : mx R [:: D] [:: N]) (O : mx R [:: D] [:: K]) (V : mx R [:: K] [:: D])
    (P : mx R [:: N] [:: N]) (W_d : mx R [:: D] [:: F]) (G : mx R [:: F] [:: N]) (W_u : mx R [:: F] [:: D]),
  add (add (add X Y) (mul (mul (mul O V) (add X Y)) (tr P))) (mul W_d (hadamard G (mul W_u (add X Y)))) =m
  add (add (add X (mul (mul (mul O V) X) (tr P))) (mul W_d (hadamard G (mul W_u X))))
      (add (add Y (mul (mul (mul O V) Y) (tr P))) (mul W_d (hadamard G (mul W_u Y)))).

(** Its homogeneity, [f(aX) = a f(X)] ([x8_statement("homogeneous")]), proved here: the exporter
    states integer coefficients only, and [a] is a scalar symbol *)
Lemma x8_homogeneous (a : R) (X : mx R [:: D] [:: N]) (O : mx R [:: D] [:: K]) (V : mx R [:: K] [:: D])
    (P : mx R [:: N] [:: N]) (W_d : mx R [:: D] [:: F]) (G : mx R [:: F] [:: N]) (W_u : mx R [:: F] [:: D]) :
  add (add (scale a X) (mul (mul (mul O V) (scale a X)) (tr P))) (mul W_d (hadamard G (mul W_u (scale a X)))) =m
  scale a (add (add X (mul (mul (mul O V) X) (tr P))) (mul W_d (hadamard G (mul W_u X)))).
Proof. symuat_entry. Qed.

(** layer [l]'s frozen operators *)
Variables (O : nat -> mx R [:: D] [:: K]) (V : nat -> mx R [:: K] [:: D]) (P : nat -> mx R [:: N] [:: N])
  (W_d : nat -> mx R [:: D] [:: F]) (G : nat -> mx R [:: F] [:: N]) (W_u : nat -> mx R [:: F] [:: D]).

Definition golden_layer l (X : mx R [:: D] [:: N]) :=
  add (add X (mul (mul (mul (O l) (V l)) X) (tr (P l)))) (mul (W_d l) (hadamard (G l) (mul (W_u l) X))).
(** [L] detached layers composed *)
Fixpoint golden L X := if L is L'.+1 then golden_layer L' (golden L' X) else X.

Lemma hadamard_meq rs cs (A B B' : mx R rs cs) : B =m B' -> hadamard A B =m hadamard A B'.
Proof. by move=> E i j; rewrite /hadamard E. Qed.
Lemma golden_layer_meq l X X' : X =m X' -> golden_layer l X =m golden_layer l X'.
Proof.
move=> E; apply: add_meq; first by apply: add_meq => //; apply: mul_meq => //; apply: mul_meq.
by apply: mul_meq => //; apply: hadamard_meq; apply: mul_meq.
Qed.

Hypothesis step : x8_additive.

(** for every depth, the composition is additive and homogeneous: linear, so its output is
    [Σ_t J_t x_t] *)
Theorem golden_linear L (a : R) (X Y : mx R [:: D] [:: N]) :
  golden L (add X Y) =m add (golden L X) (golden L Y) /\ golden L (scale a X) =m scale a (golden L X).
Proof.
elim: L => [|L [IHa IHh]] /=; first by split=> i j.
split.
  apply: meq_trans (golden_layer_meq L IHa) _.
  exact (@step (golden L X) (golden L Y) (O L) (V L) (P L) (W_d L) (G L) (W_u L)).
apply: meq_trans (golden_layer_meq L IHh) _.
exact (x8_homogeneous a (golden L X) (O L) (V L) (P L) (W_d L) (G L) (W_u L)).
Qed.
End Golden.

(** ** T10.c[token-shared]: the combined bias of every depth is shared by the tokens *)
Section SharedBias.
Variables N d d_v h : nat.

(** The identity T10.c's check proves under H7's hypothesis (every row of every [H_i] sums to one):
    [c = 1_N⊗γ ⇒ c + W^mha c + 1_N⊗b_3 = 1_N⊗(γ + γ Σ_i B_i + b_3)] ([transformer._t10_c]) *)
Definition t10_step := forall (gamma : mx R [::] [:: h; d]) (H : 'I_h -> mx R [:: N] [:: N])
    (W_V : 'I_h -> mx R [:: d] [:: d_v]) (W_O : mx R [:: h; d_v] [:: h; d]) (b__L_3_ : mx R [::] [:: h; d]),
  (forall (i : 'I_h) (a : 'I_N), \sum_(b < N) H i (a, tt) (b, tt) = 1) ->
  add (add (vec_r (mul (ones [:: N] [::]) gamma))
           (mul (headsum (fun h_i : 'I_h => (kron (H h_i) (tr (mul (mul (mul (kron (selector h_i) (idm [:: d])) (W_V h_i))
                                                                     (tr (kron (selector h_i) (idm [:: d_v])))) W_O)))))
                (vec_r (mul (ones [:: N] [::]) gamma))))
      (vec_r (mul (ones [:: N] [::]) b__L_3_)) =m
  vec_r (add (add (mul (ones [:: N] [::]) gamma)
                  (mul (mul (ones [:: N] [::]) gamma)
                       (headsum (fun h_i : 'I_h => (mul (mul (mul (kron (selector h_i) (idm [:: d])) (W_V h_i))
                                                         (tr (kron (selector h_i) (idm [:: d_v])))) W_O)))))
             (mul (ones [:: N] [::]) b__L_3_)).

(** The step proved here: the exported identity's proof ([symuat_entry using (symuat_line Hl0)])
    does not close it (the summed line [Σ_n' H_i(n, n')] sits under the Kronecker product's split
    indices); by hand, with the value-output block of each head as any matrix [M i]: the sum over
    the source tokens brought innermost ([exchange_big]), the row sum factored out and replaced by
    the hypothesis. *)
Lemma shared_step_gen (g b : mx R [::] [:: h; d]) (H : 'I_h -> mx R [:: N] [:: N])
    (M : 'I_h -> mx R [:: h; d] [:: h; d]) :
  (forall (i : 'I_h) (a : 'I_N), \sum_(b < N) H i (a, tt) (b, tt) = 1) ->
  add (add (vec_r (mul (ones [:: N] [::]) g))
           (mul (headsum (fun i => kron (H i) (tr (M i)))) (vec_r (mul (ones [:: N] [::]) g))))
      (vec_r (mul (ones [:: N] [::]) b)) =m
  vec_r (add (add (mul (ones [:: N] [::]) g) (mul (mul (ones [:: N] [::]) g) (headsum M))) (mul (ones [:: N] [::]) b)).
Proof.
move=> Hl0 [n [a [c []]]] [].
rewrite /add /vec_r /mul /headsum /kron /tr /ones /=.
congr (_ + _ + _).
rewrite exchange_big; apply: eq_bigr => a1 _; rewrite exchange_big; apply: eq_bigr => a2 _.
under eq_bigr => a0 _ do rewrite big_distrl /=.
rewrite exchange_big big_distrr /=; apply: eq_bigr => i _.
under eq_bigr => a0 _ do rewrite -mulrA.
by rewrite -big_distrl /= Hl0 mul1r mulrC.
Qed.
Lemma t10_step_holds : t10_step.
Proof.
move=> gamma H W_V W_O b3 Hl0.
exact (@shared_step_gen gamma b3 H (fun h_i : 'I_h => mul (mul (mul (kron (selector h_i) (idm [:: d])) (W_V h_i))
                                                      (tr (kron (selector h_i) (idm [:: d_v])))) W_O) Hl0).
Qed.

(** layer [l]'s heads' patterns [H l i], value and output projections, and token-shared bias
    [1_N⊗b3 l] *)
Variables (H : nat -> 'I_h -> mx R [:: N] [:: N]) (W_V : nat -> 'I_h -> mx R [:: d] [:: d_v])
  (W_O : nat -> mx R [:: h; d_v] [:: h; d]) (b3 : nat -> mx R [::] [:: h; d]).

(** [c_L = b'_{L,1}] by its recursion (B-both, no LayerNorm): [c_0 = 0], [c_{L+1} = (I + W^mha_L) c_L + 1_N⊗b_{L,3}] *)
Fixpoint cshared L : mx R ([:: N] ++ [:: h; d]) [::] := if L is L'.+1
  then add (add (cshared L')
                (mul (headsum (fun h_i : 'I_h => (kron (H L' h_i) (tr (mul (mul (mul (kron (selector h_i) (idm [:: d]))
                        (W_V L' h_i)) (tr (kron (selector h_i) (idm [:: d_v])))) (W_O L'))))))
                     (cshared L')))
           (vec_r (mul (ones [:: N] [::]) (b3 L')))
  else zero _ _.
(** the shared row: [g_0 = 0], [g_{L+1} = g_L + g_L Σ_i B_{L,i} + b_{L,3}] (no [H] in it) *)
Fixpoint gshared L : mx R [::] [:: h; d] := if L is L'.+1
  then add (add (gshared L')
                (mul (gshared L') (headsum (fun h_i : 'I_h => (mul (mul (mul (kron (selector h_i) (idm [:: d]))
                        (W_V L' h_i)) (tr (kron (selector h_i) (idm [:: d_v])))) (W_O L'))))))
           (b3 L')
  else zero _ _.

Lemma shared_rows (g b : mx R [::] [:: h; d]) (S : mx R [:: h; d] [:: h; d]) :
  vec_r (add (add (mul (ones [:: N] [::]) g) (mul (mul (ones [:: N] [::]) g) S)) (mul (ones [:: N] [::]) b)) =m
  vec_r (mul (ones [:: N] [::]) (add (add g (mul g S)) b)).
Proof. symuat_entry. Qed.

Hypothesis step : t10_step.

(** for every depth, with every row of every pattern summing to one: [c_L = 1_N⊗g_L], free of the [H] *)
Theorem shared_bias L (rows : forall l (i : 'I_h) (a : 'I_N), \sum_(b < N) H l i (a, tt) (b, tt) = 1) :
  cshared L =m vec_r (mul (ones [:: N] [::]) (gshared L)).
Proof.
elim: L => [|L IH]; first by move=> [n [a [b []]]] [] /=; rewrite /vec_r /mul /zero /= mulr0.
rewrite /=; eapply meq_trans; last exact: shared_rows.
eapply meq_trans; last exact (@step (gshared L) (H L) (W_V L) (W_O L) (b3 L) (rows L)).
by apply: add_meq => //; apply: add_meq => //; apply: mul_meq.
Qed.
End SharedBias.
End Unroll.

(** ** Layers on [vec_r X] ([[:: N; M]]): X9.unrolling and X4.recursion[alpha(x)], for every depth

    Each is Lemma 2 on a multi-index space ([SymuatDepth.residual_unrolling_m], whose step is
    proved in the library) applied to a stack of the check's layers, each layer's Eq. 20 form
    being the check's own one-layer identity ([x9_step], [x4_step]: exactly as [symuat certify]
    exports X9.layer's and X4's identity, the premise the exported theorem discharges).  The
    patterns [H_i] and the norm scales [s_k] of layer [l] are any functions of the layer's input
    [X_l] (frozen at the input, as the check's one-layer identity takes them); the other weights
    are per layer. *)
From Symuat Require Import SymuatLemmas.
Section UnrollM.
Variable R : comRingType.
Variables N M F : nat.

Lemma mul_idm_add_m (A : mx R [:: N; M] [:: N; M]) (x : mx R [:: N; M] [::]) :
  mul (add (idm [:: N; M]) A) x =m add x (mul A x).
Proof. apply: meq_trans (mul_addl_m _ _ _) _; apply: add_meq => //; exact: mul_idm_m. Qed.

(** *** X9: the parallel residual *)
(** X9.layer's identity ([parallel_residual.parallel_layer_statement]) *)
Definition x9_step := forall (sigma : R -> R) (X : mx R [:: N] [:: M]) (H_1 : mx R [:: N] [:: N]) (s_1 : mx R [:: N] [::]) (G_1 : mx R [:: M] [:: M]) (Beta_1 : mx R [:: N] [:: M]) (B_1 : mx R [:: M] [:: M]) (H_2 : mx R [:: N] [:: N]) (B_2 : mx R [:: M] [:: M]) (C_att : mx R [:: N] [:: M]) (s_2 : mx R [:: N] [::]) (G_2 : mx R [:: M] [:: M]) (Beta_2 : mx R [:: N] [:: M]) (W_in : mx R [:: M] [:: F]) (C_in : mx R [:: N] [:: F]) (W_out : mx R [:: F] [:: M]) (C_out : mx R [:: N] [:: M]),
  vec_r (add (add X (add (add (mul (mul H_1 (add (mul (mul (diag s_1) X) G_1) Beta_1)) B_1) (mul (mul H_2 (add (mul (mul (diag s_1) X) G_1) Beta_1)) B_2)) C_att)) (add (mul (ew sigma (add (mul (add (mul (mul (diag s_2) X) G_2) Beta_2) W_in) C_in)) W_out) C_out)) =m add (add (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (kron (diag s_1) (tr G_1))) (vec_r X))) (add (add (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (vec_r Beta_1)) (vec_r C_att)) (vec_r C_out))) (mul (kron (idm [:: N]) (tr W_out)) (ew sigma (add (mul (mul (kron (idm [:: N]) (tr W_in)) (kron (diag s_2) (tr G_2))) (vec_r X)) (add (mul (kron (idm [:: N]) (tr W_in)) (vec_r Beta_2)) (vec_r C_in))))).

Section Parallel.
Variables (sigma : R -> R) (H_1 H_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [:: N])
  (s_1 s_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [::]) (G_1 G_2 B_1 B_2 : nat -> mx R [:: M] [:: M])
  (Beta_1 Beta_2 C_att C_out : nat -> mx R [:: N] [:: M]) (W_in : nat -> mx R [:: M] [:: F])
  (C_in : nat -> mx R [:: N] [:: F]) (W_out : nat -> mx R [:: F] [:: M]) (X0 : mx R [:: N] [:: M]).

(** layer [l] of a parallel-residual stack: [X + Attn(LN_1 X) + MLP(LN_2 X)] *)
Definition par_layer l (X : mx R [:: N] [:: M]) : mx R [:: N] [:: M] :=
  let H1 := H_1 l X in let H2 := H_2 l X in let s1 := s_1 l X in let s2 := s_2 l X in
  add (add X (add (add (mul (mul H1 (add (mul (mul (diag s1) X) (G_1 l)) (Beta_1 l))) (B_1 l))
                       (mul (mul H2 (add (mul (mul (diag s1) X) (G_1 l)) (Beta_1 l))) (B_2 l))) (C_att l)))
      (add (mul (ew sigma (add (mul (add (mul (mul (diag s2) X) (G_2 l)) (Beta_2 l)) (W_in l)) (C_in l))) (W_out l))
           (C_out l)).
Fixpoint xpar L := if L is L'.+1 then par_layer L' (xpar L') else X0.

(** its Eq. 20 parameters (X9's construction), at the layer's input *)
Definition par_att l : mx R [:: N; M] [:: N; M] :=
  add (kron (H_1 l (xpar l)) (tr (B_1 l))) (kron (H_2 l (xpar l)) (tr (B_2 l))).
Definition par_net : net_m R [:: N; M] [:: N; F] := NetM
  (fun l => add (idm [:: N; M]) (mul (par_att l) (kron (diag (s_1 l (xpar l))) (tr (G_1 l)))))
  (fun l => mul (kron (idm [:: N]) (tr (W_in l))) (kron (diag (s_2 l (xpar l))) (tr (G_2 l))))
  (fun l => add (mul (kron (idm [:: N]) (tr (W_in l))) (vec_r (Beta_2 l))) (vec_r (C_in l)))
  (fun l => kron (idm [:: N]) (tr (W_out l)))
  (fun l => add (add (mul (par_att l) (vec_r (Beta_1 l))) (vec_r (C_att l))) (vec_r (C_out l))).

Hypothesis step : x9_step.

(** X9.unrolling: every depth of a stack of parallel layers is
    [A_L x'_0 + c_L + Σ_j U_{L,j} σ(V_j x'_0 + e_j)] with these parameters *)
Theorem parallel_unrolling L :
  vec_r (xpar L) =m add (add (mul (cW1_m par_net L) (vec_r X0)) (cb1_m par_net L))
    (headsum (fun j : 'I_L => mul (cW3_m par_net L j)
                                 (ew sigma (add (mul (cW2_m par_net j) (vec_r X0)) (cb2_m sigma par_net (vec_r X0) j))))).
Proof.
apply: meq_trans _ (residual_unrolling_m sigma par_net (vec_r X0) L).
apply: (follows_forward_m (y := fun l => vec_r (xpar l))) => // l /=.
apply: meq_trans (step sigma (xpar l) (H_1 l (xpar l)) (s_1 l (xpar l)) (G_1 l) (Beta_1 l) (B_1 l) (H_2 l (xpar l))
                       (B_2 l) (C_att l) (s_2 l (xpar l)) (G_2 l) (Beta_2 l) (W_in l) (C_in l) (W_out l) (C_out l)) _.
rewrite /layer_app_m /=; apply: add_meq => //; apply: add_meq => //; apply: meq_sym; exact: mul_idm_add_m.
Qed.
End Parallel.

(** *** X4: gated pre-norm (Llama) layers, silu gating, the dynamic [W3] *)
(** X4's one-layer identity ([decoder.gated_layer_statement]) *)
Definition x4_step := forall (sigma : R -> R) (X : mx R [:: N] [:: M]) (H_1 : mx R [:: N] [:: N]) (s_1 : mx R [:: N] [::]) (gamma_1 : mx R [:: M] [::]) (B_1 : mx R [:: M] [:: M]) (H_2 : mx R [:: N] [:: N]) (B_2 : mx R [:: M] [:: M]) (s_2 : mx R [:: N] [::]) (gamma_2 : mx R [:: M] [::]) (W_g : mx R [:: M] [:: F]) (W_u : mx R [:: M] [:: F]) (W_down : mx R [:: F] [:: M]),
  vec_r (add (add X (add (mul (mul H_1 (mul (mul (diag s_1) X) (diag gamma_1))) B_1) (mul (mul H_2 (mul (mul (diag s_1) X) (diag gamma_1))) B_2))) (mul (hadamard (hadamard (mul (mul (mul (diag s_2) (add X (add (mul (mul H_1 (mul (mul (diag s_1) X) (diag gamma_1))) B_1) (mul (mul H_2 (mul (mul (diag s_1) X) (diag gamma_1))) B_2)))) (diag gamma_2)) W_g) (ew sigma (mul (mul (mul (diag s_2) (add X (add (mul (mul H_1 (mul (mul (diag s_1) X) (diag gamma_1))) B_1) (mul (mul H_2 (mul (mul (diag s_1) X) (diag gamma_1))) B_2)))) (diag gamma_2)) W_g))) (mul (mul (mul (diag s_2) (add X (add (mul (mul H_1 (mul (mul (diag s_1) X) (diag gamma_1))) B_1) (mul (mul H_2 (mul (mul (diag s_1) X) (diag gamma_1))) B_2)))) (diag gamma_2)) W_u)) W_down)) =m add (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (kron (diag s_1) (diag gamma_1))) (vec_r X))) (mul (mul (kron (idm [:: N]) (tr W_down)) (diag (mul (mul (kron (idm [:: N]) (tr W_u)) (kron (diag s_2) (diag gamma_2))) (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (kron (diag s_1) (diag gamma_1))) (vec_r X)))))) (hadamard (mul (mul (kron (idm [:: N]) (tr W_g)) (kron (diag s_2) (diag gamma_2))) (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (kron (diag s_1) (diag gamma_1))) (vec_r X)))) (ew sigma (mul (mul (kron (idm [:: N]) (tr W_g)) (kron (diag s_2) (diag gamma_2))) (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) (kron (diag s_1) (diag gamma_1))) (vec_r X))))))).

(** The two identities proved here as well (the certify tier uses these proofs: the exported identities'
    normal-form replay does not close in minutes, [symuat_entry] gives up on X9's): vec of a sum, of σ, of a
    Hadamard product entrywise; [vec_r(A Y B) = (A ⊗ Bᵀ) vec_r Y] ([SymuatLemmas.vec_r_mul]); [diag]
    symmetric; then the sums rearranged. *)
Lemma vec_r_add2 n m (A B : mx R [:: n] [:: m]) : vec_r (add A B) =m add (vec_r A) (vec_r B).
Proof. by move=> [a [b []]] []. Qed.
Lemma vec_r_ew2 n m f (A : mx R [:: n] [:: m]) : vec_r (ew f A) =m ew f (vec_r A).
Proof. by move=> [a [b []]] []. Qed.
Lemma vec_r_meq n m (A B : mx R [:: n] [:: m]) : A =m B -> vec_r A =m vec_r B.
Proof. by move=> E [a [b []]] []; exact: E. Qed.
Lemma vec_r_right n m k (Y : mx R [:: n] [:: m]) (W : mx R [:: m] [:: k]) :
  vec_r (mul Y W) =m mul (kron (idm [:: n]) (tr W)) (vec_r Y).
Proof.
apply: meq_trans (vec_r_meq (mul_meq (meq_sym (mul_idm_m Y)) (meq_refl W))) _; exact: vec_r_mul.
Qed.

Lemma x9_perm (a b1 c1 b2 c2 d e w : R) :
  a + (b1 + c1 + (b2 + c2) + d) + (w + e) = a + (b1 + b2) + (c1 + c2 + d + e) + w.
Proof.
rewrite -!addrA; congr (_ + _); rewrite [w + e]addrC !addrA; congr (_ + _); rewrite -!addrA; congr (_ + _).
by rewrite addrCA !addrA.
Qed.
(** the additive rearrangement, abstract *)
Lemma x9_rearr (x vb1 vcatt vcout : mx R [:: N; M] [::]) (K1 K2 S1 S2 : mx R [:: N; M] [:: N; M])
  (W3 : mx R [:: N; M] [:: N; F]) (Lin : mx R [:: N; F] [:: N; M]) (vb2 : mx R [:: N; M] [::]) (vcin : mx R [:: N; F] [::]) sigma :
  add (add x (add (add (mul K1 (add (mul S1 x) vb1)) (mul K2 (add (mul S1 x) vb1))) vcatt))
      (add (mul W3 (ew sigma (add (mul Lin (add (mul S2 x) vb2)) vcin))) vcout) =m
  add (add (add x (mul (mul (add K1 K2) S1) x)) (add (add (mul (add K1 K2) vb1) vcatt) vcout))
      (mul W3 (ew sigma (add (mul (mul Lin S2) x) (add (mul Lin vb2) vcin)))).
Proof.
have e1 : mul (mul (add K1 K2) S1) x =m add (mul K1 (mul S1 x)) (mul K2 (mul S1 x)).
  apply: meq_trans (mul_assoc_m _ _ _) _; exact: mul_addl_m.
have e2 : mul (add K1 K2) vb1 =m add (mul K1 vb1) (mul K2 vb1) by exact: mul_addl_m.
have e3 : add (mul Lin (add (mul S2 x) vb2)) vcin =m add (mul (mul Lin S2) x) (add (mul Lin vb2) vcin).
  move=> i j; rewrite /add (mul_addr_m Lin (mul S2 x) vb2 i j) (mul_assoc_m Lin S2 x i j) /add; by rewrite addrA.
move=> i j; rewrite [in RHS]/add (e1 i j) (e2 i j) (mul_meq (meq_refl W3) (ew_meq sigma (meq_sym e3)) i j).
rewrite /add (mul_addr_m K1 (mul S1 x) vb1 i j) (mul_addr_m K2 (mul S1 x) vb1 i j) /add.
set a := x i j; set b1 := mul K1 (mul S1 x) i j; set b2 := mul K2 (mul S1 x) i j; set c1 := mul K1 vb1 i j.
set c2 := mul K2 vb1 i j; set d := vcatt i j; set e := vcout i j.
set w := mul W3 _ i j; exact: x9_perm.
Qed.

Lemma x9_step_holds : x9_step.
Proof.
move=> sigma X H_1 s_1 G_1 Beta_1 B_1 H_2 B_2 C_att s_2 G_2 Beta_2 W_in C_in W_out C_out.
have v1 : vec_r (add (mul (mul (diag s_1) X) G_1) Beta_1) =m add (mul (kron (diag s_1) (tr G_1)) (vec_r X)) (vec_r Beta_1).
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //; exact: vec_r_mul.
have v2 : vec_r (add (mul (mul (diag s_2) X) G_2) Beta_2) =m add (mul (kron (diag s_2) (tr G_2)) (vec_r X)) (vec_r Beta_2).
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //; exact: vec_r_mul.
have z : vec_r (add (mul (add (mul (mul (diag s_2) X) G_2) Beta_2) W_in) C_in) =m
         add (mul (kron (idm [:: N]) (tr W_in)) (add (mul (kron (diag s_2) (tr G_2)) (vec_r X)) (vec_r Beta_2))) (vec_r C_in).
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //; apply: meq_trans (vec_r_right _ _) _; exact: mul_meq.
have := x9_rearr (vec_r X) (vec_r Beta_1) (vec_r C_att) (vec_r C_out) (kron H_1 (tr B_1)) (kron H_2 (tr B_2))
  (kron (diag s_1) (tr G_1)) (kron (diag s_2) (tr G_2)) (kron (idm [:: N]) (tr W_out)) (kron (idm [:: N]) (tr W_in))
  (vec_r Beta_2) (vec_r C_in) sigma.
move=> E; apply: meq_trans _ E.
apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq.
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //.
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //.
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq; apply: meq_trans (vec_r_mul _ _ _ _ _ _ _ _) _; exact: mul_meq.
apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //.
apply: meq_trans (vec_r_right _ _) _; apply: mul_meq => //.
apply: meq_trans (vec_r_ew2 _ _) _; move=> i j; rewrite /ew; congr sigma; exact: z.
Qed.

Lemma vec_r_hadamard n m (A B : mx R [:: n] [:: m]) : vec_r (hadamard A B) =m hadamard (vec_r A) (vec_r B).
Proof. by move=> [a [b []]] []. Qed.
Lemma tr_diag_1 n (g : mx R [:: n] [::]) : tr (diag g) =m diag g.
Proof.
move=> [a []] [b []]; rewrite /tr /diag /= /delta !mulr1.
by case: (eqVneq a b) => [->//|ne]; rewrite !mulr0.
Qed.
Lemma vec_r_rms n m (s : mx R [:: n] [::]) (X : mx R [:: n] [:: m]) (g : mx R [:: m] [::]) :
  vec_r (mul (mul (diag s) X) (diag g)) =m mul (kron (diag s) (diag g)) (vec_r X).
Proof.
apply: meq_trans (vec_r_mul _ _ _ _ _ _ _ _) _; apply: mul_meq => //.
move=> [a [b []]] [c [d []]]; rewrite /kron /=; congr (_ * _); exact: tr_diag_1.
Qed.
Lemma mul_diag_vec s (u v : mx R s [::]) : mul (diag u) v =m hadamard v u.
Proof.
move=> i []; rewrite /mul /diag /hadamard.
rewrite (sumI_ext (G := fun k => deltaI i k * (u i tt * v k tt))) => [|k]; last by rewrite mulrCA mulrA [u i tt * _]mulrC -mulrA mulrCA.
by rewrite sumI_deltaI mulrC.
Qed.

Lemma x4_step_holds : x4_step.
Proof.
move=> sigma X H_1 s_1 gamma_1 B_1 H_2 B_2 s_2 gamma_2 W_g W_u W_down.
set A := add (kron H_1 (tr B_1)) (kron H_2 (tr B_2)).
set W1x := add (vec_r X) (mul (mul A (kron (diag s_1) (diag gamma_1))) (vec_r X)).
set h := add X (add (mul (mul H_1 (mul (mul (diag s_1) X) (diag gamma_1))) B_1) (mul (mul H_2 (mul (mul (diag s_1) X) (diag gamma_1))) B_2)).
have vh : vec_r h =m W1x.
  apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq => //.
  apply: meq_trans (vec_r_add2 _ _) _.
  apply: meq_trans _ (meq_sym (mul_assoc_m _ _ _)); apply: meq_trans _ (meq_sym (mul_addl_m _ _ _)).
  by apply: add_meq; apply: meq_trans (vec_r_mul _ _ _ _ _ _ _ _) _; apply: mul_meq => //; exact: vec_r_rms.
set S2 := kron (diag s_2) (diag gamma_2).
have vp : forall W : mx R [:: M] [:: F], vec_r (mul (mul (mul (diag s_2) h) (diag gamma_2)) W) =m
                                      mul (mul (kron (idm [:: N]) (tr W)) S2) W1x.
  move=> W; apply: meq_trans (vec_r_right _ _) _; apply: meq_trans _ (meq_sym (mul_assoc_m _ _ _)).
  apply: mul_meq => //; apply: meq_trans (vec_r_rms _ _ _) _; exact: mul_meq.
apply: meq_trans (vec_r_add2 _ _) _; apply: add_meq; first exact: vh.
apply: meq_trans (vec_r_right _ _) _; apply: meq_trans _ (meq_sym (mul_assoc_m _ _ _)); apply: mul_meq => //.
apply: meq_trans _ (meq_sym (mul_diag_vec _ _)).
apply: meq_trans (vec_r_hadamard _ _) _; move=> i j; rewrite /hadamard.
rewrite (vp W_u i j); congr (_ * _).
have := vec_r_hadamard (mul (mul (mul (diag s_2) h) (diag gamma_2)) W_g) (ew sigma (mul (mul (mul (diag s_2) h) (diag gamma_2)) W_g)) i j.
rewrite /hadamard => ->; rewrite (vp W_g i j); congr (_ * _).
rewrite (vec_r_ew2 _ _ i j) /ew; congr sigma; exact: vp.
Qed.

(** silu through σ: [t ↦ t σ(t)] (σ the logistic: SiLU) *)
Definition silu (sigma : R -> R) (t : R) := t * sigma t.

Section Gated.
Variables (sigma : R -> R) (H_1 H_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [:: N])
  (s_1 s_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [::]) (gamma_1 gamma_2 : nat -> mx R [:: M] [::])
  (B_1 B_2 : nat -> mx R [:: M] [:: M]) (W_g W_u : nat -> mx R [:: M] [:: F]) (W_down : nat -> mx R [:: F] [:: M])
  (X0 : mx R [:: N] [:: M]).

(** layer [l]: [h = X + Σ_i H_i RMS_1(X) B_i], [h + (silu(RMS_2(h) W_g) ⊙ RMS_2(h) W_u) W_down] *)
Definition gated_layer l (X : mx R [:: N] [:: M]) : mx R [:: N] [:: M] :=
  let H1 := H_1 l X in let H2 := H_2 l X in let s1 := s_1 l X in let s2 := s_2 l X in
  let h := add X (add (mul (mul H1 (mul (mul (diag s1) X) (diag (gamma_1 l)))) (B_1 l))
                      (mul (mul H2 (mul (mul (diag s1) X) (diag (gamma_1 l)))) (B_2 l))) in
  add h (mul (hadamard (hadamard (mul (mul (mul (diag s2) h) (diag (gamma_2 l))) (W_g l))
                                 (ew sigma (mul (mul (mul (diag s2) h) (diag (gamma_2 l))) (W_g l))))
                       (mul (mul (mul (diag s2) h) (diag (gamma_2 l))) (W_u l))) (W_down l)).
Fixpoint xgated L := if L is L'.+1 then gated_layer L' (xgated L') else X0.

(** its Eq. 20 parameters (X4's construction), at the layer's input: [W1 = I + A S_1],
    [W2 = W_g' S_2 W1], [b2 = b3 = 0], the dynamic [W3 = W'_down diag(W_u' S_2 W1 x')] *)
Definition g_W1 l : mx R [:: N; M] [:: N; M] :=
  add (idm [:: N; M]) (mul (add (kron (H_1 l (xgated l)) (tr (B_1 l))) (kron (H_2 l (xgated l)) (tr (B_2 l))))
                           (kron (diag (s_1 l (xgated l))) (diag (gamma_1 l)))).
Definition g_S2 l : mx R [:: N; M] [:: N; M] := kron (diag (s_2 l (xgated l))) (diag (gamma_2 l)).
Definition gated_net : net_m R [:: N; M] [:: N; F] := NetM
  g_W1
  (fun l => mul (mul (kron (idm [:: N]) (tr (W_g l))) (g_S2 l)) (g_W1 l))
  (fun l => zero _ _)
  (fun l => mul (kron (idm [:: N]) (tr (W_down l)))
                (diag (mul (mul (kron (idm [:: N]) (tr (W_u l))) (g_S2 l)) (mul (g_W1 l) (vec_r (xgated l))))))
  (fun l => zero _ _).

Hypothesis step : x4_step.

Lemma add_zero_r_m rs cs (A : mx R rs cs) : add A (zero rs cs) =m A.
Proof. by move=> i j; rewrite /add /zero addr0. Qed.
Lemma diag_meq s (u v : mx R s [::]) : u =m v -> diag u =m diag v.
Proof. by move=> E i j; rewrite /diag E. Qed.
Lemma silu_meq rs cs (A V : mx R rs cs) : A =m V -> ew (silu sigma) A =m hadamard V (ew sigma V).
Proof. by move=> E i j; rewrite /ew /hadamard /silu E. Qed.

(** X4.recursion[alpha(x)]: every state of a stack of gated layers is
    [A_L x'_0 + c_L + Σ_j U_{L,j} silu(V_j x'_0 + e_j)] with these parameters ([U_{L,j}] through the
    dynamic [W3_j]) *)
Theorem gated_unrolling L :
  vec_r (xgated L) =m add (add (mul (cW1_m gated_net L) (vec_r X0)) (cb1_m gated_net L))
    (headsum (fun j : 'I_L => mul (cW3_m gated_net L j)
       (ew (silu sigma) (add (mul (cW2_m gated_net j) (vec_r X0)) (cb2_m (silu sigma) gated_net (vec_r X0) j))))).
Proof.
apply: meq_trans _ (residual_unrolling_m (silu sigma) gated_net (vec_r X0) L).
apply: (follows_forward_m (y := fun l => vec_r (xgated l))) => // l /=.
apply: meq_trans (step sigma (xgated l) (H_1 l (xgated l)) (s_1 l (xgated l)) (gamma_1 l) (B_1 l) (H_2 l (xgated l))
                       (B_2 l) (s_2 l (xgated l)) (gamma_2 l) (W_g l) (W_u l) (W_down l)) _.
have W1x : mul (g_W1 l) (vec_r (xgated l)) =m
           add (vec_r (xgated l)) (mul (mul (add (kron (H_1 l (xgated l)) (tr (B_1 l))) (kron (H_2 l (xgated l)) (tr (B_2 l))))
                                            (kron (diag (s_1 l (xgated l))) (diag (gamma_1 l)))) (vec_r (xgated l))).
  exact: mul_idm_add_m.
rewrite /layer_app_m /=; apply: meq_sym; apply: add_meq; first exact: meq_trans (add_zero_r_m _) W1x.
apply: mul_meq; first by apply: mul_meq => //; apply: diag_meq; apply: mul_meq.
apply: silu_meq; apply: meq_trans (add_zero_r_m _) _.
apply: meq_trans (mul_assoc_m _ _ _) _; exact: mul_meq.
Qed.
End Gated.
End UnrollM.

(** ** RoPE leaves made of true rotations (WP11.rope's refutation, [certify/refutation.py]).
    A [PairRotation] leaf [rho] (rows [(k, t)] of [[:: e; 2]], columns [[:: 2]]: block [k] is the
    2×2 matrix of pair [k]) is a rotation when every block is [[c s; -s c]] with [c² + s² = 1]
    ([rotations]): the premise of a statement refuted on true rotations.  At a witness it is
    proved by one boolean over the blocks ([rot_blockb] over [ordl e], the ordinals by
    constructors, [SymuatWitness]) computed once ([rotations_ordl]). *)
From Symuat Require Import SymuatWitness.
Section Rotations.
Variable R : comRingType.
Local Notation o0 := (@Ordinal 2 0 isT).
Local Notation o1 := (@Ordinal 2 1 isT).
Definition rot_block e (rho : mx R [:: e; 2%N] [:: 2%N]) (k : 'I_e) : Prop :=
  [/\ rho (k, (o0, tt)) (o0, tt) = rho (k, (o1, tt)) (o1, tt),
      rho (k, (o0, tt)) (o1, tt) = - rho (k, (o1, tt)) (o0, tt)
    & rho (k, (o0, tt)) (o0, tt) ^+ 2 + rho (k, (o0, tt)) (o1, tt) ^+ 2 = 1].
Definition rotations e (rho : mx R [:: e; 2%N] [:: 2%N]) : Prop := forall k : 'I_e, rot_block rho k.
Definition rot_blockb e (rho : mx R [:: e; 2%N] [:: 2%N]) (k : 'I_e) : bool :=
  [&& rho (k, (o0, tt)) (o0, tt) == rho (k, (o1, tt)) (o1, tt),
      rho (k, (o0, tt)) (o1, tt) == - rho (k, (o1, tt)) (o0, tt)
    & rho (k, (o0, tt)) (o0, tt) ^+ 2 + rho (k, (o0, tt)) (o1, tt) ^+ 2 == 1].
Lemma mem_ordl n (k : 'I_n) : k \in ordl n.
Proof. by rewrite -(mem_map val_inj) val_ordl mem_iota /= ltn_ord. Qed.
Lemma rotations_ordl e (rho : mx R [:: e; 2%N] [:: 2%N]) : all (rot_blockb rho) (ordl e) -> rotations rho.
Proof. by move=> /allP H k; have /and3P[/eqP a /eqP b /eqP c] := H k (mem_ordl k); split. Qed.
End Rotations.
Arguments rotations_ordl {R e rho} & _.  (* rho from the expected type, then the boolean *)
