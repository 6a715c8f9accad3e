"""Density certificates in Coq: the exported statements, and Coq rejecting wrong ones.

A proved density ("the generic density of E is P/Q") is exported as three theorems (support,
witness, count; :mod:`symuat.certify.density`). The mutants are statements symuat refutes — a
wrong claimed density, a pattern with a dropped delta, a flipped causal indicator, a wrong
witness value — exported with the same generic proofs: Coq must reject them and accept the true
ones. Needs ``coqc`` with MathComp; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ``.
"""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
from sympy import MatrixSymbol

from symuat.expr.attention import mha_symbols
from symuat.certify.density import density_theorems, export_density
from symuat.certify.coq_terms import Unsupported
from symuat.certify.run import capture, compile_batch
from symuat.kernel.structure import density_pattern, generic_density
from symuat.expr.linear import lift_left

N, M = sp.symbols("N M", positive=True, integer=True)
M2_LIFT = lift_left(MatrixSymbol("W", N, N), M, "row")  # W ⊗ I_M: M2[nnz-frac,row]
CAUSAL = mha_symbols("std", "causal").W_HV("row")        # H2.density[std,causal]
SPLIT = mha_symbols("split", "bidir").W_HV("row")        # H2.density[bidir]


def _export(base, expr, claimed=None):
    derived = generic_density(expr)
    return export_density(base, {"expr": expr, "claimed": derived if claimed is None else claimed,
                                 "derived": derived})


def test_the_statements_of_m2_are_shown_exactly():
    support, witness, count = _export("m2", M2_LIFT)
    assert support.statement == (
        "Theorem m2_support (M N : nat) (W : mx R [:: N] [:: N]) :\n"
        "  forall (i0 : 'I_N) (i1 : 'I_M) (j0 : 'I_N) (j1 : 'I_M),\n"
        "  (kron W (idm [:: M])) (i0, (i1, tt)) (j0, (j1, tt)) = delta i1 j1 * "
        "(kron W (idm [:: M])) (i0, (i1, tt)) (j0, (j1, tt)).")
    assert witness.statement == (
        "Theorem m2_witness (M N : nat) (HM : (0 < M)%N) (HN : (0 < N)%N) :\n"
        "  (0 < 1)%N /\\\n"
        "  forall (W : mx R [:: N] [:: N]),\n"
        "  (forall I J, W I J = 1) ->\n"
        "  forall (i0 : 'I_N) (i1 : 'I_M) (j0 : 'I_N) (j1 : 'I_M),\n"
        "  (kron W (idm [:: M])) (i0, (i1, tt)) (j0, (j1, tt)) = delta i1 j1 * (1)%:R.")
    assert count.statement == (
        "Theorem m2_count (M N : nat) :\n"
        "  (\\sum_(i0 < N) \\sum_(i1 < M) \\sum_(j0 < N) \\sum_(j1 < M) (delta i1 j1 : R)) * (M)%:R"
        " = (1)%:R * (N * M * N * M)%:R.")
    for t in (support, witness, count):
        assert "Admitted" not in t.proof and "admit" not in t.proof


def test_the_causal_count_states_the_claimed_fraction():
    count = _export("h2", CAUSAL)[2]
    assert "((j0 <= i0)%N%:R : R)) * (2 * N)%:R = (N + 1)%:R * (N * h * d_v * N * M)%:R." in count.statement
    assert "tri_2" in count.proof


def test_a_claim_that_is_not_the_derived_density_is_not_exported():
    with pytest.raises(Unsupported, match="not the derived density"):
        export_density("bad", {"expr": M2_LIFT, "claimed": 1 / M**2, "derived": 1 / M})
    with pytest.raises(Unsupported, match="not the expression's generic density"):
        export_density("bad", {"expr": M2_LIFT, "claimed": 1 / M**2, "derived": 1 / M**2})


