"""Exact witnesses and printed sums in Coq: the statements say what symuat concluded, mutants fail.

P3 ("⋄ is not associative") is proved by an exact witness; its theorem states that the identity,
for all sizes and integer matrices, is false, and is proved at symuat's witness. D4's printed
rows are proved for every m ≥ 3; their theorems state the printed row, the ellipsis as the
general term at every position not printed, equal to the entry of ``W ⋄ x``. Each mutant is a
statement symuat does not conclude (a "witness" at which the identity holds, a row with a wrong
printed term, a repeated or out-of-range position): Coq must reject it. Needs ``coqc`` with
MathComp; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations


import pytest
import sympy as sp

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.kinds import export_certificates
from symuat.certify.printed import export_printed
from symuat.certify.run import capture, compile_batch
from symuat.certify.witness import export_witness
from symuat.kernel.registry import REGISTRY



def _certificates(key):
    (check,) = [c for c in REGISTRY.all_checks() if c.key == key]
    kept: dict = {}
    (verdict, _), = capture([check], kept).values()
    return verdict, kept.get(key, [])


@pytest.fixture(scope="module")
def p3():
    return {mm: _certificates(f"P3[{mm},square]") for mm in ("C-col", "C-prod")}


@pytest.fixture(scope="module")
def d4():
    return {row: _certificates(f"D4.rows[{row}]") for row in ("row2", "rown")}


def test_the_witness_statement_is_the_negated_identity(p3):
    verdict, certs = p3["C-col"]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["witness"]
    (t,) = export_certificates("p3", verdict, certs)
    assert t.statement == (
        "Theorem p3_witness0 :\n"
        "  ~ (forall (n : nat) (A : mx [comRingType of int] [:: n] [:: n]) "
        "(B : mx [comRingType of int] [:: n] [:: n]) (v : mx [comRingType of int] [:: n] [::]),\n"
        "     diamond (diamond A B) v =m diamond A (diamond B v)).")
    assert "lmx [:: 2%N] [:: 2%N] [:: [:: 0%:Z; 1%:Z]; [:: 0%:Z; 0%:Z]]" in t.proof


def test_the_printed_row_statement_states_the_ellipsis(d4):
    verdict, certs = d4["row2"]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["printed_sum"]
    (t,) = export_certificates("d4", verdict, certs)
    o = "ltac:(by [])"
    assert t.statement == (
        "Theorem d4_printed_sum0 (m n : nat) (W : mx R [:: m.+3] [:: n.+2]) (x : mx R [:: m.+3] [::]) :\n"
        f"  diamond W x (@Ordinal n.+2 1 {o}, tt) tt =\n"
        f"    W (@Ordinal m.+3 0 {o}, tt) (@Ordinal n.+2 1 {o}, tt) * x (@Ordinal m.+3 0 {o}, tt) tt\n"
        f"    + W (@Ordinal m.+3 1 {o}, tt) (@Ordinal n.+2 1 {o}, tt) * x (@Ordinal m.+3 1 {o}, tt) tt\n"
        f"    + \\sum_(k < m.+3 | (k : nat) \\notin [:: 0; 1; m.+2]%N) W (k, tt) (@Ordinal n.+2 1 {o}, tt) * x (k, tt) tt\n"
        f"    + W (@Ordinal m.+3 m.+2 {o}, tt) (@Ordinal n.+2 1 {o}, tt) * x (@Ordinal m.+3 m.+2 {o}, tt) tt.")


def test_a_refuted_negation_records_no_witness():
    """P4[right,mv] (⋄ is distributive: the negation is refuted) leaves nothing to export."""
    verdict, certs = _certificates("P4[right,mv]")
    assert str(verdict.status) == "refuted" and certs == []


def _mutant_witnesses(p3):
    out = []
    _, [(_, data)] = p3["C-col"]
    holds = dict(data, values=dict(data["values"], A=[[0, 0], [0, 0]]))  # A = 0: both sides are 0
    out.append(export_witness("w_mutant_holds", holds)[0])
    _, [(_, data)] = p3["C-prod"]
    # an entry where the two sides agree (entry 0 of the witness: both 0), named as the witness entry
    agree = dict(data, lhs_value=[[1], [0]], rhs_value=[[0], [0]])
    out.append(export_witness("w_mutant_entry", agree)[0])
    return out


def _printed_data(d4, row="row2", **change):
    _, [(_, data)] = d4[row]
    return dict(data, **change)


def test_coq_accepts_the_witnesses_and_rows_and_rejects_their_mutants(coq_lib, p3, d4):
    from symuat.kernel.decide.printed_sums import check_printed_terms

    w, x = sp.IndexedBase("w"), sp.IndexedBase("x")
    m = sp.Symbol("m", positive=True, integer=True)
    true = [export_certificates(f"t_{k.replace('-', '_')}", *p3[k])[0] for k in p3]
    true += [export_certificates(f"t_{k}", *d4[k])[0] for k in d4]
    data = _printed_data(d4)
    # the row with a wrong printed term (w_{3,2} at position 2, as Eq. 4 prints row 1): symuat refutes it
    wrong = [(1, w[1, 2] * x[1]), (2, w[3, 2] * x[2]), (m, w[m, 2] * x[m])]
    assert str(check_printed_terms(wrong, data["general"], data["k_range"], data["least"]).status) == "refuted"
    mutants = _mutant_witnesses(p3) + [
        export_printed("p_mutant_term", dict(data, explicit=wrong))[0],
        # a position printed twice: the ellipsis would then count a term twice
        export_printed("p_mutant_repeat", dict(data, explicit=[(1, w[1, 2] * x[1]), (1, w[1, 2] * x[1]),
                                                                (m, w[m, 2] * x[m])]))[0],
        # a position out of range (m + 1 of 1..m): the statement does not typecheck
        export_printed("p_mutant_range", dict(data, explicit=[(1, w[1, 2] * x[1]), (2, w[2, 2] * x[2]),
                                                               (m + 1, w[m + 1, 2] * x[m + 1])]))[0],
    ]
    thms = [t for pair in zip(true, mutants) for t in pair] + true[len(mutants):] + mutants[len(true):]
    res = compile_batch(coq_lib / "lib", thms, coq_lib / "theories" / "witness_batch.v", timeout=120)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)


def test_h9_dep_is_stated_with_exps_facts_as_premises():
    """H9.dep's witness is exact only through softmax(ln 2·k) = 2^k/Σ2^k: stated with e for exp, l
    for ln 2 and e(k·l) = 2^k at the scores used as premises (tests/test_certify_envelope.py)."""
    verdict, certs = _certificates("H9.dep")
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["softmax_witness"]
    (t,) = export_certificates("h9", verdict, certs)
    assert "e 0 = 1 -> e (- l) = 2%:R^-1 ->" in t.statement and t.requires == "SymuatEnv"


def test_a_rational_witness_is_stated_over_rat_and_a_false_one_rejected(coq_lib):
    """A witness with a fraction is stated over ℚ; one at which the identity holds (A symmetric:
    Av = Aᵀv) is rejected however its entry is named."""
    from fractions import Fraction

    from sympy import MatrixSymbol

    n = sp.Symbol("n", positive=True, integer=True)
    A, v = MatrixSymbol("A", n, n), MatrixSymbol("v", n, 1)
    base = {"lhs": A * v, "rhs": A.T * v, "sizes": {"n": 2}, "values": {"v": [[1], [1]]}}
    third = Fraction(1, 3)
    good = export_witness("q_true", dict(base, values=dict(base["values"], A=[[0, third], [-2, 0]]),
                                         lhs_value=[[third], [-2]], rhs_value=[[-2], [third]]))[0]
    bad = export_witness("q_mutant", dict(base, values=dict(base["values"], A=[[0, -third], [-third, 0]]),
                                          lhs_value=[[1], [0]], rhs_value=[[0], [0]]))[0]
    assert "mx [comRingType of rat] [:: n] [:: n]" in good.statement
    assert "[:: [:: 0%:Q; (1%:Q / 3%:Q)]; [:: (- 2%:Q); 0%:Q]]" in good.proof
    res = compile_batch(coq_lib / "lib", [good, bad], coq_lib / "theories" / "rat_batch.v", timeout=120)
    assert {k: r["ok"] for k, r in res.items()} == {"q_true": True, "q_mutant": False}
