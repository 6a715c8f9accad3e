"""The inductions over depth of the checks with a one-layer identity of their own (coq/SymuatUnroll.v).

X7.telescope (the residual stream read through a frozen readout), X5.combined (a readout of the
unrolled form), A4.eq20 (LoRA in an Eq. 20 network), A4.corr[symbolic] (the corrected Eq. 18),
T10.c[token-shared] (the combined bias shared by the tokens) and X8.linear-symbolic (Golden's
detached layers composed: linear) are each ONE Coq theorem quantified over the depth ``L``, proved from the
library's induction and the one-layer identity the check proved (its captured pair, exported as
every identity is; A4.eq20's and T10's proved by the library, word for word the check's identity;
X8's homogeneity, a scalar symbol the exporter does not state, by the library). T8's
two forward readings state T9's theorem: the same rules. Each is refutable: the library with a
layer missing its residual, a stream with W1 ≠ I, a sum missing its last layer, the base network's
bias for the recomputed one, the next layer's increment, an increment not multiplied by A_j or by the
later W1, a biased layer claimed linear, homogeneity of degree 2, a shared row without its heads' term or
H7's hypothesis on the columns does not compile, and an identity that is not the check's step
does not discharge it. The Coq tests need ``coqc`` with MathComp (the ``coq`` tier).
"""

from __future__ import annotations


import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import assert_library_variant_rejected
from symuat.certify.coq_terms import Unsupported
from symuat.certify.depth import THEOREMS, export_depth, own_step
from symuat.certify.record import COQ_DIR
from symuat.certify.run import compile_batch, capture
from symuat.kernel.registry import REGISTRY

OWN = [key for key, thm in THEOREMS.items() if thm.own_step]
_T8 = "T8[{},W1rhs=raw,unprimed=acc,abs={},W3=all,W2in34=layer,W3in34=stage,b3in34=acc]"


@pytest.fixture(scope="module")
def captured():
    return capture([c for c in REGISTRY.all_checks() if c.key in OWN])


def test_each_check_with_its_own_step_is_one_theorem_over_the_depth(captured):
    assert {"X7.telescope", "X5.combined", "A4.eq20[Δ=induced,b2=recomputed,idx=j,op=times]",
            "A4.corr[symbolic]", "T10.c[token-shared]", "X8.linear-symbolic", "X9.unrolling",
            "X4.recursion[alpha(x)]"} <= set(OWN)
    for key in OWN:
        t = export_depth("c", key, own=own_step(captured, key))
        head, _, body = t.statement.partition(" :\n")
        assert " (L : nat)" in head and t.proof_kind == "induction over depth" and t.check_step, key
        if key not in ("T10.c[token-shared]", "X8.linear-symbolic"):  # a sum over the layers (T10.c: c_L = 1_N⊗g_L; X8: linearity)
            assert "(headsum (fun " in body and ": 'I_L =>" in body, key
        # what the step rests on: Lemma 2's step (the library's proof here), and the check's own identity
        assert t.step == ("one_layer_step_holds" if THEOREMS[key].layer_step else ""), key
    # X7: rᵀ x_L = rᵀ x_0 + Σ_{l<L} (two heads through their patterns + rᵀ m_l + rᵀ b_l)
    x7 = export_depth("c", "X7.telescope", own=own_step(captured, "X7.telescope"))
    assert x7.statement.count("(mul (tr (P") == 2 and "(mul (tr r) (m l))) (mul (tr r) (b l))" in x7.statement
    # T10.c: c_L is 1_N⊗g_L, and g_L (gshared) takes no pattern H, for every depth, under H7's hypothesis
    t10 = export_depth("c", "T10.c[token-shared]", own=own_step(captured, "T10.c[token-shared]"))
    assert "=m vec_r (mul (ones [:: N] [::]) (gshared W_V W_O b3 L))" in t10.statement and "(rows : forall l" in t10.statement
    # X8: the composition of L detached layers is additive and homogeneous
    x8 = export_depth("c", "X8.linear-symbolic", own=own_step(captured, "X8.linear-symbolic"))
    assert ("golden O V P W_d G W_u L (add X Y) =m add (golden O V P W_d G W_u L X) (golden O V P W_d G W_u L Y) /\\"
            in x8.statement and "(scale a X) =m scale a (golden O V P W_d G W_u L X)." in x8.statement)
    # without its identity a check is not stated
    with pytest.raises(Unsupported, match="own one-layer identity"):
        export_depth("c", "X7.telescope")


def _words(text: str) -> str:
    return " ".join(text.replace("(", " ( ").replace(")", " ) ").split())


