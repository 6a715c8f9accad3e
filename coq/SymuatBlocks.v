(** * SymuatBlocks: summing the index of an axis block (symuat's two block rules).

    [axis_block n o ws] (SymuatMx) embeds the block [[o, o + |ws|)] of an axis of length [n]:
    entry [[u = o + flat(j)]] ([axis_at]).  symuat's normal form
    (symuat.kernel.index_calculus) sums a block index [u] by two rules, each an identity of finite
    sums because the block fits ([o + |ws| <= n]):
    - [Σ_u [u = o + flat(j)] f(u) = f(o + flat(j))], and so
      [Σ_u [u = o + flat(j)][u = o + flat(j')] = δ_{jj'}] (one delta per axis: the flat position is a
      bijection, [delta_flat]) for the same block;
    - [Σ_u [u = o₁ + flat(j₁)][u = o₂ + flat(j₂)] = 0] for disjoint blocks ([o₁ + |ws₁| <= o₂]).
    Here the fit is proved for the block's sizes as the statement writes them ([symuat_fit]:
    linear arithmetic, [lia]), the indicator becomes a Kronecker delta with the embedded position
    ([axis_at_delta]: [embed]), so the library's delta elimination sums [u]; what is left between
    two embedded positions is rewritten by [dl_embed_same] (the same block: the deltas of the
    components) or [dl_embed_lt]/[dl_embed_gt] (disjoint blocks, proved disjoint by [symuat_fit]:
    zero).  A pair of blocks that is neither is left alone (as symuat leaves it). *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Lia.
From Symuat Require Import SymuatMx SymuatReflect.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Lemma flatI_lt ws (j : idx ws) : (flatI j < prodn ws)%N.
Proof.
elim: ws j => [|d ws IH] /= j //; case: j => a k /=.
apply: (@leq_trans (a * prodn ws + prodn ws)); first by rewrite ltn_add2l IH.
by rewrite addnC -mulSn leq_mul2r ltn_ord orbT.
Qed.

Section Blocks.
Variable R : comRingType.

(** the position [o + flat(j)] of the block, an ordinal of the axis (the block fits: [H]) *)
Lemma embed_lt n o ws (H : (o + prodn ws <= n)%N) (j : idx ws) : (o + flatI j < n)%N.
Proof. by apply: leq_trans H; rewrite ltn_add2l flatI_lt. Qed.
Definition embed n o ws (H : (o + prodn ws <= n)%N) (j : idx ws) : 'I_n := Ordinal (embed_lt H j).

(** the block indicator is a Kronecker delta with the embedded position (by computation) *)
Lemma axis_at_delta n o ws (H : (o + prodn ws <= n)%N) (u : 'I_n) (j : idx ws) :
  (axis_at o u j : R) = delta u (embed H j).
Proof. by []. Qed.

(** one delta per axis: [[flat(j) = flat(j')] = Π_axes δ] *)
Lemma delta_flat ws (j j' : idx ws) : ((flatI j == flatI j')%:R : R) = deltaI j j'.
Proof.
elim: ws j j' => [|d ws IH] /= j j'; first by case: j; case: j'.
case: j => a k; case: j' => a' k' /=.
rewrite /delta -IH -natrM mulnb; congr (_%:R); congr (nat_of_bool _).
have lt := flatI_lt k; have lt' := flatI_lt k'.
have P0 : (0 < prodn ws)%N by case: (prodn ws) lt.
apply/idP/idP => [/eqP E|/andP[/eqP -> /eqP ->]] //.
have := congr1 (divn^~ (prodn ws)) E; have := congr1 (modn^~ (prodn ws)) E.
rewrite !modnMDl !modn_small // !divnMDl // !divn_small // !addn0 => -> Ea.
by rewrite eqxx andbT; apply/eqP; apply: val_inj.
Qed.

(** the same block: the deltas of the components *)
Lemma dl_embed_same n o ws (H1 H2 : (o + prodn ws <= n)%N) (j j' : idx ws) (y : R) :
  dl (embed H1 j) (embed H2 j') y = deltaI j j' * y.
Proof. by rewrite /dl /delta -delta_flat; congr (_%:R * _); congr (nat_of_bool _); rewrite -val_eqE /= eqn_add2l. Qed.

(** disjoint blocks, the first before the second: zero *)
Lemma dl_embed_lt n o1 ws1 o2 ws2 (D : (o1 + prodn ws1 <= o2)%N) (H1 : (o1 + prodn ws1 <= n)%N)
  (H2 : (o2 + prodn ws2 <= n)%N) (j1 : idx ws1) (j2 : idx ws2) (y : R) :
  dl (embed H1 j1) (embed H2 j2) y = 0.
Proof.
rewrite /dl /delta -val_eqE /=; suff /ltn_eqF -> : (o1 + flatI j1 < o2 + flatI j2)%N by rewrite mul0r.
by apply: leq_trans (leq_addr _ _); apply: leq_trans D; rewrite ltn_add2l flatI_lt.
Qed.

(** disjoint blocks, the second before the first: zero *)
Lemma dl_embed_gt n o1 ws1 o2 ws2 (D : (o2 + prodn ws2 <= o1)%N) (H1 : (o1 + prodn ws1 <= n)%N)
  (H2 : (o2 + prodn ws2 <= n)%N) (j1 : idx ws1) (j2 : idx ws2) (y : R) :
  dl (embed H1 j1) (embed H2 j2) y = 0.
Proof. by rewrite /dl /delta eq_sym -/(delta _ _) -/(dl _ _ y) dl_embed_lt // mul0r. Qed.

(** the summed index [u] of a guard [dl u X] (a delta with an embedded position [X]), eliminated
    through the sums between them ([X] reads their indices: symuat's [Σ_u [u = o + flat(j)] f(u)]
    with [j] summed inside) — the sum over [u] moved inside ([exchange_big]), then
    [Σ_u δ_{uX} f(u) = f(X)] *)
Lemma sum_guard0 n (a : 'I_n) (F : 'I_n -> R) : \sum_(u < n) dl u a (F u) = F a.
Proof.
rewrite (bigD1 a) //= big1 ?addr0; first by rewrite /dl /delta eqxx mul1r.
by move=> b /negbTE nb; rewrite /dl /delta nb mul0r.
Qed.
Lemma sum_guard1 n m (f : 'I_m -> 'I_n) (F : 'I_n -> 'I_m -> R) :
  \sum_(u < n) \sum_(a < m) dl u (f a) (F u a) = \sum_(a < m) F (f a) a.
Proof. by rewrite exchange_big; apply: eq_bigr => a _; rewrite sum_guard0. Qed.
Lemma sum_guard2 n m p (f : 'I_m -> 'I_p -> 'I_n) (F : 'I_n -> 'I_m -> 'I_p -> R) :
  \sum_(u < n) \sum_(a < m) \sum_(b < p) dl u (f a b) (F u a b) = \sum_(a < m) \sum_(b < p) F (f a b) a b.
Proof. by rewrite exchange_big; apply: eq_bigr => a _; rewrite sum_guard1. Qed.
Lemma sum_guard3 n m p q (f : 'I_m -> 'I_p -> 'I_q -> 'I_n) (F : 'I_n -> 'I_m -> 'I_p -> 'I_q -> R) :
  \sum_(u < n) \sum_(a < m) \sum_(b < p) \sum_(c < q) dl u (f a b c) (F u a b c)
  = \sum_(a < m) \sum_(b < p) \sum_(c < q) F (f a b c) a b c.
Proof. by rewrite exchange_big; apply: eq_bigr => a _; rewrite sum_guard2. Qed.
Lemma sum_guard4 n m p q s (f : 'I_m -> 'I_p -> 'I_q -> 'I_s -> 'I_n)
  (F : 'I_n -> 'I_m -> 'I_p -> 'I_q -> 'I_s -> R) :
  \sum_(u < n) \sum_(a < m) \sum_(b < p) \sum_(c < q) \sum_(d < s) dl u (f a b c d) (F u a b c d)
  = \sum_(a < m) \sum_(b < p) \sum_(c < q) \sum_(d < s) F (f a b c d) a b c d.
Proof. by rewrite exchange_big; apply: eq_bigr => a _; rewrite sum_guard3. Qed.
(** disjoint blocks, in either order: zero *)
Lemma dl_embed_disjoint n o1 ws1 o2 ws2 (H1 : (o1 + prodn ws1 <= n)%N) (H2 : (o2 + prodn ws2 <= n)%N)
  (j1 : idx ws1) (j2 : idx ws2) (y : R) :
  ((o1 + prodn ws1 <= o2) || (o2 + prodn ws2 <= o1))%N -> dl (embed H1 j1) (embed H2 j2) y = 0.
Proof. by case/orP => D; [exact: dl_embed_lt | exact: dl_embed_gt]. Qed.
(** a guard is symmetric *)
Lemma dl_swap n (a b : 'I_n) (y : R) : dl a b y = dl b a y.
Proof. by rewrite /dl /delta eq_sym. Qed.

(** a guard of a block index that is not summed (a free row or column index) as the block's
    indicator again, an atom of the product: the guards after it are no longer behind it *)
Lemma dl_embed_atom n o ws (H : (o + prodn ws <= n)%N) (u : 'I_n) (j : idx ws) (y : R) :
  dl u (embed H j) y = axis_at o u j * y.
Proof. by []. Qed.
Lemma dl_embed_atom_r n o ws (H : (o + prodn ws <= n)%N) (u : 'I_n) (j : idx ws) (y : R) :
  dl (embed H j) u y = axis_at o u j * y.
Proof. by rewrite dl_swap. Qed.
(** a guard of zero *)
Lemma dl_0 n (a b : 'I_n) : dl a b (0 : R) = 0.
Proof. by rewrite /dl mulr0. Qed.
End Blocks.

Arguments embed {n o ws}.

(** the block fits, or two blocks are disjoint: an inequality of sizes, linear in the dimensions *)
Ltac symuat_fit :=
  cbn [prodn]; rewrite ?muln1 ?mul1n; apply/leP; rewrite -?plusE -?multE; lia.

(** two blocks are disjoint (either is before the other) *)
Ltac symuat_disjoint := apply/orP; first [left; symuat_fit | right; symuat_fit].

(** every block of the goal ([axis_block n o ws], a closed term: before the nodes are unfolded)
    as the same matrix written with a delta of the embedded position ([axis_at_delta], by
    conversion), the fit proved once per block ([Hfit]) *)
Ltac symuat_blocks_in :=
  repeat match goal with |- context [@axis_block ?R ?n ?o ?ws] =>
    let H := fresh "Hfit" in
    assert (H : (o + prodn ws <= n)%N) by symuat_fit;
    change (@axis_block R n o ws) with (fun (i : idx [:: n]) (j : idx ws) => @delta R n i.1 (embed H j));
    idtac "symuat-lemma axis_at_delta"
  end.

(** after the deltas: a summed block index whose guard reads indices summed inside it
    ([sum_guard1..4]); a delta between two embedded positions: the same block's component deltas
    ([dl_embed_same]) or zero for two blocks proved disjoint ([dl_embed_disjoint]); a guard of a
    block index that is not summed as the block's indicator again, an atom ([dl_embed_atom]) *)
Ltac symuat_blocks_out :=
  repeat (first [ setoid_rewrite sum_guard1 | setoid_rewrite sum_guard2 | setoid_rewrite sum_guard3
                | setoid_rewrite sum_guard4 ]; idtac "symuat-lemma sum_guard");
  repeat (setoid_rewrite dl_embed_same; idtac "symuat-lemma dl_embed_same");
  cbn [deltaI fst snd];
  repeat (setoid_rewrite dl_embed_disjoint; [ | solve [symuat_disjoint] .. ];
          idtac "symuat-lemma dl_embed_disjoint");
  repeat (setoid_rewrite dl_0; idtac "symuat-lemma dl_0");
  repeat (setoid_rewrite dl_embed_atom; idtac "symuat-lemma dl_embed_atom");
  repeat (setoid_rewrite dl_embed_atom_r; idtac "symuat-lemma dl_embed_atom").

(** the block steps, only when the goal has a block *)
Ltac symuat_blocks :=
  lazymatch goal with
  | |- context [axis_block _ _ _] => symuat_blocks_in
  | |- _ => idtac
  end.
Ltac symuat_blocks_after :=
  lazymatch goal with
  | |- context [embed _ _] => symuat_blocks_out
  | |- _ => idtac
  end.
