"""Every registered check runs and derives a status; the issue's claims are all covered; and a
few verdicts are pinned here as regression expectations (the package itself types none)."""

import json
import re
from pathlib import Path

import pytest

from symuat.kernel.status import Status

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "claims.md"
FOUNDATION = ["D4", "D5", "P1", "P2", "P3", "P4", "P5", "P6", "M1", "M2", "M3", "M4", "M5"]
ATTENTION = ["H0", "H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9"]


def test_every_check_runs(all_results):
    crashed = {k: r.error for k, r in all_results.items() if r.error}
    assert not crashed
    assert all(isinstance(r.verdict.status, Status) for r in all_results.values())


def test_foundation_claims_are_registered(registry):
    assert set(FOUNDATION + ATTENTION) <= set(registry.claims)


@pytest.mark.skipif(not SPEC.exists(), reason="shared/spec not beside the checkout")
def test_every_labelled_item_of_the_spec_is_checked(registry):
    """Each item the spec names for these claims (P5.a … P5.g, P5.end, M1.pic, …) has a check."""
    spec = SPEC.read_text()
    checked = {c.id for c in registry.all_checks()}
    for cid in FOUNDATION + ATTENTION:
        section = spec.split(f"### {cid} ")[1].split("\n### ")[0]
        for item in set(re.findall(rf"`({cid}\.[A-Za-z0-9-]+)`", section)):
            assert item in checked, f"{item} is named in the spec but not checked"


def test_refutations_carry_rechecked_counterexamples(all_results):
    for key, r in all_results.items():
        v = r.verdict
        if v.status is Status.REFUTED and v.counterexample is not None:
            assert v.counterexample.exact_recheck or v.counterexample.numeric_recheck, key
        if v.status is Status.REFUTED and v.counterexample is None:
            # a refuted negation ("⋄ is not distributive") is refuted by a proof of the identity
            assert v.corrected is not None and v.corrected.verdict.status is Status.PROVED, key


def test_shape_general_claims_are_proved_for_symbolic_dimensions(all_results):
    for key in ["P1", "P2[mv]", "M1.exist[row,duat]", "M1.exist[col,dia]", "M3.exist[right,row]",
                "M3.exist[left,col]", "M4[row]", "M4[col]", "lemma.vec_r_mul_eq_kron_mulVec",
                "H2.exist[row,split]", "H3.exist[col]", "H5.exist[row,std]", "H5.head[split]"]:
        v = all_results[key].verdict
        assert v.status is Status.PROVED, key
        assert "symbolic dimensions" in v.method
        assert v.numeric.max_residual <= v.numeric.tolerance


# regression expectations (derived by the checks; pinned so a change in the kernel shows up)
EXPECTED = {
    "D4.size": "refuted",
    "D4.row1": "refuted",
    "D4.rows[row2]": "proved",
    "D5.ext[C-col]": "proved",
    "D5.ext[C-prod]": "refuted",
    "P2[mm,C-col,square]": "refuted",
    "P3[C-col,square]": "proved",
    "P4[right,mv]": "refuted",
    "P5.e[conf]": "proved",
    "P5.f[C-prod,LR,conf]": "proved",
    "P5.f[C-col,LR,square]": "refuted",
    "P5.g[C-col,LR,square]": "refuted",
    "P5.end[C-col,LR,conf]": "proved",
    "P5.end[C-prod,LR,square]": "refuted",
    "P5.pre[C-col,LR,conf,W12x]": "proved",
    "P5.pre[C-col,LR,conf,W12]": "refuted",
    "P5.c-aaai[square]": "refuted",
    "P6.e[C-prod,LR,conf]": "proved",
    "P6.end[C-col,LR,conf]": "proved",
    "M1.pic[row,dia]": "proved",
    "M1.pic[col,dia]": "refuted",
    "M2[nnz-frac,row]": "proved",
    "M2[zero-frac,row]": "refuted",
    "M4[row,col]": "refuted",
    "M5.conv[const,row]": "proved",
    "M5.cmp": "proved",
    "H1.d3[row,conf]": "refuted",
    "H1.d3[row,square]": "proved",
    "H1.d5[row]": "refuted",
    "H1.aaai[C-col,LR,row]": "proved",
    "H2.forms[uat-text,dia]": "proved",
    "H2.forms[duat-5c,dia]": "refuted",
    "H4.duat[duat]": "proved",
    "H4.duat[transposed,square]": "refuted",
    "H4.uat[C-col]": "proved",
    "H4.uat[C-prod]": "refuted",
    "H5.exist[row,split]": "proved",
    "H5.exist[col,std]": "proved",
    "H5.eq8[input,flat]": "proved",
    "H5.eq8[slice,flat]": "refuted",
    "H6.dense[split,bidir]": "proved",
    "H6.dense[split,causal]": "refuted",
    "H7[row,causal]": "proved",
    "H8.cov": "refuted",
    "H9.lin": "refuted",
    "H9.lin-fixed": "proved",
    "H9.dep": "proved",
    "H9.func": "informal",
    "L2.8[front=raw]": "proved",
    "L2.8[front=reassigned]": "refuted",
    "L2.main.exact[induction]": "proved",
    "L2.main.form[D2]": "refuted",
    "T3.1[B-both,W1=id+mha]": "proved",
    "T3.1[B-both,W1=mha]": "refuted",
    "T6[sim,W3=i+1,W2=absorbed]": "proved",
    "T6[seq,W3=i+1,W2=absorbed]": "refuted",
    "T7.exact[eq30,B-both,W1=id+mha]": "proved",
    "T8[eq30,W1rhs=raw,unprimed=acc,abs=all,W3=all,W2in34=layer,W3in34=stage,b3in34=acc]": "proved",
    "T8[eq30,W1rhs=acc,unprimed=acc,abs=j1,W3=once,W2in34=final,W3in34=final,b3in34=acc]": "refuted",
    "T11": "refuted",
    "T12.dep[pre]": "refuted",
    "T12.dep[post]": "numeric-only",
    "T13.cost": "refuted",
}


def test_json_carries_constructions_and_densities(all_results):
    assert all_results["H5.exist[row,split]"].as_dict()["construction"].startswith(r"(\mathbf W'_{HVO})^{T}=")
    q = all_results["H2.density[causal]"].as_dict()["quantities"]
    assert q[r"\operatorname{density}\,\mathbf W'_{HV}"] == "(N + 1)/(2*N*h)"  # the quantity names its object
    assert all_results["H7[row,bidir]"].verdict.quantities["the same identity without rows of H_i summing to 1"] == "refuted"


@pytest.mark.parametrize("key,status", sorted(EXPECTED.items()))
def test_pinned_verdicts(all_results, key, status):
    assert str(all_results[key].verdict.status) == status


def test_corrections_are_proved(all_results):
    for key in ["D4.size", "P2[mm,C-col,square]", "P5.f[C-col,LR,square]", "P5.g[C-col,LR,conf]",
                "P5.end[C-prod,LR,square]", "P6.f[C-prod,RL,conf]", "M4[row,col]", "M2[zero-frac,col]"]:
        corrected = all_results[key].verdict.corrected
        assert corrected is not None and corrected.verdict.status is Status.PROVED, key


def test_json_is_serialisable(all_results):
    data = json.loads(json.dumps([r.as_dict() for r in all_results.values()]))
    assert {"id", "reading", "status", "seconds"} <= set(data[0])
