"""A4's refutations against the exact reference Transformer (symuat.certify.reference, coq/SymuatRef.v):
the checks record a ``reference_refutation`` certificate at their exact counterexample; the theorem is
``~ (forall blocks B A X0, shapes -> formula = reference)`` over Q, proved by computation, with A4.ref and
the kernel's side values at the witness. Coq rejects a "counterexample" at which the sides agree, a
reference from the base network, the witness's sides swapped for other values, and a library whose
recursion has a wrong index (the ``coq`` tier)."""

from __future__ import annotations

import dataclasses

import pytest

from certify_helpers import assert_library_variant_rejected, recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import side_statement
from symuat.certify import reference
from symuat.certify.reference import KIND, export_reference_refutation, lora_factors
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import compile_batch
from symuat.numeric import lora

W3 = "A4.W3[Δ=induced,b2=kept,idx=j,op=times]"
W2 = "A4.W2[Δ=raw,b2=recomputed,idx=j+1,op=times]"
PLUS = "A4.W3[Δ=induced,b2=kept,idx=j,op=plus]"
CONCL = "A4.concl[layer-wise=k]"
CONCL_GE = "A4.concl[layer-wise=≥k]"


@pytest.fixture(scope="module")
def a4():
    return recorded(W3, W2, PLUS, CONCL, CONCL_GE)


def _data(L, k, target, reading):
    s = lora.scenario(L, k, target, True)
    return {"statement": "eq18", "reading": reading, "target": target, "L": L, "k": k, "sizes": dict(lora.EXACT_SIZES),
            "values": dict(s.values), "lhs": lora.eq18(s.base, s.ft, reading, s.raw), "rhs": s.ft.evaluate()}


def test_a4_checks_record_their_exact_counterexample(a4):
    for key in (W3, W2, CONCL):
        verdict, _pairs, _unequal, certificates = a4[key]
        assert str(verdict.status) == "refuted"
        (kind, data), = certificates
        assert kind == KIND and (data["L"], data["k"], data["target"]) == (2, 1, "W3" if key != W2 else "W2")
        assert set(data["values"]) >= {"X0", "ΔW", "layer1.WQ", "layer2.b2"}
    assert a4[W3][3][0][1]["statement"] == "eq18" and a4[CONCL][3][0][1]["scope"] == "k"
    # op=plus is ill-typed (no value): no reference values are recorded; its refutation is by the
    # operands' shapes (tests/test_certify_shapes.py)
    verdict, _pairs, unequal, certificates = a4[PLUS]
    assert KIND not in {kind for kind, _ in certificates}
    assert {kind for kind, _ in certificates} == {"operand_types", "ill_typed"}


def test_a4_refutation_states_the_formula_against_the_reference(a4):
    verdict, _pairs, unequal, certificates = a4[W3]
    neg, ref = export_check_refutation("r_w3", verdict, unequal, [], certificates)
    assert neg.requires == ref.requires == "SymuatRef"
    assert ("~ (forall (bs : seq tblock) (B A X0 : qmx),\n      instance_shaped TW3 2 2 2 2 2 1 bs B A X0 ->\n"
            "      qmx_eqb (eq18 (Reading true false false) TW3 1 2 (mm B A) (form bs X0) "
            "(form (tune TW3 1 (mm B A) bs) X0) X0) (unrolled X0 (form (tune TW3 1 (mm B A) bs) X0)))") in neg.statement
    assert "vm_cast_no_check" in neg.sides and "(vec_r (tforward (tune TW3 1 (mm B A) bs) X0))" in ref.statement
    # one computation per instance: the lemma both prove from states the instance only (the same
    # words for every reading: :func:`deal` puts them in one file, which proves it once)
    assert "refuted_reading (i := 0)" in neg.proof and "ref_values (i := 0)" in ref.proof
    assert side_statement(neg) == side_statement(ref) and "vm_" not in neg.proof + ref.proof
    verdict, _pairs, unequal, certificates = a4[W2]
    neg, _ref = export_check_refutation("r_w2", verdict, unequal, [], certificates)
    assert "eq18 (Reading false true true) TW2 1 2" in neg.statement and "refuted_reading (i := 7)" in neg.proof
    assert side_statement(neg) != side_statement(ref)  # another instance (LoRA on W2)
    other = dict(certificates[0][1], reading={"Δ": "induced", "b2": "kept", "idx": "j", "op": "times"},
                 lhs=_data(2, 1, "W2", {"Δ": "induced", "b2": "kept", "idx": "j", "op": "times"})["lhs"])
    assert side_statement(export_reference_refutation("r_w2b", other)[0]) == side_statement(neg)
    verdict, _pairs, unequal, certificates = a4[CONCL]
    neg, = export_check_refutation("r_k", verdict, unequal, [], certificates)
    assert "layerwise_k 1 (form bs X0) (form (tune TW3 1 (mm B A) bs) X0)" in neg.statement


