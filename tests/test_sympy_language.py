"""A researcher's own identities, typed the natural SymPy way: trace, Hadamard, diagonal, inverse,
Kronecker, vec — every one decided right (true ones proved for symbolic sizes, false ones refuted
with an exact counterexample), none raising UnsupportedExpressionError.

Written before the kernel spoke this language (issue 31), as an outsider types them after reading
the README: ``from sympy import ...`` and ``symuat.check_identity``.
"""

import json

import pytest
from sympy import (
    DiagMatrix,
    DiagonalOf,
    Determinant,
    Eq,
    HadamardProduct,
    Identity,
    Inverse,
    KroneckerProduct,
    MatrixSymbol,
    OneMatrix,
    Trace,
    Transpose,
    hadamard_product,
    kronecker_product,
    trace,
)

from symuat import check_identity, dims
from symuat.errors import UnsupportedExpressionError
from symuat.vec import Vec

m, n, p = dims("m n p")
A, B, C = (MatrixSymbol(x, n, n) for x in "ABC")
P, Q = MatrixSymbol("P", m, n), MatrixSymbol("Q", n, m)   # rectangular
R, S = MatrixSymbol("R", m, m), MatrixSymbol("S", m, m)
X, Y, Z = (MatrixSymbol(x, m, n) for x in "XYZ")           # one rectangular shape, for ∘
u, v, w = (MatrixSymbol(x, n, 1) for x in "uvw")
ones_n = OneMatrix(n, 1)

PROVED, REFUTED = "proved", "refuted"

#: (name, lhs, rhs, expected status); the rhs None: the lhs is a SymPy Eq
IDENTITIES = [
    # trace
    ("tr(PQ) = tr(QP), rectangular", Trace(P * Q), Trace(Q * P), PROVED),
    ("tr(ABC) = tr(CAB), cyclic", Trace(A * B * C), Trace(C * A * B), PROVED),
    ("tr(ABC) = tr(ACB) is false", Trace(A * B * C), Trace(A * C * B), REFUTED),
    ("tr(Aᵀ) = tr(A)", Trace(A.T), Trace(A), PROVED),
    ("tr(A + B) = tr(A) + tr(B)", Trace(A + B), Trace(A) + Trace(B), PROVED),
    ("tr(2A) = 2 tr(A)", Trace(2 * A), 2 * Trace(A), PROVED),
    ("tr(AB) = tr(A) tr(B) is false", Trace(A * B), Trace(A) * Trace(B), REFUTED),
    ("tr(A)² = tr(A²) is false", Trace(A) ** 2, Trace(A * A), REFUTED),
    ("Eq(tr(AB), tr(BA)) as one argument", Eq(Trace(A * B), Trace(B * A)), None, PROVED),
    ("trace() of a sum, SymPy's function", trace(A + B), Trace(B) + Trace(A), PROVED),
    # Kronecker and vec
    ("tr(A⊗R) = tr(A) tr(R)", Trace(KroneckerProduct(A, R)), Trace(A) * Trace(R), PROVED),
    ("tr(A⊗R) = tr(A) + tr(R) is false", Trace(kronecker_product(A, R)), Trace(A) + Trace(R), REFUTED),
    ("vec(X)ᵀvec(Y) = tr(XᵀY)", Vec(X, "col").T * Vec(Y, "col"), Trace(X.T * Y), PROVED),
    ("vec(X)ᵀvec(Y) = tr(XY ᵀ) too", Vec(X, "row").T * Vec(Y, "row"), Trace(X * Y.T), PROVED),
    ("vec(X)ᵀvec(Y) = tr(XY) is false (square)", Vec(A, "col").T * Vec(B, "col"), Trace(A * B), REFUTED),
    # Hadamard
    ("(X∘Y)ᵀ = Xᵀ∘Yᵀ", Transpose(HadamardProduct(X, Y)), HadamardProduct(X.T, Y.T), PROVED),
    ("X∘Y = Y∘X", hadamard_product(X, Y), hadamard_product(Y, X), PROVED),
    ("X∘(Y+Z) = X∘Y + X∘Z", HadamardProduct(X, Y + Z), HadamardProduct(X, Y) + HadamardProduct(X, Z), PROVED),
    ("(A∘B)C = A∘(BC) is false", HadamardProduct(A, B) * C, HadamardProduct(A, B * C), REFUTED),
    ("(A∘B)ᵀ = Aᵀ∘B is false", Transpose(HadamardProduct(A, B)), HadamardProduct(A.T, B), REFUTED),
    ("tr(Xᵀ(Y∘Z)) = tr((X∘Y)ᵀZ)", Trace(X.T * HadamardProduct(Y, Z)), Trace(HadamardProduct(X, Y).T * Z), PROVED),
    ("1ᵀ(X∘Y)1 = tr(XᵀY)", OneMatrix(1, m) * HadamardProduct(X, Y) * OneMatrix(n, 1), Trace(X.T * Y), PROVED),
    # diagonal
    ("diag(v) w = v∘w", DiagMatrix(v) * w, HadamardProduct(v, w), PROVED),
    ("diag(v) diag(w) = diag(w) diag(v)", DiagMatrix(v) * DiagMatrix(w), DiagMatrix(w) * DiagMatrix(v), PROVED),
    ("diagonal of diag(v) is v", DiagonalOf(DiagMatrix(v)), v, PROVED),
    ("tr(diag(v)) = 1ᵀv", Trace(DiagMatrix(v)), ones_n.T * v, PROVED),
    ("diag(v) A diag(w) = (v wᵀ)∘A", DiagMatrix(v) * A * DiagMatrix(w), HadamardProduct(v * w.T, A), PROVED),
    ("uᵀ diag(v) w = vᵀ(u∘w)", u.T * DiagMatrix(v) * w, v.T * HadamardProduct(u, w), PROVED),
    ("diag(A) = A 1 is false", DiagonalOf(A), A * ones_n, REFUTED),
    # inverse (the matrices inverted are invertible: the statement implies it)
    ("A A⁻¹ = I", A * A.I, Identity(n), PROVED),
    ("(AB)⁻¹ = B⁻¹A⁻¹", Inverse(A * B), Inverse(B) * Inverse(A), PROVED),
    ("(AB)⁻¹ = A⁻¹B⁻¹ is false", Inverse(A * B), Inverse(A) * Inverse(B), REFUTED),
    ("(Aᵀ)⁻¹ = (A⁻¹)ᵀ", Inverse(A.T), Inverse(A).T, PROVED),
    ("(A⊗R)⁻¹ = A⁻¹⊗R⁻¹", Inverse(KroneckerProduct(A, R)), KroneckerProduct(A.I, R.I), PROVED),
    ("A⁻¹ + B⁻¹ = A⁻¹(A + B)B⁻¹", A.I + B.I, A.I * (A + B) * B.I, PROVED),
    ("A⁻² A² = I", A ** -2 * A ** 2, Identity(n), PROVED),
    ("tr(A⁻¹BA) = tr(B)", Trace(A.I * B * A), Trace(B), PROVED),
    ("tr(A⁻¹BA) = tr(A) is false", Trace(A.I * B * A), Trace(A), REFUTED),
    ("A⁻¹ = Aᵀ is false without orthogonality", A.I, A.T, REFUTED),
]


