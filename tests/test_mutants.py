"""Wrong variants of every identity symuat proves must come out refuted, by the same checker.

Each mutant is one slip a reader or an author could make: a dropped transpose, swapped Kronecker
factors, the other flattening, a shifted index, a wrong order of factors. The checker that
proves the true statement must refute every one of them, with a counterexample that re-checks
exactly and in float64.
"""

import numpy as np
import pytest
from sympy import Identity, MatrixSymbol, OneMatrix

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.diamond import Diamond
from symuat.expr.elementwise import Sigma
from symuat.kernel import decide
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.status import Status
from symuat.expr.linear import lift_bias_left, lift_left, lift_right
from symuat.expr.vec import Commutation, Vec

N, M, F, P, Q, m, n = dims("N M F P Q m n")
A = MatrixSymbol("A", P, N)
X = MatrixSymbol("X", N, M)
B = MatrixSymbol("B", M, Q)
W = MatrixSymbol("W", N, N)
Wmn = MatrixSymbol("W", m, n)
x = MatrixSymbol("x", m, 1)
An = MatrixSymbol("A", n, n)
Bn = MatrixSymbol("B", n, n)
v = MatrixSymbol("v", n, 1)

TRUE_AND_MUTANTS = {
    "vec_r lemma": (
        (Vec(mul(A, X, B), "row"), mul(kron(A, T(B)), Vec(X, "row"))),
        {
            "dropped transpose": mul(kron(A, B), Vec(X, "row")),
            "swapped Kronecker factors": mul(kron(T(B), A), Vec(X, "row")),
            "other flattening": mul(kron(A, T(B)), Vec(X, "col")),
        },
    ),
    "vec_c lemma": (
        (Vec(mul(A, X, B), "col"), mul(kron(T(B), A), Vec(X, "col"))),
        {
            "dropped transpose": mul(kron(B, A), Vec(X, "col")),
            "swapped Kronecker factors": mul(kron(A, T(B)), Vec(X, "col")),
            "other flattening": mul(kron(T(B), A), Vec(X, "row")),
        },
    ),
    "Linear lift (row)": (
        (Vec(mul(W, X), "row"), mul(lift_left(W, M, "row"), Vec(X, "row"))),
        {
            "swapped Kronecker factors": mul(kron(Identity(M), W), Vec(X, "row")),
            "dropped transpose (dia sense used as duat)": mul(T(lift_left(W, M, "row")), Vec(X, "row")),
            "other flattening": mul(lift_left(W, M, "row"), Vec(X, "col")),
        },
    ),
    "Linear lift (col)": (
        (Vec(mul(W, X), "col"), mul(lift_left(W, M, "col"), Vec(X, "col"))),
        {
            "swapped Kronecker factors": mul(kron(W, Identity(M)), Vec(X, "col")),
            "other flattening": mul(lift_left(W, M, "col"), Vec(X, "row")),
        },
    ),
    "right multiplication lift": (
        (Vec(mul(X, B), "row"), mul(lift_right(B, N, "row"), Vec(X, "row"))),
        {"dropped transpose": mul(kron(Identity(N), B), Vec(X, "row"))},
    ),
    "P1": (
        (Diamond(Wmn, x), mul(T(Wmn), x)),
        {"dropped transpose": mul(Wmn, x)},
    ),
    "C-col chain (P5 corrected g)": (
        (Diamond(An, Diamond(Bn, v)), Diamond(Diamond(T(Bn), An, "C-col"), v)),
        {
            "dropped transpose": Diamond(Diamond(Bn, An, "C-col"), v),
            "other D5 definition": Diamond(Diamond(T(Bn), An, "C-prod"), v),
            "factors in the other order": Diamond(Diamond(An, T(Bn), "C-col"), v),
        },
    ),
    "commutation": (
        (Vec(X, "row"), mul(Commutation(N, M), Vec(X, "col"))),
        {"transposed commutation (wrong direction)": mul(T(Commutation(M, N)), Vec(X, "row"))},
    ),
}


