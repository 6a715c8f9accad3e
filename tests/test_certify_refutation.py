"""Refutations in Coq: a refuted check's theorem states the negated identity, and Coq computes it.

A check refuted by an exact counterexample is exported as ``~ (forall sizes matrices, lhs =m
rhs)`` for the pair the check compared unequal, proved at symuat's counterexample by computation
(``symuat_refute``); one refuted because its sides differ in shape, as unequal flattened shapes;
a refuted negation (P4), by the identity it denies. Each mutant is a "counterexample" that does
not refute — values at which the two sides agree, sizes at which the shapes agree — fed through
the same exporter: Coq must reject it. The Coq tests need ``coqc`` with MathComp (the ``coq``
tier); the others run in the fast tier.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess

import numpy as np
import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import batch_file
from symuat.certify.refutation import (
    export_check_refutation,
    export_refutation,
    export_shape_refutation,
    refutation_data,
)
from symuat.certify.run import (
    CoqProcessLimit,
    bottom_line_refutations,
    capture,
    compile_batch,
)
from symuat.kernel.registry import REGISTRY


def _captured(*keys):
    checks = [c for c in REGISTRY.all_checks() if c.key in keys]
    unequal: dict = {}
    results: list = []
    out = capture(checks, {}, unequal, results)
    return {k: (v, pairs, unequal.get(k, [])) for k, (v, pairs) in out.items()}, results


@pytest.fixture(scope="module")
def cases():
    captured, _ = _captured("P5.main[C-col,RL,square]", "H1.d5[col]", "P4[right,mv]", "D4.size",
                            "M2[zero-frac,col]", "H4.duat[transposed,square]")
    return captured


def test_a_refutation_states_the_negated_identity_the_check_compared(cases):
    verdict, _, unequal = cases["P5.main[C-col,RL,square]"]
    kind, data = refutation_data(verdict, unequal)
    (t,) = export_refutation("r", data)
    assert kind == "refutation"
    assert t.statement == (
        "Theorem r :\n"
        "  ~ (forall (n : nat) (W_1 : mx [comRingType of int] [:: n] [:: n]) (x : mx [comRingType of int] [:: n] [::]) "
        "(W_2 : mx [comRingType of int] [:: n] [:: n]),\n"
        "     diamond W_1 (diamond_vm x W_2) =m diamond (tr W_2) (diamond W_1 x)).")
    assert t.proof.endswith("symuat_refute.")


def test_a_refutation_by_shapes_states_that_the_flattened_shapes_differ(cases):
    verdict, _, unequal = cases["H1.d5[col]"]
    kind, data = refutation_data(verdict, unequal)
    (t,) = export_shape_refutation("s", data)
    assert kind == "shape_refutation"
    assert t.statement == (
        "Theorem s :\n  ~ (forall (N d_v : nat), (foldr muln 1%N [:: d_v; N], foldr muln 1%N [::]) = "
        "(foldr muln 1%N [::], foldr muln 1%N [:: d_v; N])).")


def test_a_refuted_negation_is_certified_by_the_identity_it_denies(cases):
    verdict, equal, unequal = cases["P4[right,mv]"]
    (t,) = export_check_refutation("p4", verdict, unequal, equal)
    assert "~" not in t.statement and t.statement.endswith("diamond W (add v y) =m add (diamond W v) (diamond W y).")


def test_a_refutation_the_exporter_cannot_state_names_why(cases):
    for key, why in (("D4.size", "undefined at the counterexample"),
                     ("M2[zero-frac,col]", "no matrix values")):
        verdict, equal, unequal = cases[key]
        with pytest.raises(Unsupported, match=why):
            export_check_refutation("x", verdict, unequal, equal)


def test_the_refutations_exported_are_those_a_failing_bottom_line_rests_on():
    """H4 fails; its bottom line rests on its four refuted checks (and not on its proved ones)."""
    _, results = _captured(*[c.key for c in REGISTRY.all_checks() if c.key.startswith("H4.")])
    assert sorted(bottom_line_refutations(results)) == [
        "H4.aaai[C-prod]", "H4.duat[transposed,conf]", "H4.duat[transposed,square]", "H4.uat[C-prod]"]


def test_no_proof_is_timed_inside_coq_and_a_slow_batch_fails_the_tier(cases, monkeypatch, tmp_path):
    from symuat.certify import run

    verdict, _, unequal = cases["P5.main[C-col,RL,square]"]
    thms = export_refutation("r", refutation_data(verdict, unequal)[1])
    assert "Timeout" not in batch_file(thms)[0]

    def slow(lib, path, timeout):
        raise subprocess.TimeoutExpired("coqc", timeout)

    monkeypatch.setattr(run, "_coqc", slow)
    with pytest.raises(CoqProcessLimit, match="process limit"):
        compile_batch(tmp_path, thms, tmp_path / "b.v", timeout=1)


def test_a_coq_process_is_limited_in_cpu_seconds_not_in_wall_clock():
    """A process that waits (a loaded machine: it gets no CPU) outlives its limit in wall-clock
    seconds and finishes; one that computes past its limit of CPU seconds is stopped and reported
    as over it (``TimeoutExpired``, which the callers turn into a loud failure)."""
    import sys
    import time

    from symuat.certify import run

    start = time.perf_counter()
    done = run._run_coq([sys.executable, "-c", "import time; time.sleep(2.5); print('done')"], timeout=1)
    assert done.returncode == 0 and done.stdout.strip() == "done" and time.perf_counter() - start >= 2.5
    with pytest.raises(subprocess.TimeoutExpired):
        run._run_coq([sys.executable, "-c", "while True: pass"], timeout=1)


def _counterexamples_and_mutants(cases):
    """Three counterexamples symuat recorded, and three statements of the same form that do not
    refute (the sides agree at the values, or the shapes agree at the sizes)."""
    true = []
    for key in ("P5.main[C-col,RL,square]", "H4.duat[transposed,square]", "H1.d5[col]"):
        verdict, equal, unequal = cases[key]
        true += export_check_refutation("t_" + key.split("[")[0].replace(".", "_") + f"_{len(true)}",
                                        verdict, unequal, equal)
    _, data = refutation_data(cases["P5.main[C-col,RL,square]"][0], cases["P5.main[C-col,RL,square]"][2])
    # x = 0: both sides are 0 at every entry, but the recorded sides still say they differ
    zero = dict(data, values=dict(data["values"], x=np.zeros_like(np.asarray(data["values"]["x"]))))
    _, hdata = refutation_data(cases["H4.duat[transposed,square]"][0], cases["H4.duat[transposed,square]"][2])
    # every head's H_i = 0: both sides vanish
    hzero = dict(hdata, values=dict(hdata["values"], H=np.zeros_like(np.asarray(hdata["values"]["H"]))))
    _, sdata = refutation_data(cases["H1.d5[col]"][0], cases["H1.d5[col]"][2])
    mutants = (export_refutation("m_values_agree", zero) + export_refutation("m_heads_agree", hzero)
               # d_v = 1: both sides are N×1... no: (N, 1) against (1, N), equal at N = 1
               + export_shape_refutation("m_shapes_agree", dict(sdata, sizes={"N": 1, "d_v": 1})))
    return true, mutants


def test_coq_computes_the_counterexamples_and_rejects_ones_that_do_not_refute(coq_lib, cases):
    true, mutants = _counterexamples_and_mutants(cases)
    res = compile_batch(coq_lib / "lib", [t for pair in zip(true, mutants) for t in pair],
                        coq_lib / "theories" / "refutation_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)


def test_plus_coq_on_a_failing_claim_once_its_refutations_and_correction_are_certified(tmp_path, monkeypatch):
    """P4 fails (⋄ distributes, the paper says it does not): ``+coq`` once every refuted check of
    its bottom line and the correction are certified; with the refutations alone, the report
    says the correction is not certified."""
    import json

    from symuat.render import report
    from symuat.certify import record as rec
    from symuat.verdicts.roll_up import roll_up

    claim = REGISTRY.claims["P4"]
    cv = roll_up(claim, [c.run() for c in claim.checks])
    assert cv.verdict == "fails" and cv.corrected_from
    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path))
    entry = {"status": "certified", "theorems": ["rc_x_0"], "hashes": ["x"], "lemmas": []}

    def write(corrections):
        data = {"fingerprint": rec.fingerprint(), "pattern": "test", "checks": {},
                "refutations": {k: dict(entry) for k in cv.grounds},
                "corrections": {k: dict(entry) for k in corrections},
                "summary": {"certified": 0, "failed": 0, "unsupported": 0, "symbolic_proved": 0}}
        (tmp_path / "record.json").write_text(json.dumps(data))
        rec.load.cache_clear()

    try:
        write([])
        cov = report.coq_coverage(cv)
        assert not cov["complete"] and cov["correction"] == "not exported" and not cov["not_certified"]
        write(cv.corrected_from)
        assert report.coq_coverage(cv)["complete"]
    finally:
        rec.load.cache_clear()


# --------------------------------------------------------------------------------------------
# witnesses a claim's own search found (T8's readings), with the elementwise σ instantiated
# --------------------------------------------------------------------------------------------

T8_DEPTH1 = "T8[eq20,W1rhs=acc,unprimed=acc,abs=all,W3=all,W2in34=final,W3in34=final,b3in34=acc]"
T8_DEPTH1_TOO = "T8[eq20,W1rhs=acc,unprimed=acc,abs=all,W3=all,W2in34=final,W3in34=final,b3in34=raw]"


@pytest.fixture(scope="module")
def searched():
    return recorded(T8_DEPTH1, T8_DEPTH1_TOO, "T6[seq,W3=i,W2=raw]", "H1.dense[causal]")


def test_a_searched_witness_states_the_rules_against_the_forward_pass_for_every_sigma(searched):
    """T8's reading fails at depth 1: the theorem quantifies the sizes, σ and the layer's
    matrices, and instantiates σ at the polynomial symuat evaluated (t³ − 2t + 1)."""
    verdict, equal, unequal, certs = searched[T8_DEPTH1]
    assert [kind for kind, _ in certs] == ["refutation_witness"]
    (t,) = export_check_refutation("r8", verdict, unequal, equal, certs)
    assert t.statement.startswith("Theorem r8 :\n  ~ (forall (D F : nat) (sigma : [comRingType of int] -> "
                                  "[comRingType of int]) (W__1_1_ : mx [comRingType of int] [:: D] [:: D])")
    assert "(ew sigma (add (mul (mul W__1_2_ W__1_1_) x_0)" in t.statement  # the paper's W'_{1,2} = W_{1,2} W_{1,1}
    assert "(fun t => ((((1%:Z) * t + 0%:Z) * t + (- 2%:Z)) * t + 1%:Z))" in t.proof


def test_readings_refuted_by_the_same_statement_share_its_theorem(searched):
    from symuat.certify.run import shared_statement

    a, b = (export_check_refutation(name, v, u, e, c) for name, (v, e, u, c) in
            (("ra", searched[T8_DEPTH1]), ("rb", searched[T8_DEPTH1_TOO])))
    assert a[0].name != b[0].name and shared_statement(a) == shared_statement(b)
    other = export_check_refutation("r_t6", *(searched["T6[seq,W3=i,W2=raw]"][i] for i in (0, 2, 1, 3)))
    assert shared_statement(other) != shared_statement(a)


def test_a_recorded_witness_whose_sides_do_not_evaluate_to_its_values_is_not_exported(searched):
    from symuat.certify.refutation import export_recorded_refutation

    (_, data), = searched[T8_DEPTH1][3]
    with pytest.raises(Unsupported, match="does not evaluate"):
        export_recorded_refutation("x", dict(data, lhs_value=np.asarray(data["lhs_value"]) + 1))


def test_a_normal_form_refutation_with_sigma_names_the_sigma_of_its_counterexample(searched):
    verdict, equal, unequal, certs = searched["T6[seq,W3=i,W2=raw]"]
    kind, data = refutation_data(verdict, unequal)
    assert kind == "refutation" and data["sigma"] is not None
    (t,) = export_check_refutation("r6", verdict, unequal, equal, certs)
    assert "(sigma : [comRingType of int] -> [comRingType of int])" in t.statement


def test_a_refuted_density_records_its_count(searched):
    verdict, equal, unequal, certs = searched["H1.dense[causal]"]
    assert [kind for kind, _ in certs] == ["density_refutation"]
    thms = export_check_refutation("rd", verdict, unequal, equal, certs)
    assert thms[-1].name == "rd_refute" and thms[-1].statement.startswith("Theorem rd_refute :\n  ~ (forall")


def test_coq_proves_the_searched_witnesses_and_rejects_sigmas_and_values_that_do_not_refute(coq_lib, searched):
    true = []
    for n, key in enumerate((T8_DEPTH1, "T6[seq,W3=i,W2=raw]", "H1.dense[causal]")):
        verdict, equal, unequal, certs = searched[key]
        true += [t for t in export_check_refutation(f"t_{n}", verdict, unequal, equal, certs)
                 if n < 2 or t.name.endswith("_refute")]
    (_, data), = searched[T8_DEPTH1][3]
    assert np.shape(data["values"]["W_{1,1}"]) == (1, 1)  # D = 1
    # σ constant: σ(anything) = 1 on both sides, which then agree
    constant = export_refutation("m_constant_sigma", dict(data, sigma=lambda t: 0 * t + 1))
    # W_{1,1} = 1 (D = 1): the paper's W'_{1,2} = W_{1,2} W_{1,1} is W_{1,2}, and the sides agree
    one = export_refutation("m_identity_layer", dict(data, values=dict(data["values"], **{"W_{1,1}": np.ones((1, 1), dtype=int)})))
    mutants = constant + one
    res = compile_batch(coq_lib / "lib", [t for pair in zip(true, mutants) for t in pair] + true[len(mutants):],
                        coq_lib / "theories" / "searched_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}


def test_a_check_refuted_through_a_link_states_the_links_refuted_identity():
    """T7.exact's reading is refuted because its block is not the Eq. 20 layer (T3.1's check,
    whose verdict it reuses): its theorem is T3.1's negated identity, at T3.1's counterexample."""
    from symuat.certify.run import reused_refutation

    key, link = "T7.exact[eq30,B-both,W1=mha]", "T3.1[B-both,W1=mha]"
    checks = [c for c in REGISTRY.all_checks() if c.key in (key, link)]
    unequal: dict = {}
    captured = capture(checks, {}, unequal)
    assert not unequal.get(key) and unequal.get(link)
    assert reused_refutation(key, captured[key][0], captured, unequal) == link
    assert reused_refutation(link, captured[link][0], captured, unequal) is None
    (a,), (b,) = (export_check_refutation(n, captured[k][0], unequal[link], captured[k][1])
                  for n, k in (("ra", key), ("rb", link)))
    assert a.statement.replace("ra", "rb", 1) == b.statement


def test_a_check_whose_verdict_is_another_checks_states_that_checks_refutation_and_correction():
    """T6.aaai[W3=unchanged]'s verdict *is* L2.8.sum[W3=unchanged]'s (REGISTRY.verdict) and
    captures nothing of its own: its refutation is that check's negated identity (the same
    statement, so one theorem) and its correction that check's corrected identity."""
    from symuat.certify.export import export_identity
    from symuat.certify.run import correction_pairs, shared_statement, verdict_of_check

    key, link = "T6.aaai[W3=unchanged]", "L2.8.sum[W3=unchanged]"
    checks = [c for c in REGISTRY.all_checks() if c.key in (key, link)]
    unequal: dict = {}
    certificates: dict = {}
    captured = capture(checks, certificates, unequal)
    v, pairs = captured[key]
    assert not pairs and not unequal.get(key)
    assert verdict_of_check(key, v, pairs, captured, unequal, certificates) == link
    assert verdict_of_check(link, *captured[link], captured, unequal, certificates) is None
    own = export_check_refutation("ra", captured[link][0], unequal[link], captured[link][1])
    via = export_check_refutation("rb", v, unequal[link], captured[link][1])
    assert shared_statement(own) == shared_statement(via)
    fixed = [export_identity("kb", lhs, rhs) for lhs, rhs, _ in correction_pairs(v, captured[link][1], unequal[link])]
    assert [t.statement.replace("kb", "ka", 1) for t in fixed] == [
        export_identity("ka", lhs, rhs).statement for lhs, rhs, _ in
        correction_pairs(captured[link][0], captured[link][1], unequal[link])]
    with pytest.raises(Unsupported, match="not captured"):  # without the link: nothing to state
        correction_pairs(v, pairs, unequal.get(key, []))