def test_a_step_the_library_proves_is_the_checks_own_identity_word_for_word(captured):
    """A4.eq20's and T10.c's identities do not close by the exported proof (symuat_nf, symuat_entry):
    the library proves them; its premise is the identity the check proved, as exported."""
    from symuat.certify.export import export_identity

    library = _words((COQ_DIR / "SymuatUnroll.v").read_text())
    for key, thm in THEOREMS.items():
        if not thm.own_proof:
            continue
        lhs, rhs, hyps = own_step(captured, key)
        exported = export_identity("s", lhs, rhs, hypotheses=hyps or ())
        assert _words(exported.statement.partition(" :\n")[2].rstrip(".")) in library, key


def test_t8s_forward_readings_are_t9s_same_rules_and_theorem():
    checks = {c.key: c for c in REGISTRY.all_checks()}
    for form, absorbed in (("eq20", "none"), ("eq30", "all")):
        t8, t9 = _T8.format(form, absorbed), f"T9[{form},W2in34=layer,W3in34=stage,b3in34=acc]"
        p8, p9 = checks[t8].procedure, checks[t9].procedure
        assert (p8.func, p8.args) == (p9.func, p9.args)  # the same procedure on the same reading
        a, b = THEOREMS[t8], THEOREMS[t9]
        assert (a.library, a.binders, a.lhs, a.rhs) == (b.library, b.binders, b.lhs, b.rhs) and a.what != b.what


def test_the_theorems_compile_with_the_checks_own_steps_and_no_other(coq_lib, captured):
    """With each check's identity the theorem compiles (Lemma 2's step by the library's proof);
    with another true identity in its place (X5's for X7's, X7's for X5's) Coq rejects it. (X9's and
    X4's steps are proved in the library, word for word their checks' identities: a step that is not
    theirs is the library mutants below, and the sequential layer's identity in x9_step's place is
    rejected, :func:`test_x9s_step_is_not_the_sequential_layers_identity`.)"""
    true = [export_depth(f"u{n}", key, own=own_step(captured, key)) for n, key in enumerate(OWN)]
    swapped = [export_depth("w_x7", "X7.telescope", own=own_step(captured, "X5.combined")),
               export_depth("w_x5", "X5.combined", own=own_step(captured, "X7.telescope"))]
    res = compile_batch(coq_lib / "lib", true + swapped, coq_lib / "theories" / "unroll_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true + swapped} == {
        **{t.name: True for t in true}, **{t.name: False for t in swapped}}