@pytest.mark.parametrize("name, lhs, rhs, expected", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_a_researchers_identity_is_decided_right(name, lhs, rhs, expected):
    verdict = check_identity(lhs) if rhs is None else check_identity(lhs, rhs)
    assert verdict.status.value == expected, (name, verdict.method)
    if expected == REFUTED:
        cex = verdict.counterexample
        assert cex is not None and cex.exact_recheck.startswith("exact:"), name
        assert cex.numeric_recheck.startswith("float64"), name


def test_the_set_is_large_enough_and_mostly_supported():
    assert len(IDENTITIES) >= 20
    assert sum(e == REFUTED for *_, e in IDENTITIES) >= 7


def test_a_determinant_is_decided_at_explicit_sizes():
    A2, B2 = MatrixSymbol("A", 2, 2), MatrixSymbol("B", 2, 2)
    assert check_identity(Determinant(A2 * B2), Determinant(A2) * Determinant(B2)).status.value == "proved-at-sizes"
    wrong = check_identity(Determinant(A2 + B2), Determinant(A2) + Determinant(B2))
    assert wrong.status.value == "refuted" and wrong.counterexample.exact_recheck.startswith("exact:")


def test_a_determinant_of_symbolic_size_is_refused_with_a_clear_message():
    with pytest.raises(UnsupportedExpressionError, match="determinant"):
        check_identity(Determinant(A * B), Determinant(A) * Determinant(B))


def test_an_inverse_of_a_sum_is_refused_by_name():
    with pytest.raises(UnsupportedExpressionError, match="inverse"):
        check_identity(Inverse(A + B) * A, Identity(n))


def test_a_verdict_reads_as_text_latex_and_json():
    proved = check_identity(Trace(A * B), Trace(B * A))
    wrong = check_identity(Trace(A * B * C), Trace(A * C * B))
    assert str(proved).startswith("proved")
    text = str(wrong)
    assert text.startswith("refuted") and "n = " in text and "A =" in text
    assert "dtype" not in text and "dtype" not in repr(wrong)
    assert wrong._repr_latex_().startswith("$") and r"\text{refuted}" in wrong._repr_latex_()
    json.dumps(wrong.as_dict())
    json.dumps(proved.as_dict())
