"""M1's picture in Coq: the theorems name the flat positions, so the column-major layout fails them.

M1.pic[row,·] is proved by symuat for symbolic N, M ≥ 2: column 1 of W' is (w₁₁, 0…0, w₁₂, 0…0, …),
column 2 is column 1 shifted down by one, x' lists x row by row. Its theorems state exactly that
at flat positions (``coq/SymuatFlat.v``: the position of (a, b) in [:: A; B] is a·B + b). The
same statements in the column-major layout (the lift over [:: M; N], ``vec_c``) are false and
Coq must reject them, as it must the pictures symuat refutes (column 2 shifted by two, the
picture read with w₂ₖ). Needs ``coqc`` with MathComp for the last test.
"""

from __future__ import annotations

import pytest

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.kinds import export_certificates
from symuat.certify.picture import export_flat_column, export_flat_listing
from symuat.certify.run import capture, compile_batch
from symuat.claims import linear
from symuat.expr.algebra import T, mul
from symuat.expr.basis import Basis
from symuat.expr.linear import in_sense, lift_left
from symuat.expr.vec import Vec
from symuat.kernel.registry import REGISTRY

W, X, N, M = linear._W, linear._Xi, linear.N, linear.M


def _certificates(key):
    (check,) = [c for c in REGISTRY.all_checks() if c.key == key]
    kept: dict = {}
    (verdict, _), = capture([check], kept).values()
    return verdict, kept.get(key, [])


@pytest.fixture(scope="module")
def pic():
    """M1.pic[row,dia]'s verdict and records (the picture is UAT's, dia sense; [row,duat] is refuted)."""
    return _certificates("M1.pic[row,dia]")


def test_the_picture_is_recorded_as_two_flat_columns_and_the_row_listing(pic):
    verdict, certs = pic
    assert str(verdict.status) == "proved"
    assert [k for k, _ in certs] == ["flat_column", "flat_column", "flat_listing"]
    assert [(d["column"], d["offset"]) for k, d in certs[:2]] == [(0, 0), (1, 1)]


def test_the_statements_name_flat_positions_not_multi_indices(pic):
    col1, col2, rows = export_certificates("pic", *pic)
    assert col1.statement.endswith(
        "forall p : nat, flatm_at (tr (kron W (idm [:: M]))) p 0%N = "
        "printed_col M 0%N (mul (tr W) (selector (Ordinal h_N_0))) p.")
    assert "flatm_at (tr (kron W (idm [:: M]))) p 1%N = printed_col M 1%N" in col2.statement
    assert "(h_M_1 : (1 < M)%N)" in col2.statement  # column 2 exists within a token's block: M ≥ 2
    assert rows.statement.endswith("forall p : nat, flat_at (vec_r x_i) p = printed_rows x_i p.")
    assert all(t.proof == "symuat_picture." for t in (col1, col2, rows))


def _column_major_mutants():
    """The picture's three statements in the column-major layout (symuat refutes M1.pic[col,·])."""
    w = mul(T(W), Basis(0, N))
    lift_c = in_sense(lift_left(W, M, "col"), "dia")
    return [
        export_flat_column("colmajor_column1", {"lift": lift_c, "column": 0, "offset": 0, "printed": w, "block": M})[0],
        export_flat_column("colmajor_column2", {"lift": lift_c, "column": 1, "offset": 1, "printed": w, "block": M})[0],
        export_flat_listing("colmajor_listing", {"flat": Vec(X, "col"), "matrix": X})[0],
    ]


def test_the_column_major_statements_are_the_same_statements_over_the_other_layout():
    c1, c2, listing = _column_major_mutants()
    assert "flatm_at (tr (kron (idm [:: M]) W)) p 1%N = printed_col M 1%N" in c2.statement
    assert "flat_at (vec_c x_i) p = printed_rows x_i p" in listing.statement


def test_coq_accepts_the_row_major_picture_and_rejects_the_column_major_one(coq_lib, pic):
    """The picture's three theorems compile; the column-major picture (both columns and the listing),
    column 2 shifted by two or not shifted, and the picture read with w₂ₖ (all refuted by symuat) are
    rejected."""
    assert str(linear.m1_pic_symbolic("dia", shift=2).status) == "refuted"
    assert str(linear.m1_pic_symbolic("dia", first_row=1).status) == "refuted"
    assert str(linear.m1_pic_symbolic("dia", shift=0).status) == "refuted"
    true = export_certificates("pic", *pic)
    lift = in_sense(lift_left(W, M, "row"), "dia")
    mutants = _column_major_mutants() + [
        export_flat_column("shifted_by_two", {"lift": lift, "column": 1, "offset": 2,
                                              "printed": mul(T(W), Basis(0, N)), "block": M})[0],
        export_flat_column("not_shifted", {"lift": lift, "column": 1, "offset": 0,
                                           "printed": mul(T(W), Basis(0, N)), "block": M})[0],
        export_flat_column("second_row", {"lift": lift, "column": 0, "offset": 0,
                                          "printed": mul(T(W), Basis(1, N)), "block": M})[0],
    ]
    res = compile_batch(coq_lib / "lib", true + mutants, coq_lib / "theories" / "picture_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)