def test_every_cited_mistake_is_exported_as_its_checks_refutation():
    """WP10.mistakes is proved by its two mutants' refutations: two witness theorems; WP12's, with
    its −1/M coefficient, too (over ℚ at inv_M = 1/M); a mistake the exporter cannot state (WP3's
    soft-capped row: scalar entries in e) leaves the check unsupported, naming it."""
    from symuat.certify.run import MISTAKES, export_mistakes

    keys = [c.key for c in REGISTRY.all_checks() if c.key.startswith(("WP10.", "WP12.", "WP3."))]
    checks = [c for c in REGISTRY.all_checks() if c.key in keys]
    certificates: dict = {}
    unequal: dict = {}
    captured = capture(checks, certificates, unequal)
    verdict = captured["WP10.mistakes"][0]
    assert verdict.method.startswith(MISTAKES)
    thms = export_mistakes("WP10.mistakes", verdict, captured, unequal, certificates)
    assert len(thms) == 2 and all(t.statement.split(":", 1)[1].lstrip().startswith("~ (forall") for t in thms)
    assert len(export_mistakes("WP12.mistakes", captured["WP12.mistakes"][0], captured, unequal, certificates)) == 2
    with pytest.raises(Unsupported, match="the mistake WP3.softcap"):
        export_mistakes("WP3.mistakes", captured["WP3.mistakes"][0], captured, unequal, certificates)