#: false variants of the library: (what is wrong, the text replaced, its replacement)
LIBRARY_MUTANTS = (
    ("X7: a layer missing its residual (the stream restarts at each layer)",
     "  then add (add (add (add (stream L') (mul",
     "  then add (add (add (add (zero [:: D] [::]) (mul"),
    ("X7: W1 = 2I where the check needs I",
     "  then add (add (add (add (stream L') (mul",
     "  then add (add (add (add (add (stream L') (stream L')) (mul"),
    ("X7: the readout's sum misses its last layer",
     "  add (mul (tr r) x0)\n      (headsum (fun l : 'I_L =>",
     "  add (mul (tr r) x0)\n      (headsum (fun l : 'I_L.-1 =>"),
    ("X5: the readout's sum misses its last layer",
     "(headsum (fun j : 'I_L => mul (mul P (cW3 N L j))",
     "(headsum (fun j : 'I_L.-1 => mul (mul P (cW3 N L j))"),
    ("X5: the bias not read out (P c_L dropped)",
     "  add (add (mul (mul P (cW1 N L)) x0) (mul P (cb1 N L)))",
     "  add (add (mul (mul P (cW1 N L)) x0) (mul P (zero [:: D] [::])))"),
    ("A4: the base network's bias for the recomputed one (b2=kept)",
     "                            (cb2 sigma (lora N dW2 dW3) x0 j))))).",
     "                            (cb2 sigma N x0 j))))).",),
    ("T10.c: the shared row without its heads' term (g_{L+1} = g_L + b_{L,3})",
     "  then add (add (gshared L')\n                (mul (gshared L') (headsum",
     "  then add (add (gshared L')\n                (mul (zero [::] [:: h; d]) (headsum"),
    ("T10.c: the combined bias without its residual (W1 = W^mha, not I + W^mha)",
     "  then add (add (cshared L')\n",
     "  then add (add (zero _ _)\n"),
    ("T10.c: the hypothesis on the columns of H, not its rows",
     "    (M : 'I_h -> mx R [:: h; d] [:: h; d]) :\n  (forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (a, tt) (b, tt) = 1) ->",
     "    (M : 'I_h -> mx R [:: h; d] [:: h; d]) :\n  (forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (b, tt) (a, tt) = 1) ->"),
    ("A4.corr: ΔW_{j,2} = ΔW2_j, not ΔW2_j A_j",
     "(ew sigma (add (mul (add (cW2 N j) (mul (dW2 j) (cW1 N j))) x0) (cb2 sigma (lora N dW2 dW3) x0 j))))).",
     "(ew sigma (add (mul (add (cW2 N j) (dW2 j)) x0) (cb2 sigma (lora N dW2 dW3) x0 j))))).",),
    ("A4.corr: ΔW_{j,3} = ΔW3_j, not multiplied by the later W1",
     "         mul (add (cW3 N L j) (cW3 (dnet N dW3) L j))\n             (ew sigma",
     "         mul (add (cW3 N L j) (dW3 j))\n             (ew sigma"),
    ("X8: biased layers (f = J + c, X8.affine) claimed linear",
     "Fixpoint golden L X := if L is L'.+1 then golden_layer L' (golden L' X) else X.",
     "Fixpoint golden L X := if L is L'.+1 then add (golden_layer L' (golden L' X)) (ones [:: D] [:: N]) else X."),
    ("X8: homogeneous of degree 2 (a² for a)",
     "golden L (scale a X) =m scale a (golden L X).",
     "golden L (scale a X) =m scale (a * a) (golden L X)."),
    ("X9: the MLP reads W1x' (the sequential block's W2 = L_in S_2 W1) in the parallel stack's parameters",
     "  (fun l => mul (kron (idm [:: N]) (tr (W_in l))) (kron (diag (s_2 l (xpar l))) (tr (G_2 l))))\n",
     "  (fun l => mul (mul (kron (idm [:: N]) (tr (W_in l))) (kron (diag (s_2 l (xpar l))) (tr (G_2 l))))\n"
     "     (add (idm [:: N; M]) (mul (par_att l) (kron (diag (s_1 l (xpar l))) (tr (G_1 l))))))\n"),
    ("X9: a parallel layer without its residual (W1 = A S_1, not I + A S_1)",
     "  add (add X (add (add (mul (mul H1",
     "  add (add (zero _ _) (add (add (mul (mul H1"),
    ("X4: the gate reads the layer's input (W2 = W_g'S_2, not W_g'S_2 W1)",
     "  (fun l => mul (mul (kron (idm [:: N]) (tr (W_g l))) (g_S2 l)) (g_W1 l))",
     "  (fun l => mul (kron (idm [:: N]) (tr (W_g l))) (g_S2 l))"),
    ("X4: the static W3 = W'_down diag(W_u'S_2 x') (the up projection before attention)",
     "(g_S2 l)) (mul (g_W1 l) (vec_r (xgated l))))))",
     "(g_S2 l)) (vec_r (xgated l)))))"),
    ("A4: the next layer's increment beside W'_{j,3} (idx=j+1)",
     "mul (add (cW3 N L j) (add (cW3 (lora N dW2 dW3) L j)",
     "mul (add (cW3 N L j) (add (cW3 (lora N dW2 dW3) L j.+1)"),
)


@pytest.mark.parametrize("what,old,new", LIBRARY_MUTANTS, ids=[m[0][:40] for m in LIBRARY_MUTANTS])
def test_coq_rejects_a_false_variant_of_the_unroll_library(coq_lib, what, old, new):
    assert_library_variant_rejected(coq_lib / "lib", "SymuatUnroll.v", what, old, new)


def test_x9s_step_is_not_the_sequential_layers_identity(coq_lib):
    """X9.unrolling's premise with the sequential pre-norm layer's Eq. 20 form (W2 = L_in S_2 W1: a
    true identity of another layer, X9.layer[sequential]) in place of the parallel one: Coq rejects
    the library (the proof of the step and the unrolling both rest on the parallel form)."""
    assert_library_variant_rejected(
        coq_lib / "lib", "SymuatUnroll.v", "X9: the sequential layer's W2 in x9_step",
        "(kron (diag s_2) (tr G_2))) (vec_r X)) (add (mul (kron (idm [:: N]) (tr W_in)) (vec_r Beta_2)) (vec_r C_in))))).",
        "(kron (diag s_2) (tr G_2))) (add (vec_r X) (mul (mul (add (kron H_1 (tr B_1)) (kron H_2 (tr B_2))) "
        "(kron (diag s_1) (tr G_1))) (vec_r X)))) (add (mul (kron (idm [:: N]) (tr W_in)) (vec_r Beta_2)) (vec_r C_in))))).")
