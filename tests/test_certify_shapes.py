"""Refutations by shape and by a count of σ-terms in Coq: what a check found ill-typed, or typed only
at some sizes, or without a σ-term, stated so that Coq itself checks it.

* A4's ``op=plus`` readings add a matrix and a vector: the claim records its operands' types, the
  reference check the shapes it met; the theorem has Coq type both operands from the leaves'
  declared types and read their shapes off those types — they differ at the instance's sizes.
* H5.eq8[slice,flat] is ill-typed for symbolic sizes (h·d columns against d rows): the product's
  operands, typed by Coq, differ at sizes 2. H4.duat[transposed,conf] compares (N, h, d_v) with
  (N, h, d): its witness is stated with d_v identified with d, where the counterexample types it.
* T11 counts 0 σ-terms in b'_{1,2} against the claim's 1: b'_{1,2} is constant in σ (by
  conversion), the claimed one-layer UAT is not (exact witness).

Each mutant — operands of one shape, sizes at which the product is defined, a witness at which
the sides agree, an expression with a σ-term, two equal σ — must be rejected by Coq.
"""

from __future__ import annotations

import dataclasses

import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import compile_batch
from symuat.certify.undefined import export_ill_typed_operation, operand_shapes_theorem, reason

A4 = "A4.W2[Δ=induced,b2=kept,idx=j+1,op=plus]"
KEYS = (A4, "H5.eq8[slice,flat]", "H4.duat[transposed,conf]", "T11")


@pytest.fixture(scope="module")
def shapes():
    return recorded(*KEYS)


def _export(shapes, key, name="t"):
    verdict, pairs, unequal, certificates = shapes[key]
    return export_check_refutation(name, verdict, unequal, pairs, certificates)


def test_a4s_sum_of_a_matrix_and_a_vector_is_stated_with_coq_typing_its_operands(shapes):
    (t,) = _export(shapes, A4)
    assert "~ (forall (F M N : nat) (sigma : R -> R) (W3'_j : mx R [:: N; M] [:: N; F])" in t.statement
    assert "(b2'_j : mx R [:: N; F] [::])" in t.statement
    assert ("shape _ _ (add W3'_j dW3_j1) = shape _ _ (ew sigma (add (mul (add W2'_j dW2_j1) x'_0) b2'_j))"
            in t.statement)
    assert "at F = 6, M = 4, N = 3 (the instance the check found ill-typed) 12×18 against 18×1" in t.statement
    assert t.proof.startswith("move=> H; move: (H 6%N 4%N 3%N ")
    assert reason([t]).startswith("certified: Eq. 18 (op=plus)")


def test_operand_types_that_do_not_give_the_shapes_the_check_met_are_not_exported(shapes):
    _, _, _, certificates = shapes[A4]
    bad = next(d for k, d in certificates if k == "ill_typed")
    types = next(d for k, d in certificates if k == "operand_types")
    with pytest.raises(Unsupported, match="the check met"):
        export_ill_typed_operation("x", dict(bad, operands=(("a", (12, 18)), ("b", (12, 18)))), types)
    with pytest.raises(Unsupported, match="the check met"):
        export_ill_typed_operation("x", bad, dict(types, right=types["left"]))


def test_an_ill_typed_statement_is_refuted_by_its_products_operands(shapes):
    (t,) = _export(shapes, "H5.eq8[slice,flat]")
    assert "the right side's product needs the columns of its left factor to be the rows of its right" in t.statement
    assert "at N = 2, d = 2, d_v = 2, h = 2: 8 columns against 4 rows" in t.statement
    assert "(The counterexample, at N = 1, d = 1, d_v = 1, h = 1, is where the statement is typed" in t.statement
    assert t.statement.rstrip().endswith("= (shape _ _ (vec_r x_i)).1).")


def test_sides_of_different_index_spaces_are_refuted_where_the_counterexample_identifies_them(shapes):
    (t,) = _export(shapes, "H4.duat[transposed,conf]")
    assert t.statement.startswith(
        "Theorem t :\n  (* the sides' index spaces differ for symbolic sizes; stated where the counterexample types "
        "it: d_v identified with d (equal at the counterexample) *)\n  ~ (forall (N d h : nat)")
    assert "d_v" not in t.statement.split("*)", 1)[1]


def test_no_sigma_term_is_stated_as_constancy_in_sigma_against_the_claimed_form(shapes):
    derived, claimed = _export(shapes, "T11")
    assert "let F' := fun sigma : R -> R => add (mul W__1_2_ (add (zero [:: D] [::]) (zero [:: D] [::]))) b__1_2_ in" \
        in derived.statement
    assert derived.proof == "move=> F' s s' i j; reflexivity."
    assert "let G := fun sigma : int -> int => mul U (ew sigma (add (mul V x_0) c)) in" in claimed.statement
    assert "sigma-term" in reason([derived, claimed])


def test_coq_certifies_them_and_rejects_their_mutants(coq_lib, shapes):
    from symuat.certify.sigma_terms import constant_in_sigma

    true = [t for n, key in enumerate(KEYS) for t in _export(shapes, key, f"s{n}")]
    by = {t.name: t for t in true}
    _, _, _, certificates = shapes[A4]
    types = next(d for k, d in certificates if k == "operand_types")
    mutants = [
        # a well-typed variant: both operands of the left's shape
        operand_shapes_theorem("m_same", types["left"], types["left"], False, {"N": 3, "M": 4, "F": 6}, "mutant"),
        # the sum at N = M = F = 1, where a 1×1 matrix and a 1-vector have one shape
        dataclasses.replace(by["s0"], name="m_ones", statement=by["s0"].statement.replace("Theorem s0", "Theorem m_ones"),
                            proof=by["s0"].proof.replace("6%N 4%N 3%N", "1%N 1%N 1%N")),
        # H5's product at h = 1, where its factors conform
        dataclasses.replace(by["s1"], name="m_h1", statement=by["s1"].statement.replace("Theorem s1", "Theorem m_h1"),
                            proof=by["s1"].proof.replace("2%N 2%N 2%N 2%N", "2%N 2%N 2%N 1%N")),
        # H4's witness with every value zero: the sides agree
        dataclasses.replace(by["s2"], name="m_zero", statement=by["s2"].statement.replace("Theorem s2", "Theorem m_zero"),
                            proof=by["s2"].proof.replace("1%:Z", "0%:Z")),
        # a bias with a σ-term (b'_{2,2}) is not constant in σ
        constant_in_sigma("m_sigma", shapes["T11"][3][-1][1]["members"][2], "b'_{2,2}"),
        # the claimed form at σ = 0 against σ = 0
        dataclasses.replace(by["s3_claimed"], name="m_same_sigma",
                            statement=by["s3_claimed"].statement.replace("Theorem s3_claimed", "Theorem m_same_sigma"),
                            proof=by["s3_claimed"].proof.replace("(fun _ => 1) (@Ordinal", "(fun _ => 0) (@Ordinal")),
    ]
    assert mutants[1].proof != by["s0"].proof and mutants[2].proof != by["s1"].proof
    assert mutants[3].proof != by["s2"].proof and mutants[5].proof != by["s3_claimed"].proof
    res = compile_batch(coq_lib / "lib", true + mutants, coq_lib / "theories" / "shapes_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {m.name: res[m.name]["ok"] for m in mutants} == {m.name: False for m in mutants}
    for m in mutants:  # rejected by its proof, not by a slip in the mutation
        assert not any(s in res[m.name].get("reason", "") for s in ("Syntax error", "was not found")), res[m.name]