def _densities_and_mutants():
    """The support, witness and count theorems of three true densities, and mutants (the names of
    those that must be rejected; the untouched parts of a wrong claim kept, which go through)."""
    theorems = []
    # true: M2 (a delta), H2 std causal (a causal pair), H2 split (a delta across heads)
    theorems += _export("ok_m2", M2_LIFT) + _export("ok_causal", CAUSAL) + _export("ok_split", SPLIT)
    pm, pc, ps = density_pattern(M2_LIFT), density_pattern(CAUSAL), density_pattern(SPLIT)
    # a wrong claimed density: 1/M² for M2 (the count must fail)
    theorems += density_theorems("bad_claim", M2_LIFT, 1 / M**2, pm)
    # a wrong causal count: (N+2)/(2N) for the lower triangle's (N+1)/(2N)
    theorems += density_theorems("bad_tri", CAUSAL, (N + 2) / (2 * N), pc)
    # a dropped delta: H2 split without δ_{i1 j1} (the witness and the count must fail)
    theorems += density_theorems("bad_drop", SPLIT, generic_density(SPLIT), dataclasses.replace(ps, constraints=()))
    # a flipped causal indicator [a ≤ b] (the support must fail)
    flipped = tuple(("T", f[2], f[1]) if f[0] == "T" else f for f in pc.constraints)
    theorems += density_theorems("bad_flip", CAUSAL, generic_density(CAUSAL), dataclasses.replace(pc, constraints=flipped))
    # an extra delta (the support must fail)
    extra = pm.constraints + (("D", "i0", "j0"),)
    theorems += density_theorems("bad_extra", M2_LIFT, 1 / M, dataclasses.replace(pm, constraints=extra))
    # a wrong witness value (the witness must fail)
    theorems += density_theorems("bad_witness", SPLIT, generic_density(SPLIT), dataclasses.replace(ps, witness=sp.Integer(2)))
    expected_rejected = ["bad_claim_count", "bad_tri_count", "bad_drop_witness", "bad_drop_count",
                         "bad_flip_support", "bad_extra_support", "bad_witness_witness"]
    # compiled: the true theorems, the mutated ones, and the untouched parts of the wrong claim
    keep = set(expected_rejected) | {"bad_claim_support", "bad_claim_witness"}
    theorems = [t for t in theorems if t.name.startswith("ok_") or t.name in keep]
    return theorems, expected_rejected


def test_coq_accepts_the_true_densities_and_rejects_the_mutants(coq_lib):
    theorems, expected_rejected = _densities_and_mutants()
    res = compile_batch(coq_lib / "lib", theorems, coq_lib / "theories" / "density.v", timeout=300)
    ok = {t.name: res[t.name]["ok"] for t in theorems}
    assert all(v for k, v in ok.items() if k.startswith("ok_")), ok
    assert not any(ok[k] for k in expected_rejected), {k: ok[k] for k in expected_rejected}
    # the parts a mutant does not touch still go through: the rejection is the mutation's
    assert ok["bad_claim_support"] and ok["bad_claim_witness"]


def test_the_first_path_of_the_support_and_witness_tactics_alone_decides_them(coq_lib):
    """[symuat_support] and [symuat_ones_witness] try the deltas eliminated by computation
    ([symuat_deltas_el]) before the rewrites: that path alone proves every true support and witness
    (it is the one taken, not a dead branch before the old one) and rejects the mutants'."""
    theorems, expected_rejected = _densities_and_mutants()
    first = {"symuat_support.": "symuat_support_with ltac:(idtac; symuat_deltas_el).",
             "symuat_ones_witness].": "symuat_ones_witness_with ltac:(idtac; symuat_deltas_el)]."}
    alone = []
    for t in theorems:
        for old, new in first.items():
            if t.proof.endswith(old):
                alone.append(dataclasses.replace(t, proof=t.proof.removesuffix(old) + new))
    assert {t.name.rsplit("_", 1)[1] for t in alone} == {"support", "witness"}
    res = compile_batch(coq_lib / "lib", alone, coq_lib / "theories" / "density_first.v", timeout=300)
    ok = {t.name: res[t.name]["ok"] for t in alone}
    assert all(v for k, v in ok.items() if k.startswith("ok_") or k in ("bad_claim_support", "bad_claim_witness")), ok
    assert not any(v for k, v in ok.items() if k in expected_rejected), ok
    assert {k for k in ok if k in expected_rejected} == {
        "bad_drop_witness", "bad_flip_support", "bad_extra_support", "bad_witness_witness"}