@pytest.fixture(scope="module")
def undefined():
    keys = ("H1.uat[col]", "H4.uat[C-prod]", "L2.5[i=1]")
    checks = [c for c in REGISTRY.all_checks() if c.key in keys]
    unequal: dict = {}
    out = capture(checks, {}, unequal)
    return {k: (v, pairs, unequal.get(k, [])) for k, (v, pairs) in out.items()}


def test_a_side_undefined_at_the_counterexample_states_the_sizes_its_operation_needs(undefined):
    """H1.uat[col]: the right side's product needs the left factor's columns (d·N) to be the
    right's rows (d_v·N), false at d = 1, d_v = 2 — the theorem says they are not equal for all
    sizes, and names the operation."""
    verdict, equal, unequal = undefined["H1.uat[col]"]
    kind, data = refutation_data(verdict, unequal)
    assert kind == "undefined_refutation" and data["side"] == "right"
    (t,) = export_check_refutation("u", verdict, unequal, equal)
    assert t.statement == (
        "Theorem u :\n  (* the right side is undefined: columns of the left factor = rows of the right *)\n"
        "  ~ (forall (N d d_v : nat), foldr muln 1%N [:: d; N] = foldr muln 1%N [:: d_v; N]).")


def test_a_statement_typed_only_for_equal_sizes_is_refuted_with_them_identified(undefined):
    """L2.5[i=1] adds a D-vector and an F-vector (typed only where F = D); its counterexample has
    D = F = 1: the theorem states the identity for F = D, for every D, and says so."""
    verdict, equal, unequal = undefined["L2.5[i=1]"]
    (t,) = export_check_refutation("l", verdict, unequal, equal)
    assert t.statement.startswith("Theorem l :\n  (* with F = D: the sizes the counterexample makes equal *)\n"
                                  "  ~ (forall (D : nat) (sigma : ")
    assert not re.search(r"\bF\b", t.statement.split("*)", 1)[1])


