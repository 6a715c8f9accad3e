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

import subprocess

import numpy as np
import pytest

import symuat.claims  # noqa: F401  (registration)
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
    captured, _ = _captured("P5.main[C-col,RL,square]", "H1.d5[col]", "P4[right,mv]", "H4.uat[C-prod]",
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
    for key, why in (("H4.uat[C-prod]", "undefined at the counterexample"),
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


def test_coq_computes_the_counterexamples_and_rejects_ones_that_do_not_refute(coq_lib, cases):
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
