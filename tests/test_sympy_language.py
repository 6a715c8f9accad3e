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
from symuat.expr.vec import Vec

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


def test_an_undefined_scalar_function_of_a_trace_is_for_every_f_and_exp_is_refused():
    from sympy import Function, exp

    f = Function("f")
    assert check_identity(f(Trace(A * B)), f(Trace(B * A))).status.value == PROVED
    wrong = check_identity(f(Trace(A * B)), f(Trace(A) * Trace(B)))
    assert wrong.status.value == REFUTED and wrong.counterexample.exact_recheck.startswith("exact:")
    with pytest.raises(UnsupportedExpressionError, match="exp"):
        check_identity(exp(Trace(A)) * exp(Trace(B)), exp(Trace(A + B)))


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


# --- hypotheses a user states (kernel.hypotheses) -------------------------------------------

from symuat.errors import UnsatisfiableHypothesesError  # noqa: E402
from symuat.kernel.hypotheses import (  # noqa: E402
    Diagonal,
    Idempotent,
    Invertible,
    Orthogonal,
    RowStochastic,
    SkewSymmetric,
    Symmetric,
    violated,
)
from symuat.kernel.assumptions import assuming  # noqa: E402
import numpy as np  # noqa: E402

x = MatrixSymbol("x", n, 1)

#: (name, lhs, rhs, hypotheses, expected): each structure proves what it implies, refutes what it
#: does not, and a hypothesis on the wrong leaf proves nothing
UNDER = [
    ("tr(SA) = tr(SAᵀ), S symmetric", Trace(A * B), Trace(A * B.T), [Symmetric("A")], PROVED),
    ("tr(SA) = tr(SAᵀ) needs S, not A, symmetric", Trace(A * B), Trace(A * B.T), [Symmetric("C")], REFUTED),
    ("symmetric S: S = Sᵀ", A, A.T, [Symmetric("A")], PROVED),
    ("symmetric A, B: AB = BA is false", A * B, B * A, [Symmetric("A"), Symmetric("B")], REFUTED),
    ("diagonal D, E commute", A * B, B * A, [Diagonal("A"), Diagonal("B")], PROVED),
    ("diagonal D: D = diag(diagonal(D))", A, DiagMatrix(DiagonalOf(A)), [Diagonal("A")], PROVED),
    ("diagonal D, any E: DE = ED is false", A * B, B * A, [Diagonal("A")], REFUTED),
    ("orthogonal Q: QᵀQ = I", A.T * A, Identity(n), [Orthogonal("A")], PROVED),
    ("orthogonal Q: tr(QᵀBQ) = tr(B)", Trace(A.T * B * A), Trace(B), [Orthogonal("A")], PROVED),
    ("orthogonal Q: QBQᵀ = B is false", A * B * A.T, B, [Orthogonal("A")], REFUTED),
    ("idempotent P: P³ = P", A ** 3, A, [Idempotent("A")], PROVED),
    ("idempotent P: P = I is false", A, Identity(n), [Idempotent("A")], REFUTED),
    ("row-stochastic P: P1 = 1", A * ones_n, ones_n, [RowStochastic("A")], PROVED),
    ("row-stochastic P: 1ᵀP = 1ᵀ is false", ones_n.T * A, ones_n.T, [RowStochastic("A")], REFUTED),
    ("skew K: K² = 0 is false", A * A, A * 0, [SkewSymmetric("A")], REFUTED),
    ("skew K: K = -Kᵀ (no rule: instances only)", A, -A.T, [SkewSymmetric("A")], "numeric-only"),
    ("invertible A: A diag(v) A⁻¹ = diag(v) is false (the axiom needs k nowhere else)",
     A * DiagMatrix(v) * A.I, DiagMatrix(v), [], REFUTED),
    ("invertible A stated: A⁻¹BA = B is false", A.I * B * A, B, [Invertible("A")], REFUTED),
]


@pytest.mark.parametrize("name, lhs, rhs, hyps, expected", UNDER, ids=[u[0] for u in UNDER])
def test_a_structure_proves_what_it_implies_and_nothing_else(name, lhs, rhs, hyps, expected):
    verdict = check_identity(lhs, rhs, hypotheses=hyps)
    assert verdict.status.value == expected, (name, verdict.method)
    if hyps:
        assert verdict.hypotheses == [h.latex() for h in hyps]
    if expected == REFUTED and hyps:  # the witness satisfies every hypothesis (re-checked exactly)
        with assuming(hyps):
            assert violated({k: np.asarray(v, dtype=object) for k, v in verdict.counterexample.values.items()}) == []


def test_instances_satisfy_every_structure_exactly():
    from symuat.kernel.hypotheses import impose_all

    rng = np.random.default_rng(3)
    for hyp in (Symmetric("A"), SkewSymmetric("A"), Diagonal("A"), Orthogonal("A"), Invertible("A"),
                Idempotent("A"), RowStochastic("A")):
        with assuming([hyp]):
            for size in (1, 2, 3, 4):
                value = impose_all({"A": rng.integers(-3, 4, (size, size)).astype(object)}, "exact")["A"]
                assert hyp.holds(value), (hyp, value)


def test_structures_that_cannot_be_drawn_together_are_a_clear_error():
    with pytest.raises(UnsatisfiableHypothesesError):
        check_identity(A, A.T, hypotheses=[Symmetric("A"), SkewSymmetric("A"), Invertible("A")])


def test_an_implied_inverse_is_listed_with_the_verdict():
    verdict = check_identity(A.I * (A + B) * B.I, A.I + B.I)
    assert verdict.status.value == PROVED
    assert verdict.hypotheses == [Invertible("A").latex(), Invertible("B").latex()]


def test_an_explicit_matrix_of_numbers_is_decided_at_its_size():
    from sympy import Matrix, diag

    A2 = MatrixSymbol("A", 2, 2)
    assert check_identity(diag(1, 2) * A2, Matrix([[1, 0], [0, 2]]) * A2).status.value == "proved-at-sizes"
    wrong = check_identity(diag(1, 2) * A2, A2 * diag(1, 2))
    assert wrong.status.value == REFUTED and wrong.counterexample.exact_recheck.startswith("exact:")
    # the inverse's Cayley–Hamilton form at 2×2: det(A)·A⁻¹ = tr(A)·I − A
    assert check_identity(Determinant(A2) * Inverse(A2), Trace(A2) * Identity(2) - A2).status.value \
        == "proved-at-sizes"


def test_an_equation_sympy_already_decided_is_a_clear_error():
    from symuat.errors import KernelInputError

    with pytest.raises(KernelInputError, match="evaluated the equation"):
        check_identity(Eq(Trace(A), Trace(A)))
