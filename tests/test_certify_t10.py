"""T10's refutations over SymuatRef (symuat.certify.exact_dependence): the checks record an
``exact_dependence`` certificate at their exact instance (the network, both inputs, each missing
parameter's value at both); the statement ``~ (forall networks and inputs of the check's shapes,
P (form bs X) = P (form bs X'))`` is built for the missing parameter, with a ``_ref`` fingerprint
of the kernel's values. The tier does not send it (its computation at the witness costs minutes of
CPU): the record's reason says so."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.exact_dependence import KIND, NOT_SENT, PRIME, accessor, export_exact_dependence, residues
from symuat.certify.refutation import export_check_refutation

DUAT, AAAI = "T10[duat]", "T10[aaai]"


@pytest.fixture(scope="module")
def t10():
    return recorded(DUAT, AAAI)


def test_t10_checks_record_their_exact_instance(t10):
    for key, missing in ((DUAT, "W'_{1,3}"), (AAAI, "W'_{3,2}")):
        verdict, _pairs, _unequal, certificates = t10[key]
        assert str(verdict.status) == "refuted" and missing in verdict.counterexample.reason
        (kind, data), = certificates
        assert kind == KIND and data["L"] == 3 and data["seed"] == 0 and list(data["parameters"]) == [missing]
        assert missing not in data["printed"] and len(data["blocks"]) == 3
        X1, X2 = data["inputs"]
        assert (X1 == verdict.counterexample.values["X_1"]).all() and (X2 == verdict.counterexample.values["X_2"]).all()
        v1, v2 = data["parameters"][missing]
        assert v1.shape == v2.shape == (4, 4) and (v1 != v2).any()


def test_t10_statement_and_fingerprint(t10):
    data = t10[DUAT][3][0][1]
    neg, ref = export_exact_dependence("r_t10", data)
    assert neg.requires == ref.requires == "SymuatRef"
    assert ("~ (forall (bs : seq tblock) (X X' : qmx),\n"
            "      [&& size bs == 3%nat, all (block_shaped 2 2 2) bs, shaped 2 2 X & shaped 2 2 X'] ->\n"
            "      qmx_eqb (nth [::] (fU (form bs X)) 0) (nth [::] (fU (form bs X')) 0))") in neg.statement
    assert "not in DUAT's printed list" in neg.statement and "vm_compute" in neg.proof
    assert f"residues {PRIME}%Z (nth [::] (fU (form bs X')) 0)" in ref.statement
    # the fingerprint of a value: numerator and denominator modulo the prime, row by row
    assert residues(np.array([[Fraction(-1, 3), 2]], dtype=object)) == f"[:: {PRIME - 1}%Z; 3%Z; 2%Z; 1%Z]"
    assert accessor("W'_{3,1}", 3, "f") == "fA f" and accessor("W'_{3,2}", 3, "f") == "nth [::] (fV f) 2"
    with pytest.raises(Unsupported):
        accessor("W'_{2,1}", 3, "f")  # A is W'_{L,1} only


def test_t10_refutation_is_not_sent_and_says_why(t10):
    for key in (DUAT, AAAI):
        verdict, _pairs, unequal, certificates = t10[key]
        with pytest.raises(Unsupported) as exc:
            export_check_refutation("r", verdict, unequal, [], certificates)
        assert str(exc.value) == NOT_SENT and "not sent" in NOT_SENT
