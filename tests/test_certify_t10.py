"""T10's refutations over SymuatRef (symuat.certify.exact_dependence): the checks record an
``exact_dependence`` certificate at their exact instance (the network, both inputs, each missing
parameter's value at both); the statement ``~ (forall networks and inputs of the check's shapes,
P (form bs X) = P (form bs X'))`` is proved at a small witness of the exporter's own (a bounded,
deterministic search, re-checked by the kernel's exact evaluator), with ``_ref``: the unrolled form
is the forward pass there and ``P``'s values are the evaluator's. Coq rejects (the ``coq`` tier)
the same input twice, a parameter of the printed list that is the same at the witness's inputs, a
parameter fixed for every input (``W'_{3,3} = W3_3``) and a wrong value in ``_ref``."""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction

import numpy as np
import pytest

from certify_helpers import recorded
from symuat.certify import exact_dependence as ed
from symuat.certify.coq_terms import Unsupported
from symuat.certify.exact_dependence import KIND, REASON, accessor, export_exact_dependence, small_witness
from symuat.certify.reference import matrix
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import compile_batch
from symuat.numeric import lora

DUAT, AAAI = "T10[duat]", "T10[aaai]"
MISSING = {DUAT: "W'_{1,3}", AAAI: "W'_{3,2}"}


@pytest.fixture(scope="module")
def t10():
    return recorded(DUAT, AAAI)


def test_t10_checks_record_their_exact_instance(t10):
    for key, missing in MISSING.items():
        verdict, _pairs, _unequal, certificates = t10[key]
        assert str(verdict.status) == "refuted" and missing in verdict.counterexample.reason
        (kind, data), = [(k, d) for k, d in certificates if k != ed.MEMBERS]  # and the correction's members
        assert kind == KIND and data["L"] == 3 and data["seed"] == 0 and list(data["parameters"]) == [missing]
        assert missing not in data["printed"] and len(data["blocks"]) == 3
        X1, X2 = data["inputs"]
        assert (X1 == verdict.counterexample.values["X_1"]).all() and (X2 == verdict.counterexample.values["X_2"]).all()
        v1, v2 = data["parameters"][missing]
        assert v1.shape == v2.shape == (4, 4) and (v1 != v2).any()


def test_the_small_witness_is_deterministic_cheap_and_re_checked(t10):
    for key, missing in MISSING.items():
        start = time.process_time()
        inst = small_witness(missing, 3, 2, 2, 2, 2)
        assert time.process_time() - start < 5
        again = small_witness(missing, 3, 2, 2, 2, 2)
        assert all((getattr(a, n) == getattr(b, n)).all() for a, b in zip(inst.blocks, again.blocks) for n in ed.BLOCK)
        assert inst.differs(missing) and inst.digits <= ed.MAX_DIGITS
        values = {x for b in inst.blocks for n in ed.BLOCK for x in np.asarray(getattr(b, n)).flat}
        values |= {x for X in inst.inputs for x in X.flat}
        assert values <= set(ed.VALUES)
        assert all(X.shape == (2, 2) for X in inst.inputs) and len(inst.blocks) == 3
        # the values are the kernel's: lora.exact_form's unrolled form at each input is the forward pass
        for n, X in enumerate(inst.inputs):
            form = lora.exact_form(inst.blocks, X)
            assert (form.evaluate() == lora.exact_forward(inst.blocks, X)).all()
            assert [np.asarray(e).tolist() for e in form.e] == [np.asarray(e).tolist() for e in inst.forms[n].e]


def test_t10_statement_at_the_small_witness(t10):
    data = t10[DUAT][3][0][1]
    neg, ref = export_exact_dependence("r_t10", data)
    assert neg.requires == ref.requires == "SymuatRef"
    assert ("~ (forall (bs : seq tblock) (X X' : qmx),\n"
            "      [&& size bs == 3%nat, all (block_shaped 2 2 2) bs, shaped 2 2 X & shaped 2 2 X'] ->\n"
            "      qmx_eqb (nth [::] (fU (form bs X)) 0) (nth [::] (fU (form bs X')) 0))") in neg.statement
    assert "not in DUAT's printed list" in neg.statement and "vm_compute" in neg.proof
    assert "the exporter's own small witness, not the kernel's" in neg.statement
    assert "qmx_eqb (unrolled X' (form bs X')) (vec_r (tforward bs X'))" in ref.statement
    inst = small_witness("W'_{1,3}", 3, 2, 2, 2, 2)
    assert matrix(inst.value("W'_{1,3}", 1)) in ref.statement and matrix(inst.inputs[0]) in neg.proof
    assert accessor("W'_{3,1}", 3, "f") == "fA f" and accessor("W'_{3,2}", 3, "f") == "nth [::] (fV f) 2"
    with pytest.raises(Unsupported):
        accessor("W'_{2,1}", 3, "f")  # A is W'_{L,1} only


def test_t10_refutation_is_exported_with_its_reason(t10):
    for key, missing in MISSING.items():
        verdict, _pairs, unequal, certificates = t10[key]
        neg, ref = export_check_refutation("r", verdict, unequal, [], certificates)
        assert neg.name == "r" and ref.name == "r_ref" and missing in neg.statement
    assert "exporter's own small witness, not the kernel's" in REASON and "re-checked exactly" in REASON