def _ffn():
    W1, b1 = MatrixSymbol("W_1", F, N), MatrixSymbol("b_1", F, 1)
    W2, b2 = MatrixSymbol("W_2", N, F), MatrixSymbol("b_2", N, 1)
    plain = Vec(add(mul(W2, Sigma(add(mul(W1, X), mul(b1, OneMatrix(1, M))))), mul(b2, OneMatrix(1, M))), "row")

    def lifted(bias1, W1p=None, sigma=True):
        inner = add(mul(W1p if W1p is not None else lift_left(W1, M, "row"), Vec(X, "row")), bias1)
        return add(mul(lift_left(W2, M, "row"), Sigma(inner) if sigma else inner), lift_bias_left(b2, M, "row"))

    true = lifted(lift_bias_left(b1, M, "row"))
    mutants = {
        "bias with swapped Kronecker factors": lifted(lift_bias_left(b1, M, "col")),
        "σ dropped": lifted(lift_bias_left(b1, M, "row"), sigma=False),
        "first layer lifted in the other flattening": lifted(lift_bias_left(b1, M, "row"), W1p=lift_left(W1, M, "col")),
    }
    return (plain, true), mutants


TRUE_AND_MUTANTS["FFN lift"] = _ffn()

CASES = [(name, label, pair[0], mutant)
         for name, (pair, mutants) in TRUE_AND_MUTANTS.items() for label, mutant in mutants.items()]


@pytest.mark.parametrize("name", list(TRUE_AND_MUTANTS))
def test_true_statement_is_proved(name):
    (lhs, rhs), _ = TRUE_AND_MUTANTS[name]
    assert decide.check_identity(lhs, rhs).status is Status.PROVED


@pytest.mark.parametrize("name,label,lhs,mutant", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_mutant_is_refuted_with_a_counterexample_that_rechecks(name, label, lhs, mutant):
    verdict = decide.check_identity(lhs, mutant)
    assert verdict.status is Status.REFUTED, f"{name} / {label} was not refuted"
    cex = verdict.counterexample
    assert cex is not None and cex.exact_recheck and cex.numeric_recheck
    # re-check independently: the same integer values, evaluated in float64 by a fresh evaluator
    sizes = {s: cex.sizes[s.name] for s in decide.dimension_symbols(lhs, mutant)}
    values = {k: np.asarray(val, dtype=float) for k, val in cex.values.items()}
    try:
        left = Evaluator(sizes, values, "float")(lhs)
        right = Evaluator(sizes, values, "float")(mutant)
    except Exception:
        assert "undefined" in cex.reason
        return
    assert left.shape != right.shape or np.max(np.abs(left - right)) > 0.5


def test_shifted_index_in_printed_row_is_refuted(all_results):
    """D4.row1 prints w_{31} where the definition has w_{21}: a wrong index, refuted."""
    verdict = all_results["D4.row1"].verdict
    assert verdict.status is Status.REFUTED
    assert "w[3,1]" in verdict.counterexample.reason
    assert verdict.corrected.verdict.status is Status.PROVED  # for every m ≥ 3 (#19: D4.rows symbolic)


def test_shifted_column_of_the_picture_is_refuted():
    """M1.pic with column 2 shifted by two instead of one must be refuted."""
    from functools import partial

    from symuat.claims.linear import _PIC_SIZES, _m1_pic

    def shifted(sizes):
        printed, ours = _m1_pic("row", "dia", sizes)
        printed = printed.copy()
        printed[:, 1] = np.concatenate([[0], printed[:-1, 1]])
        return printed, ours

    assert decide.check_explicit(partial(_m1_pic, "row", "dia"), _PIC_SIZES).status is Status.PROVED_AT_SIZES
    assert decide.check_explicit(shifted, _PIC_SIZES).status is Status.REFUTED


def test_negation_checker_flips():
    """“not distributive” is refuted (⋄ is distributive); “not associative” is proved by a witness."""
    dist = decide.check_negation(Diamond(An, add(v, v)), add(Diamond(An, v), Diamond(An, v)))
    assert dist.status is Status.REFUTED
    assoc = decide.check_negation(Diamond(Diamond(An, Bn, "C-col"), v), Diamond(An, Diamond(Bn, v)))
    assert assoc.status is Status.PROVED
    # and a true associativity-like identity is not "proved not to hold"
    same = decide.check_negation(Diamond(An, v), mul(T(An), v))
    assert same.status is Status.REFUTED


def test_quantity_checker_flips():
    from symuat.claims.linear import _m2

    assert _m2("row", "nnz-frac").status is Status.PROVED
    assert _m2("row", "zero-frac").status is Status.REFUTED


def test_shape_checker_flips():
    assert decide.check_shape(Diamond(Wmn, x), (n, 1)).status is Status.PROVED
    assert decide.check_shape(Diamond(Wmn, x), (m, 1)).status is Status.REFUTED
