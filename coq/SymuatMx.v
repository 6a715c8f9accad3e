(** * SymuatMx: the papers' objects over MathComp, for symbolic sizes.

    A matrix with row space [rs] and column space [cs] (lists of dimensions, as in
    symuat.kernel.index_calculus) is a function of two multi-indices: [idx [:: N; M]] is
    ['I_N * ('I_M * unit)], the flattened index of [vec_r] of an [N×M] matrix being the pair
    [(n, m)] (row-major, [nM+m]; see [vec_r_index] below for the bridge to MathComp's
    [mxvec_index]).  A size-1 axis has the empty space [[::]] (index type [unit]).  Entries
    live in any commutative ring [R] (the statements are polynomial identities with integer
    coefficients, so they hold over ℝ in particular).

    Equality of two matrices is entrywise ([A =m B]), the index-level view of mathlib's
    [Matrix] and of symuat's normal forms. *)
From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint matrix.
From Coq Require Import Setoid Morphisms.
Import GRing.Theory.
Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Local Open Scope ring_scope.

(** Rewriting under the binder of a big operator (congruence of [bigop] for pointwise
    equality; no functional extensionality). *)
#[export] Instance bigop_proper (T I : Type) (idx : T) (r : seq I) :
  Proper (pointwise_relation I eq ==> eq) (@BigOp.bigop T I idx r).
Proof. move=> F G FG; rewrite unlock; elim: r => //= a r ->; by rewrite FG. Qed.
#[export] Instance bigbody_proper (T I : Type) (i : I) op b :
  Proper (eq ==> eq) (@BigBody T I i op b).
Proof. by move=> x y ->. Qed.

Section Objects.
Variable R : comRingType.

(** ** Multi-indices and sums over them *)
Fixpoint idx (s : seq nat) : Type :=
  if s is d :: s' then ('I_d * idx s')%type else unit.

Fixpoint sumI (s : seq nat) : (idx s -> R) -> R :=
  if s is d :: s' return (idx s -> R) -> R
  then fun F => \sum_(a < d) sumI (fun k => F (a, k))
  else fun F => F tt.

(** Split a multi-index of a concatenated space (the index of a Kronecker product). *)
Fixpoint splitI (s1 s2 : seq nat) : idx (s1 ++ s2) -> idx s1 * idx s2 :=
  if s1 is d :: s1' return idx (s1 ++ s2) -> idx s1 * idx s2
  then fun i => let: (a, k) := i in let: (k1, k2) := @splitI s1' s2 k in ((a, k1), k2)
  else fun k => (tt, k).

