(** * SymuatArith: linear arithmetic over ℚ with absolute values (A1's pruning inequalities)

    A statement [forall vars, H_1 -> … -> H_k -> C] whose atoms are (strict or non-strict)
    inequalities between linear expressions with rational coefficients, possibly under (nested)
    absolute values [Qabs], stated over Coq's [Q] (exported by [src/symuat/certify/implication.py]).

    [symuat_abs_cases] is symuat's own case split (kernel/decide/implication.py): for an innermost
    [Qabs e] (one whose argument has no [Qabs]) the two cases [e < 0] (then [Qabs e == - e]) and
    [0 <= e] (then [Qabs e == e]); in each, [Qabs e] is replaced by a fresh variable with that
    equation, so the next innermost one appears. Each case is then a conjunction of linear
    inequalities, closed by [lra] (Coq's [Lqa]: Fourier–Motzkin/simplex with a certificate the
    kernel checks by computation — the elimination symuat ran, re-done by Coq). Everything here is
    constructive: [Print Assumptions] lists no axiom (Coq's [R] would bring the classical ones).

    [symuat_linear] proves such a statement; its negation is proved by instantiating symuat's
    rational counterexample ([intro H; specialize (H v_1 … v_n)], written by the exporter), then
    [symuat_refute_point]: at the point the hypotheses evaluate to true and the conclusion to
    false, so [lra] closes each sign case (a "counterexample" at which the conclusion holds leaves
    a satisfiable case: the proof fails). *)

From Coq Require Export QArith Qabs.
From Coq Require Import Lqa.
Local Open Scope Q_scope.

Ltac symuat_abs_case e :=
  let c := fresh "c" in let h := fresh "h" in let a := fresh "a" in
  destruct (Qlt_le_dec e 0) as [c|c];
  [ assert (h : Qabs e == - e) by (apply Qabs_neg; apply Qlt_le_weak; exact c)
  | assert (h : Qabs e == e) by (apply Qabs_pos; exact c) ];
  set (a := Qabs e) in *; clearbody a.

(** every innermost [Qabs] of the goal and the hypotheses, split until none is left *)
Ltac symuat_abs_cases :=
  repeat match goal with
  | |- context [Qabs ?e] => lazymatch e with context [Qabs _] => fail | _ => symuat_abs_case e end
  | H : context [Qabs ?e] |- _ => lazymatch e with context [Qabs _] => fail | _ => symuat_abs_case e end
  end.

Ltac symuat_linear := intros; symuat_abs_cases; lra.

(** the negation of a statement, once it is instantiated at symuat's counterexample *)
Ltac symuat_refute_point := symuat_abs_cases; lra.