def test_lora_factors_are_exact_and_rank_one():
    import numpy as np

    B, A = lora_factors(np.array([[2, 4], [1, 2]], dtype=object))
    assert (B @ A == np.array([[2, 4], [1, 2]], dtype=object)).all()
    with pytest.raises(Unsupported, match="rank 1"):
        lora_factors(np.array([[1, 0], [0, 1]], dtype=object))


def _renamed(t, name, old="", new=""):
    assert not old or t.statement.count(old) >= 1, old
    return dataclasses.replace(t, name=name, statement=t.statement.replace(old, new).replace(t.name, name))


def test_coq_proves_a4s_refutations_and_rejects_their_mutants(coq_lib, a4):
    theorems = []
    for n, key in enumerate((W3, W2, CONCL)):
        verdict, _pairs, unequal, certificates = a4[key]
        theorems += export_check_refutation(f"r_{n}", verdict, unequal, [], certificates)
    ref = theorems[1]
    agree = {"Δ": "induced", "b2": "kept", "idx": "j", "op": "times"}
    # L = 2, LoRA on W3 of layer 2: this reading reproduces the reference there (the sides agree)
    same = export_reference_refutation("m_agree", _data(2, 2, "W3", agree))[0]
    mutants = [
        same,
        # the reference from the base network: not its forward pass
        _renamed(ref, "m_ref_base", "(vec_r (tforward (tune TW3 1 (mm B A) bs) X0))", "(vec_r (tforward bs X0))"),
        # the sides' recorded values swapped
        # A4.concl's statement where it holds (no index below k = 1: vacuously true)
        _renamed(theorems[-1], "m_concl_true", "layerwise_k 1 (form bs X0)", "layerwise_ge 1 (form bs X0)"),
        _renamed(ref, "m_ref_values", "(unrolled X0 (form (tune TW3 1 (mm B A) bs) X0)) [::",
                 "(eq18 (Reading true false false) TW3 1 2 (mm B A) (form bs X0) (form (tune TW3 1 (mm B A) bs) X0) X0) [::"),
    ]
    res = compile_batch(coq_lib / "lib", [*theorems, *mutants], coq_lib / "theories" / "reference_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {**{t.name: True for t in theorems},
                                                   **{m.name: False for m in mutants}}


