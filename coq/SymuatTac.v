(** * SymuatTac: the normal form of an entry, as rewrites by named lemmas.

    The lemmas of symuat's index calculus (symuat.kernel.index_calculus), each an identity of
    finite sums proved once:
    - [sum_distrl]/[sum_distrr], [mulr_addl]/[mulr_addr], [sum_split]: an entry is a sum of
      terms [c · Σ_bound Π factors] (prenex form);
    - [sum_delta_l]/[sum_delta_r]: [Σ_b δ_{ab} f(b) = f(a)] (a Kronecker delta with a summed
      index of the same range is eliminated); [delta_refl]: [δ_{aa} = 1];
    - [sum_const_ord]: a sum over an index that occurs nowhere is a factor of its range;
    - [exchange_big] and [eq_bigr]: summed indices are renamed (matched) up to order;
    and a closing step by [ring] on the summands. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatReflect SymuatBlocks.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Lemmas.
Variable R : comRingType.
Implicit Types (x y z : R).

(* a delta guarding the rest of a product, [dl a b y = δ_{ab} · y], is defined in [SymuatReflect]
   (its prenex form writes the deltas of a product as guards) *)

Lemma sum_distrl I (r : seq I) (P : pred I) (F : I -> R) x :
  (\sum_(i <- r | P i) F i) * x = \sum_(i <- r | P i) F i * x.
Proof. exact: big_distrl. Qed.
Lemma sum_distrr I (r : seq I) (P : pred I) (F : I -> R) x :
  x * (\sum_(i <- r | P i) F i) = \sum_(i <- r | P i) x * F i.
Proof. exact: big_distrr. Qed.
Lemma mulr_addl x y z : (x + y) * z = x * z + y * z. Proof. exact: mulrDl. Qed.
Lemma mulr_addr x y z : x * (y + z) = x * y + x * z. Proof. exact: mulrDr. Qed.
Lemma sum_split I (r : seq I) (P : pred I) (F G : I -> R) :
  \sum_(i <- r | P i) (F i + G i) = \sum_(i <- r | P i) F i + \sum_(i <- r | P i) G i.
Proof. exact: big_split. Qed.
Lemma mulr_assoc_r x y z : (x * y) * z = x * (y * z). Proof. by rewrite mulrA. Qed.
Lemma mulr_one_l x : 1 * x = x. Proof. exact: mul1r. Qed.
Lemma mulr_one_r x : x * 1 = x. Proof. exact: mulr1. Qed.

Lemma delta_guard n (a b : 'I_n) y : delta a b * y = dl a b y. Proof. by []. Qed.
Lemma delta_last n (a b : 'I_n) x : x * delta a b = dl a b x.
Proof. by rewrite /dl mulrC. Qed.
Lemma delta_alone n (a b : 'I_n) : delta a b = dl a b (1 : R).
Proof. by rewrite /dl mulr1. Qed.
Lemma dl_bubble n (a b : 'I_n) x y : x * dl a b y = dl a b (x * y).
Proof. by rewrite /dl mulrCA. Qed.
Lemma dl_bubble_l n (a b : 'I_n) x y : dl a b y * x = dl a b (y * x).
Proof. by rewrite /dl mulrA. Qed.
Lemma dl_sum_out n (a b : 'I_n) I (r : seq I) (P : pred I) (F : I -> R) :
  \sum_(i <- r | P i) dl a b (F i) = dl a b (\sum_(i <- r | P i) F i).
Proof. by rewrite /dl big_distrr. Qed.
Lemma dl_add n (a b : 'I_n) y z : dl a b y + dl a b z = dl a b (y + z).
Proof. by rewrite /dl mulrDr. Qed.
(** a guard is symmetric: [δ_{ab} = δ_{ba}] *)
Lemma dl_sym n (a b : 'I_n) y : dl a b y = dl b a y.
Proof. by rewrite /dl /delta eq_sym. Qed.
Lemma delta_refl n (a : 'I_n) y : dl a a y = y.
Proof. by rewrite /dl /delta eqxx mul1r. Qed.
(** [Σ_b δ_{ba} f(b) = f(a)] and [Σ_b δ_{ab} f(b) = f(a)] *)
Lemma sum_delta_l n (a : 'I_n) (F : 'I_n -> R) : \sum_(b < n) dl b a (F b) = F a.
Proof.
rewrite (bigD1 a) //= big1 ?addr0; first by rewrite delta_refl.
by move=> b /negbTE nb; rewrite /dl /delta nb mul0r.
Qed.
Lemma sum_delta_r n (a : 'I_n) (F : 'I_n -> R) : \sum_(b < n) dl a b (F b) = F a.
Proof.
rewrite (bigD1 a) //= big1 ?addr0; first by rewrite delta_refl.
by move=> b; rewrite eq_sym => /negbTE nb; rewrite /dl /delta nb mul0r.
Qed.
(** a sum over an index that occurs nowhere *)
Lemma sum_const_ord n x : \sum_(b < n) x = n%:R * x.
Proof. by rewrite sumr_const card_ord mulr_natl. Qed.
(** two sums over the same range, side by side, as one ([big_split] read backwards): a statement
    with a size's inverse ([symuat_units]) brings the terms that cancel by its premise under one sum *)
Lemma sum_merge n (F G : 'I_n -> R) : \sum_(i < n) F i + \sum_(i < n) G i = \sum_(i < n) (F i + G i).
Proof. by rewrite big_split. Qed.
Lemma sum_merge_r n (F G : 'I_n -> R) x :
  \sum_(i < n) F i + (\sum_(i < n) G i + x) = \sum_(i < n) (F i + G i) + x.
Proof. by rewrite addrA big_split. Qed.
Lemma dl_unfold n (a b : 'I_n) y : dl a b y = delta a b * y. Proof. by []. Qed.

(** the summed index at depth 3 (4, 5, 6) brought to the front (matching summed indices in any order) *)
Lemma sum_rot3 n m p (F : 'I_n -> 'I_m -> 'I_p -> R) :
  \sum_(a < n) \sum_(b < m) \sum_(c < p) F a b c = \sum_(c < p) \sum_(a < n) \sum_(b < m) F a b c.
Proof. rewrite [RHS]exchange_big /=; apply: eq_bigr => a _; exact: exchange_big. Qed.
Lemma sum_rot4 n m p q (F : 'I_n -> 'I_m -> 'I_p -> 'I_q -> R) :
  \sum_(a < n) \sum_(b < m) \sum_(c < p) \sum_(d < q) F a b c d
  = \sum_(d < q) \sum_(a < n) \sum_(b < m) \sum_(c < p) F a b c d.
Proof. rewrite [RHS]exchange_big /=; apply: eq_bigr => a _; exact: sum_rot3. Qed.
Lemma sum_rot5 n m p q s (F : 'I_n -> 'I_m -> 'I_p -> 'I_q -> 'I_s -> R) :
  \sum_(a < n) \sum_(b < m) \sum_(c < p) \sum_(d < q) \sum_(e < s) F a b c d e
  = \sum_(e < s) \sum_(a < n) \sum_(b < m) \sum_(c < p) \sum_(d < q) F a b c d e.
Proof. rewrite [RHS]exchange_big /=; apply: eq_bigr => a _; exact: sum_rot4. Qed.
Lemma sum_rot6 n m p q s t (F : 'I_n -> 'I_m -> 'I_p -> 'I_q -> 'I_s -> 'I_t -> R) :
  \sum_(a < n) \sum_(b < m) \sum_(c < p) \sum_(d < q) \sum_(e < s) \sum_(f < t) F a b c d e f
  = \sum_(f < t) \sum_(a < n) \sum_(b < m) \sum_(c < p) \sum_(d < q) \sum_(e < s) F a b c d e f.
Proof. rewrite [RHS]exchange_big /=; apply: eq_bigr => a _; exact: sum_rot5. Qed.
(** A hypothesis on a leaf's lines ([Σ_b F(b) = v], symuat's [LineSums]) is used where a summed
    line occurs: [line_fold2]/[line_fold1] fold a sum whose body is the line's factor(s) times
    a part free of the summed index back into (the line's sum) × (that part), so the premise
    rewrites the line to its value; [symuat_prenex] then restores the prenex form of the rest. *)
Lemma line_fold2 n (F G : 'I_n -> R) x :
  \sum_(b < n) F b * (G b * x) = (\sum_(b < n) F b * G b) * x.
Proof. by rewrite big_distrl; apply: eq_bigr => b _; rewrite mulrA. Qed.
Lemma line_fold1 n (F : 'I_n -> R) x : \sum_(b < n) F b * x = (\sum_(b < n) F b) * x.
Proof. by rewrite big_distrl. Qed.

(** the normal-form step: [A =m B] because both are entrywise equal to [N], the normal form symuat
    computed (its certificate, printed by symuat.certify.normal_form) *)
Lemma meq_via_nf rs cs (N A B : mx R rs cs) : A =m N -> B =m N -> A =m B.
Proof. by move=> hA hB i j; rewrite hA hB. Qed.
(** a summand matched ([summand_match]): the left term replaced by its match on the right *)
Lemma summand_match x y : x = y -> x = y. Proof. by []. Qed.

Lemma R_ring_theory : @ring_theory R 0 1 +%R *%R (fun x y => x - y) -%R eq.
Proof.
split. exact: add0r. exact: addrC. exact: addrA. exact: mul1r. exact: mulrC. exact: mulrA.
exact: mulrDl. by []. exact: subrr.
Qed.
(** the same theory stated over the carrier as a ring (the form rewriting leaves in goals) *)
Lemma R_ring_theory_ring :
  @ring_theory (GRing.Ring.sort (GRing.ComRing.ringType R)) 0 1 +%R *%R (fun x y => x - y) -%R eq.
Proof. exact: R_ring_theory. Qed.
(** and over the carrier as a Z-module (the type of a sum at the top of a goal) *)
Lemma R_ring_theory_zmod :
  @ring_theory (GRing.Zmodule.sort (GRing.Ring.zmodType (GRing.ComRing.ringType R))) 0 1 +%R *%R
    (fun x y => x - y) -%R eq.
Proof. exact: R_ring_theory. Qed.
End Lemmas.

(** The tactics.  [symuat_intro] opens the entry; [symuat_prenex] puts it in prenex form;
    [symuat_deltas] eliminates deltas; [symuat_close] matches the summed indices and closes by
    [ring]. *)
Ltac symuat_destruct :=
  repeat match goal with
  | x : prod _ _ |- _ => destruct x
  | x : unit |- _ => destruct x
  | x : idx _ |- _ => progress simpl in x
  end.

(** one lemma, rewritten (under binders) until it no longer applies, each use logged *)
Ltac symuat_rw l := repeat (setoid_rewrite l; idtac "symuat-lemma" l).

(** Each lemma is exhausted in turn and the round repeated until nothing changes (a failed
    [setoid_rewrite] costs a whole traversal: one per lemma per round, not one per lemma per
    rewrite). *)
Ltac symuat_prenex_rw :=
  repeat progress (symuat_rw sum_distrl; symuat_rw sum_distrr; symuat_rw mulr_addl;
                   symuat_rw mulr_addr; symuat_rw sum_split; symuat_rw mulr_assoc_r;
                   symuat_rw mulr_one_l; symuat_rw mulr_one_r).

(** The prenex form by computation ([SymuatReflect]: [prenex_sound], proved once), the same form
    as the rewrites above reach; they remain the fallback for an entry the reifier cannot read
    (a sum whose body's count depends on its index). *)
Ltac symuat_prenex := first [ symuat_prenex_refl; idtac "symuat-lemma prenex_sound" | symuat_prenex_rw ].

(** The deltas, only when the goal has one (each rewrite that finds nothing costs a traversal):
    a raw delta is first made a guard ([delta_guard], [delta_last], [delta_alone]); the prenex
    form by computation already writes every delta of a product as a guard around the rest. *)
Ltac symuat_dl_steps :=
  repeat progress (symuat_rw delta_refl; symuat_rw sum_delta_l; symuat_rw sum_delta_r;
                   symuat_rw dl_bubble; symuat_rw dl_bubble_l; symuat_rw dl_sum_out).
Ltac symuat_deltas :=
  lazymatch goal with
  | |- context [delta _ _] =>
      repeat progress (symuat_rw delta_guard; symuat_rw delta_last);
      symuat_rw delta_alone;
      symuat_dl_steps
  | |- context [dl _ _ _] => symuat_dl_steps
  | |- _ => idtac
  end.

(** The same, the sums a guard fixes first eliminated by computation ([SymuatReflect]'s
    [symuat_elim], [prenex_sound]: most of [symuat_deltas]' rewrites were that, 85 % of H7's
    proof); the rewrites above for what is left (guards of free indices, bubbled out). The
    procedures below try it first and fall back on [symuat_deltas] where the goal it leaves
    does not close. *)
Ltac symuat_deltas_el :=
  lazymatch goal with
  | |- context [delta _ _] =>
      repeat progress (symuat_rw delta_guard; symuat_rw delta_last);
      symuat_rw delta_alone;
      symuat_elim;
      lazymatch goal with |- context [dl _ _ _] => symuat_dl_steps | |- _ => idtac end
  | |- context [dl _ _ _] =>
      symuat_elim;
      lazymatch goal with |- context [dl _ _ _] => symuat_dl_steps | |- _ => idtac end
  | |- _ => idtac
  end.

(** [ring] over the carrier as MathComp's rewriting leaves it; a literal coefficient [k%:R] (a
    statement's scale, a certificate's merged like terms) is first unfolded into ones *)
(** a negative integer literal [(-k)%:~R] (a scale by [-k]) as [- k%:R], which [ring] reads *)
Lemma intr_Negz (T : ringType) (n : nat) : ((Negz n)%:~R : T) = - (n.+1)%:R.
Proof. by rewrite NegzE mulrNz. Qed.

(** [ring], modulo the premises [Hinv : D%:R * inv = 1] that a statement with a size's inverse
    ([1/D], written [inv]) binds: [ring [Hinv]] rewrites each monomial [D%:R * inv] to [1] (Coq's
    [ring] with equations); with no such premise in the context it is [ring] *)
Ltac symuat_unit_as T Hu k :=
  (* the premise stated over the goal's carrier [T] (convertible), which [ring [_]] requires *)
  lazymatch type of Hu with @eq _ ?l ?r =>
    let Hc := fresh "Hu" in have Hc : @eq T l r := Hu; k Hc end.
Ltac symuat_ring_units :=
  lazymatch goal with |- @eq ?T _ _ =>
  (* one [ring] call whatever the premises (a failed call is the common case of the summand
     search): with the premises when there are any *)
  lazymatch goal with
  | Hu : GRing.mul (GRing.natmul _ _) _ = 1, Hv : GRing.mul (GRing.natmul _ _) _ = 1 |- _ =>
      symuat_unit_as T Hu ltac:(fun H => symuat_unit_as T Hv ltac:(fun H' => ring [H H']))
  | Hu : GRing.mul (GRing.natmul _ _) _ = 1 |- _ => symuat_unit_as T Hu ltac:(fun H => ring [H])
  | |- _ => ring
  end end.

Ltac symuat_ring :=
  (* an integer literal [k%:R] as [1 + … + 0], and [(-k)%:~R] as [- (1 + …)], which [ring] computes with *)
  rewrite ?intr_Negz ?mulrS ?mulr0n;
  match goal with R : GRing.ComRing.type |- @eq _ ?a ?b =>
    first [ change (@eq (GRing.Ring.sort (GRing.ComRing.ringType R)) a b); symuat_ring_units
          | (* a sum at the top: the ring over the carrier as a Z-module ([R_ring_theory_zmod]) *)
            lazymatch a with GRing.add _ _ => idtac end;
            let T := type of a in change (@eq T a b); symuat_ring_units ]
  end.

(** Closing: one term matches the summed indices of both sides (the right side's index at any
    depth brought to the front by [exchange_big]/[sum_rot3..6]) and ends by [ring] on the
    summands, after matching the arguments of elementwise functions ([f X = f Y] from [X = Y]);
    a sum of terms replaces each summand of the left side that is a sum (or a guarded delta) by
    a summand of the right side it equals, then [ring] over the summands (any order, merged
    coefficients). *)
Ltac symuat_is_summand t :=
  lazymatch t with
  | BigOp.bigop _ _ _ => idtac
  | dl _ _ _ => idtac
  end.

Ltac symuat_close :=
  (* first the comparison by computation ([SymuatReflect]'s [kclose]: both sides' products and
     summands sorted by key, then compared as terms); where it fails, the search below *)
  let rec term :=
    first [ reflexivity
          | apply: eq_bigr => ? _; term
          | rewrite [in RHS]exchange_big /=; idtac "symuat-lemma exchange_big"; apply: eq_bigr => ? _; term
          | rewrite [in RHS]sum_rot3 /=; idtac "symuat-lemma sum_rot3"; apply: eq_bigr => ? _; term
          | rewrite [in RHS]sum_rot4 /=; idtac "symuat-lemma sum_rot4"; apply: eq_bigr => ? _; term
          | rewrite [in RHS]sum_rot5 /=; idtac "symuat-lemma sum_rot5"; apply: eq_bigr => ? _; term
          | rewrite [in RHS]sum_rot6 /=; idtac "symuat-lemma sum_rot6"; apply: eq_bigr => ? _; term
          | congr (dl _ _ _); term
          | rewrite [in RHS]dl_sym; idtac "symuat-lemma dl_sym"; congr (dl _ _ _); term
          | leaf ]
  with leaf :=
    (* a sum over an index that occurs nowhere, only where the goal has a sum at all: a failed
       [setoid_rewrite] costs a traversal, and most leaves are products of atoms (34 % of
       A4.corr's side lemma was that failure) *)
    lazymatch goal with
    | |- context [@BigOp.bigop _ _ _ _ _] =>
        repeat (setoid_rewrite sum_const_ord; idtac "symuat-lemma sum_const_ord")
    | |- _ => idtac
    end; rewrite ?dl_unfold;
    cbn [idx]; ew_args; first [ reflexivity | symuat_ring ]; idtac "symuat-lemma ring"
  with ew_args :=
    repeat match goal with
    | f : ?T -> ?T |- ?L = ?R =>
        match L with context [f ?X] => match R with context [f ?Y] =>
          tryif constr_eq X Y then fail else
          (let H := fresh "Hf" in assert (H : X = Y) by close; rewrite H; clear H;
           idtac "symuat-lemma congr_ew")
        end end
    end
  with find t R :=
    lazymatch R with
    | ?a + ?b => first [ find t a | find t b ]
    | _ => symuat_is_summand R;
           let H := fresh "Hm" in assert (H : t = R) by term; first [ rewrite [in LHS]H | rewrite H ]; clear H
    end
  with walk L :=
    lazymatch L with
    | ?a + ?b => walk a; walk b
    | _ => try (symuat_is_summand L; lazymatch goal with |- _ = ?R => find L R end)
    end
  with ac :=
    lazymatch goal with |- ?L = ?R =>
      first [ lazymatch L with _ + _ => idtac end | lazymatch R with _ + _ => idtac end ];
      walk L; idtac "symuat-lemma summand_match"; leaf
    end
  with close := first [ symuat_close_refl; idtac "symuat-lemma kclose" | term | ac ]
  in close.

(** Every [+] stated as the ring's (convertible: the same operation). A certificate's sum (typed
    [: R]) and a rewritten side can carry the commutative ring's Z-module [+] and its ring's;
    [ring] reifies one, so a sum of the same summands in another order (L2.6.1) did not close. *)
Ltac symuat_one_add :=
  lazymatch goal with R : GRing.ComRing.type |- _ =>
    try change (@GRing.add (GRing.ComRing.zmodType R))
           with (@GRing.add (GRing.Ring.zmodType (GRing.ComRing.ringType R)))
  end.

(** A block of an axis ([axis_block], [SymuatBlocks]): its indicators are deltas with the
    embedded position before the prenex form ([symuat_blocks]); after the deltas, what is left
    between two embedded positions (a summed block index eliminated) is the same block's
    component deltas or zero ([symuat_blocks_after]), and those deltas are eliminated in turn. *)
Ltac symuat_block_deltas :=
  lazymatch goal with
  | |- context [embed _ _] => symuat_blocks_after; symuat_prenex; symuat_deltas; cbn [fst snd]
  | |- _ => idtac
  end.

(** The whole procedure for [lhs =m rhs]: the node definitions unfolded ([symuat_unfold_nodes]),
    the prenex form, the deltas, the closing. *)
Ltac symuat_entry_with dls :=
  let I := fresh "I" in let J := fresh "J" in
  move=> I J; symuat_destruct;
  symuat_blocks; symuat_unfold_nodes;
  cbn [sumI splitI deltaI cat fst snd];
  symuat_prenex; dls; cbn [fst snd]; symuat_block_deltas; symuat_prenex; symuat_one_add; symuat_close.
Tactic Notation "symuat_entry" :=
  first [ symuat_entry_with ltac:(idtac; symuat_deltas_el) | symuat_entry_with ltac:(idtac; symuat_deltas) ].

(** The same procedure for a statement proved under hypotheses on lines of its leaves (premises
    [Hl : forall …, Σ_b F(b) = v], in the theorem's statement): after the prenex form and the
    deltas, [symuat_lines] rewrites every summed line a premise states to its value
    ([symuat_line] per premise, given by the caller as a tactic), then the normal form is
    resumed.  A premise that states another line (columns for rows, an unmasked sum for a
    masked one) matches nothing, and the goal stays unproved. *)
Ltac symuat_line Hl :=
  symuat_rw line_fold2; symuat_rw line_fold1;
  repeat (setoid_rewrite Hl; idtac "symuat-lemma line_sum_premise");
  symuat_prenex;
  (* rewriting under [+] can leave two instances of the one sum (the commutative ring's own
     Z-module and its ring's); [ring] reifies one, so every [+] is stated as the ring's
     (convertible: the same operation) *)
  lazymatch goal with R : GRing.ComRing.type |- _ =>
    try change (@GRing.add (GRing.ComRing.zmodType R))
           with (@GRing.add (GRing.Ring.zmodType (GRing.ComRing.ringType R)))
  end.

(** every [+] and [-] stated as the ring's (convertible: the same operations), so that [ring]
    reads [- inv_M] as the negation of the atom [inv_M] a premise names *)
Ltac symuat_ring_ops :=
  lazymatch goal with R : GRing.ComRing.type |- _ =>
    try change (@GRing.add (GRing.ComRing.zmodType R))
           with (@GRing.add (GRing.Ring.zmodType (GRing.ComRing.ringType R)));
    try change (@GRing.opp (GRing.ComRing.zmodType R))
           with (@GRing.opp (GRing.Ring.zmodType (GRing.ComRing.ringType R)))
  end.

(** A statement with a size's inverse ([1/M] as [inv_M], under the premise [M%:R * inv_M = 1]):
    a sum over an index its body does not contain ([Σ_{k<M} c]: a product of two centring
    matrices [C_M C_M]) becomes [M%:R * c] ([sum_const_ord]) and the prenex form brings the
    factor [M%:R] back inside the remaining sums, next to [inv_M]; the closing [ring] then
    reduces [M%:R * inv_M] by the premise ([symuat_ring_units]). Where the identity is linear in
    [inv_M] nothing is reduced: the premise is not used. *)
Ltac symuat_units :=
  repeat (setoid_rewrite sum_const_ord; idtac "symuat-lemma sum_const_ord");
  symuat_prenex; symuat_ring_ops.

(** The same, then the sums over one range side by side merged into one ([sum_merge]): where the
    terms that cancel by the premise are in different sums of one side ([C_M C_M = C_M]: the
    sums of [-inv_M] and of [M * inv_M * inv_M]), so that [ring] meets them in one summand. The
    exporter chooses it for a statement that is not linear in the inverses (symuat's normal form
    decides, [symuat.certify.export.uses_inverse]): merging the sums of a linear one can pair
    them differently on the two sides. *)
Ltac symuat_units_merged :=
  symuat_units;
  repeat (setoid_rewrite sum_merge_r || setoid_rewrite sum_merge); symuat_ring_ops.

(* the steps of [symuat_entry] above, with [lines] between the normal form and the closing *)
Ltac symuat_entry_using_with dls lines :=
  let I := fresh "I" in let J := fresh "J" in
  move=> I J; symuat_destruct;
  symuat_blocks; symuat_unfold_nodes;
  cbn [sumI splitI deltaI cat fst snd];
  symuat_prenex; dls; cbn [fst snd]; symuat_block_deltas; symuat_prenex; lines; symuat_close.
Tactic Notation "symuat_entry" "using" tactic3(lines) :=
  first [ symuat_entry_using_with ltac:(idtac; symuat_deltas_el) lines
        | symuat_entry_using_with ltac:(idtac; symuat_deltas) lines ].
(** [lhs =m NF] for a normal form [NF] symuat computed (the certificate of a normal-form proof,
    see [meq_via_nf]): the same steps as [symuat_entry] on the left side only — the right side is
    hidden ([set]) while the left one is unfolded, put in prenex form and rid of its deltas, then
    revealed (its deltas guarded, if it has any) and the two matched by [symuat_close]. A wrong
    certificate leaves a goal [symuat_close] cannot close. *)
Ltac symuat_nf_with dls :=
  let I := fresh "I" in let J := fresh "J" in
  move=> I J; symuat_destruct;
  lazymatch goal with |- _ = ?N =>
    let nf := fresh "nf" in
    set nf := N;
    symuat_blocks; symuat_unfold_nodes;
    cbn [sumI splitI deltaI cat fst snd];
    symuat_prenex; dls; cbn [fst snd]; symuat_block_deltas; symuat_prenex;
    rewrite /nf; clear nf; cbn beta iota;
    try (lazymatch goal with |- _ = ?M => lazymatch M with context [delta _ _] =>
           symuat_prenex; dls; symuat_prenex end end);
    symuat_one_add; symuat_close
  end.
Tactic Notation "symuat_nf" :=
  first [ symuat_nf_with ltac:(idtac; symuat_deltas_el) | symuat_nf_with ltac:(idtac; symuat_deltas) ].

Global Opaque dl.