def test_a_proved_density_records_its_certificate():
    from symuat.kernel.registry import REGISTRY
    import symuat.claims  # noqa: F401

    checks = [c for c in REGISTRY.all_checks() if c.key in ("M2[nnz-frac,row]", "M2[zero-frac,row]")]
    certs: dict = {}
    out = capture(checks, certs)
    assert str(out["M2[nnz-frac,row]"][0].status) == "proved"
    (kind, data), = certs["M2[nnz-frac,row]"]
    assert kind == "density" and sp.simplify(data["claimed"] - 1 / M) == 0
    # refuted: what the refutation rests on (the zero fraction, 1 − the density, at the sizes)
    (kind, data), = certs["M2[zero-frac,row]"]
    assert kind == "density_refutation" and data["complement"] and data["sizes"] == {"N": 2, "M": 3}


def test_a_refuted_density_is_certified_at_its_count_and_a_count_that_holds_is_rejected(coq_lib):
    """H1.dense[causal]'s refutation (claim 1, the causal pattern is 3/4 at N = 2) and
    M2[zero-frac,row]'s (zero fraction 1/3 claimed, 2/3 at N = 2, M = 3) as Coq computations on the
    pattern's count at the counterexample's sizes; a "refutation" whose claim the count meets there
    (the true density 3/4 claimed as 3/4 by its numbers, forced past the exporter's check) is
    rejected, and so is the zero fraction 2/3 stated as refuted."""
    from symuat.certify.density import export_density_refutation

    causal = export_density_refutation("rc", {"expr": CAUSAL, "claimed": 1, "derived": generic_density(CAUSAL),
                                              "sizes": {"N": 2, "M": 1, "d_v": 1, "h": 2}})
    zero = export_density_refutation("rz", {"expr": M2_LIFT, "claimed": sp.Rational(1, 3), "derived": 1 - 1 / M,
                                            "sizes": {"N": 2, "M": 3}, "complement": True})
    with pytest.raises(Unsupported, match="holds at the sizes"):
        export_density_refutation("no", {"expr": M2_LIFT, "claimed": sp.Rational(2, 3), "derived": 1 - 1 / M,
                                         "sizes": {"N": 2, "M": 3}, "complement": True})
    # mutants: the claim the count meets at the sizes, in the refutation's own statement
    meets = dataclasses.replace(
        causal[-1], name="bad_meets_refute",
        statement=causal[-1].statement.replace("rc_refute", "bad_meets_refute")
        .replace("* (1)%:R = (1)%:R *", "* (4)%:R = (3)%:R *"))
    zero_meets = dataclasses.replace(
        zero[-1], name="bad_zero_refute",
        statement=zero[-1].statement.replace("rz_refute", "bad_zero_refute").replace("* (3)%:R =", "* (3)%:R = (2)%:R *"))
    assert meets.statement != causal[-1].statement and zero_meets.statement != zero[-1].statement
    theorems = causal + zero + [meets, zero_meets]
    res = compile_batch(coq_lib / "lib", theorems, coq_lib / "theories" / "density_refuted.v", timeout=300)
    ok = {t.name: res[t.name]["ok"] for t in theorems}
    assert all(ok[t.name] for t in causal + zero), ok
    assert not ok["bad_meets_refute"] and not ok["bad_zero_refute"], ok


def test_a_refutation_with_a_density_certificate_is_exported_as_the_count_at_the_counterexample():
    """The tier's refutations take a ``density_refutation`` certificate (what the kernel's
    :func:`~symuat.kernel.decide.quantities.check_quantity` is to record when an exact count
    refutes a density claim) before looking for matrix values the counterexample does not have."""
    from symuat.certify.refutation import DENSITY_REFUTATION, export_check_refutation

    data = {"expr": CAUSAL, "claimed": 1, "derived": generic_density(CAUSAL), "sizes": {"N": 2, "M": 1, "d_v": 1, "h": 2}}
    names = [t.name for t in export_check_refutation("r", None, [], [], [(DENSITY_REFUTATION, data)])]
    assert names == ["r_support", "r_witness", "r_count", "r_refute"]