def _renamed(t, name, old="", new=""):
    assert not old or t.statement.count(old) >= 1, old
    return dataclasses.replace(t, name=name, statement=t.statement.replace(old, new).replace(t.name, name))


def test_coq_proves_t10s_refutations_and_rejects_their_mutants(coq_lib, t10):
    theorems = []
    for n, key in enumerate((DUAT, AAAI)):
        verdict, _pairs, unequal, certificates = t10[key]
        theorems += export_check_refutation(f"r_{n}", verdict, unequal, [], certificates)
    neg, ref = theorems[0], theorems[1]
    inst = small_witness("W'_{1,3}", 3, 2, 2, 2, 2)
    X1, X2 = (matrix(X) for X in inst.inputs)
    # a parameter of DUAT's printed list that is the same at this witness's two inputs
    same = next(p for p in ("W'_{1,2}", "W'_{2,2}", "W'_{2,3}", "W'_{3,1}", "W'_{3,2}") if not inst.differs(p))
    # a wrong value: one entry of W'_{1,3} at the second input off by one
    v2 = inst.value("W'_{1,3}", 1).copy()
    v2[0, 0] = Fraction(v2[0, 0]) + 1
    mutants = [
        # the same input twice: the parameter agrees with itself
        dataclasses.replace(neg, name="m_same_input", statement=neg.statement.replace("r_0", "m_same_input"),
                            proof=neg.proof.replace(f"{X1} {X2} erefl", f"{X1} {X1} erefl")),
        # a printed parameter that does not differ at the witness
        dataclasses.replace(neg, name="m_printed", statement=neg.statement.replace("r_0", "m_printed").replace(
            "nth [::] (fU (form bs X)) 0", accessor(same, 3, "(form bs X)")).replace(
            "nth [::] (fU (form bs X')) 0", accessor(same, 3, "(form bs X')"))),
        # W'_{3,3} = W3_3: fixed for every input
        dataclasses.replace(neg, name="m_fixed", statement=neg.statement.replace("r_0", "m_fixed").replace(
            "(fU (form bs X)) 0", "(fU (form bs X)) 2").replace("(fU (form bs X')) 0", "(fU (form bs X')) 2")),
        # a wrong value in _ref
        _renamed(ref, "m_value", matrix(inst.value("W'_{1,3}", 1)), matrix(v2)),
    ]
    assert mutants[0].proof != neg.proof and "(fU (form bs X)) 0" not in mutants[1].statement + mutants[2].statement
    res = compile_batch(coq_lib / "lib", [*theorems, *mutants], coq_lib / "theories" / "t10_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {**{t.name: True for t in theorems},
                                                   **{m.name: False for m in mutants}}
    for m in mutants:  # rejected by the computation (not discriminable / true is not false), not by a typo
        assert "Syntax error" not in res[m.name]["reason"] and "was not found" not in res[m.name]["reason"]


CORRECTED = ["W'_{1,2}", "W'_{1,3}", "W'_{2,2}", "W'_{2,3}", "W'_{3,1}", "W'_{3,2}", "b'_{2,2}", "b'_{3,2}"]


def test_t10s_correction_records_its_members_and_each_has_a_witness(t10):
    _verdict, pairs, _unequal, certificates = t10[DUAT]
    members = [d for kind, d in certificates if kind == ed.MEMBERS]
    assert members and members[0]["members"] == CORRECTED
    for p in CORRECTED:
        inst = small_witness(p, 3, 2, 2, 2, 2, ed.MEMBER_DIGITS)
        assert inst.differs(p) and inst.digits <= ed.MEMBER_DIGITS
    # the parameters the correction leaves out are fixed: no witness (W'_{3,3} = W3_3, b'_{1,2} = b2_1)
    for fixed in ("W'_{3,3}", "b'_{1,2}"):
        with pytest.raises(Unsupported):
            small_witness(fixed, 3, 2, 2, 2, 2, ed.MEMBER_DIGITS)
    assert accessor("b'_{2,2}", 3, "f") == "nth [::] (fe f) 1"
    # its identities: U_{L,L} = W3_L and e_1 = b2_1, as the normal form compared them
    assert [str(r) for _l, r, _h in pairs] == ["W_{3,3}", "b_{1,2}"]
    neg = ed.export_members("k", members[0])[0]
    assert "a member of symuat's corrected list" in neg.statement and "nth [::] (fV (form bs X)) 0" in neg.statement


def test_coq_proves_t10s_correction_and_rejects_a_fixed_member(coq_lib, t10):
    _verdict, _pairs, _unequal, certificates = t10[DUAT]
    data = next(d for kind, d in certificates if kind == ed.MEMBERS)
    theorems = ed.export_members("k", data)
    bias = theorems[2 * CORRECTED.index("b'_{2,2}")]
    mutants = [  # b'_{1,2} = b2_1 stated as a member, at b'_{2,2}'s witness
        dataclasses.replace(bias, name="m_b12", statement=bias.statement.replace(bias.name, "m_b12").replace(
            "(fe (form bs X)) 1", "(fe (form bs X)) 0").replace("(fe (form bs X')) 1", "(fe (form bs X')) 0"))]
    assert "(fe (form bs X)) 0" in mutants[0].statement
    res = compile_batch(coq_lib / "lib", [*theorems, *mutants], coq_lib / "theories" / "t10_members.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {**{t.name: True for t in theorems}, "m_b12": False}
    assert "Syntax error" not in res["m_b12"]["reason"]