def test_coq_proves_an_undefined_side_and_rejects_sizes_at_which_it_is_defined(coq_lib, undefined):
    from symuat.certify.refutation import export_undefined_refutation

    true = []
    for n, (verdict, equal, unequal) in enumerate(undefined.values()):
        true += export_check_refutation(f"u_{n}", verdict, unequal, equal)
    _, data = refutation_data(*(undefined["H1.uat[col]"][i] for i in (0, 2)))
    # at d = d_v the product is defined: the "refutation" is rejected (the exporter refuses it
    # first; forced through by recording sizes that differ while the proof's do not)
    with pytest.raises(Unsupported, match="agree at the counterexample"):
        export_undefined_refutation("x", dict(data, sizes={"N": 1, "d": 2, "d_v": 2}))
    (good,) = export_undefined_refutation("m_defined", data)
    mutant = [dataclasses.replace(good, proof=good.proof.replace("1%N 1%N 2%N", "1%N 2%N 2%N"))]
    assert mutant[0].proof != good.proof
    res = compile_batch(coq_lib / "lib", true + mutant, coq_lib / "theories" / "undefined_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert res["m_defined"]["ok"] is False


@pytest.fixture(scope="module")
def d4():
    return recorded("D4.size", "D4.row1")


def test_d4s_refutations_state_the_printed_row_and_the_stated_size(d4):
    """D4 fails on two checks: the size it states (m, 1) — W ⋄ x is n×1 —, and row 1 of Eq. 4,
    whose second term is w_{3,1} where the definition has w_{2,1}: the printed row (ellipsis and
    all, for every m ≥ 3) is not entry 1 of W ⋄ x."""
    (size,) = export_check_refutation("s", *(d4["D4.size"][i] for i in (0, 2, 1, 3)))
    assert size.statement == ("Theorem s :\n  ~ (forall (m n : nat), (foldr muln 1%N [:: n], foldr muln 1%N [::]) "
                              "= (m, 1%N)).")
    (row,) = export_check_refutation("r", *(d4["D4.row1"][i] for i in (0, 2, 1, 3)))
    assert row.statement.startswith("Theorem r :\n  ~ (forall (m n : nat) (W : mx [comRingType of int] [:: m.+3] "
                                    "[:: n.+1])")
    assert "+ W (@Ordinal m.+3 2 ltac:(by []), tt) (@Ordinal n.+1 0 ltac:(by []), tt) * x (@Ordinal m.+3 1" in row.statement


def test_coq_certifies_d4s_refutations_and_corrections_and_rejects_their_mutants(coq_lib, d4):
    from symuat.certify.kinds import export_certificates
    from symuat.certify.printed import export_printed_refutation
    from symuat.certify.refutation import SHAPE_CLAIM, export_shape_correction

    size_v, _, _, size_c = d4["D4.size"]
    row_v, _, _, row_c = d4["D4.row1"]
    true = (export_check_refutation("d4_size", size_v, [], [], size_c)
            + export_check_refutation("d4_row1", row_v, [], [], row_c)
            + export_shape_correction("k_d4_size", next(d for k, d in size_c if k == SHAPE_CLAIM))
            + export_certificates("k_d4_row1", row_v.corrected.verdict, [(k, d) for k, d in row_c if k == "printed_sum"]))
    (shape,) = export_shape_correction("m_shape", next(d for k, d in size_c if k == SHAPE_CLAIM))
    printed = next(d for k, d in row_c if k == "printed_refutation")
    # the printed row with w_{2,1} where Eq. 4 has w_{3,1}: the row is right, no matrices refute it
    import sympy as sp

    (m,) = printed["least"]
    w, x = sp.IndexedBase("w"), sp.IndexedBase("x")
    fixed = dict(printed, explicit=[(1, w[1, 1] * x[1]), (2, w[2, 1] * x[2]), (m, w[m, 1] * x[m])])
    with pytest.raises(Unsupported, match="no 0/1 matrices"):
        export_printed_refutation("x", fixed)
    (forced,) = export_printed_refutation("m_row", printed)
    mutants = [dataclasses.replace(shape, statement=shape.statement.replace("[:: n] [::])", "[:: m] [::])")),
               dataclasses.replace(forced, proof=forced.proof.replace("[:: 1%:Z]; [:: 0%:Z]]) (lmx", "[:: 0%:Z]; [:: 0%:Z]]) (lmx"))]
    assert all(a.statement != b.statement or a.proof != b.proof for a, b in zip(mutants, (shape, forced)))
    res = compile_batch(coq_lib / "lib", true + mutants, coq_lib / "theories" / "d4_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}


@pytest.fixture(scope="module")
def dependence():
    return recorded("L2.main.form[D6]", "L2.main.form[D2]", "T10.c[per-token]")


def test_a_dependence_is_the_identity_with_the_leaf_renamed_refuted(dependence):
    """L2.main.form[D6]: b'_{2,2} depends on x_0 — two values of x_0 (everything else equal) give
    different values: ``~ (forall … x_0 x_0', b =m b[x_0'/x_0])``; L2.main.form[D2] (the paper
    says it does not depend) is refuted by the same kind of theorem."""
    from symuat.certify.kinds import export_certificates

    verdict, _, _, certs = dependence["L2.main.form[D6]"]
    (t,) = export_certificates("dp", verdict, certs)
    assert "(x_0 : mx [comRingType of int] [:: D] [::])" in t.statement
    assert "(x_0' : mx [comRingType of int] [:: D] [::])" in t.statement
    verdict, equal, unequal, certs = dependence["L2.main.form[D2]"]
    (r,) = export_check_refutation("dr", verdict, unequal, equal, certs)
    assert "x_0'" in r.statement and r.statement.split(":", 1)[1].lstrip().startswith("~ (forall")
    # a dependence drawn on hypotheses (H's rows sum to 1) is not recorded: a theorem without
    # them would state less than the check
    verdict, _, _, certs = dependence["T10.c[per-token]"]
    assert str(verdict.status) == "proved" and not [c for c in certs if c[0] == "dependence"]


def test_coq_proves_a_dependence_and_rejects_two_equal_values(coq_lib, dependence):
    from symuat.certify.kinds import export_certificates
    from symuat.certify.witness import export_witness, sigma_of

    verdict, _, _, certs = dependence["L2.main.form[D6]"]
    true = export_certificates("dp_d6", verdict, certs)
    (_, data), = [c for c in certs if c[0] == "dependence"]
    same = dict(data["values"], **{"x_0'": data["values"]["x_0"]})
    mutants = export_witness("m_same_x0", dict(data, values=same, sigma=sigma_of(data)), tactic="symuat_refute")
    res = compile_batch(coq_lib / "lib", true + mutants, coq_lib / "theories" / "dependence_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert res["m_same_x0"]["ok"] is False


def test_the_first_path_of_symuat_refute_alone_proves_the_counterexamples_and_rejects_the_mutants(coq_lib, cases):
    """[symuat_refute] tries the sums brought out by [cbn] (the cheaper path) before [simpl]: that
    path alone proves the counterexamples (it is the one taken, not a dead branch before the old
    one) and rejects the statements that do not refute."""
    true, mutants = _counterexamples_and_mutants(cases)
    first = "symuat_refute_with ltac:(cbn [sumI splitI deltaI cat fst snd])."
    alone = [dataclasses.replace(t, name="c" + t.name, proof=t.proof.removesuffix("symuat_refute.") + first,
                                 statement=t.statement.replace(f"Theorem {t.name} ", f"Theorem c{t.name} ", 1))
             for t in true + mutants if t.proof.endswith("symuat_refute.")]  # not the shapes' (vm_compute)
    assert all(t.statement.startswith(f"Theorem {t.name} ") for t in alone)
    assert len(alone) == 4
    res = compile_batch(coq_lib / "lib", alone, coq_lib / "theories" / "refutation_first.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in alone} == {t.name: t.name.startswith("ct_") for t in alone}
