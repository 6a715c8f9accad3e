(** * SymuatRef: A4's exact reference Transformer, over Coq's binary rationals [Q].

    A4 (DUAT Eq. 18, LoRA in the DUAT form) is refuted by comparing the printed formula, under
    each reading, with what an exact Transformer computes ([symuat.numeric.lora]): the check's
    counterexamples are rational with 30–500 digits, which MathComp's [rat] (unary [nat]) cannot
    compute with, so this file restates the kernel's definitions over [Q] (binary, each operation
    followed by [Qred]: [Qred q == q]) with matrices as lists of rows ([qmx]); equality of two
    matrices is [qmx_eqb] (same shape, entries equal as rationals, [Qeq_bool]).

    - [tblock]: one layer of [lora.ExactBlock] ([X @ W] convention, [X : N×M]): attention
      [H_{nn'} = s_{nn'} / Σ_{n''} s_{nn''}], [s = 1 + (q_n·k_{n'})²] (rational, row-stochastic),
      [Y = X + H X W_V W_O], the FFN [Y + softsign(Y W_1 + b_1) W_2 + b_2] with
      [softsign t = t / (1 + |t|)] (the σ the kernel evaluates; rational, no premise).
    - [raw_of]: the block's Eq. 20 parameters at its input ([ExactBlock.raw], [vec_r]):
      [W1 = I + H ⊗ (W_V W_O)ᵀ], [W2 = (I_N ⊗ W_1ᵀ) W1], [b2 = 1_N ⊗ b_1], [W3 = I_N ⊗ W_2ᵀ],
      [b3 = 1_N ⊗ b_2].
    - [form]: symuat's recursion ([symuat.expr.residual.unroll_step], the recursion of
      [SymuatDepth]'s [cW1 cb1 cW3 cW2 cb2]) on those parameters, each layer's taken at its own
      input: [A' = W1 A], [c' = W1 c + b3], [U'_j = W1 U_j] (and [U'_L = W3]),
      [V_L = W2 A], [e_L = W2 (c + Σ_j U_j σ(V_j x_0 + e_j)) + b2]; [unrolled] its value
      [A x_0 + c + Σ_j U_j σ(V_j x_0 + e_j)] — the reference the check compares with (that it is
      the Transformer's forward pass, A4.ref, is proved at each witness by computation beside the
      refutation: [unrolled (form ft X0)] against [vec_r (tforward ft X0)]).
    - [eq18]: printed Eq. 18 under a reading ([lora.eq18], op = times):
      [(W'_{L,1} x_0 + b_{L,1}) + Σ_j (W'_{j,3} + ΔW_{m,3}) σ((W'_{j,2} + ΔW_{m,2}) x_0 + b'_{j,2})]
      with the base network's combined parameters, [m = j] or [j+1] ([idx]), [ΔW] induced
      (fine-tuned minus base combined parameter) or raw (the lift [I_N ⊗ ΔWᵀ] of the LoRA
      increment in its slot at the tuned layer, zero elsewhere), [ΔW_{L+1,·} = 0], [b'_{j,2}] the
      base's ([kept]) or the fine-tuned network's ([recomputed]).
    - [tune]: LoRA on one layer: [W_2 + B A] (target W3: the FFN's second matrix) or
      [W_1 + B A] (target W2: its first).

    A theorem [~ (forall blocks B A X0, shapes -> qmx_eqb (eq18 …) (unrolled …))] is proved by
    instantiating a counterexample and computing: the shapes hold, the comparison is [false]. The
    counterexample is the exporter's own small witness ([reference.small_witness]: entries in
    {-1, 0, 1, 2}, a few digits; any instance refutes the [forall]), not the kernel's (30–500
    digits: cheap for the VM, not for coqchk's lazy machine).  A "counterexample" at which the sides agree leaves [true]: rejected. *)
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From Coq Require Export ZArith.
From Coq Require Import QArith Qabs.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Close Scope Q_scope.

Definition qmx := seq (seq Q).

Definition qadd (a b : Q) : Q := Qred (Qplus a b).
Definition qmul (a b : Q) : Q := Qred (Qmult a b).
Definition qdiv (a b : Q) : Q := Qred (Qdiv a b).
Definition qopp (a : Q) : Q := Qred (Qopp a).
Definition q0 : Q := Qmake 0 1.
Definition q1 : Q := Qmake 1 1.
(** a rational literal [n / d] *)
Definition qz (n : Z) (d : positive) : Q := Qmake n d.
Arguments qz n%Z d%positive.

Definition qsum (l : seq Q) : Q := foldr qadd q0 l.
Definition dot (u v : seq Q) : Q := qsum [seq qmul p.1 p.2 | p <- zip u v].

(** matrices: rows; a column vector is a matrix of rows of length 1 *)
Definition ncols (A : qmx) : nat := if A is r :: _ then size r else 0.
Definition trq (A : qmx) : qmx := mkseq (fun j => [seq nth q0 r j | r <- A]) (ncols A).
Definition mm (A B : qmx) : qmx := let Bt := trq B in [seq [seq dot r c | c <- Bt] | r <- A].
Definition madd (A B : qmx) : qmx := [seq [seq qadd p.1 p.2 | p <- zip rc.1 rc.2] | rc <- zip A B].
Definition mopp (A : qmx) : qmx := [seq [seq qopp a | a <- r] | r <- A].
Definition msub (A B : qmx) : qmx := madd A (mopp B).
Definition mzero (m n : nat) : qmx := nseq m (nseq n q0).
Definition eye (n : nat) : qmx := mkseq (fun i => mkseq (fun j => if i == j then q1 else q0) n) n.
Definition mapq (f : Q -> Q) (A : qmx) : qmx := [seq [seq f a | a <- r] | r <- A].
(** the Kronecker product, row-major: row [(a, b)], column [(c, d)] is [A_{ac} B_{bd}] *)
Definition kron (A B : qmx) : qmx :=
  flatten [seq [seq flatten [seq [seq qmul a b | b <- rb] | a <- ra] | rb <- B] | ra <- A].
(** [vec_r X]: the rows of [X] one after the other, as a column *)
Definition vec_r (X : qmx) : qmx := [seq [:: x] | x <- flatten X].
(** a row vector [b] added to every row *)
Definition addrow (X : qmx) (b : seq Q) : qmx := [seq [seq qadd p.1 p.2 | p <- zip r b] | r <- X].
(** [1_N ⊗ b] as a column *)
Definition tile (n : nat) (b : seq Q) : qmx := vec_r (nseq n b).

(** same shape, and entries equal as rationals *)
Definition qmx_eqb (A B : qmx) : bool :=
  (size A == size B) && all (fun rs => (size rs.1 == size rs.2) && all (fun p => Qeq_bool p.1 p.2) (zip rs.1 rs.2))
                            (zip A B).
(** [A] has [m] rows of length [n] *)
Definition shaped (m n : nat) (A : qmx) : bool := (size A == m) && all (fun r => size r == n) A.

(** ** The exact Transformer *)
Definition softsign (t : Q) : Q := qdiv t (qadd q1 (Qabs t)).

Record tblock := TBlock { bWQ : qmx; bWK : qmx; bWV : qmx; bWO : qmx; bW1 : qmx; bb1 : seq Q; bW2 : qmx; bb2 : seq Q }.

Definition attention (b : tblock) (X : qmx) : qmx :=
  let Qm := mm X (bWQ b) in let Km := mm X (bWK b) in
  let s := [seq [seq qadd q1 (qmul (dot qn kn) (dot qn kn)) | kn <- Km] | qn <- Qm] in
  [seq let t := qsum row in [seq qdiv v t | v <- row] | row <- s].

Definition tlayer (b : tblock) (X : qmx) : qmx :=
  let Y := madd X (mm (mm (mm (attention b X) X) (bWV b)) (bWO b)) in
  let Z := addrow (mm Y (bW1 b)) (bb1 b) in
  addrow (madd Y (mm (mapq softsign Z) (bW2 b))) (bb2 b).

(** the input of every layer (the last layer's output is not computed) *)
Fixpoint tinputs (bs : seq tblock) (X : qmx) : seq qmx :=
  if bs is b :: bs' then X :: (if bs' is [::] then [::] else tinputs bs' (tlayer b X)) else [::].
(** the forward pass *)
Definition tforward (bs : seq tblock) (X : qmx) : qmx := foldl (fun Y b => tlayer b Y) X bs.

(** ** A layer's Eq. 20 parameters at its input, and symuat's recursion *)
Record rawl := Raw { rW1 : qmx; rW2 : qmx; rb2 : qmx; rW3 : qmx; rb3 : qmx }.

Definition raw_of (b : tblock) (X : qmx) : rawl :=
  let N := size X in let M := ncols X in
  let W1 := madd (eye (N * M)) (kron (attention b X) (trq (mm (bWV b) (bWO b)))) in
  Raw W1 (mm (kron (eye N) (trq (bW1 b))) W1) (tile N (bb1 b)) (kron (eye N) (trq (bW2 b))) (tile N (bb2 b)).

Record uform := UForm { fA : qmx; fc : qmx; fU : seq qmx; fV : seq qmx; fe : seq qmx }.

Definition sig (v : qmx) : qmx := mapq softsign v.
Definition term (x0 U V e : qmx) : qmx := mm U (sig (madd (mm V x0) e)).
Definition terms (x0 : qmx) (f : uform) : seq qmx :=
  [seq term x0 p.1 p.2.1 p.2.2 | p <- zip (fU f) (zip (fV f) (fe f))].
Definition msum (like : qmx) (l : seq qmx) : qmx :=
  if l is a :: l' then foldl madd a l' else mapq (fun _ => q0) like.

(** [symuat.expr.residual.unroll_step] *)
Definition unroll_step (x0 : qmx) (f : uform) (l : rawl) : uform :=
  let Rm := msum (fc f) (terms x0 f) in
  UForm (mm (rW1 l) (fA f)) (madd (mm (rW1 l) (fc f)) (rb3 l))
        (rcons [seq mm (rW1 l) U | U <- fU f] (rW3 l)) (rcons (fV f) (mm (rW2 l) (fA f)))
        (rcons (fe f) (madd (mm (rW2 l) (madd (fc f) Rm)) (rb2 l))).

(** the unrolled form of blocks [bs] at input [X0] ([lora.exact_form]) *)
Definition form (bs : seq tblock) (X0 : qmx) : uform :=
  let x0 := vec_r X0 in let D := size x0 in
  foldl (unroll_step x0) (UForm (eye D) (mzero D 1) [::] [::] [::])
        [seq raw_of p.1 p.2 | p <- zip bs (tinputs bs X0)].

(** [A x_0 + c + Σ_j U_j σ(V_j x_0 + e_j)] *)
Definition unrolled (X0 : qmx) (f : uform) : qmx :=
  let x0 := vec_r X0 in foldl madd (madd (mm (fA f) x0) (fc f)) (terms x0 f).

(** ** LoRA on one layer ([k], 1-based) and printed Eq. 18 *)
Inductive target := TW3 | TW2.
Definition tune (t : target) (k : nat) (dW : qmx) (bs : seq tblock) : seq tblock :=
  [seq if p.1 == k.-1 then
         (let b := p.2 in match t with
          | TW3 => TBlock (bWQ b) (bWK b) (bWV b) (bWO b) (bW1 b) (bb1 b) (madd (bW2 b) dW) (bb2 b)
          | TW2 => TBlock (bWQ b) (bWK b) (bWV b) (bWO b) (madd (bW1 b) dW) (bb1 b) (bW2 b) (bb2 b) end)
       else p.2 | p <- zip (iota 0 (size bs)) bs].

(** a reading of Eq. 18 with op = times: [Δ] induced (else raw), [b2] recomputed (else kept),
    [idx] j + 1 (else j) *)
Record reading := Reading { induced : bool; recomputed : bool; shifted : bool }.

(** [eq18 r t k N dW base ft X0]: Eq. 18 under [r] for LoRA [dW] on [t] of layer [k] *)
Definition eq18 (r : reading) (t : target) (k N : nat) (dW : qmx) (base ft : uform) (X0 : qmx) : qmx :=
  let x0 := vec_r X0 in let L := size (fe base) in
  let lift := kron (eye N) (trq dW) in
  let d3 m U := if leq L m then mapq (fun _ => q0) U
                else if induced r then msub (nth [::] (fU ft) m) (nth [::] (fU base) m)
                else if (if t is TW3 then true else false) && (m.+1 == k) then lift else mapq (fun _ => q0) U in
  let d2 m V := if leq L m then mapq (fun _ => q0) V
                else if induced r then msub (nth [::] (fV ft) m) (nth [::] (fV base) m)
                else if (if t is TW2 then true else false) && (m.+1 == k) then lift else mapq (fun _ => q0) V in
  let one j := let m := if shifted r then j.+1 else j in
    let U := nth [::] (fU base) j in let V := nth [::] (fV base) j in
    let e := nth [::] (fe (if recomputed r then ft else base)) j in
    mm (madd U (d3 m U)) (sig (madd (mm (madd V (d2 m V)) x0) e)) in
  foldl madd (madd (mm (fA base) x0) (fc base)) [seq one j | j <- iota 0 L].

(** the shapes of an instance: [L] blocks of sizes [M], [F] (query/key width [kq]), LoRA factors
    [B : p × r], [A : r × q] of the tuned matrix's shape, input [N × M] *)
Definition block_shaped (M F kq : nat) (b : tblock) : bool :=
  [&& shaped M kq (bWQ b), shaped M kq (bWK b), shaped M M (bWV b), shaped M M (bWO b),
      shaped M F (bW1 b), size (bb1 b) == F, shaped F M (bW2 b) & size (bb2 b) == M].
Definition instance_shaped (t : target) (L N M F kq r : nat) (bs : seq tblock) (B A X0 : qmx) : bool :=
  let (p, q) := if t is TW3 then (F, M) else (M, F) in
  [&& size bs == L, all (block_shaped M F kq) bs, shaped p r B, shaped r q A & shaped N M X0].

(** ** A4.concl: which combined weights LoRA on layer [k] changes *)
(** [W'_{j,3}] (after the [L] layers) and [W'_{j,2}] of index [j + 1] are unchanged *)
Definition unchanged (base ft : uform) (j : nat) : bool :=
  qmx_eqb (nth [::] (fU ft) j) (nth [::] (fU base) j) && qmx_eqb (nth [::] (fV ft) j) (nth [::] (fV base) j).
(** "LoRA on layer [k] changes no combined weight of another index": [W'_{L,1}] (index [L]) and
    every [W'_{j,3}], [W'_{j,2}] with [j ≠ k] (the biases, recomputed by T9, are not weights) *)
Definition layerwise_k (k : nat) (base ft : uform) : bool :=
  let L := size (fe base) in
  ((k == L) || qmx_eqb (fA ft) (fA base)) && all (fun j => (j.+1 == k) || unchanged base ft j) (iota 0 L).
(** "… no combined weight of an index below [k]" *)
Definition layerwise_ge (k : nat) (base ft : uform) : bool := all (unchanged base ft) (iota 0 k.-1).

(** ** A4.ref at one instance, in the library: the unrolled form is the forward pass
    (the base network of A4's scenario L = 2, k = 1: [lora._base(2, 1, exact=True)], N = M = F = 2).
    A recursion with a wrong index (an earlier [U_j] not multiplied by the new [W1], [e_L] from the
    wrong state) makes this file fail to compile ([tests/test_certify_reference.py]). *)
Definition ref_blocks : seq tblock :=
  [:: (TBlock [:: [:: (qz (-1) 1); (qz 1 1)]; [:: (qz 1 1); (qz 1 1)]] [:: [:: (qz 0 1); (qz 0 1)]; [:: (qz 2 1); (qz 1 1)]] [:: [:: (qz (-2) 1); (qz (-2) 1)]; [:: (qz (-1) 1); (qz 0 1)]] [:: [:: (qz (-2) 1); (qz 0 1)]; [:: (qz 2 1); (qz 0 1)]] [:: [:: (qz 0 1); (qz 2 1)]; [:: (qz 2 1); (qz 1 1)]] [:: (qz 0 1); (qz (-1) 1)] [:: [:: (qz (-2) 1); (qz 2 1)]; [:: (qz (-2) 1); (qz 2 1)]] [:: (qz 1 1); (qz 2 1)]);
      (TBlock [:: [:: (qz (-1) 1); (qz 1 1)]; [:: (qz 1 1); (qz (-2) 1)]] [:: [:: (qz (-2) 1); (qz 1 1)]; [:: (qz (-2) 1); (qz (-1) 1)]] [:: [:: (qz 1 1); (qz 2 1)]; [:: (qz 2 1); (qz (-2) 1)]] [:: [:: (qz 0 1); (qz 2 1)]; [:: (qz (-2) 1); (qz 0 1)]] [:: [:: (qz 2 1); (qz (-2) 1)]; [:: (qz 2 1); (qz 2 1)]] [:: (qz (-2) 1); (qz (-1) 1)] [:: [:: (qz (-1) 1); (qz 2 1)]; [:: (qz (-1) 1); (qz 2 1)]] [:: (qz 2 1); (qz 2 1)])].
Definition ref_input : qmx := [:: [:: (qz 2 1); (qz 2 1)]; [:: (qz 0 1); (qz (-2) 1)]].
Lemma ref_unrolled_is_forward : qmx_eqb (unrolled ref_input (form ref_blocks ref_input))
                                        (vec_r (tforward ref_blocks ref_input)).
Proof. vm_compute; reflexivity. Qed.

(** ** T10: which combined weights depend on the input
    T10's refutations ([src/symuat/certify/exact_dependence.py]) use the definitions above as they
    are: [~ (forall bs X X', [size bs == 3], [block_shaped], [shaped] -> qmx_eqb (P (form bs X))
    (P (form bs X')))] for a combined weight [P] of [form] missing from a paper's printed list,
    proved by [vm_compute] at a small network and two inputs the exporter finds (entries in
    {-1, 0, 1, 2}, a few digits after three layers: under a second of coqc and of coqchk), and
    beside it, at that instance, [unrolled (form bs X)] against [vec_r (tforward bs X)] at both
    inputs and [P]'s values against the kernel's evaluator's. *)

(** ** One instance's computations, shared by its theorems
    The eight op=times readings of one target are refuted at one instance (the same [bs B A X0]);
    each reading's theorem and its A4.ref/values theorem would evaluate [form bs X0] and
    [form ft X0] again (coqchk, which has no VM, re-checks each by the kernel's conversion).
    [a4_values] evaluates them once ([let]: shared by the VM and by the kernel's lazy machine) and
    lists, in the order of [readings8]: every reading's comparison of Eq. 18 with the reference
    (8 booleans), every reading's Eq. 18 against the value [lhs] the kernel computed (8), the
    reference against the forward pass (A4.ref) and against the kernel's value [rhs] (2). One lemma
    of the batch states its value at the instance (proved by [vm_compute]); each theorem, its
    statement as before, is that lemma's entry ([refuted_reading], [ref_values]). *)
Definition readings8 : seq reading :=
  [:: Reading true false false; Reading true false true; Reading true true false; Reading true true true;
      Reading false false false; Reading false false true; Reading false true false; Reading false true true].

Definition a4_values (t : target) (k N : nat) (bs : seq tblock) (B A X0 : qmx) (lhs : seq qmx) (rhs : qmx) : seq bool :=
  let dW := mm B A in let ftb := tune t k dW bs in
  let base := form bs X0 in let ft := form ftb X0 in let ref := unrolled X0 ft in
  let sides := [seq eq18 r t k N dW base ft X0 | r <- readings8] in
  [seq qmx_eqb s ref | s <- sides] ++ [seq qmx_eqb (nth [::] sides i) (nth [::] lhs i) | i <- iota 0 8]
  ++ [:: qmx_eqb ref (vec_r (tforward ftb X0)); qmx_eqb ref rhs].

Lemma a4_values_reading t k N bs B A X0 lhs rhs i : i < 8 ->
  nth true (a4_values t k N bs B A X0 lhs rhs) i =
  qmx_eqb (eq18 (nth (Reading true true true) readings8 i) t k N (mm B A) (form bs X0) (form (tune t k (mm B A) bs) X0) X0)
          (unrolled X0 (form (tune t k (mm B A) bs) X0)).
Proof. by case: i => [|[|[|[|[|[|[|[|i]]]]]]]]. Qed.

Lemma a4_values_side t k N bs B A X0 lhs rhs i : i < 8 ->
  nth true (a4_values t k N bs B A X0 lhs rhs) (8 + i) =
  qmx_eqb (eq18 (nth (Reading true true true) readings8 i) t k N (mm B A) (form bs X0) (form (tune t k (mm B A) bs) X0) X0)
          (nth [::] lhs i).
Proof. by case: i => [|[|[|[|[|[|[|[|i]]]]]]]]. Qed.

Lemma a4_values_ref t k N bs B A X0 lhs rhs :
  nth true (a4_values t k N bs B A X0 lhs rhs) 16 =
    qmx_eqb (unrolled X0 (form (tune t k (mm B A) bs) X0)) (vec_r (tforward (tune t k (mm B A) bs) X0)) /\
  nth true (a4_values t k N bs B A X0 lhs rhs) 17 = qmx_eqb (unrolled X0 (form (tune t k (mm B A) bs) X0)) rhs.
Proof. by []. Qed.

(** "the shapes hold at the instance and the reading's comparison is [false] there → not for all" *)
Lemma refuted_reading t k L N M F kq r bs B A X0 lhs rhs bools i :
  a4_values t k N bs B A X0 lhs rhs = bools -> i < 8 -> nth true bools i = false ->
  instance_shaped t L N M F kq r bs B A X0 ->
  ~ (forall (bs : seq tblock) (B A X0 : qmx), instance_shaped t L N M F kq r bs B A X0 ->
       qmx_eqb (eq18 (nth (Reading true true true) readings8 i) t k N (mm B A) (form bs X0) (form (tune t k (mm B A) bs) X0) X0)
               (unrolled X0 (form (tune t k (mm B A) bs) X0))).
Proof. by move=> V Hi Hf Hs H; move: (H _ _ _ _ Hs); rewrite -(@a4_values_reading t k N bs B A X0 lhs rhs i Hi) V Hf. Qed.

(** A4.ref and the kernel's values at the instance, from the same lemma *)
Lemma ref_values t k N bs B A X0 lhs rhs bools i :
  a4_values t k N bs B A X0 lhs rhs = bools -> i < 8 ->
  nth true bools (8 + i) -> nth true bools 16 -> nth true bools 17 ->
  (qmx_eqb (unrolled X0 (form (tune t k (mm B A) bs) X0)) (vec_r (tforward (tune t k (mm B A) bs) X0))) &&
  (qmx_eqb (eq18 (nth (Reading true true true) readings8 i) t k N (mm B A) (form bs X0) (form (tune t k (mm B A) bs) X0) X0)
           (nth [::] lhs i)) &&
  (qmx_eqb (unrolled X0 (form (tune t k (mm B A) bs) X0)) rhs).
Proof.
move=> V Hi Hs Hr Hv; have [R1 R2] := a4_values_ref t k N bs B A X0 lhs rhs.
by rewrite -(@a4_values_side t k N bs B A X0 lhs rhs i Hi) -R1 -R2 V Hs Hr Hv.
Qed.
