(** * SymuatRotary: the one-pair lemma of RoPE's relative position, under the addition formulas.

    RoPE's relative form [R_nᵀR_m = R_{m-n}] at every width is two steps in symuat (X2.rel.all,
    WP8.relative): the placement of the pairs, an identity of matrices for generic 2×2 blocks
    (certified as every identity is, [rot_half]/[rot_inter]/[axis_block] of SymuatMx), and one 2×2
    block, which SymPy proves at symbolic angles by the angle-addition formulas alone
    ([sympy.expand_trig]; [cos² + sin² = 1] is not used).  The second step is stated here over any
    commutative ring [R] with [c s : R -> R] standing for cos and sin, and the one trigonometric
    fact that step uses as the theorem's premises: the addition formulas for a difference,
    [c (b - a) = c a c b + s a s b] and [s (b - a) = c a s b - s a c b] — so the theorem holds for
    cos and sin of ℝ in particular, and says that nothing else about them is used.

    Two orientations of the block, as symuat builds them:
    - [rot2 c s a = [[c a, -s a], [s a, c a]]], acting on a column
      (symuat.expr.decoder.rotation: X2's pair);
    - [rot2_row c s a = [[c a, s a], [-s a, c a]]], acting on a row
      (symuat.kernel.decide.rotations.block, the leaf of a [PairRotation]: WP8's pair).
    [symuat_rot2] proves such a statement entry by entry (the four entries of a 2×2 matrix, the
    sum over the pair written out), rewriting each [c (b - a)], [s (b - a)] by the premises and
    closing by the ring's sign and commutativity laws; a wrong statement (a sign flipped, the
    difference the other way) leaves an entry they cannot close. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Rotary.
Variable R : comRingType.

(** the 2×2 rotation at angle [a] acting on a column: [[c a, -s a], [s a, c a]] *)
Definition rot2 (c s : R -> R) (a : R) : mx R [:: 2%N] [:: 2%N] :=
  fun i j => if (i.1 : nat) == j.1 then c a else if (i.1 : nat) == 0%N then - s a else s a.
(** the same block acting on a row: [[c a, s a], [-s a, c a]] *)
Definition rot2_row (c s : R -> R) (a : R) : mx R [:: 2%N] [:: 2%N] :=
  fun i j => if (i.1 : nat) == j.1 then c a else if (i.1 : nat) == 0%N then s a else - s a.
End Rotary.

(** entry by entry: the indices of [[:: 2]] listed, the sum over the pair written out, each
    [c (b - a)], [s (b - a)] ([(n' - n) θ] first as [n'θ - nθ]) rewritten by the premises, the
    signs and the order of the two summands *)
Ltac symuat_rot2 Hc Hs :=
  let I := fresh "I" in let J := fresh "J" in
  move=> I J; symuat_destruct;
  repeat match goal with o : 'I_2 |- _ => case: o => -[|[|?]] ? // end;
  rewrite /mul /tr /rot2 /rot2_row /=; cbn [sumI];
  rewrite !big_ord_recr big_ord0 /=;
  rewrite ?mulrBl ?Hc ?Hs; idtac "symuat-lemma rot_addition";
  (* the entry, up to the order of two summands and the signs of products *)
  first [ by rewrite add0r ?mulrNN ?mulNr ?mulrN ?opprB
        | by rewrite add0r ?mulrNN ?mulNr ?mulrN ?opprB addrC ].
