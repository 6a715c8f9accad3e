"""The prenex form by computation (``coq/SymuatReflect.v``): proved sound once, and it can fail.

``symuat_prenex_refl`` replaces an entry by the prenex form ``nf`` computes (``prenex_sound``).
It must give the form the rewrites gave (a sum of ``Σ_summed Π factors``, products distributed,
sums split, no factor 1), a goal it does not equal must stay unproved, and a reified term whose
sum claims a wrong count of terms must not get through ``prenex_sound``'s premise. Needs
``coqc`` with MathComp; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import subprocess

import pytest

pytestmark = pytest.mark.coq

PRELUDE = """From mathcomp Require Import all_ssreflect all_algebra.
From Symuat Require Import SymuatMx SymuatReflect SymuatTac.
Import GRing.Theory.
Local Open Scope ring_scope.
Section T.
Variable R : comRingType.
Variables n m : nat.
Variables (a b : 'I_n -> R) (c : R) (W : 'I_n -> 'I_m -> R) (sigma : R -> R).
"""


def _coq(lib, name: str, body: str) -> subprocess.CompletedProcess:
    path = lib / "theories" / f"{name}.v"
    path.write_text(PRELUDE + body + "\nEnd T.\n")
    return subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib / "lib"), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=path.parent)


def _prenex_then_exact(goal: str) -> str:
    """``goal`` proved by the computed prenex form of its left side, then syntactic equality."""
    return f"Goal {goal}.\nProof. symuat_prenex_side_l; reflexivity. Qed.\n"


PRENEX = [
    # sums pulled out of products, split over a sum of terms, products right-associated
    ("distribute", "(\\sum_(i < n) (a i + b i)) * c = \\sum_(i < n) a i * c + \\sum_(i < n) b i * c",
     "(\\sum_(i < n) (a i + b i)) * c = \\sum_(i < n) a i * c + \\sum_(i < n) b i"),
    # a factor 1 dropped, two sums nested (the left one outside)
    ("nested", "(\\sum_(i < n) a i) * (1 * \\sum_(j < m) W i0 j) = \\sum_(i < n) \\sum_(j < m) a i * W i0 j",
     "(\\sum_(i < n) a i) * (1 * \\sum_(j < m) W i0 j) = \\sum_(j < m) \\sum_(i < n) a i * W i0 j"),
    # the argument of a function of the ring is put in prenex form, the function kept
    ("function", "sigma ((a i0 + b i0) * c) = sigma (a i0 * c + b i0 * c)",
     "sigma ((a i0 + b i0) * c) = sigma (a i0 * c + b i0)"),
]


@pytest.mark.parametrize("name,right,wrong", PRENEX, ids=[p[0] for p in PRENEX])
def test_the_computed_prenex_form_is_the_rewrites_form_and_a_wrong_one_fails(coq_lib, name, right, wrong):
    vars_ = "Variable i0 : 'I_n.\n"
    ok = _coq(coq_lib, f"reflect_ok_{name}", vars_ + _prenex_then_exact(right))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _coq(coq_lib, f"reflect_bad_{name}", vars_ + _prenex_then_exact(wrong))
    assert bad.returncode != 0


def test_a_sum_that_claims_a_wrong_count_of_terms_does_not_pass_the_premise(coq_lib):
    # the body a i + b i has 2 terms; a reified sum saying 1 would drop b's sum if accepted
    term = "(TSum (fun i : 'I_n => TAdd (TAt (a i)) (TAt (b i))) {k})"
    goal = ("Goal wf {t}.\nProof. cbv [wf cnt]; repeat (split || intro). Qed.\n")
    assert _coq(coq_lib, "reflect_count_ok", goal.format(t=term.format(k=2))).returncode == 0
    assert _coq(coq_lib, "reflect_count_bad", goal.format(t=term.format(k=1))).returncode != 0


def test_a_normal_form_proof_names_the_prenex_theorem_among_its_lemmas():
    from symuat.certify.normal_form import probed_lemmas

    assert probed_lemmas()[0] == "prenex_sound"


# The closing comparison by computation (``symuat_close_refl``, ``kclose``): both sides' products
# and summands sorted by key and compared as terms. It closes a goal whose two sides differ only
# in the order of factors and summands (and the association of products), and fails, with the
# search behind it (``symuat_close``), on a wrong summand, a wrong coefficient, a swapped index.
CLOSE_OK = [
    ("orders", "\\sum_(i < n) \\sum_(j < m) a i * (W i j * c) + c * b i0 = "
               "b i0 * c + \\sum_(i < n) \\sum_(j < m) c * W i j * a i"),
    ("function", "sigma (a i0 * c + b i0) * c = c * sigma (b i0 + c * a i0)"),
    # the summed indices in another order (a block of sums put in a canonical order), a function's
    # argument with its own sums in another order
    ("sums", "\\sum_(i < n) \\sum_(j < m) \\sum_(l < n) a i * W l j * V i l = "
             "\\sum_(l < n) \\sum_(i < n) \\sum_(j < m) V i l * W l j * a i"),
    ("sums_in_function", "sigma (\\sum_(i < n) \\sum_(j < m) a i * W i j + c) * b i0 = "
                         "b i0 * sigma (c + \\sum_(j < m) \\sum_(i < n) W i j * a i)"),
]
CLOSE_BAD = [
    ("summand", "\\sum_(i < n) \\sum_(j < m) a i * W i j + c = c + \\sum_(i < n) \\sum_(j < m) b i * W i j"),
    ("coefficient", "c + c + \\sum_(i < n) a i = c + \\sum_(i < n) a i"),
    ("index", "\\sum_(i < n) \\sum_(j < n) a i * b j * W i0 (k j) = "
              "\\sum_(i < n) \\sum_(j < n) a j * b i * W i0 (k j)"),
    # a matrix for its transpose: the sums exchanged, the indices not
    ("transpose", "\\sum_(i < n) \\sum_(j < n) V i j * a i = \\sum_(j < n) \\sum_(i < n) V j i * a i"),
    # a function's argument that differs (a summand for another)
    ("argument", "sigma (\\sum_(i < n) a i + c) * c = c * sigma (c + \\sum_(i < n) b i)"),
]
_CLOSE_VARS = ("Variable i0 : 'I_n.\nVariable k : 'I_n -> 'I_m.\nVariable V : 'I_n -> 'I_n -> R.\n"
               "Add Ring symuat_ring : (R_ring_theory_ring R).\nAdd Ring symuat_ring_zmod : (R_ring_theory_zmod R).\n")


@pytest.mark.parametrize("name,goal", CLOSE_OK, ids=[p[0] for p in CLOSE_OK])
def test_the_computed_comparison_closes_sides_that_differ_in_order(coq_lib, name, goal):
    # the comparison alone closes them (a function's argument compared in its canonical form, the
    # summed indices of a block in a canonical order), and so does the closing tactic
    for tactic in ("symuat_close_refl", "symuat_close"):
        ok = _coq(coq_lib, f"kclose_ok_{name}_{tactic}", _CLOSE_VARS + f"Goal {goal}.\nProof. {tactic}. Qed.\n")
        assert ok.returncode == 0, ok.stdout + ok.stderr


@pytest.mark.parametrize("name,goal", CLOSE_BAD, ids=[p[0] for p in CLOSE_BAD])
def test_the_computed_comparison_rejects_a_false_closing(coq_lib, name, goal):
    for tactic in ("symuat_close_refl", "symuat_close"):
        bad = _coq(coq_lib, f"kclose_bad_{name}_{tactic}",
                   _CLOSE_VARS + f"Goal {goal}.\nProof. {tactic}. Qed.\n")
        assert bad.returncode != 0, f"{tactic} closed a false goal ({name})"
        assert "Syntax error" not in bad.stderr and "was not found" not in bad.stderr, bad.stderr[-400:]


def test_the_comparison_s_soundness_is_a_theorem_a_false_sort_breaks(coq_lib):
    from certify_helpers import assert_library_variant_rejected

    # an insertion that drops the element it inserts: the sort no longer keeps the product
    assert_library_variant_rejected(coq_lib / "lib", "SymuatReflect.v", "a sort that drops an atom",
                                    "  | [::] => [:: x]\n  | y :: l' => if klex",
                                    "  | [::] => [::]\n  | y :: l' => if klex")


@pytest.mark.parametrize("what,old,new", [
    ("a block's product that drops an atom",
     "sumI (fun y => kprod (ksort akey (flat (f (swallx sws ns y)))))",
     "sumI (fun y => kprod (ksort akey (behead (flat (f (swallx sws ns y))))))"),
    ("a function's argument that drops a summand",
     "[:: (k, g (ksumv (ksort lkey (cl a))))]", "[:: (k, g (ksumv (behead (ksort lkey (cl a)))))]"),
])
def test_the_canonical_order_and_the_arguments_are_proved_a_false_variant_breaks(coq_lib, what, old, new):
    from certify_helpers import assert_library_variant_rejected

    assert_library_variant_rejected(coq_lib / "lib", "SymuatReflect.v", what, old, new)


def test_a_normal_form_proof_names_the_comparison_among_its_lemmas():
    from symuat.certify.normal_form import probed_lemmas

    assert probed_lemmas()[:2] == ("prenex_sound", "kclose")


# The deltas by computation (``symuat_elim``: a sum over an index that a guard of its body fixes,
# ``Σ_x δ_{xa} F(x) = F(a)``, read as ``TElim`` and computed through ``prenex_sound``). It gives
# the rewrites' result (inner sums first, a chain of guards in passes, ``δ_{aa}`` dropped), leaves
# a guard of two free indices alone, and a wrong result stays unproved.
ELIM = [
    # two sums fixed in turn: y by x (inner), then x by i0
    ("chain", "\\sum_(x < n) \\sum_(y < n) dl y x (dl x i0 (a x * a y)) = a i0 * a i0",
     "\\sum_(x < n) \\sum_(y < n) dl y x (dl x i0 (a x * a y)) = a i0 * a j0"),
    # the guard's index on the right, a sum that no guard fixes kept
    ("right", "\\sum_(x < n) \\sum_(j < m) dl i0 x (W x j * b x) = \\sum_(j < m) W i0 j * b i0",
     "\\sum_(x < n) \\sum_(j < m) dl i0 x (W x j * b x) = \\sum_(j < m) W j0 j * b i0"),
    # a guard of two free indices is no elimination: it stays
    ("free", "dl i0 j0 (\\sum_(x < n) dl x j0 (a x)) = dl i0 j0 (a j0)",
     "dl i0 j0 (\\sum_(x < n) dl x j0 (a x)) = a j0"),
]


@pytest.mark.parametrize("name,right,wrong", ELIM, ids=[p[0] for p in ELIM])
def test_the_computed_elimination_is_the_rewrites_result_and_a_wrong_one_fails(coq_lib, name, right, wrong):
    vars_ = "Variables i0 j0 : 'I_n.\n"
    proof = "Proof. symuat_elim; reflexivity. Qed.\n"
    ok = _coq(coq_lib, f"elim_ok_{name}", vars_ + f"Goal {right}.\n" + proof)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _coq(coq_lib, f"elim_bad_{name}", vars_ + f"Goal {wrong}.\n" + proof)
    assert bad.returncode != 0
    assert "Syntax error" not in bad.stderr and "was not found" not in bad.stderr, bad.stderr[-400:]


def test_an_elimination_without_its_guard_does_not_pass_the_premise(coq_lib):
    # a body with its marked place (the guard removed): accepted; a body with none (an atom): the
    # premise is False, so Σ_x a x = a i0 cannot be had from prenex_sound
    goal = "Variable i0 : 'I_n.\nGoal wf (TElim i0 true (fun x : 'I_n => {body})).\nProof. cbv [wf cnt m1 m0]; repeat (split || intro). Qed.\n"
    assert _coq(coq_lib, "elim_wf_ok", goal.format(body="TMk (TAt (a x))")).returncode == 0
    assert _coq(coq_lib, "elim_wf_bad", goal.format(body="TAt (a x)")).returncode != 0


def test_the_elimination_s_soundness_is_a_theorem_a_dropped_guard_breaks(coq_lib):
    from certify_helpers import assert_library_variant_rejected

    # an elimination read without its guard (Σ_x F(x) for Σ_x δ_{xa} F(x)): prenex_sound no longer holds
    assert_library_variant_rejected(coq_lib / "lib", "SymuatReflect.v", "an elimination that drops its guard",
                                    "evk (fun y => if s then dl i a y else dl a i y) (g i)",
                                    "evk (fun y => y) (g i)")
