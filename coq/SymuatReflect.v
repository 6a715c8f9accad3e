(** * SymuatReflect: the prenex form of an entry by computation, proved sound once.

    The prenex form of an entry is a sum of terms [Σ_summed Π factors]: products distributed over
    sums ([mulr_addl], [mulr_addr]), sums pulled out of products ([sum_distrl], [sum_distrr]),
    a sum of sums split ([sum_split]), products right-associated without a factor [1]. Rewriting
    those lemmas under binders one [setoid_rewrite] at a time cost most of a proof's time (89 %
    of [symuat_nf] on T7's step, 6 s). Here the same form is a function, proved once to keep the
    value ([prenex_sound]), the way [ring] works:
    - [tm] is the syntax of an entry: atoms (leaf entries, masks: any term of the ring), [0],
      [1], deltas (written as guards [dl a b] around the rest of their product), [+], [*], sums
      over an ordinal written as Coq functions of the summed index ([TSum n f k]), and functions
      of the ring applied to an entry ([TFn g a]: an elementwise [σ], [-x]);
    - [nf : tm -> seq mono] is the prenex form; [ev] and [ev_list] read both back as ring terms;
    - a sum is split over its body's terms by position: [TSum n f k] says its body has [k]
      terms, and [prenex_sound] assumes it ([wf]: for every index; a reified entry proves it by
      computation, since the count of a body does not look into its atoms);
    - [symuat_prenex_refl] reads the entry on each side of a goal [L = R] as a [tm]
      ([reify_tm]), replaces it by [ev_list (nf t)] computed by [cbv] on [nf]'s own definitions
      (the atoms are not unfolded), and leaves the goal shape [SymuatTac]'s later steps read.
    Only [prenex_sound] is trusted here, and it is a theorem: a wrong reification is caught by
    Coq's conversion check ([refine]/[change]), not by this file. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Symuat Require Import SymuatMx.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Reflect.
Variable R : comRingType.

(** a delta guarding the rest of a product: [dl a b y = δ_{ab} · y] (the form [SymuatTac]'s
    delta steps read) *)
Definition dl n (a b : 'I_n) y : R := delta a b * y.

(** the syntax of an entry *)
Inductive tm : Type :=
| TAt (r : R)
| TZero
| TOne
| TDel (n : nat) (a b : 'I_n)
| TAdd (a b : tm)
| TMul (a b : tm)
| TSum (n : nat) (f : 'I_n -> tm) (k : nat)
| TFn (g : R -> R) (a : tm)
(** a guard [dl a b y] ([TGd]), one whose two indices are the same term ([TGdR]: [δ_{aa} = 1]),
    the place of a guard removed for an elimination ([TMk]), and a sum over an index that a
    guard of its body fixes ([TElim n a s g]: [Σ_i δ_{ia} g(i)] with the guard's place in [g]
    marked, [s]: the summed index is the guard's left one; it is [g a]) *)
| TGd (n : nat) (a b : 'I_n) (y : tm)
| TGdR (n : nat) (a : 'I_n) (y : tm)
| TMk (y : tm)
| TElim (n : nat) (a : 'I_n) (s : bool) (g : 'I_n -> tm).

(** the value of an entry; [k] is what a marked place ([TMk]) applies to the rest of its
    product: an elimination's guard of its summed index (the identity outside any) *)
Fixpoint evk (k : R -> R) (t : tm) : R :=
  match t with
  | TAt r => r
  | TZero => 0
  | TOne => 1
  | TDel _ a b => delta a b
  | TAdd a b => evk k a + evk k b
  | TMul a b => evk k a * evk k b
  | TSum n f _ => \sum_(i < n) evk k (f i)
  | TFn g a => g (evk k a)
  | TGd _ a b y => dl a b (evk k y)
  | TGdR _ a y => dl a a (evk k y)
  | TMk y => k (evk k y)
  | TElim n a s g => \sum_(i < n) evk (fun y => if s then dl i a y else dl a i y) (g i)
  end.
Definition ev (t : tm) : R := evk (fun y => y) t.

(** a delta of a product, kept apart: it is written as a guard [dl a b] around the rest *)
Inductive guard : Type := G (n : nat) (a b : 'I_n).

(** the prenex form: a list of terms, each sums over a product of guards and atoms *)
Inductive mono : Type :=
| MProd (gs : seq guard) (l : seq R)
| MSum (n : nat) (f : 'I_n -> mono).

Fixpoint gprod (gs : seq guard) (y : R) : R :=
  if gs is G _ a b :: gs' then dl a b (gprod gs' y) else y.
Fixpoint gval (gs : seq guard) : R :=
  if gs is G _ a b :: gs' then delta a b * gval gs' else 1.

(** a product of atoms, right-associated, with no [1] factor: [x1 * (x2 * …)] *)
Fixpoint prodl (l : seq R) : R :=
  match l with
  | [::] => 1
  | [:: x] => x
  | x :: l' => x * prodl l'
  end.

Fixpoint ev_mono (m : mono) : R :=
  match m with
  | MProd gs l => gprod gs (prodl l)
  | MSum n f => \sum_(i < n) ev_mono (f i)
  end.

Fixpoint ev_list (l : seq mono) : R :=
  match l with
  | [::] => 0
  | [:: m] => ev_mono m
  | m :: l' => ev_mono m + ev_list l'
  end.

(** list functions of its own, so that [cbv] on them touches no list function of an atom *)
Fixpoint rcat T (a b : seq T) : seq T := if a is x :: a' then x :: rcat a' b else b.
Fixpoint rmap (g : mono -> mono) (a : seq mono) : seq mono :=
  if a is x :: a' then g x :: rmap g a' else [::].
Fixpoint rpairs (a b : seq mono) (g : mono -> mono -> mono) : seq mono :=
  if a is x :: a' then rcat (rmap (g x) b) (rpairs a' b g) else [::].
Fixpoint rnth (a : seq mono) (p : nat) : mono :=
  match a, p with
  | [::], _ => MProd [::] [:: 0]
  | x :: _, 0 => x
  | _ :: a', p'.+1 => rnth a' p'
  end.
Fixpoint rdrop (a : seq mono) (p : nat) : seq mono :=
  match a, p with
  | _, 0 => a
  | [::], _ => [::]
  | _ :: a', p'.+1 => rdrop a' p'
  end.
Fixpoint rsplit (p k : nat) (F : nat -> mono) : seq mono :=
  if k is k'.+1 then F p :: rsplit p.+1 k' F else [::].

(** the product of two terms: the sums of the left, then those of the right, then the atoms *)
Fixpoint mmul_r (gs : seq guard) (l : seq R) (b : mono) : mono :=
  match b with
  | MProd gs' l' => MProd (rcat gs gs') (rcat l l')
  | MSum m g => MSum (fun j => mmul_r gs l (g j))
  end.
Fixpoint mmul (a b : mono) : mono :=
  match a with
  | MProd gs l => mmul_r gs l b
  | MSum n f => MSum (fun i => mmul (f i) b)
  end.

Fixpoint nf (t : tm) : seq mono :=
  match t with
  | TAt r => [:: MProd [::] [:: r]]
  | TZero => [::]
  | TOne => [:: MProd [::] [::]]
  | TDel _ a b => [:: MProd [:: G a b] [::]]
  | TAdd a b => rcat (nf a) (nf b)
  | TMul a b => rpairs (nf a) (nf b) mmul
  | TSum n f k => rsplit 0 k (fun p => MSum (fun i => rnth (nf (f i)) p))
  | TFn g a => [:: MProd [::] [:: g (ev_list (nf a))]]
  | TGd _ a b y => rmap (mmul (MProd [:: G a b] [::])) (nf y)
  | TGdR _ _ y => nf y
  | TMk y => nf y
  | TElim _ a _ g => nf (g a)
  end.

(** ** Soundness *)
Lemma prodl_foldr l : prodl l = foldr *%R 1 l.
Proof.
elim: l => // x l IH; case: l IH => [|y l] IH; first by rewrite /= mulr1.
have -> : prodl [:: x, y & l] = x * prodl (y :: l) by [].
by rewrite IH.
Qed.

Lemma prodl_cat l l' : prodl (rcat l l') = prodl l * prodl l'.
Proof.
rewrite !prodl_foldr; elim: l => /= [|x l ->]; first by rewrite mul1r.
by rewrite mulrA.
Qed.

Lemma ev_list_sum l : ev_list l = \sum_(m <- l) ev_mono m.
Proof.
elim: l => [|m [|m' l] IH]; first by rewrite big_nil.
  by rewrite big_cons big_nil addr0.
by rewrite big_cons -IH.
Qed.

Lemma ev_list_cons m l : ev_list (m :: l) = ev_mono m + ev_list l.
Proof. by case: l => [|m' l] //=; rewrite addr0. Qed.

Lemma rcat_cat T (a b : seq T) : rcat a b = a ++ b. Proof. by elim: a => //= x a ->. Qed.
Lemma rmap_map g a : rmap g a = map g a. Proof. by elim: a => //= x a ->. Qed.

Lemma ev_list_cat a b : ev_list (rcat a b) = ev_list a + ev_list b.
Proof. by rewrite !ev_list_sum rcat_cat big_cat. Qed.

Lemma gprod_gval gs y : gprod gs y = gval gs * y.
Proof. by elim: gs => [|[n a b] gs IH] /=; rewrite ?mul1r // /dl IH mulrA. Qed.

Lemma gval_cat gs gs' : gval (rcat gs gs') = gval gs * gval gs'.
Proof. by elim: gs => [|[n a b] gs IH] /=; rewrite ?mul1r // IH mulrA. Qed.

Lemma ev_prod gs l : ev_mono (MProd gs l) = gval gs * prodl l.
Proof. exact: gprod_gval. Qed.

Lemma mmul_r_sound gs l b : ev_mono (mmul_r gs l b) = ev_mono (MProd gs l) * ev_mono b.
Proof.
elim: b => [gs' l'|m g IH]; last first.
  rewrite /= big_distrr; apply: eq_bigr => j _; exact: IH.
by rewrite /mmul_r !ev_prod gval_cat prodl_cat mulrACA.
Qed.

Lemma mmul_sound a b : ev_mono (mmul a b) = ev_mono a * ev_mono b.
Proof.
elim: a => [gs l|n f IH] /=; first exact: mmul_r_sound.
rewrite big_distrl; apply: eq_bigr => i _; exact: IH.
Qed.

Lemma ev_list_map_mul x b :
  ev_list (rmap (mmul x) b) = ev_mono x * ev_list b.
Proof.
rewrite !ev_list_sum rmap_map big_map big_distrr; apply: eq_bigr => m _; exact: mmul_sound.
Qed.

Lemma rpairs_sound a b : ev_list (rpairs a b mmul) = ev_list a * ev_list b.
Proof.
elim: a => [|x a IH]; first by rewrite /= mul0r.
have -> : rpairs (x :: a) b mmul = rcat (rmap (mmul x) b) (rpairs a b mmul) by [].
by rewrite ev_list_cat IH ev_list_map_mul ev_list_cons mulrDl.
Qed.

(** a list is its first [k] positions plus what lies beyond (the positions beyond its end are
    [MProd [:: 0]], which is [0]) *)
Lemma ev_list_split l k :
  ev_list l = \sum_(p < k) ev_mono (rnth l p) + ev_list (rdrop l k).
Proof.
elim: k l => [|k IH] l; first by rewrite big_ord0 add0r; case: l.
case: l => [|m l].
  by rewrite big1 ?add0r //.
rewrite big_ord_recl ev_list_cons (IH l) addrA.
have -> : rdrop (m :: l) k.+1 = rdrop l k by [].
by [].
Qed.

Lemma rsplit_sound p k F :
  ev_list (rsplit p k F) = \sum_(q < k) ev_mono (F (p + q)%N).
Proof.
elim: k p => [|k IH] p; first by rewrite big_ord0.
rewrite ev_list_sum /= big_cons -ev_list_sum IH big_ord_recl addn0.
by congr (_ + _); apply: eq_bigr => q _; rewrite addSnnS.
Qed.

(** the count of [nf]'s terms, read by structure (a [TSum] says its own) *)
Fixpoint cnt (t : tm) : nat :=
  match t with
  | TZero => 0
  | TAt _ | TOne | TDel _ _ _ | TFn _ _ => 1
  | TAdd a b => cnt a + cnt b
  | TMul a b => cnt a * cnt b
  | TSum _ _ k => k
  | TGd _ _ _ y | TGdR _ _ y | TMk y => cnt y
  | TElim _ a _ g => cnt (g a)
  end.

(** no marked place outside an elimination *)
Fixpoint m0 (t : tm) : Prop :=
  match t with
  | TMk _ => False
  | TAdd a b | TMul a b => m0 a /\ m0 b
  | TSum n h _ => forall j, m0 (h j)
  | TFn _ a | TGd _ _ _ a | TGdR _ _ a => m0 a
  | _ => True
  end.

(** exactly one marked place in [t], reached through sums and guards only (the place of the
    guard an elimination removed, a factor of every term of [t]) *)
Fixpoint m1 (t : tm) : Prop :=
  match t with
  | TMk y => m0 y
  | TGd _ _ _ y | TGdR _ _ y => m1 y
  | TSum n h _ => forall j, m1 (h j)
  | _ => False
  end.

(** a sum's [k] is its body's count at every index (by computation, for a reified body); an
    elimination's body has its one marked place *)
Fixpoint wf (t : tm) : Prop :=
  match t with
  | TAt _ | TZero | TOne | TDel _ _ _ => True
  | TAdd a b | TMul a b => wf a /\ wf b
  | TSum n f k => forall i, cnt (f i) = k /\ wf (f i)
  | TFn _ a => wf a
  | TGd _ _ _ y | TGdR _ _ y | TMk y => wf y
  | TElim n a _ g => (forall i, m1 (g i)) /\ wf (g a)
  end.

Lemma evk_m0 k k' t : m0 t -> evk k t = evk k' t.
Proof.
elim: t => //= [a IHa b IHb|a IHa b IHb|n f IH _|g a IH|m u v y IH|m u y IH].
- by case=> wa wb; rewrite IHa ?IHb.
- by case=> wa wb; rewrite IHa ?IHb.
- by move=> w; apply: eq_bigr => i _; rewrite IH.
- by move=> w; rewrite IH.
- by move=> w; rewrite IH.
- by move=> w; rewrite IH.
Qed.

Lemma evk_m1 (c : R) k t : (forall y, k y = c * y) -> m1 t -> evk k t = c * ev t.
Proof.
move=> hk; rewrite /ev; elim: t => //= [m h IH _|m u v y IH|m u y IH|y _].
- by move=> w; rewrite big_distrr; apply: eq_bigr => j _; rewrite IH.
- by move=> w; rewrite IH // /dl mulrCA.
- by move=> w; rewrite IH // /dl mulrCA.
- by move=> w; rewrite hk (evk_m0 _ (fun y => y) w).
Qed.

Lemma delta_self n (a : 'I_n) : delta a a = 1 :> R.
Proof. by rewrite /delta eqxx. Qed.

Lemma sum_delta_put n (a : 'I_n) s (F : 'I_n -> R) :
  \sum_(i < n) (if s then delta i a else delta a i) * F i = F a.
Proof.
rewrite (bigD1 a) //= big1 ?addr0; first by case: s; rewrite delta_self mul1r.
move=> i /negbTE ni; case: s; rewrite /delta; first by rewrite ni mul0r.
by rewrite eq_sym ni mul0r.
Qed.

Lemma size_rcat T (a b : seq T) : size (rcat a b) = (size a + size b)%N.
Proof. by rewrite rcat_cat size_cat. Qed.
Lemma size_rpairs a b g : size (rpairs a b g) = (size a * size b)%N.
Proof. by elim: a => //= x a IH; rewrite size_rcat rmap_map size_map IH. Qed.
Lemma size_rsplit p k F : size (rsplit p k F) = k.
Proof. by elim: k p => //= k IH p; rewrite IH. Qed.
Lemma size_nf t : size (nf t) = cnt t.
Proof.
elim: t => //= [a IHa b IHb|a IHa b IHb|n f _ k|m a b y IH];
rewrite ?size_rcat ?size_rpairs ?size_rsplit ?rmap_map ?size_map;
by rewrite ?IHa ?IHb ?IH.
Qed.
Lemma rdrop_size l k : (size l <= k)%N -> rdrop l k = [::].
Proof. by elim: l k => [|m l IH] [|k] //= /IH. Qed.

Lemma prenex_sound t : wf t -> ev_list (nf t) = ev t.
Proof.
rewrite /ev; elim: t => [r|||n a b|a IHa b IHb|a IHa b IHb|n f IH k|g a IHa|m a b y IH|m a y IH|y IH|m a s g IH] //=.
- by rewrite /dl mulr1.
- by case=> wa wb; rewrite ev_list_cat IHa ?IHb.
- by case=> wa wb; rewrite rpairs_sound IHa ?IHb.
- move=> w; rewrite rsplit_sound.
  have -> : \sum_(i < n) evk (fun y => y) (f i) = \sum_(i < n) \sum_(p < k) ev_mono (rnth (nf (f i)) p).
    apply: eq_bigr => i _; case: (w i) => ck wi.
    by rewrite -IH // (ev_list_split _ k) rdrop_size ?size_nf ?ck //= addr0.
  by rewrite exchange_big /=; apply: eq_bigr => p _.
- by move=> wa; rewrite IHa.
- move=> wy; have h := ev_list_map_mul (MProd [:: G a b] [::]) (nf y).
  by rewrite /= in h; rewrite h IH // /dl mulr1.
- by move=> wy; rewrite IH // /dl delta_self mul1r.
- case=> w1 wa; rewrite IH //.
  rewrite (eq_bigr (fun i => (if s then delta i a else delta a i) * ev (g i))); last first.
    by move=> i _; apply: evk_m1 => // y; case: s.
  by rewrite sum_delta_put.
Qed.

End Reflect.

(** the deltas' eliminations ([reify_el], [symuat_elim] below): a guard of a sum's index on its
    body's spine, marked ([el_mark]; [el_try]: none when the body has an elimination already) *)
Ltac el_free v vs :=
  lazymatch vs with
  | (?w, ?vs') => lazymatch v with context [w] => fail | _ => el_free v vs' end
  | _ => constr:(tt)
  end.

(** [t] with the first guard of [x] (its other index free of [vs]) on its spine marked; the pair
    (marked term, other index, side) *)
Ltac el_mark R x vs t :=
  match t with
  | @TGd _ ?m x ?v ?y => let _ := el_free v vs in constr:((@TMk R y, v, true))
  | @TGd _ ?m ?u x ?y => let _ := el_free u vs in constr:((@TMk R y, u, false))
  | @TGd _ ?m ?u ?v ?y =>
      let r := el_mark R x vs y in
      lazymatch r with (?y', ?a, ?s) => constr:((@TGd R m u v y', a, s)) end
  | @TGdR _ ?m ?u ?y =>
      let r := el_mark R x vs y in
      lazymatch r with (?y', ?a, ?s) => constr:((@TGdR R m u y', a, s)) end
  | @TSum _ ?m ?h ?k =>
      let j := fresh "j" in
      let F := constr:(fun j : 'I_m => ltac:(let b := eval cbv beta in (h j) in
                 let r := el_mark R x (j, vs) b in exact r)) in
      lazymatch F with
      | fun _ => (_, ?a, ?s) =>
          lazymatch F with fun j => (@?h' j, _, _) => constr:((@TSum R m h' k, a, s)) end
      end
  end.

Ltac el_try R n x b :=
  match b with
  | context [@TElim _ _ _ _ _] => constr:(@None (tm R * 'I_n * bool))
  | _ => let r := el_mark R x (x, tt) b in constr:(Some r)
  | _ => constr:(@None (tm R * 'I_n * bool))
  end.

(** [reify el R e] reads the entry [e : R] as a [tm R]; with [el] ([true]: [reify_el], the
    deltas by computation below) also a guard [dl a b y] as [TGd]/[TGdR] and a sum with a guard
    of its index as [TElim] ([el_try]); with [false] ([reify_tm]) a guard is a function of the ring
    applied to an entry, as any other ([TFn]) *)
Ltac reify el R e :=
  lazymatch e with
  | @GRing.add _ ?a ?b =>
      let ra := reify el R a in let rb := reify el R b in constr:(@TAdd R ra rb)
  | @GRing.mul _ ?a ?b =>
      let ra := reify el R a in let rb := reify el R b in constr:(@TMul R ra rb)
  | @GRing.one _ => constr:(@TOne R)
  | @GRing.zero _ => constr:(@TZero R)
  | @delta _ ?n ?a ?b => constr:(@TDel R n a b)
  | @dl _ ?n ?a ?b ?y =>
      lazymatch el with
      | true =>
          let ry := reify el R y in
          lazymatch b with a => constr:(@TGdR R n a ry) | _ => constr:(@TGd R n a b ry) end
      | false => lazymatch e with ?g ?x => reify_app el R e g x end
      end
  (* an integer literal [x *+ k] as the sum of its [k] terms (the rewrites reached the same
     through [mulr_addl], unifying [(a + b) * c] with [k%:R * c]) *)
  | @GRing.natmul _ ?x 1 => reify el R x
  | @GRing.natmul _ ?x (S ?k) =>
      let rx := reify el R x in let rk := reify el R (@GRing.natmul _ x k) in constr:(@TAdd R rx rk)
  | @BigOp.bigop _ (Finite.sort (ordinal_finType ?n)) (GRing.zero _) (index_enum (ordinal_finType _)) (fun i => @BigBody _ _ i (@GRing.add _) true (@?F i)) =>
      let x := fresh "x" in
      let f := constr:(fun x : 'I_n =>
                 ltac:(let b := eval cbv beta in (F x) in let r := reify el R b in exact r)) in
      let E := lazymatch el with
               | true => constr:(fun x : 'I_n =>
                           ltac:(let b := eval cbv beta in (f x) in let r := el_try R n x b in exact r))
               | false => constr:(tt)
               end in
      lazymatch E with
      | fun _ => Some (_, ?a, ?s) =>
          lazymatch E with fun x => Some (@?g x, _, _) => constr:(@TElim R n a s g) end
      | _ =>
          let kf := eval lazy in (fun i : 'I_n => cnt (f i)) in
          lazymatch kf with
          | fun _ => ?k => constr:(@TSum R n f k)
          end
      end
  | ?g ?a => reify_app el R e g a
  | _ => constr:(@TAt R e)
  end
with reify_app el R e g a :=
  (* a function of the ring applied to an entry (an elementwise [σ], [-x], a guarded delta):
     its argument is put in prenex form; anything else is an atom *)
  match constr:(tt) with
  | _ => let _ := constr:(g : GRing.ComRing.sort R -> GRing.ComRing.sort R) in
         let _ := constr:(a : GRing.ComRing.sort R) in
         let ra := reify el R a in constr:(@TFn R g ra)
  | _ => constr:(@TAt R e)
  end.
Ltac reify_tm R e := reify constr:(false) R e.

(** the entry on the left of the goal [L = R] in prenex form: [L] read as [t], replaced by the
    computed [ev_list (nf t)] ([prenex_sound]; its premise [wf t] by computation) *)
Ltac symuat_prenex_side_l :=
  lazymatch goal with R : GRing.ComRing.type |- ?L = ?Rh =>
    let t := reify_tm R L in
    refine (eq_trans (esym (@prenex_sound R t ltac:(cbv [wf cnt]; repeat (split || intro)))) _);
    lazymatch goal with |- ?A = ?B =>
      let A' := eval cbv beta iota zeta delta [nf ev_list ev_mono prodl gprod rcat rmap
                                                rpairs rnth rdrop rsplit mmul mmul_r] in A in
      change (A' = B)
    end
  end.

(** both sides of [L = R] in prenex form (a side that is a variable — the hidden normal form of
    [symuat_nf] — is left alone) *)
Ltac symuat_prenex_refl :=
  symuat_prenex_side_l;
  lazymatch goal with
  | |- _ = ?Rh => tryif is_var Rh then idtac else (symmetry; symuat_prenex_side_l; symmetry)
  end.

(** * The deltas by computation ([symuat_elim])

    After the prenex form, a term is sums over a product of guards [dl a b] and atoms. A sum
    over an index [x] whose product has a guard [dl x a] (or [dl a x]) with [a] free of [x] and of
    the sums inside it is [Σ_x δ_{xa} F(x) = F(a)]: the reifier [reify_el] reads such a sum as
    [TElim n a s g] (the guard's place marked in [g]), [dl a a y] as [TGdR] ([δ_{aa} = 1]), and
    [prenex_sound] (the same theorem, its premise [wf] by computation: the marked place is
    one, reached through sums and guards) gives the value computed by [nf]. One pass eliminates
    the innermost such sums ([el_try]: none whose body has an elimination already);
    [symuat_elim] repeats passes while one finds a sum or a guard to remove. What the reifier
    chooses is checked by Coq: a reading that is not the entry fails the conversion, and a
    wrong elimination fails [wf]. *)
(** [reify_el R e]: [reify] with the eliminations ([TGd], [TGdR], [TElim]) *)
Ltac reify_el R e := reify constr:(true) R e.

(** one pass on the left side of [L = R]: fails if it finds nothing to eliminate *)
Ltac symuat_elim_side_l :=
  lazymatch goal with R : GRing.ComRing.type |- ?L = ?Rh =>
    let t := reify_el R L in
    lazymatch t with
    | context [@TElim _ _ _ _ _] => idtac
    | context [@TGdR _ _ _ _] => idtac
    end;
    refine (eq_trans (esym (@prenex_sound R t ltac:(cbv [wf cnt m1 m0]; repeat (split || intro)))) _);
    lazymatch goal with |- ?A = ?B =>
      let A' := eval cbv beta iota zeta delta [nf ev_list ev_mono prodl gprod rcat rmap
                                                rpairs rnth rdrop rsplit mmul mmul_r] in A in
      change (A' = B)
    end
  end.
Ltac symuat_elim_side_r :=
  lazymatch goal with
  | |- _ = ?Rh => tryif is_var Rh then fail else (symmetry; symuat_elim_side_l; symmetry)
  end.
Ltac symuat_elim_pass :=
  first [ symuat_elim_side_l; try symuat_elim_side_r | symuat_elim_side_r ].
Ltac symuat_elim := repeat (symuat_elim_pass; idtac "symuat-lemma prenex_sound").

(** * The closing comparison by computation ([symuat_close_refl])

    After the prenex form and the deltas, the two sides of [L = R] are sums of terms
    [Σ_summed Π atoms] whose products and summands may come in different orders (and products
    in other associations: symuat's printed normal form is left-associated). Matching them by a
    tactic search ([symuat_close] in [SymuatTac]) is quadratic in the summands. Here, the way
    [ring] works, each side is read ([reify_kl]) as a tree [kl] of summands [ks] (nested sums
    over a product tree [kp] of atoms); every atom carries a key ([nat]: the position of its
    head among the goal's hypotheses, the same on both sides), every sum the key of its body;
    [cside] flattens each product and sorts it by key, sorts the summands by key (stable
    insertion sorts), and reads the result back as a ring term. [cside_sound] (proved once)
    says the value is unchanged, whatever the keys — they only choose an order — so
    [kclose] reduces [L = R] to [cside l1 = cside l2], which is closed only if the two
    computed terms are syntactically identical ([constr_eq], after [idx [::]] is read as
    [unit]). The sums at the top of a summand are read as one block ([KBlk]: [sumI] over their
    sizes) and put in a canonical order: the order in which their indices first occur in the
    product sorted by key ([canon], reached by adjacent exchanges [swaps]; [sumI_swall] proves
    that any exchanges keep the value, so the order is a heuristic, not trusted); a function of
    the ring applied to an entry ([PFn]: an elementwise [σ]) is compared with its argument in
    the same canonical form. Where the two sides still differ (merged coefficients, atoms with
    one head in another order, two indices first met in one atom in another order), the step
    fails and [symuat_close]'s search is the fallback. *)
Section Close.
Variable R : comRingType.

Inductive kp : Type :=
| PAt (k : nat) (r : R)
| POne
| PMul (a b : kp)
(** a function of the ring applied to an entry (an elementwise [σ]): its argument is compared in
    its canonical form too *)
| PFn (k : nat) (g : R -> R) (a : kl)
with ks : Type :=
| KSum (n : nat) (f : 'I_n -> ks) (key : seq nat)
| KProd (p : kp)
(** a block of sums [Σ_{x : idx ns} Π f(x)] read at once ([sumI]); [lvs]: for each atom of the
    product (in its order), its key and the positions in [ns] of the summed indices it contains
    (in order of occurrence), which choose the canonical order of the sums ([cv]) *)
| KBlk (ns : seq nat) (f : idx ns -> kp) (key : seq nat) (lvs : seq (nat * seq nat))
with kl : Type :=
| LAt (s : ks)
| LZero
| LAdd (a b : kl).

Fixpoint ev_kp (p : kp) : R :=
  match p with PAt _ r => r | POne => 1 | PMul a b => ev_kp a * ev_kp b | PFn _ g a => g (ev_kl a) end
with ev_ks (s : ks) : R :=
  match s with
  | KSum n f _ => \sum_(i < n) ev_ks (f i)
  | KProd p => ev_kp p
  | KBlk ns f _ _ => sumI (fun x => ev_kp (f x))
  end
with ev_kl (l : kl) : R :=
  match l with LAt s => ev_ks s | LZero => 0 | LAdd a b => ev_kl a + ev_kl b end.

(** keys: lexicographic order on [seq nat], by functions of this file only (so that [cbv] on
    them touches nothing else) *)
Fixpoint kle (m n : nat) : bool :=
  match m, n with 0, _ => true | S _, 0 => false | S m', S n' => kle m' n' end.
Fixpoint klex (a b : seq nat) : bool :=
  match a, b with
  | [::], _ => true
  | _ :: _, [::] => false
  | x :: a', y :: b' => if kle x y then (if kle y x then klex a' b' else true) else false
  end.
Fixpoint kins T (key : T -> seq nat) (x : T) (l : seq T) : seq T :=
  match l with
  | [::] => [:: x]
  | y :: l' => if klex (key x) (key y) then x :: l else y :: kins key x l'
  end.
Fixpoint ksort T (key : T -> seq nat) (l : seq T) : seq T :=
  match l with [::] => [::] | x :: l' => kins key x (ksort key l') end.
Fixpoint kmap T U (g : T -> U) (l : seq T) : seq U :=
  match l with [::] => [::] | x :: l' => g x :: kmap g l' end.

Definition akey (x : nat * R) : seq nat := [:: x.1].
Fixpoint kprod (l : seq (nat * R)) : R :=
  match l with [::] => 1 | x :: l' => x.2 * kprod l' end.
Definition lkey (x : seq nat * R) : seq nat := x.1.
Fixpoint ksumv (l : seq (seq nat * R)) : R :=
  match l with [::] => 0 | x :: l' => x.2 + ksumv l' end.

(** ** A canonical order of a block's summed indices: the order in which they first occur in
    its product sorted by key ([canon]), reached by adjacent exchanges ([sw], [swall]; proved:
    [sumI_swall], whatever the exchanges) *)
Unset Implicit Arguments.
Fixpoint sw (k : nat) (ns : seq nat) {struct ns} : seq nat :=
  match ns with
  | [::] => [::]
  | a :: r => match k with
              | 0 => match r with [::] => [:: a] | b :: r' => b :: a :: r' end
              | S k' => a :: sw k' r
              end
  end.
Fixpoint swx (k : nat) (ns : seq nat) {struct ns} : idx (sw k ns) -> idx ns :=
  match ns return idx (sw k ns) -> idx ns with
  | [::] => fun x => x
  | a :: r => match k return idx (sw k (a :: r)) -> idx (a :: r) with
              | 0 => match r return idx (sw 0 (a :: r)) -> idx (a :: r) with
                     | [::] => fun x => x
                     | b :: r' => fun x => (x.2.1, (x.1, x.2.2))
                     end
              | S k' => fun x => (x.1, swx k' r x.2)
              end
  end.
Fixpoint swall (sws : seq nat) (ns : seq nat) : seq nat :=
  if sws is k :: s then swall s (sw k ns) else ns.
Fixpoint swallx (sws : seq nat) (ns : seq nat) : idx (swall sws ns) -> idx ns :=
  match sws return idx (swall sws ns) -> idx ns with
  | [::] => fun y => y
  | k :: s => fun y => swx k ns (swallx s (sw k ns) y)
  end.
Set Implicit Arguments.

Lemma eq_sumI ns (F G : idx ns -> R) : (forall x, F x = G x) -> sumI F = sumI G.
Proof.
elim: ns F G => [|n ns IH] F G h /=; first exact: h.
by apply: eq_bigr => i _; apply: IH => x; exact: h.
Qed.
Lemma sumI_sw k ns (F : idx ns -> R) : sumI F = sumI (fun y => F (swx k ns y)).
Proof.
elim: ns k F => [|a r IH] [|k] F //=; last by apply: eq_bigr => i _; rewrite (IH k).
move: F IH; case: r => [|b r] F IH //=; rewrite exchange_big /=.
by apply: eq_bigr => j _; apply: eq_bigr => i _.
Qed.
Lemma sumI_swall sws ns (F : idx ns -> R) : sumI F = sumI (fun y => F (swallx sws ns y)).
Proof. by elim: sws ns F => [|k s IH] ns F //=; rewrite (sumI_sw k) (IH (sw k ns)). Qed.

(** the exchanges: the level [o] brought from its place in [cur] to position [p] *)
Local Open Scope nat_scope.
Fixpoint keq (m n : nat) : bool :=
  match m, n with 0, 0 => true | S m', S n' => keq m' n' | _, _ => false end.
Fixpoint kpos (x : nat) (l : seq nat) : nat :=
  match l with [::] => 0 | y :: l' => if keq x y then 0 else S (kpos x l') end.
Fixpoint kmem (x : nat) (l : seq nat) : bool :=
  match l with [::] => false | y :: l' => if keq x y then true else kmem x l' end.
Fixpoint down (q p : nat) : seq nat :=
  match q with 0 => [::] | S q' => if kle q p then [::] else q' :: down q' p end.
Fixpoint gen (p : nat) (ord cur : seq nat) : seq nat :=
  match ord with
  | [::] => [::]
  | o :: ord' => let s := down (kpos o cur) p in rcat s (gen (S p) ord' (swall s cur))
  end.
Fixpoint ksize (l : seq nat) : nat := if l is _ :: l' then S (ksize l') else 0.
Fixpoint kiota (a d : nat) : seq nat := if d is d'.+1 then a :: kiota a.+1 d' else [::].
Fixpoint kconcat (l : seq (nat * seq nat)) : seq nat :=
  if l is x :: l' then rcat x.2 (kconcat l') else [::].
(** first occurrences in [l] (below [d]), then the levels that occur nowhere *)
Fixpoint kdedup (l acc : seq nat) : seq nat :=
  match l with
  | [::] => acc
  | x :: l' => kdedup l' (if kmem x acc then acc else rcat acc [:: x])
  end.
Fixpoint kfilt (d : nat) (l : seq nat) : seq nat :=
  match l with [::] => [::] | x :: l' => if kle (S x) d then x :: kfilt d l' else kfilt d l' end.
Definition canon (d : nat) (lvs : seq (nat * seq nat)) : seq nat :=
  let o := kdedup (kfilt d (kconcat (ksort (fun x => [:: x.1]) lvs))) [::] in
  kdedup (kiota 0 d) o.
Definition swaps (ns : seq nat) (lvs : seq (nat * seq nat)) : seq nat :=
  let d := ksize ns in gen 0 (canon d lvs) (kiota 0 d).
Local Open Scope ring_scope.

(** the canonical value of a summand: its products flattened and sorted (a block's sums in the
    canonical order) *)
Fixpoint flat (p : kp) : seq (nat * R) :=
  match p with
  | PAt k r => [:: (k, r)]
  | POne => [::]
  | PMul a b => rcat (flat a) (flat b)
  | PFn k g a => [:: (k, g (ksumv (ksort lkey (cl a))))]
  end
with cv (s : ks) : R :=
  match s with
  | KSum n f _ => \sum_(i < n) cv (f i)
  | KProd p => kprod (ksort akey (flat p))
  | KBlk ns f _ lvs =>
      let sws := swaps ns lvs in
      sumI (fun y => kprod (ksort akey (flat (f (swallx sws ns y)))))
  end
(** the summands with their keys: a sum's own (its body's, given by the reifier), a product's
    sorted keys *)
with cl (l : kl) : seq (seq nat * R) :=
  match l with
  | LAt s =>
      [:: (match s with KSum _ _ k | KBlk _ _ k _ => k | KProd p => kmap fst (ksort akey (flat p)) end,
           cv s)]
  | LZero => [::]
  | LAdd a b => rcat (cl a) (cl b)
  end.
Definition cside (l : kl) : R := ksumv (ksort lkey (cl l)).
(** a summand's key (as [cl] reads it) *)
Definition skey (s : ks) : seq nat :=
  match s with KSum _ _ k | KBlk _ _ k _ => k | KProd p => kmap fst (ksort akey (flat p)) end.

(** ** Soundness *)
Lemma kprod_ins key x l : kprod (kins key x l) = x.2 * kprod l.
Proof.
elim: l => [|y l IH] //=; case: ifP => _ //=.
by rewrite IH mulrCA.
Qed.
Lemma kprod_sort key l : kprod (ksort key l) = kprod l.
Proof. by elim: l => //= x l IH; rewrite kprod_ins IH. Qed.
Lemma kprod_cat a b : kprod (rcat a b) = kprod a * kprod b.
Proof. by elim: a => [|x a IH] /=; rewrite ?mul1r // IH mulrA. Qed.
Lemma ksumv_ins key x l : ksumv (kins key x l) = x.2 + ksumv l.
Proof.
elim: l => [|y l IH] //=; case: ifP => _ //=.
by rewrite IH addrCA.
Qed.
Lemma ksumv_sort key l : ksumv (ksort key l) = ksumv l.
Proof. by elim: l => //= x l IH; rewrite ksumv_ins IH. Qed.
Lemma ksumv_cat a b : ksumv (rcat a b) = ksumv a + ksumv b.
Proof. by elim: a => [|x a IH] /=; rewrite ?add0r // IH addrA. Qed.

Scheme kp_mind := Induction for kp Sort Prop
with ks_mind := Induction for ks Sort Prop
with kl_mind := Induction for kl Sort Prop.
Combined Scheme k_mind from kp_mind, ks_mind, kl_mind.

Lemma k_sound : (forall p, kprod (flat p) = ev_kp p) /\ (forall s, cv s = ev_ks s) /\
                (forall l, ksumv (cl l) = ev_kl l).
Proof.
apply: k_mind => /=.
- by move=> k r; rewrite mulr1.
- by [].
- by move=> a IHa b IHb; rewrite kprod_cat IHa IHb.
- by move=> k g a IH; rewrite mulr1 ksumv_sort IH.
- by move=> n f IH k; apply: eq_bigr => i _; exact: IH.
- by move=> p IH; rewrite kprod_sort IH.
- move=> ns f IH k lvs; rewrite [RHS](sumI_swall (swaps ns lvs)); apply: eq_sumI => y.
  by rewrite kprod_sort IH.
- by move=> s IH; rewrite addr0 IH.
- by [].
- by move=> a IHa b IHb; rewrite ksumv_cat IHa IHb.
Qed.
Lemma cside_sound l : cside l = ev_kl l.
Proof. by rewrite /cside ksumv_sort; case: k_sound => _ [_ ->]. Qed.
Lemma kclose l1 l2 : cside l1 = cside l2 -> ev_kl l1 = ev_kl l2.
Proof. by rewrite !cside_sound. Qed.

(** a block's product as the reifier builds it, a function of each summed index in turn, read
    as a function of the tuple ([kunc]) *)
Fixpoint kcur (ns : seq nat) : Type := if ns is n :: ns' then ('I_n -> kcur ns') else kp.
Fixpoint kunc (ns : seq nat) : kcur ns -> idx ns -> kp :=
  match ns return kcur ns -> idx ns -> kp with
  | [::] => fun h _ => h
  | n :: ns' => fun h x => @kunc ns' (h x.1) x.2
  end.
End Close.

(** the heads an atom's key is read from: every hypothesis of the goal, as a tuple *)
Ltac symuat_heads :=
  let rec go acc :=
    match goal with
    | H : _ |- _ => lazymatch acc with context [H] => fail | _ => go (H, acc) end
    | _ => acc
    end in
  go tt.
Ltac symuat_head t := lazymatch t with ?f _ => symuat_head f | _ => t end.
(** the key of an atom: its head's position in [hs], or 999 (a head that is no hypothesis) *)
Ltac symuat_key hs t :=
  let h := symuat_head t in
  let rec pos hs :=
    lazymatch hs with
    | (h, _) => constr:(O)
    | (_, ?r) => let k := pos r in constr:(S k)
    | _ => constr:(999%N)
    end in
  pos hs.

(** a block's atoms: each one's key and the positions of the summed indices it contains, in
    order of occurrence ([vars]: the summed indices with their positions) *)
Ltac kvlook vars t := match vars with ((t, ?l), _) => l | (_, ?r) => kvlook r t end.
(** the arguments of an atom's head that are summed indices or multi-indices [(i, (j, …))] (an
    elementwise function's argument is not read: its indices do not choose the order) *)
Ltac kpair vars a acc :=
  match a with
  | (?v, ?r) => let acc' := kpair vars r acc in kpair vars v acc'
  | _ =>
      match constr:(tt) with
      | _ => let l := kvlook vars a in constr:(l :: acc)
      | _ => acc
      end
  end.
Ltac kocc vars t acc :=
  match t with
  | ?f ?a => let acc' := kpair vars a acc in kocc vars f acc'
  | _ => acc
  end.
Ltac kp_lvs vars p :=
  lazymatch p with
  | @PFn _ ?k _ _ => constr:([:: (k, @nil nat)])
  | @PMul _ ?a ?b => let la := kp_lvs vars a in let lb := kp_lvs vars b in constr:(rcat la lb)
  | @POne _ => constr:(@nil (nat * seq nat))
  | @PAt _ ?k ?r => let l := kocc vars r (@nil nat) in constr:([:: (k, l)])
  end.
Ltac reify_kp R hs e :=
  lazymatch e with
  | @GRing.mul _ ?a ?b =>
      let ra := reify_kp R hs a in let rb := reify_kp R hs b in constr:(@PMul R ra rb)
  | @GRing.one _ => constr:(@POne R)
  | ?g ?a =>
      let k := symuat_key hs e in
      match constr:(tt) with
      | _ => let _ := constr:(g : GRing.ComRing.sort R -> GRing.ComRing.sort R) in
             let _ := constr:(a : GRing.ComRing.sort R) in
             let ra := reify_kl R hs a in constr:(@PFn R k g ra)
      | _ => constr:(@PAt R k e)
      end
  | _ => let k := symuat_key hs e in constr:(@PAt R k e)
  end
(** the sums at the top of a summand and its product: (sizes, atoms' positions, the product as a
    function of each summed index in turn) *)
with reify_blk R hs vars lvl e :=
  lazymatch e with
  | @BigOp.bigop _ (Finite.sort (ordinal_finType ?n)) (GRing.zero _) (index_enum (ordinal_finType _)) (fun i => @BigBody _ _ i (@GRing.add _) true (@?F i)) =>
      let x := fresh "x" in
      let g := constr:(fun x : 'I_n =>
                 ltac:(let b := eval cbv beta in (F x) in
                       let r := reify_blk R hs constr:(((x, lvl), vars)) constr:(S lvl) b in exact r)) in
      lazymatch g with
      | fun _ => (?ns, ?lvs, _) =>
          lazymatch g with fun x => (_, _, @?h x) => constr:((n :: ns, lvs, h)) end
      end
  | _ => let p := reify_kp R hs e in let lvs := kp_lvs vars p in constr:((@nil nat, lvs, p))
  end
with reify_kblk R hs e :=
  let r := reify_blk R hs tt O e in
  lazymatch r with
  | (?ns, ?lvs, ?h) =>
      let kf := eval lazy in (fun x : idx ns => skey (@KProd R (@kunc R ns h x))) in
      lazymatch kf with
      | fun _ => ?k =>
          let key := eval lazy in (rcat (kmap (fun _ => O) ns) k) in
          constr:(@KBlk R ns (@kunc R ns h) key lvs)
      end
  end
with reify_ks R hs e :=
  lazymatch e with
  | @BigOp.bigop _ (Finite.sort (ordinal_finType ?n)) (GRing.zero _) (index_enum (ordinal_finType _)) (fun i => @BigBody _ _ i (@GRing.add _) true (@?F i)) =>
      match constr:(tt) with
      | _ => reify_kblk R hs e
      | _ => reify_ks_sum R hs n F
      end
  | _ => let p := reify_kp R hs e in constr:(@KProd R p)
  end
with reify_ks_sum R hs n F :=
  lazymatch constr:(tt) with
  | _ =>
      let x := fresh "x" in
      let f := constr:(fun x : 'I_n =>
                 ltac:(let b := eval cbv beta in (F x) in let r := reify_ks R hs b in exact r)) in
      let kf := eval lazy in (fun i : 'I_n => skey (f i)) in
      lazymatch kf with
      | fun _ => ?k => constr:(@KSum R n f (O :: k))
      end
  end
with reify_kl R hs e :=
  lazymatch e with
  | @GRing.add _ ?a ?b =>
      let ra := reify_kl R hs a in let rb := reify_kl R hs b in constr:(@LAdd R ra rb)
  | @GRing.zero _ => constr:(@LZero R)
  | _ => let s := reify_ks R hs e in constr:(@LAt R s)
  end.

Ltac symuat_kred t :=
  eval cbv beta iota zeta delta [cside ksumv lkey ksort kins klex kle kmap cl rcat cv kprod
                                 flat akey fst snd sumI swallx swall swx sw swaps canon gen down
                                 kpos keq kmem ksize kiota kconcat kdedup kfilt kunc idx] in t.

(** [L = R] closed by the computed comparison ([kclose]), or a failure (nothing changed) *)
Ltac symuat_close_refl :=
  lazymatch goal with R : GRing.ComRing.type |- ?L = ?Rh =>
    let hs := symuat_heads in
    let l1 := reify_kl R hs L in
    let l2 := reify_kl R hs Rh in
    refine (@kclose R l1 l2 _);
    lazymatch goal with |- ?A = ?B =>
      let A' := symuat_kred A in let B' := symuat_kred B in
      constr_eq A' B'; exact (@Logic.eq_refl _ A')
    end
  end.
