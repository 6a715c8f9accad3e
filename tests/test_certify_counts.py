"""Counts and fractions the kernel derives, as Coq theorems: M2's zero fraction and A5.dep.

:func:`symuat.kernel.decide.check_quantity` records a ``density`` certificate when a claimed
fraction equals the derived one (A5.dep[bidir,*]: every token block of ``(W'_HVO)^T`` is nonzero)
and a ``density_refutation`` one when an exact count refutes it (A5.dep[causal,*]: 3/4 of the
blocks at N = 2, not 1; M2[zero-frac,*]: the zero fraction of the lift is 1 − 1/M, 2/3 at
M = 3, not the claimed 1/M). The tier exports them (:mod:`symuat.certify.density`); here Coq
accepts the kernel's own records and rejects their mutants: an off-by-one count, a dense claim
for the causal pattern, and refutations at sizes where the claim holds (N = 1 for the causal
fraction (N + 1)/(2N) = 1; M = 2 for the zero fraction 1 − 1/M = 1/M). Coq-tier tests need
``coqc`` with MathComp.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from symuat.certify.density import density_theorems, export_density, export_density_refutation
from symuat.certify.refutation import DENSITY_REFUTATION
from symuat.certify.run import compile_batch
from symuat.kernel.structure import density_pattern
from certify_helpers import recorded

KEYS = ("A5.dep[bidir,split]", "A5.dep[causal,std]", "M2[zero-frac,col]")


def _records():
    out = recorded(*KEYS)
    assert [str(out[k][0].status) for k in KEYS] == ["proved", "refuted", "refuted"]
    return {k: out[k][3] for k in KEYS}


def test_the_kernel_records_the_counts_it_derives():
    certs = _records()
    (kind, dense), = certs["A5.dep[bidir,split]"]
    assert kind == "density" and dense["claimed"] == 1 and dense["derived"] == 1
    (kind, causal), = certs["A5.dep[causal,std]"]
    N = sp.Symbol("N", positive=True, integer=True)
    assert kind == DENSITY_REFUTATION and sp.simplify(causal["derived"] - (N + 1) / (2 * N)) == 0
    assert causal["sizes"]["N"] == 2 and not causal["complement"]
    (kind, zero), = certs["M2[zero-frac,col]"]
    assert kind == DENSITY_REFUTATION and zero["complement"] and zero["sizes"] == {"N": 2, "M": 3}


def test_a_dense_pattern_states_no_tautological_support():
    (_, dense), = _records()["A5.dep[bidir,split]"]
    names = [t.name for t in export_density("a5", dense)]
    assert names == ["a5_witness", "a5_count"]  # "E = 1 * E" says nothing: not stated
    count = export_density("a5", dense)[1].statement
    assert count.endswith("(\\sum_(i0 < N) \\sum_(j0 < N) (1 : R)) * (1)%:R = (1)%:R * (N * N)%:R.")


def test_coq_accepts_the_recorded_counts_and_rejects_their_mutants(coq_lib):
    certs = _records()
    (_, dense), = certs["A5.dep[bidir,split]"]
    (_, causal), = certs["A5.dep[causal,std]"]
    (_, zero), = certs["M2[zero-frac,col]"]
    ok_dense = export_density("ok_dense", dense)
    ok_causal = export_density_refutation("ok_causal", causal)
    ok_zero = export_density_refutation("ok_zero", zero)
    N = sp.Symbol("N", positive=True, integer=True)
    # an off-by-one count: N² + 1 of the N² blocks for the dense pattern (the count must fail)
    bad_count = [t for t in density_theorems("bad_off1", dense["expr"], (N**2 + 1) / N**2, density_pattern(dense["expr"]))
                 if t.name.endswith("_count")]
    # the causal blocks claimed dense: the pattern without its indicator (witness, count fail)
    pc = density_pattern(causal["expr"])
    bad_dense = [t for t in density_theorems("bad_dense", causal["expr"], 1, dataclasses.replace(pc, constraints=(), pairs=()))
                 if not t.name.endswith("_count")]
    # refutations at sizes where the claim holds: the causal fraction at N = 1 ((1+1)/2 = 1), the
    # zero fraction at M = 2 (1 − 1/2 = 1/2): the same statements, instantiated there
    refute = ok_causal[-1]
    assert "(H 2%N 2%N 1%N 2%N)" in refute.proof  # M N d_v h: N = 2 is the counterexample
    bad_n1 = dataclasses.replace(refute, name="bad_n1_refute",
                                 statement=refute.statement.replace("ok_causal_refute", "bad_n1_refute"),
                                 proof=refute.proof.replace("(H 2%N 2%N 1%N 2%N)", "(H 2%N 1%N 1%N 2%N)"))
    zref = ok_zero[-1]
    assert "(H 3%N 2%N)" in zref.proof  # M N
    bad_m2 = dataclasses.replace(zref, name="bad_m2_refute",
                                 statement=zref.statement.replace("ok_zero_refute", "bad_m2_refute"),
                                 proof=zref.proof.replace("(H 3%N 2%N)", "(H 2%N 2%N)"))
    mutants = bad_count + bad_dense + [bad_n1, bad_m2]
    theorems = ok_dense + ok_causal + ok_zero + mutants
    res = compile_batch(coq_lib / "lib", theorems, coq_lib / "theories" / "counts.v", timeout=300)
    ok = {t.name: res[t.name]["ok"] for t in theorems}
    assert all(ok[t.name] for t in ok_dense + ok_causal + ok_zero), ok
    assert not any(ok[t.name] for t in bad_count + [bad_n1, bad_m2]), ok
    assert not ok["bad_dense_witness"], ok
    # rejected by a proof, not by a syntax or name error in the mutation
    for t in mutants:
        why = str(res[t.name].get("reason", "")) + str(res[t.name].get("log", ""))
        assert "Syntax error" not in why and "was not found" not in why, (t.name, why[-400:])
