(** * SymuatFlat: flat positions — where a picture puts the entries of a multi-index space.

    The library's matrices are indexed by multi-indices ([idx [:: N; M]], SymuatMx), which say
    nothing about where an entry is drawn in a printed vector.  A picture (M1's: "column 2 of
    [W'] is column 1 shifted down by one, [x' = (x_{11}, …, x_{1M}, x_{21}, …)]") is about flat
    positions, so its statement has to name them: the flat position of the multi-index [(a, b)]
    of [[:: A; B]] is [a*B + b] ([fpos]).  For [vec_r x] of an [N×M] matrix (space [[:: N; M]])
    that is the row-major position [n*M + m] of the picture; for [vec_c x] (space [[:: M; N]])
    it is the column-major [m*N + n], and the picture's statements are false there (Coq rejects
    them: [tests/test_certify_picture.py]).

    The statements read entries at flat positions ([flat_at], [flatm_at]) against the picture
    written out ([printed_col]: [w_k] at positions [k*B + c], zeros elsewhere; [printed_rows]:
    [x] listed row by row).  The proof ([symuat_picture]) rewrites a flat position that is a
    fixed small number into the multi-index it names ([fpos_front]: [a*B + b = c] with [c < B]
    iff [a = 0] and [b = c]) and then runs the index calculus of [symuat_entry]. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatTac.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

Section Flat.
Variable R : comRingType.

(** the flat position of the multi-index [(a, b)] of [[:: A; B]], outer index first *)
Definition fpos A B (i : idx [:: A; B]) : nat := (i.1 * B + i.2.1)%N.

(** entry [p] of a vector over [[:: A; B]] listed at its flat positions *)
Definition flat_at A B (v : mx R [:: A; B] [::]) (p : nat) : R :=
  sumI (fun i => (fpos i == p)%:R * v i tt).

(** entry [(p, q)] of a matrix over [[:: A; B]] with rows and columns listed at their flat
    positions: [q] is the column the picture numbers [q + 1] *)
Definition flatm_at A B (X : mx R [:: A; B] [:: A; B]) (p q : nat) : R :=
  sumI (fun i => sumI (fun j => (fpos i == p)%:R * ((fpos j == q)%:R * X i j))).

(** the picture's column: [w_k] at the flat positions [k*B + c] ([k < A]), zeros elsewhere;
    [c = 0]: [(w_1, 0_{B-1}, w_2, 0_{B-1}, …, w_A, 0_{B-1})], [c = 1]: the same shifted down by one *)
Definition printed_col A B (c : nat) (w : mx R [:: A] [::]) (p : nat) : R :=
  \sum_(k < A) ((k * B + c)%N == p)%:R * w (k, tt) tt.

(** the picture's listing of [x ∈ R^{A×B}] row by row: [x_{ab}] at the flat position [a*B + b] *)
Definition printed_rows A B (x : mx R [:: A] [:: B]) (p : nat) : R :=
  \sum_(a < A) \sum_(b < B) ((a * B + b)%N == p)%:R * x (a, tt) (b, tt).

(** a flat position below [B] names the multi-index [(0, c)] *)
Lemma fpos_front A B c (hA : (0 < A)%N) (hc : (c < B)%N) (j : idx [:: A; B]) :
  (fpos j == c)%:R = delta j.1 (Ordinal hA) * delta j.2.1 (Ordinal hc) :> R.
Proof.
case: j => [[a Ha] [[b Hb] []]]; rewrite /fpos /delta /=.
have -> : (Ordinal Ha == Ordinal hA) = (a == 0)%N by [].
have -> : (Ordinal Hb == Ordinal hc) = (b == c)%N by [].
case: a Ha => [|a] Ha /=; first by rewrite mul0n add0n mul1r.
rewrite mul0r; have /negbTE -> // : (a.+1 * B + b != c)%N.
by rewrite neq_ltn (leq_trans hc) ?orbT // mulSn -addnA leq_addr.
Qed.
End Flat.

Arguments fpos {A B}.
Arguments flat_at {R A B}.
Arguments flatm_at {R A B}.
Arguments printed_col {R A} B.
Arguments printed_rows {R A B}.

(** A picture's statement: the flat entries unfolded, every fixed flat position [fpos j == c]
    with [c < B] rewritten to the multi-index it names (the ranges [0 < A], [c < B] are premises
    of the statement), the remaining positions written out ([a*B + b]), then the index calculus
    of [symuat_entry]: prenex form, deltas, closing. *)
Ltac symuat_picture :=
  let p := fresh "p" in
  intros p;
  rewrite /flatm_at /flat_at /printed_col /printed_rows;
  symuat_unfold_nodes;
  cbn [sumI splitI deltaI cat fst snd];
  repeat match goal with
         | hA : is_true (0 < ?A)%N, hc : is_true (?c < ?B)%N |- context [@fpos ?A ?B _ == ?c] =>
             setoid_rewrite (@fpos_front _ A B c hA hc); idtac "symuat-lemma fpos_front"
         end;
  cbn [fst snd];
  symuat_prenex; symuat_deltas; cbn [fst snd fpos nat_of_ord]; symuat_prenex; symuat_one_add;
  symuat_close.
