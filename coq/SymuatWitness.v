(** * SymuatWitness: exact witnesses and printed sums with an ellipsis.

    Two kinds of [proved] that are not identities of matrices, stated exactly as symuat
    concluded them ([symuat/certify/witness.py], [symuat/certify/printed.py]):
    - an exact witness: "the identity [lhs = rhs] fails in general" is
      [~ (forall sizes matrices, lhs =m rhs)] over [int] (or [rat]), proved by instantiating
      symuat's concrete sizes and matrices ([lmx]) and computing one entry where the two sides
      differ ([symuat_witness]);
    - a printed sum: "[t_1 + t_2 + ⋯ + t_m] is entry [i] of [W ⋄ x] for every [m ≥ L]" with the
      ellipsis the general term at every position not printed ([sum_printed],
      [symuat_printed]). *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Symuat Require Import SymuatMx.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Concrete.
Variable R : comRingType.

(** the row-major position of a multi-index: [(a, (b, tt))] of [[:: N; M]] is [a M + b] *)
Fixpoint flat (s : seq nat) : idx s -> nat :=
  if s is d :: s' return idx s -> nat
  then fun i => (i.1 * foldr muln 1%N s' + flat i.2)%N
  else fun _ => 0%N.

(** a concrete matrix from its rows, listed row-major (the witness values symuat printed) *)
Definition lmx (rs cs : seq nat) (rows : seq (seq R)) : mx R rs cs :=
  fun i j => nth 0 (nth [::] rows (flat i)) (flat j).

(** the ellipsis: a full sum is the printed terms before it ([ps]), the general term at every
    position not printed, and the printed terms after it ([qs]); [ns] are their positions *)
Lemma sum_printed M (F : 'I_M -> R) (ps qs : seq 'I_M) (ns : seq nat) :
  map val (ps ++ qs) = ns -> uniq ns ->
  \sum_(k < M) F k =
    \sum_(p <- ps) F p + \sum_(k < M | (k : nat) \notin ns) F k + \sum_(p <- qs) F p.
Proof.
move=> E U; rewrite addrAC -big_cat.
rewrite [X in X = _](bigID (fun k : 'I_M => (k : nat) \in ns)) /=; congr (_ + _).
rewrite big_uniq; last by rewrite -E map_inj_uniq in U => //; exact: val_inj.
by apply: eq_bigl => k; rewrite -E mem_map //; exact: val_inj.
Qed.
End Concrete.
Arguments lmx {R} rs cs rows.

(** [symuat_witness]: the hypothesis [lhs = rhs] at one entry of the concrete witness is
    evaluated — the definitions unfolded, the big sums over concrete ordinals expanded
    ([big_ord_recr]), the integers/rationals computed ([vm_compute]) — and must be [false] *)
Ltac symuat_witness :=
  move=> /eqP;
  repeat progress symuat_unfold_nodes;
  simpl; rewrite ?big_ord_recr ?big_ord0; idtac "symuat-lemma big_ord_recr";
  vm_compute; idtac "symuat-lemma vm_compute"; done.

(** ** Computing a sum over a concrete ordinal range

    MathComp enumerates ['I_n] through [insub] (an opaque [idP] blocks [vm_compute]); [ordl n]
    lists the same ordinals by constructors, so that a big sum over ['I_n] for a numeral [n]
    computes once its [index_enum] is rewritten ([index_enum_ordl]) and [bigop] unlocked. *)
Fixpoint ordl (n : nat) : seq 'I_n :=
  match n return seq 'I_n with
  | 0 => [::]
  | n'.+1 => ord0 :: map (lift ord0) (ordl n')
  end.

Lemma val_ordl n : map val (ordl n) = iota 0 n.
Proof.
elim: n => //= n IH; congr (_ :: _).
rewrite -map_comp -[1%N]/(1 + 0)%N iotaDl -IH -map_comp.
by apply: eq_map => i /=; rewrite /bump leq0n.
Qed.

Lemma index_enum_ordl n : index_enum (ordinal_finType n) = ordl n.
Proof.
apply: (inj_map val_inj); rewrite val_ordl -(@val_enum_ord n) enumT.
by rewrite [index_enum _]unlock.
Qed.

(** [symuat_refute]: as [symuat_witness] (the hypothesis [lhs = rhs] at one entry of a concrete
    counterexample must evaluate to [false]), by computation only: the definitions unfolded, every
    ordinal range listed ([index_enum_ordl]), [bigop] unlocked, then [vm_compute] — no rewriting of
    each summand (the [big_ord_recr] expansion took 50 s on H4's counterexample, this 1 s).
    The sums are first brought out by reducing only the multi-index sums and splits ([cbn]; the
    other definitions are left to [vm_compute]): the rewrites then walk a smaller term, and the
    kernel re-checks a smaller proof (a T8 counterexample of depth 3: 5.9 s → 3.4 s of coqc CPU);
    [simpl] as before where that does not close (a sum behind another definition). *)
Ltac symuat_refute_with sums :=
  move=> /eqP;
  repeat progress symuat_unfold_nodes;
  sums; rewrite ?index_enum_ordl ?unlock; idtac "symuat-lemma index_enum_ordl";
  vm_compute; idtac "symuat-lemma vm_compute"; done.
Ltac symuat_refute :=
  first [ symuat_refute_with ltac:(cbn [sumI splitI deltaI cat fst snd])
        | symuat_refute_with ltac:(simpl) ].

(** entry [i] of [W ⋄ x] for a vector [x] of one axis: D4's rule [Σ_k w_{k,i} x_k] *)
Lemma diamond_vec_entry (R : comRingType) m cs (W : mx R [:: m] cs) (x : mx R [:: m] [::]) i :
  diamond W x i tt = \sum_(k < m) W (k, tt) i * x (k, tt) tt.
Proof. by []. Qed.

(** [symuat_printed ps qs ns]: entry [i] of [W ⋄ x] against its printed row — the printed terms
    before the ellipsis ([ps]), the ellipsis, those after it ([qs]) at the positions [ns] *)
Ltac symuat_printed ps qs ns :=
  rewrite diamond_vec_entry (@sum_printed _ _ _ ps qs ns) //;
  idtac "symuat-lemma diamond_vec_entry"; idtac "symuat-lemma sum_printed";
  rewrite ?big_cons ?big_nil ?addr0 ?add0r ?addrA; idtac "symuat-lemma big_cons"; reflexivity.
