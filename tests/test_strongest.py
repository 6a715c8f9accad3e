"""Issue 10: the strongest statuses — each raised status backed by a procedure that refutes a mutant."""

from symuat.kernel.status import Status

import symuat.claims  # noqa: F401
from symuat.claims import transformer

RIGHT = {"W1rhs": "raw", "unprimed": "acc", "abs": "none", "W3": "all", "W2in34": "layer",
         "W3in34": "stage", "b3in34": "acc"}


def test_t8_reading_is_the_t7_recursion_for_every_depth():
    assert transformer._rules_check("eq20", RIGHT).status is Status.PROVED


def test_t8_update_order_swapped_is_refuted():
    # W1rhs=acc: b'_{j+1,3} uses the W'_{j+1,1} just updated (sequential), not the raw one (simultaneous)
    seq = dict(RIGHT, W1rhs="acc")
    assert transformer.rules_step("eq20", seq).status is Status.REFUTED
    assert transformer._rules_check("eq20", seq).status is Status.REFUTED


def test_conv_lift_for_symbolic_radius_and_wrong_shifts_refuted():
    from symuat.expr.algebra import mul
    from symuat.kernel import decide
    from symuat.expr.linear import conv1d_symbols
    from symuat.expr.vec import Vec

    conv, lift, X = conv1d_symbols()
    assert decide.check_identity(Vec(conv, "row"), mul(lift("row"), Vec(X, "row"))).status is Status.PROVED
    for mutant in ({"shift_error": 1}, {"shift_error": -1}, {"transposed": True}):
        conv, lift, X = conv1d_symbols(**mutant)
        v = decide.check_identity(Vec(conv, "col"), mul(lift("col"), Vec(X, "col")))
        assert v.status is Status.REFUTED and v.counterexample.exact_recheck


def test_ranks_structural_bound_exact_witness_and_wrong_formulas_refuted():
    from symuat.claims import attention as att

    assert att.h8_rank().status is Status.PROVED  # for symbolic sizes: the selector-block family (#19)
    assert att.h6_corr().status is Status.PROVED
    for wrong in (att._dk, att._dq, att._dq + att._dk):
        v = att.h8_rank(claimed=wrong)
        assert v.status is Status.REFUTED and "exact rank" in v.counterexample.exact_recheck
    h = att.mha_symbols("split").h
    assert att.h6_corr(claimed=h - 1).status is Status.REFUTED


def test_exact_softmax_witnesses_and_their_mutants(monkeypatch):
    from symuat.claims import attention as att
    from symuat.kernel import decide

    sizes = [{"N": 3, "M": 4, "h": 2}]
    lin = decide.check_instances("forall", att._h9_lin_trial, sizes, what="t")
    dep = decide.check_instances("exists", att._h9_dep_trial, sizes, what="t")
    assert lin.status is Status.REFUTED and "(exact)" in lin.counterexample.reason
    assert dep.status is Status.PROVED
    real = att._exact_instance

    def uniform(rng, N, M, h):  # W_Q = 0: every pattern uniform, MHA linear and W' constant
        WQ, WK, WV, WO = real(rng, N, M, h)
        return WQ * 0, WK, WV, WO

    monkeypatch.setattr(att, "_exact_instance", uniform)
    assert decide.check_instances("forall", att._h9_lin_trial, sizes, seeds=range(3), what="t").status is Status.NUMERIC_ONLY
    assert decide.check_instances("exists", att._h9_dep_trial, sizes, seeds=range(3), what="t").status is Status.NUMERIC_ONLY
