"""WP11.rope[rope]'s refutation on true rotations (symuat.certify.refutation.export_rotation_refutation,
coq/SymuatUnroll.v's ``rotations``): the kernel records a ``rotation_refutation`` certificate; the theorem is
the witness theorem with, for each RoPE leaf, the premise that every 2×2 block is a rotation, proved at the
witness by one boolean (``rotations_ordl``). Coq rejects a witness block that is no rotation, sides that agree,
and a library whose boolean checks another norm (the ``coq`` tier)."""

from __future__ import annotations

import dataclasses

import pytest

from certify_helpers import assert_library_variant_rejected, recorded
from symuat.certify.refutation import ROTATION_PREMISES, ROTATION_REFUTATION, export_check_refutation
from symuat.certify.run import compile_batch

KEY = "WP11.rope[rope]"


@pytest.fixture(scope="module")
def wp11():
    return recorded(KEY)[KEY]


def _theorem(wp11, name="r_wp11"):
    verdict, _pairs, unequal, certificates = wp11
    assert str(verdict.status) == "refuted" and [k for k, _ in certificates] == [ROTATION_REFUTATION]
    t, = export_check_refutation(name, verdict, unequal, [], certificates)
    return t


def test_wp11_rope_is_stated_with_its_rotation_premises(wp11):
    t = _theorem(wp11)
    assert "     (rotations rho) ->\n     (rotations rho2) ->\n" in t.statement
    assert "a true rotation" in t.statement and t.proof.count("(rotations_ordl ltac:(by vm_compute))") == 2
    assert "premise" in ROTATION_PREMISES and "c² + s² = 1" in ROTATION_PREMISES


def test_coq_proves_wp11_rope_and_rejects_its_mutants(coq_lib, wp11):
    t = _theorem(wp11)
    left, right = t.statement.rsplit("\n", 1)[1].strip().removesuffix(").").split(" =m ")
    # rho's quarter turn [0 1; -1 0] made a reflection [0 1; 1 0] (c = c, c² + s² = 1, but s ≠ -(-s))
    turn = "[:: [:: 0%:Q; 1%:Q]; [:: (- 1%:Q); 0%:Q]]"
    assert t.proof.count(turn) == 1
    not_rotation = dataclasses.replace(t, name="m_scaled", proof=t.proof.replace(turn, "[:: [:: 0%:Q; 1%:Q]; [:: 1%:Q; 0%:Q]]"))
    agree = dataclasses.replace(t, name="m_agree", statement=t.statement.replace(f"=m {right}", f"=m {left}"))
    mutants = [dataclasses.replace(m, statement=m.statement.replace(t.name, m.name)) for m in (not_rotation, agree)]
    res = compile_batch(coq_lib / "lib", [t, *mutants], coq_lib / "theories" / "rotation_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {t.name: True, "m_scaled": False, "m_agree": False}


def test_wp11_rope_is_proved_at_quarter_turns_over_the_rationals(wp11):
    """The kernel's witness has cos/sin 7/25, 8/17 (``rat``'s unary normalization: 47 s of coqchk);
    the exporter proves the same statement at quarter turns where the sides still differ, over ℚ."""
    from symuat.certify.refutation import quarter_turns

    _verdict, _pairs, _unequal, certificates = wp11
    data = certificates[0][1]
    turned = quarter_turns(data)
    assert turned["quarter_turns"] and turned["sizes"] == data["sizes"]
    for leaf in data["values"]:
        if leaf not in data["rotations"]:
            assert (turned["values"][leaf] == data["values"][leaf]).all()
    for leaf in data["rotations"]:
        assert {abs(q) for q in turned["values"][leaf].flat} <= {0, 1}
    assert quarter_turns(data, limit=0) is data  # none tried: the kernel's witness
    t = _theorem(wp11)
    assert "[comRingType of rat]" in t.statement and "[comRingType of int]" not in t.statement
    assert "proved at quarter turns" in t.statement and "/" not in t.proof


def test_coq_rejects_a_rotation_boolean_with_another_norm(coq_lib):
    assert_library_variant_rejected(coq_lib / "lib", "SymuatUnroll.v", "c² + s² = 2 checked",
                                    "rho (k, (o0, tt)) (o1, tt) ^+ 2 == 1]", "rho (k, (o0, tt)) (o1, tt) ^+ 2 == 1 + 1]")


def test_a_mutant_typed_only_at_its_witness_sizes_is_not_stated_for_every_size():
    """WP7's mutant (the commutation matrix with h in place of its size) is refuted on true
    rotations at sizes where it happens to be typed; stated for every size it is ill-typed (a full
    run's batch failed on it), so it is not exported."""
    from symuat.certify.coq_terms import Unsupported
    from symuat.certify.refutation import export_check_refutation

    key = "WP7.mutant[K-with-h]"
    verdict, pairs, unequal, certificates = recorded(key)[key]
    assert str(verdict.status) == "refuted" and [k for k, _ in certificates] == ["rotation_refutation"]
    with pytest.raises(Unsupported, match="ill-typed for symbolic sizes"):
        export_check_refutation("x", verdict, unequal, pairs, certificates)
