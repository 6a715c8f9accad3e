"""The kernel's hypothesis mechanism (symuat.kernel.hypotheses): sound, and always printed."""

import pytest
from sympy import Identity, MatrixSymbol, OneMatrix

from symuat.expr.algebra import add, dims, mul
from symuat.claims.attention import h7_sides, rows_sum_to_one
from symuat.kernel import decide
from symuat.kernel.hypotheses import LineSums
from symuat.kernel.registry import Check, Result
from symuat.kernel.status import Status
from symuat.render import report

N, M = dims("N M")
H, X, A, B = (MatrixSymbol("H", N, N), MatrixSymbol("X", N, M), MatrixSymbol("A", N, N),
              MatrixSymbol("B", N, N))
ONE = OneMatrix(N, 1)


def test_row_sums_prove_H_one_and_a_wrong_hypothesis_does_not():
    assert decide.check_identity(mul(H, ONE), ONE, hypotheses=[LineSums("H")]).status is Status.PROVED
    wrong = decide.check_identity(mul(H, ONE), ONE, hypotheses=[LineSums("H", "columns")])
    assert wrong.status is Status.REFUTED
    assert decide.check_identity(mul(H, ONE), ONE).status is Status.REFUTED


@pytest.mark.parametrize("hyp", [LineSums("H"), LineSums("Q"), LineSums("A")])
def test_false_identities_stay_refuted_under_a_hypothesis(hyp):
    # HX = X: the summed index also occurs in X, so the rule must not fire
    assert decide.check_identity(mul(H, X), X, hypotheses=[hyp]).status is Status.REFUTED
    assert decide.check_identity(mul(A, B), mul(B, A), hypotheses=[hyp]).status is Status.REFUTED
    # 1ᵀH = 1ᵀ is a column sum: the row rule must not fire
    assert decide.check_identity(mul(ONE.T, H), ONE.T, hypotheses=[hyp]).status is Status.REFUTED


def test_h7_needs_rows_not_columns():
    lhs, rhs, _ = h7_sides("row", "causal")
    assert decide.check_identity(lhs, rhs, hypotheses=[rows_sum_to_one("causal")]).status is Status.PROVED
    cols = decide.check_identity(lhs, rhs, hypotheses=[rows_sum_to_one("causal", "columns")])
    assert cols.status is Status.REFUTED
    assert cols.counterexample is not None and cols.hypotheses
    assert decide.check_identity(lhs, rhs).status is Status.REFUTED


def test_a_verdict_prints_its_hypotheses():
    hyp = LineSums("H")
    for v in (decide.check_identity(mul(H, ONE), ONE, hypotheses=[hyp]),
              decide.check_identity(mul(H, X), X, hypotheses=[hyp])):
        assert v.hypotheses == [hyp.latex()]
        assert v.as_dict()["hypotheses"] == [hyp.latex()]
        result = Result(Check("X.test", None, "H1=1", lambda: v), v, 0.0)
        assert hyp.latex() in report.detail(result)
        assert hyp.latex() in report.table([result], width=400)
    assert "hypotheses" not in decide.check_identity(add(A, B), add(B, A)).as_dict()


def test_input_independence_of_biases_needs_the_row_hypothesis(monkeypatch):
    from symuat.claims import attention, transformer

    assert transformer._t10_c("token-shared").status is Status.PROVED
    assert transformer._t10_c("per-token").status is Status.PROVED  # the witness of dependence
    monkeypatch.setattr(attention, "rows_sum_to_one", lambda mask, lines="rows": LineSums("H", "columns"))
    assert transformer._t10_c("token-shared").status is Status.REFUTED
    assert transformer._t12_bias("token-shared").status is Status.REFUTED


def test_rule_needs_the_whole_line_of_a_multi_index_leaf():
    from symuat.expr.heads import BlockSymbol

    h, d = dims("h d")
    Xb = BlockSymbol("Xb", (N,), (h, d))  # columns indexed by (head, feature)
    one_d = OneMatrix(d, 1)
    from symuat.expr.algebra import kron
    lhs = mul(Xb, kron(Identity(h), one_d))  # Σ_f X[n,(i,f)]: partial row sums, one per head
    v = decide.check_identity(lhs, OneMatrix(N, h), hypotheses=[LineSums("Xb")])
    assert v.status is Status.REFUTED