def test_coq_rejects_a_shared_lemma_with_a_wrong_value(coq_lib, a4):
    """The instance's one computation (``a4_values``) with a wrong entry: its lemma does not
    compile, and no theorem of the instance is proved from it."""
    verdict, _pairs, unequal, certificates = a4[W3]
    neg, ref = export_check_refutation("s_w3", verdict, unequal, [], certificates)
    flipped = neg.sides.replace("[:: false; false;", "[:: true; false;")   # reading 0 agrees
    lhs = _bumped(neg.sides, "\n    [:: [:: [:: ")   # reading 0's first entry + 1
    assert flipped != neg.sides and lhs != neg.sides
    mutants = [dataclasses.replace(neg, name="s_flip", sides=flipped.replace("s_w3_values", "s_flip_values"),
                                   proof=neg.proof.replace("s_w3_values", "s_flip_values")),
               dataclasses.replace(ref, name="s_lhs", statement=ref.statement.replace("s_w3_ref", "s_lhs"),
                                   sides=lhs.replace("s_w3_values", "s_lhs_values"),
                                   proof=ref.proof.replace("s_w3_ref_values", "s_lhs_values"))]
    res = compile_batch(coq_lib / "lib", mutants, coq_lib / "theories" / "reference_shared.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {"s_flip": False, "s_lhs": False}


def _bumped(text: str, after: str) -> str:
    """``text`` with the first ``(qz n d)`` after ``after`` made ``(qz n+1 d)``."""
    import re

    at = text.index(after)
    m = re.compile(r"\(qz \(?(-?\d+)\)? (\d+)\)").search(text, at)
    n = int(m.group(1)) + 1
    return text[:m.start()] + f"(qz {n if n >= 0 else f'({n})'} {m.group(2)})" + text[m.end():]


def _witness(a4, key):
    """The exporter's own witness of ``key``'s theorems (:func:`reference.small_witness`)."""
    data = a4[key][3][0][1]
    L, k, t = int(data["L"]), int(data["k"]), data["target"]
    if data["statement"] == "layerwise":
        return reference.layerwise_witness(data["scope"], L, k, t, 2, 2, 2, 2, 1)
    lhs, rhs = reference._instance_sides(data, "T" + t)
    return reference.small_witness("eq18", L, k, t, 2, 2, 2, 2, 1,
                                   tuple(n for n, v in enumerate(lhs) if not reference._same(v, rhs)))


def test_a4_refutations_are_at_the_exporters_own_small_witness(a4):
    """Every A4 refutation is at a witness of the exporter's (a few digits, found by a bounded
    deterministic search), said so in the comment and the record's reason; at it, every reading the
    kernel refuted fails (recomputed here by the kernel's evaluator) and the layer-wise statements fail."""
    for key in (W3, W2, CONCL, CONCL_GE):
        verdict, _pairs, unequal, certificates = a4[key]
        theorems = export_check_refutation("o", verdict, unequal, [], certificates)
        assert reference.OWN in theorems[0].statement and reference.reason(theorems) == reference.REASON
        w = _witness(a4, key)
        assert w is not None and w.coq() in theorems[0].proof + theorems[0].sides
        assert reference.digits([w.B, w.A, w.X0] + [getattr(b, n) for b in w.blocks for n in reference.BLOCK]) <= 2
        data = certificates[0][1]
        L, k, t = int(data["L"]), int(data["k"]), data["target"]
        base, ft = (reference.exact_unrolled(bs, w.X0)[0] for bs in (w.blocks, reference._tune(w.blocks, t, k, w.B @ w.A)))
        if data["statement"] == "layerwise":
            assert not reference._layerwise(data["scope"], k, L, base, ft)
        else:
            lhs, rhs = reference._sides(w.blocks, w.X0, t, k, w.B @ w.A)
            kl, kr = reference._instance_sides(data, "T" + t)
            assert all(not reference._same(lhs[n], rhs) for n in range(8) if not reference._same(kl[n], kr))
            X = w.X0
            for b in reference._tune(w.blocks, t, k, w.B @ w.A):
                X = b.forward(X)
            assert reference._same(rhs, X.reshape(-1, 1))   # the reference is the forward pass (A4.ref)
    reference.small_witness.cache_clear()   # deterministic: the same witness again
    assert _witness(a4, CONCL_GE).coq() in export_check_refutation("o", *[a4[CONCL_GE][n] for n in (0, 2)], [],
                                                                    a4[CONCL_GE][3])[0].proof


def test_coq_rejects_the_own_witness_mutated(coq_lib, a4):
    """At the exporter's witness with the LoRA factor B zero (nothing is tuned: the layer-wise
    statement holds, every reading's Eq. 18 is the reference), Coq rejects the layer-wise refutation
    and the shared lemma's values; a lemma with one of the witness's values off by one too."""
    mutants = []
    for key in (CONCL_GE, W3):
        verdict, _pairs, unequal, certificates = a4[key]
        t = export_check_refutation("z", verdict, unequal, [], certificates)[0]
        w = _witness(a4, key)
        z = dataclasses.replace(w, B=w.B * 0).coq()
        name = "z_ge" if key == CONCL_GE else "z_w3"
        mutants.append(dataclasses.replace(t, name=name, statement=t.statement.replace("Theorem z ", f"Theorem {name} "),
                                           proof=t.proof.replace(w.coq(), z).replace("z_values", f"{name}_values"),
                                           sides=t.sides.replace(w.coq(), z).replace("z_values", f"{name}_values")))
    verdict, _pairs, unequal, certificates = a4[W2]
    neg, ref = export_check_refutation("y", verdict, unequal, [], certificates)
    lhs = _bumped(ref.sides, "\n    [:: [:: [:: ")
    mutants.append(dataclasses.replace(ref, name="y_lhs", statement=ref.statement.replace("y_ref", "y_lhs"),
                                       sides=lhs.replace("y_ref_values", "y_lhs_values"),
                                       proof=ref.proof.replace("y_ref_values", "y_lhs_values")))
    assert lhs != ref.sides and all(w.coq() not in m.proof + m.sides for m in mutants[:2])
    res = compile_batch(coq_lib / "lib", mutants, coq_lib / "theories" / "reference_own.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {"z_ge": False, "z_w3": False, "y_lhs": False}


def test_coq_rejects_a_reference_recursion_with_a_wrong_index(coq_lib):
    # the earlier U_j not multiplied by the new layer's W1 (W'_{j,3} after j layers, not after L)
    assert_library_variant_rejected(coq_lib / "lib", "SymuatRef.v", "U_j after j layers",
                                    "(rcons [seq mm (rW1 l) U | U <- fU f] (rW3 l))", "(rcons (fU f) (rW3 l))")
    # e_L from the next state's bias (W2 applied to c' instead of c)
    assert_library_variant_rejected(coq_lib / "lib", "SymuatRef.v", "e_L from the wrong state",
                                    "(madd (mm (rW2 l) (madd (fc f) Rm)) (rb2 l))",
                                    "(madd (mm (rW2 l) (madd (madd (mm (rW1 l) (fc f)) (rb3 l)) Rm)) (rb2 l))")
