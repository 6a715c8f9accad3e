"""H8.rank as a Coq theorem over MathComp's rank (symuat.certify.rank): the bound min(d, d_k) for
every weight and the selector witness attaining it, over any field. A bound one less, or the witness
claimed to reach d (not min(d, d_k)), is rejected by Coq (the ``coq`` tier)."""

from __future__ import annotations

import dataclasses

import pytest

from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.kinds import export_certificates
from symuat.certify.rank import export_rank_product
from symuat.certify.run import compile_batch


@pytest.fixture(scope="module")
def h8():
    verdict, _pairs, _unequal, certificates = recorded("H8.rank")["H8.rank"]
    return verdict, certificates


def test_h8_rank_records_its_product_and_is_exported_as_bound_and_witness(h8):
    verdict, certificates = h8
    assert str(verdict.status) == "proved" and [k for k, _ in certificates] == ["rank_product"]
    t, = export_certificates("c_h8", verdict, certificates)
    assert "(\\rank (W_Qi *m W_Ki^T) <= minn d d_k)%nat) /\\" in t.statement
    assert "exists W_Qi W_Ki : 'M[F]_(d, d_k), \\rank (W_Qi *m W_Ki^T) = minn d d_k)." in t.statement


def test_a_product_the_exporter_does_not_state_is_unsupported():
    import sympy as sp
    from sympy import MatrixSymbol

    d, k = sp.symbols("d k", positive=True, integer=True)
    A, B = MatrixSymbol("A", d, k), MatrixSymbol("B", k, d)
    with pytest.raises(Unsupported):
        export_rank_product("x", {"expr": A * B, "bound": sp.Min(d, k)})
    with pytest.raises(Unsupported):  # a bound that is not min of the sides
        export_rank_product("x", {"expr": A * MatrixSymbol("C", d, k).T, "bound": k})


def test_coq_accepts_h8s_rank_and_rejects_its_mutants(coq_lib, h8):
    verdict, certificates = h8
    true, = export_certificates("k_h8", verdict, certificates)
    mutants = [
        dataclasses.replace(true, name="m_h8_bound", statement=true.statement.replace(
            "<= minn d d_k)%nat)", "<= (minn d d_k).-1)%nat)").replace(true.name, "m_h8_bound")),
        dataclasses.replace(true, name="m_h8_reach", statement=true.statement.replace(
            "\\rank (W_Qi *m W_Ki^T) = minn d d_k).", "\\rank (W_Qi *m W_Ki^T) = d).").replace(true.name, "m_h8_reach")),
    ]
    assert all(m.statement != true.statement for m in mutants)
    res = compile_batch(coq_lib / "lib", [true, *mutants], coq_lib / "theories" / "rank_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {"k_h8_rank_product0": True, "m_h8_bound": False,
                                                   "m_h8_reach": False}


def test_h6_corr_records_its_span_and_coq_rejects_a_smaller_bound(coq_lib):
    """H6.corr: the token blocks Σ_i H_i(n, n') B_iᵀ span at most h dimensions (rank of the N²×M²
    matrix of their flattenings); h − 1 and 1 in place of h are rejected."""
    verdict, _pairs, _unequal, certificates = recorded("H6.corr")["H6.corr"]
    assert str(verdict.status) == "proved" and [k for k, _ in certificates] == ["token_block_span"]
    true, = export_certificates("k_h6", verdict, certificates)
    assert true.statement.endswith("ord0 l)%R) <= h)%nat.")
    mutants = [dataclasses.replace(true, name=f"m_h6_{n}", statement=true.statement.replace(
        "<= h)%nat.", f"<= {bound})%nat.").replace(true.name, f"m_h6_{n}")) for n, bound in enumerate(("h.-1", "1"))]
    res = compile_batch(coq_lib / "lib", [true, *mutants], coq_lib / "theories" / "span_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {true.name: True, "m_h6_0": False, "m_h6_1": False}
