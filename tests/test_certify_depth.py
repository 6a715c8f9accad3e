"""The inductions over the number of layers in Coq (coq/SymuatDepth.v), and Coq's mutants.

Lemma 2 (L2.main.exact[induction]), the Transformer→DUAT recursion (T7.exact[…]), the Eq. 34
biases (T9[…]) and X6's telescoping of a readout (X6.telescope) are each ONE Coq theorem quantified over the depth ``L`` (:mod:`symuat.certify.depth`).
Each is refutable: the library with a wrong induction step, an unrolled sum missing its last
layer, earlier ``W'_{j,3}`` left unmultiplied, or a static Eq. 34 bias does not compile. The
certify exporters reject what does not hold: a counterexample at which the sides agree, a
correction with a dropped transpose. The Coq tests need ``coqc`` with MathComp (the ``coq`` tier).
"""

from __future__ import annotations


import numpy as np
import pytest
from sympy import Transpose, preorder_traversal

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import assert_library_variant_rejected, compile_library_variant
from symuat.certify.depth import STEP_CHECK, THEOREMS, export_depth, step_pair
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import export_identity
from symuat.certify.record import COQ_DIR
from symuat.certify.refutation import export_refutation, refutation_data
from symuat.certify.run import CORE, capture, compile_batch, correction_pairs, selected
from symuat.kernel.registry import REGISTRY


def _captured(*keys):
    checks = [c for c in REGISTRY.all_checks() if c.key in keys]
    unequal: dict = {}
    out = capture(checks, {}, unequal, [])
    return {k: (v, pairs, unequal.get(k, [])) for k, (v, pairs) in out.items()}


def test_each_induction_is_one_theorem_quantified_over_the_number_of_layers():
    keys = {c.key for c in REGISTRY.all_checks()}
    for key, thm in THEOREMS.items():
        assert key in keys, key
        if thm.own_step:  # with a one-layer identity of the check's own: tests/test_certify_unroll.py
            continue
        t = export_depth("c", key)
        head, _, body = t.statement.partition(" :\n")
        assert " (L : nat)" in head and "(D F : nat)" in head
        # the forward pass after L layers = (W'_{L,1} x_0 + b'_{L,1}) + Σ_{j<L} W'_{j,3} σ(W'_{j,2} x_0 + b'_{j,2})
        assert body.startswith(f"  {thm.lhs} =m add (add (mul (")
        assert "(headsum (fun j : 'I_L => mul (" in body and "(ew sigma (add (mul (cW2 " in body
        if key != "X6.telescope":  # the forward pass = (W'_{L,1} x_0 + b'_{L,1}) + Σ_j W'_{j,3} σ(…)
            assert body.startswith(f"  {thm.lhs} =m add (add (mul (cW1 ") and "=> mul (cW3 " in body
        else:  # ρᵀ x_L = ρ_0ᵀ x_0 + ρᵀ c_L + Σ_j (W3_jᵀ ρ_{j+1})ᵀ σ(…)
            assert "(tr (rho_chain N rho L 0)) x0" in body and "(tr (mul (tr (nW3 N j)) (rho_chain N rho L j.+1)))" in body
        assert t.proof.startswith(f"exact: ({thm.library} ") and t.proof_kind == "induction over depth"
    with pytest.raises(Unsupported, match="not an induction over depth"):
        export_depth("c", "L2.main.exact[L=2]")


def test_the_certify_run_takes_in_the_depth_checks_and_their_step_not_their_claims_other_checks():
    from symuat.kernel.registry import REGISTRY

    picked = {c.key for c in REGISTRY.all_checks() if selected(c, CORE)}
    assert set(THEOREMS) <= picked and STEP_CHECK in picked
    assert "L2.main.exact[L=2]" not in picked and "P5.a[conf]" in picked
    assert not {c.key for c in REGISTRY.all_checks() if selected(c, CORE, depth=False)} & set(THEOREMS)


