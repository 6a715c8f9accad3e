"""The gallery's symbolic proofs certified in Coq: SymPy's Trace, DiagonalOf, HadamardProduct and
DiagMatrix exported through the kernel's nodes (kernel.language) as the library's ``mtrace``,
``diagonal``, ``hadamard`` and ``diag``; Coq accepts each proved identity and rejects a refuted
variant exported with the same proof. Needs ``coqc`` with MathComp (skips without it)."""

from __future__ import annotations

import subprocess

import pytest
from sympy import DiagMatrix, DiagonalOf, HadamardProduct, KroneckerProduct, MatrixSymbol, Trace, Transpose

from symuat import check_identity, dims
from symuat.certify.export import coq_file, export_identity
from symuat.kernel.language import lower
from symuat.expr.vec import Vec

m, n = dims("m n")
A, B, C = (MatrixSymbol(x, n, n) for x in "ABC")
R = MatrixSymbol("R", m, m)
X, Y = MatrixSymbol("X", n, m), MatrixSymbol("Y", n, m)
v, w = MatrixSymbol("v", n, 1), MatrixSymbol("w", n, 1)

PROVED = [
    ("trace_cyclic", Trace(A * B * C), Trace(C * A * B)),
    ("trace_kron", Trace(KroneckerProduct(A, R)), Trace(A) * Trace(R)),
    ("vec_trace", Vec(X, "col").T * Vec(Y, "col"), Trace(X.T * Y)),
    ("hadamard_transpose", Transpose(HadamardProduct(X, Y)), HadamardProduct(X.T, Y.T)),
    ("diag_times_vector", DiagMatrix(v) * w, HadamardProduct(v, w)),
    ("diagonal_of_diag", DiagonalOf(DiagMatrix(v)), v),
]
REFUTED = [("trace_transposed", Trace(A * B * C), Trace(A * C * B))]


def _compiles(lib, name, lhs, rhs) -> bool:
    path = lib / "theories" / f"{name}.v"
    path.write_text(coq_file([export_identity(name, lower(lhs), lower(rhs))]))
    proc = subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib / "lib"), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=600, cwd=path.parent)
    return proc.returncode == 0


def test_the_trace_is_stated_as_the_librarys_mtrace():
    t = export_identity("tr_cyclic", lower(Trace(A * B)), lower(Trace(B * A)))
    assert "mtrace (mul A B) =m mtrace (mul B A)" in t.statement


@pytest.mark.parametrize("name,lhs,rhs", PROVED, ids=[p[0] for p in PROVED])
def test_coq_accepts_a_gallery_proof(coq_lib, name, lhs, rhs):
    assert check_identity(lhs, rhs).status.value == "proved"
    assert _compiles(coq_lib, name, lhs, rhs)


@pytest.mark.parametrize("name,lhs,rhs", REFUTED, ids=[p[0] for p in REFUTED])
def test_coq_rejects_a_refuted_variant(coq_lib, name, lhs, rhs):
    assert check_identity(lhs, rhs).status.value == "refuted"
    assert not _compiles(coq_lib, name, lhs, rhs)
