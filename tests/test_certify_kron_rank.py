"""A3.rank and A3.lowrank as Coq theorems over MathComp's rank (symuat.certify.kron_rank,
coq/SymuatKron.v): the lifted LoRA increment — N copies of (B A)ᵀ down the diagonal, I_N ⊗ (B A)ᵀ —
has rank at most N·r for every B, A and the selector attains N·r (lowrank: the ratio to N·min(p, q)
is r/min(p, q)). A bound N·r − 1, a witness claimed to reach N·q, rank N for N·r, a ratio (r+1)/min(p, q),
and a library whose block-diagonal rank is (N+1)·rank M are rejected by Coq (the ``coq`` tier)."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
from sympy import Identity, KroneckerProduct, MatrixSymbol

from certify_helpers import assert_library_variant_rejected, recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported
from symuat.certify.kinds import export_certificates
from symuat.certify.kron_rank import export_rank_kron, reason
from symuat.certify.run import compile_batch

KEYS = ("A3.rank[row]", "A3.rank[col]", "A3.lowrank[row]", "A3.lowrank[col]")


@pytest.fixture(scope="module")
def a3():
    return recorded(*KEYS)


def _theorem(a3, key, base):
    verdict, _pairs, _unequal, certificates = a3[key]
    assert str(verdict.status) == "proved" and [k for k, _ in certificates] == ["rank_kron"]
    t, = export_certificates(base, verdict, certificates)
    return t, certificates[0][1]


def test_a3_ranks_record_their_lift_and_are_exported_as_bound_and_witness(a3):
    row, data = _theorem(a3, "A3.rank[row]", "c_row")
    assert data["order"] == "row" and data["claim"] == "value"
    assert "(\\rank (lift_diag N (B *m A)^T) <= N * r)%nat) /\\" in row.statement
    assert "\\rank (lift_diag N (B *m A)^T) = (N * r)%nat)." in row.statement
    col, data = _theorem(a3, "A3.rank[col]", "c_col")
    assert "row_perm s (col_perm t (lift_diag N (B *m A)^T))" in col.statement
    assert "NOT proved here" in col.statement and "not proved in Coq" in reason(data)
    low, data = _theorem(a3, "A3.lowrank[row]", "c_low")
    assert "/ (N * minn p q)%:R = r%:R / (minn p q)%:R :> rat)%R)." in low.statement
    assert all(t.requires == "SymuatKron" for t in (row, col, low))


def test_what_the_exporter_does_not_state_is_unsupported():
    N, p, q, r = sp.symbols("N p q r", positive=True, integer=True)
    B, A = MatrixSymbol("B", p, r), MatrixSymbol("A", r, q)
    lift = KroneckerProduct(Identity(N), (B * A).T)
    with pytest.raises(Unsupported):  # the claimed value is not N r
        export_rank_kron("x", {"expr": lift, "order": "row", "claim": "value", "claimed": N * q})
    with pytest.raises(Unsupported):  # the col order's factors for the row order
        export_rank_kron("x", {"expr": KroneckerProduct((B * A).T, Identity(N)), "order": "row",
                               "claim": "value", "claimed": N * r})
    with pytest.raises(Unsupported):  # a single factor, not a product B A
        export_rank_kron("x", {"expr": KroneckerProduct(Identity(N), MatrixSymbol("W", q, p)), "order": "row",
                               "claim": "value", "claimed": N * r})


def _mutant(t, name, old, new):
    assert t.statement.count(old) >= 1, old
    return dataclasses.replace(t, name=name, statement=t.statement.replace(old, new).replace(t.name, name))


def test_coq_accepts_a3s_ranks_and_rejects_their_mutants(coq_lib, a3):
    theorems = [_theorem(a3, key, f"k_{n}")[0] for n, key in enumerate(KEYS)]
    row, col, low, _lowcol = theorems
    mutants = []
    for tag, t in (("row", row), ("col", col)):
        mutants += [
            _mutant(t, f"m_{tag}_bound", "<= N * r)%nat)", "<= (N * r).-1)%nat)"),
            _mutant(t, f"m_{tag}_reach", "= (N * r)%nat).", "= (N * q)%nat)."),
            _mutant(t, f"m_{tag}_n", "= (N * r)%nat).", "= N)."),
        ]
    mutants.append(_mutant(low, "m_low_ratio", "= r%:R / (minn p q)%:R", "= r.+1%:R / (minn p q)%:R"))
    # beside the libraries a full run imports after the section (SymuatArith loads QArith, whose
    # NArith rebinds %N to the binary naturals: a statement in %N failed there, not alone)
    after = [Exported(f"after_{lib}", "Theorem after_%s : True." % lib, "exact I.", requires=lib)
             for lib in ("SymuatArith", "SymuatEnv", "SymuatSmall")]
    res = compile_batch(coq_lib / "lib", [*after, *theorems, *mutants], coq_lib / "theories" / "kron_batch.v",
                        timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {**{t.name: True for t in [*after, *theorems]},
                                                   **{m.name: False for m in mutants}}


def test_coq_rejects_a_library_whose_block_diagonal_rank_is_too_large(coq_lib):
    assert_library_variant_rejected(coq_lib / "lib", "SymuatKron.v", "rank (N+1)·rank M",
                                    "= (N * \\rank M)%N.", "= (N.+1 * \\rank M)%N.")