(** Kronecker delta of two ordinals, and of two multi-indices. *)
Definition delta n (a b : 'I_n) : R := (a == b)%:R.
Fixpoint deltaI (s : seq nat) : idx s -> idx s -> R :=
  if s is d :: s' return idx s -> idx s -> R
  then fun i j => delta i.1 j.1 * deltaI i.2 j.2
  else fun _ _ => 1.

Definition mx (rs cs : seq nat) := idx rs -> idx cs -> R.

(** ** Operations (each is its defining index rule) *)
Definition mul rs ks cs (A : mx rs ks) (B : mx ks cs) : mx rs cs :=
  fun i j => sumI (fun k => A i k * B k j).
Definition tr rs cs (A : mx rs cs) : mx cs rs := fun i j => A j i.
Definition add rs cs (A B : mx rs cs) : mx rs cs := fun i j => A i j + B i j.
Definition scale rs cs (c : R) (A : mx rs cs) : mx rs cs := fun i j => c * A i j.
Definition zero rs cs : mx rs cs := fun _ _ => 0.
Definition ones rs cs : mx rs cs := fun _ _ => 1.
Definition idm s : mx s s := fun i j => deltaI i j.
(** the entrywise Kronecker product: [(A ⊗ B)_{(a,b),(c,d)} = A_{ac} B_{bd}] *)
Definition kron r1 c1 r2 c2 (A : mx r1 c1) (B : mx r2 c2) : mx (r1 ++ r2) (c1 ++ c2) :=
  fun i j => let: (i1, i2) := @splitI r1 r2 i in let: (j1, j2) := @splitI c1 c2 j in
             A i1 j1 * B i2 j2.
(** row-major flattening: [vec_r(X)_{(n,m)} = X_{nm}] *)
Definition vec_r rs cs (X : mx rs cs) : mx (rs ++ cs) [::] :=
  fun i _ => let: (a, b) := @splitI rs cs i in X a b.
(** column-major flattening: [vec_c(X)_{(m,n)} = X_{nm}] *)
Definition vec_c rs cs (X : mx rs cs) : mx (cs ++ rs) [::] :=
  fun i _ => let: (b, a) := @splitI cs rs i in X a b.
Definition unvec_r rs cs (v : mx (rs ++ cs) [::]) : mx rs cs :=
  fun a b => v (let fix join s1 : idx s1 -> idx (s1 ++ cs) :=
                  if s1 is d :: s1' return idx s1 -> idx (s1 ++ cs)
                  then fun i => (i.1, join s1' i.2) else fun _ => b in join rs a) tt.
(** the commutation matrix [K_{N,M}]: [K_{(a,b),(c,d)} = δ_{ad} δ_{bc}] *)
Definition commutation n m : mx [:: n; m] [:: m; n] :=
  fun i j => delta i.1 j.2.1 * delta i.2.1 j.1.
(** the diamond product, D4's prose: entry [i] is Σ_k (column i of the matrix)_k (vector)_k;
    for two matrices, reading C-col is the same rule column by column ([A ⋄ B := Aᵀ B]) *)
Definition diamond rs c1 c2 (A : mx rs c1) (B : mx rs c2) : mx c1 c2 :=
  fun i j => sumI (fun k => A k i * B k j).
(** [x ⋄ W] "is computed the same way": the columns of [W] against [x] *)
Definition diamond_vm rs cs (x : mx rs [::]) (W : mx rs cs) : mx cs [::] :=
  fun i j => sumI (fun k => W k i * x k j).
(** reading C-prod of matrix ⋄ matrix: [A ⋄ B := A B] *)
Definition diamond_prod rs ks cs (A : mx rs ks) (B : mx ks cs) : mx rs cs := mul A B.
(** the basis vector [e_i ∈ ℝ^h] *)
Definition selector h (i : 'I_h) : mx [:: h] [::] := fun a _ => delta a.1 i.
(** a head sum [Σ_{i<h} body(i)] *)
Definition headsum h rs cs (F : 'I_h -> mx rs cs) : mx rs cs :=
  fun I J => \sum_(i < h) F i I J.
(** an elementwise function *)
Definition ew rs cs (f : R -> R) (A : mx rs cs) : mx rs cs := fun i j => f (A i j).
(** the entrywise (Hadamard) product: [(A ⊙ B)_{ij} = A_{ij} B_{ij}] *)
Definition hadamard rs cs (A B : mx rs cs) : mx rs cs := fun i j => A i j * B i j.
(** [Diag(v)] *)
Definition diag s (v : mx s [::]) : mx s s := fun i j => v i tt * deltaI i j.
(** the trace as a 1×1 matrix: [tr(A) = Σ_k A_{kk}] over [A]'s index space (SymPy's [Trace]) *)
Definition mtrace s (A : mx s s) : mx [::] [::] := fun _ _ => sumI (fun k => A k k).
(** the diagonal of a square matrix as a column: [v_i = A_{ii}] (SymPy's [DiagonalOf]) *)
Definition diagonal s (A : mx s s) : mx s [::] := fun i _ => A i i.

(** a causal mask: entry [(a,b)] is kept for [b ≤ a] and zero above the diagonal *)
Definition cmask n (A : mx [:: n] [:: n]) : mx [:: n] [:: n] :=
  fun i j => A i j * (j.1 <= i.1)%N%:R.

(** the shifted delta of a 1-d convolution: [δ_{b, a+t-r}] (zero where [a+t-r] leaves the range:
    zero padding), over the integers *)
Definition sdelta n h (b a : 'I_n) (t : 'I_h) (r : int) : R := (b%:Z == a%:Z + t%:Z - r)%:R.
(** the shift matrix [S_{t-r}]: [(S_{t-r})_{n n'} = δ_{n', n+t-r}] *)
Definition shift n h (r : int) (t : 'I_h) : mx [:: n] [:: n] := fun i j => sdelta j.1 i.1 t r.
(** the convolution [Y_n = Σ_{t<h} X_{n+t-r} K_t] (zero padding), by its definition
    [Y_{nm} = Σ_t Σ_{n'} Σ_{m'} δ_{n', n+t-r} X_{n'm'} (K_t)_{m'm}] *)
Definition conv n m h (r : nat) (X : mx [:: n] [:: m]) (K : 'I_h -> mx [:: m] [:: m]) : mx [:: n] [:: m] :=
  fun i j => \sum_(t < h) \sum_(n' < n) \sum_(m' < m) sdelta n' i.1 t r%:Z * X (n', tt) (m', tt) * K t (m', tt) j.

(** ** Blocks of one axis and rotary embeddings (symuat.kernel.head_maps, symuat.kernel.rotary) *)
(** the number of entries of an index space, and the row-major flat position of a multi-index in
    it: [flat_{[:: d; s]}(a, k) = a·|s| + flat_s(k)] *)
Fixpoint prodn (s : seq nat) : nat := if s is d :: s' then (d * prodn s')%N else 1%N.
Fixpoint flatI (s : seq nat) : idx s -> nat :=
  if s is d :: s' return idx s -> nat then fun i => (i.1 * prodn s' + flatI i.2)%N else fun _ => 0%N.
(** the block indicator of symuat's normal form, [[u = o + flat_ws(j)]] *)
Definition axis_at n o ws (u : 'I_n) (j : idx ws) : R := ((u : nat) == o + flatI j)%N%:R.
(** [AxisBlock(n, o, ws)]: the embedding of the block [[o, o + |ws|)] of an axis of length [n]
    (its own multi-index space [ws], row-major), entry [[u = o + flat(j)]]; symuat builds it
    only where [o + |ws| <= n] for every value of the dimensions *)
Definition axis_block n o ws : mx [:: n] ws := fun i j => axis_at o i.1 j.
(** [PairRotation]: a generic 2×2 block [rho_k] (the leaf [rho], block [k] in rows [(k, t)]) on
    pair [k] of a head of width [2e], nothing else mixed: entry [rho[(k, t), t'] δ_{kk'}]. The
    layout says where pair [k] lives: half-split (HF's [rotate_half], coordinates [k], [k+e]),
    multi-index [(t, k)]; interleaved (GGUF, Meta: [2k], [2k+1]), multi-index [(k, t)]. *)
Definition rot_half e (rho : mx [:: e; 2%N] [:: 2%N]) : mx [:: 2%N; e] [:: 2%N; e] :=
  fun i j => rho (i.2.1, (i.1, tt)) (j.1, tt) * delta i.2.1 j.2.1.
Definition rot_inter e (rho : mx [:: e; 2%N] [:: 2%N]) : mx [:: e; 2%N] [:: e; 2%N] :=
  fun i j => rho (i.1, (i.2.1, tt)) (j.2.1, tt) * delta i.1 j.1.

Definition meq rs cs (A B : mx rs cs) := forall i j, A i j = B i j.
End Objects.

Arguments delta {R n}.
Arguments deltaI {R s}.
Arguments sumI {R s}.
Arguments idm {R} s.
Arguments zero {R} rs cs.
Arguments ones {R} rs cs.
Arguments selector {R h}.
Arguments commutation {R} n m.
Arguments mul {R rs ks cs}.
Arguments tr {R rs cs}.
Arguments add {R rs cs}.
Arguments scale {R rs cs}.
Arguments kron {R r1 c1 r2 c2}.
Arguments vec_r {R rs cs}.
Arguments vec_c {R rs cs}.
Arguments diamond {R rs c1 c2}.
Arguments diamond_vm {R rs cs}.
Arguments diamond_prod {R rs ks cs}.
Arguments headsum {R h rs cs}.
Arguments ew {R rs cs}.
Arguments hadamard {R rs cs}.
Arguments diag {R s}.
Arguments meq {R rs cs}.
Arguments cmask {R n}.
Arguments sdelta {R n h}.
Arguments shift {R n h}.
Arguments conv {R n m h}.
Arguments axis_at {R n} o {ws}.
Arguments axis_block {R} n o ws.
Arguments rot_half {R e}.
Arguments rot_inter {R e}.

Notation "A =m B" := (meq A B) (at level 70).

(** The node definitions a proof unfolds to reach the entries: the one list, which every tactic of
    the library calls. It names exactly the definitions symuat writes its terms with (the table
    [NODES] of [symuat.certify.coq_terms]; [tests/test_certify_terms.py] holds the two in step). An
    outer definition comes before the ones it is written with ([diamond_prod] before [mul]). *)
Ltac symuat_unfold_nodes :=
  unfold diamond_prod, mul, tr, add, scale, zero, ones, idm, kron, vec_r, vec_c, commutation,
    diamond, diamond_vm, selector, headsum, ew, hadamard, diag, mtrace, diagonal, cmask,
    axis_block, rot_half, rot_inter, shift, conv.