def test_the_depth_theorems_compile_without_axioms(coq_lib):
    thms = [export_depth(f"d{n}", key) for n, key in enumerate(THEOREMS) if not THEOREMS[key].own_step]
    res = compile_batch(coq_lib / "lib", thms, coq_lib / "theories" / "depth_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in thms} == {t.name: True for t in thms}


def test_the_step_is_discharged_by_symuats_one_layer_identity_and_no_other(coq_lib):
    """With the identity of L2.8[front=raw] (exported, proved from symuat's normal form) the
    theorem compiles; with another true identity (L2.6.1: Eq. 26, step 1) in its place the premise
    is not discharged and Coq rejects the theorem."""
    captured = capture([c for c in REGISTRY.all_checks() if c.key in (STEP_CHECK, "L2.6.1")])
    step = step_pair(captured)
    assert step is not None
    other = captured["L2.6.1"][1][0][:2]
    true = export_depth("d_step", "L2.main.exact[induction]", step=step)
    wrong = export_depth("d_other", "L2.main.exact[induction]", step=other)
    assert true.step == "d_step_step" and "Theorem d_step_step " in true.sides
    res = compile_batch(coq_lib / "lib", [true, wrong], coq_lib / "theories" / "depth_step.v", timeout=300)
    assert res["d_step"]["ok"] and not res["d_other"]["ok"]


#: false variants of the library: (what is wrong, the text replaced, its replacement)
LIBRARY_MUTANTS = (
    ("the unrolled sum misses its last layer",
     "Theorem residual_unrolling L :\n  forward L =m add (add (mul (cW1 L) x0) (cb1 L))\n                   (headsum (fun j : 'I_L =>",
     "Theorem residual_unrolling L :\n  forward L =m add (add (mul (cW1 L) x0) (cb1 L))\n                   (headsum (fun j : 'I_L.-1 =>"),
    ("a wrong induction step: the next layer's σ sees the static bias W2 c + b2, not Eq. 34's",
     "(ew sigma (add (mul (mul W2 A) x0) (eq34_form W2 b2 c Rm))))) x0.",
     "(ew sigma (add (mul (mul W2 A) x0) (add (mul W2 c) b2))))) x0."),
    ("the earlier W'_{j,3} are not multiplied by the new W1 (L2.8.sum[W3=unchanged])",
     "then (if (j < L')%N then mul (nW1 N L') (cW3 L' j) else nW3 N L')",
     "then (if (j < L')%N then cW3 L' j else nW3 N L')"),
    ("the layers are applied one index late",
     "then layer_app sigma (nW1 N L') (nW2 N L') (nb2 N L') (nW3 N L') (nb3 N L') (forward L') else x0.",
     "then layer_app sigma (nW1 N L'.+1) (nW2 N L') (nb2 N L') (nW3 N L') (nb3 N L') (forward L') else x0."),
    ("the readout chain without the transposes: ρ_{j-1} = W1_j ρ_j",
     "then (if (k <= L')%N then rho_chain (mul (tr (nW1 N L')) rho) L' k else rho) else rho.",
     "then (if (k <= L')%N then rho_chain (mul (nW1 N L') rho) L' k else rho) else rho."),
    ("Eq. 34 with the raw bias of the previous layer (b3in34=raw) for the accumulated one",
     "    eq34_form (nW2 N j') (nb2 N j') (cb1 j')",
     "    eq34_form (nW2 N j') (nb2 N j') (nb3 N j')"),
)


@pytest.mark.parametrize("what,old,new", LIBRARY_MUTANTS, ids=[m[0][:40] for m in LIBRARY_MUTANTS])
def test_coq_rejects_a_false_variant_of_the_depth_library(coq_lib, what, old, new):
    assert_library_variant_rejected(coq_lib / "lib", "SymuatDepth.v", what, old, new)


def test_the_library_unmutated_compiles(coq_lib):
    proc = compile_library_variant(coq_lib / "lib", (COQ_DIR / "SymuatDepth.v").read_text(), "SymuatDepthCopy")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-400:]


@pytest.fixture(scope="module")
def cases():
    return _captured("L2.6.4[seq,front=raw]", "P6.f[C-prod,LR,square]")


def test_coq_rejects_a_counterexample_of_lemma_2_that_does_not_refute(coq_lib, cases):
    """L2.6.4[seq]: the settings after Eq. 26 one by one; symuat's counterexample is certified,
    the same statement at all-zero parameters (both sides 0) is rejected."""
    verdict, _, unequal = cases["L2.6.4[seq,front=raw]"]
    _, data = refutation_data(verdict, unequal)
    true = export_refutation("l2_refuted", data)
    zero = dict(data, values={k: np.zeros_like(np.asarray(v)) for k, v in data["values"].items()})
    mutant = export_refutation("l2_agrees", zero)
    res = compile_batch(coq_lib / "lib", true + mutant, coq_lib / "theories" / "depth_refutation.v", timeout=300)
    assert [res[t.name]["ok"] for t in true] == [True] * len(true)
    assert [res[t.name]["ok"] for t in mutant] == [False] * len(mutant)


def _drop_first_transpose(e):
    t = next(a for a in preorder_traversal(e) if isinstance(a, Transpose))
    return e.xreplace({t: t.arg})


def test_coq_rejects_a_correction_with_a_dropped_transpose(coq_lib, cases):
    verdict, pairs, unequal = cases["P6.f[C-prod,LR,square]"]
    (lhs, rhs, _), = correction_pairs(verdict, pairs, unequal)
    side = "rhs" if rhs.has(Transpose) else "lhs"
    dropped = _drop_first_transpose(rhs if side == "rhs" else lhs)
    true = export_identity("k_p6", lhs, rhs)
    mutant = export_identity("k_p6_dropped", lhs if side == "rhs" else dropped, dropped if side == "rhs" else rhs)
    assert mutant.statement.count("(tr ") == true.statement.count("(tr ") - 1
    res = compile_batch(coq_lib / "lib", [true, mutant], coq_lib / "theories" / "depth_correction.v", timeout=300)
    assert res["k_p6"]["ok"] and not res["k_p6_dropped"]["ok"]


def test_inner_summed_indices_keep_their_own_ranges_in_the_certificate():
    """Inside σ, L2.2.1's two inner terms sum over indices of different ranges (W_{1,1}: D×D,
    W_{1,3}: D×F): the normal form (and the Coq certificate printed from it) gives each its own
    — it once gave both the range F, and Coq rejected the certificate."""
    from symuat.certify.coq_terms import Ctx, term
    from symuat.certify.normal_form import nf_term

    (_, pairs, _), = _captured("L2.2.1").values()
    lhs, rhs, _ = pairs[0]
    ctx = Ctx()
    term(lhs, ctx), term(rhs, ctx)
    nf = nf_term(ctx, lhs, rhs)
    assert r"\sum_(l1_0 < D) \sum_(l1_1 < D) W__1_1_ (l1_0, tt) (l1_1, tt)" in nf
    assert r"\sum_(l1_0 < D) \sum_(l1_1 < F) W__1_3_ (l1_0, tt) (l1_1, tt)" in nf
