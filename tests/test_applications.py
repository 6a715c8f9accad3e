"""A1–A6: the procedures refute wrong variants (mutants) and prove the right ones."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from symuat.numeric import lora
from symuat.expr import pruning, smallness
from symuat.errors import KernelInconsistencyError
from symuat.kernel import decide
from symuat.kernel.decide import implication
from symuat.kernel.status import Status

S1, S2, f, eps, delta = pruning.S1, pruning.S2, pruning.f, pruning.eps, pruning.delta


# --------------------------------------------------------------------------------------------
# A1: real arithmetic with absolute values
# --------------------------------------------------------------------------------------------


def test_a1_items_hold_for_an_arbitrary_partition():
    for concl in (pruning.a1_i(), pruning.a1_ii()):
        assert decide.check_real_implication(pruning.VARIABLES, pruning.setup(), concl).status is Status.PROVED


def test_a1_swapped_partition_is_refuted_with_an_exact_network():
    # UAT's hypothesis makes S_1 small; removing the *large* part (keeping S_1) is not bounded by ε + δ
    hyps = pruning.setup() + [sp.Abs(S1) <= delta, delta > 0]
    concl = sp.Abs(S1 - f) < eps + delta
    v = decide.check_real_implication(
        pruning.VARIABLES, hyps, concl,
        realise=lambda m: pruning.realise(m, (1,), (2,), "S1", "uniform", concl, {1: m[S1], 2: m[S2]}))
    assert v.status is Status.REFUTED
    model = {k: Fraction(v) if not isinstance(v, Fraction) else v for k, v in v.counterexample.values.items()}
    s1, s2, fv, e, d = (model[str(x)] for x in (S1, S2, f, eps, delta))
    assert abs(s1 + s2 - fv) < e and abs(s1) <= d and not abs(s1 - fv) < e + d
    assert "network" in v.counterexample.exact_recheck
    # the correct pairing is proved
    good = sp.Abs(S2 - f) < eps + delta
    assert decide.check_real_implication(pruning.VARIABLES, hyps, good).status is Status.PROVED


def test_a1_tighter_bounds_are_refuted():
    hyps = pruning.setup()
    for wrong in (sp.Abs(sp.Abs(S1 - f) - sp.Abs(S2)) < eps / 2, sp.Abs(S1 - f) < eps, sp.Abs(S1 - f) <= sp.Abs(S2)):
        assert decide.check_real_implication(pruning.VARIABLES, hyps, wrong).status is Status.REFUTED


def test_fourier_motzkin_strictness():
    x, y = sp.symbols("x y")
    # x > 0, y > 0, x + y < 1 is satisfiable; x ≥ 1, y ≥ 0, x + y < 1 is not
    lin = lambda rels: [(*implication._linear_coeffs(e, [x, y]), s) for r in rels for e, s in implication._as_constraints(r)]
    model = decide.fourier_motzkin(lin([x > 0, y > 0, x + y < 1]), [x, y])
    assert model is not None and model[x] > 0 and model[y] > 0 and model[x] + model[y] < 1
    assert decide.fourier_motzkin(lin([x >= 1, y >= 0, x + y < 1]), [x, y]) is None
    assert decide.fourier_motzkin(lin([x >= 1, x <= 1]), [x, y]) == {x: 1, y: 0}
    assert decide.fourier_motzkin(lin([x > 1, x < 1]), [x, y]) is None


def test_a1_literal_ranges_are_refuted_and_lambda_sums_proved(registry):
    import symuat.claims.applications as app

    assert app._a1("ii", "S2", "uniform", "literal").status is Status.REFUTED
    assert app._a1("ii", "S2", "uniform", "Λ").status is Status.PROVED


# --------------------------------------------------------------------------------------------
# A2
# --------------------------------------------------------------------------------------------


def test_a2_envelopes():
    assert smallness.envelope_proof("tanh", 0, 1)[0] and smallness.envelope_proof("logistic", 1, 0)[0]
    assert not smallness.envelope_proof("relu", 1, 0)[0]  # unbounded
    assert not smallness.envelope_proof("logistic", 0, 1)[0]  # σ(0) = 1/2


def test_a2_a_wrong_bound_is_caught_and_a_vanishing_witness_refutes_nothing():
    wrong = smallness.unit_bound("relu", "outer", env=(1, 0, "a false envelope"))
    with pytest.raises(KernelInconsistencyError):
        decide.check_vanishing(smallness.delta, bound=wrong)
    vanishing = {"value": smallness.delta * smallness.sigma("logistic", smallness.delta), "constrained": {"α": smallness.delta}}
    v = decide.check_vanishing(smallness.delta, witness=vanishing, bound=smallness.unit_bound("logistic", "outer"))
    assert v.status is Status.PROVED
    assert decide.check_vanishing(smallness.delta, witness=smallness.unit_witness("relu", "outer")).status is Status.REFUTED


# --------------------------------------------------------------------------------------------
# A3
# --------------------------------------------------------------------------------------------


def test_a3_rank_structure_and_a_wrong_rank_formula(registry):
    import symuat.claims.applications as app

    expr = app.lift_right(app._dW, app._N, "row")
    assert lora.structural_rank(expr, app._LORA_HYP) == app._N * app._r
    count = lambda sizes: app._rank_count("row", sizes)
    dims_ = [app._N, app._p, app._q, app._r]
    assert decide.check_quantity("rank", app._r, app._N * app._r, count, dims_, grid=app._RANK_GRID).status is Status.REFUTED
    with pytest.raises(KernelInconsistencyError):  # a wrong derived formula disagrees with the exact ranks
        decide.check_quantity("rank", app._r, app._r, count, dims_, grid=app._RANK_GRID)
    assert decide.exact_rank(np.array([[1, 2], [2, 4]], dtype=object)) == 1


def test_a3_lift_with_swapped_factor_is_refuted(registry):
    import symuat.claims.applications as app
    from symuat.expr.algebra import add, mul

    wrong = add(app.lift_right(app._W0, app._N, "row"), app.lift_right(mul(app._B, app._A), app._N, "col"))
    v = decide.check_identity(app.lift_right(add(app._W0, app._dW), app._N, "row"), wrong)
    assert v.status is Status.REFUTED


# --------------------------------------------------------------------------------------------
# A4
# --------------------------------------------------------------------------------------------


def _reading(**kw):
    r = {"Δ": "raw", "b2": "kept", "idx": "j", "op": "times"}
    r.update(kw)
    return r


def test_a4_delta_at_the_wrong_layer_is_refuted():
    s = lora.scenario(2, 2, "W3", True)  # LoRA on the last layer's W3: the raw reading reproduces exactly
    ok = decide.Instance("right layer", {}, True, lambda: (lora.eq18(s.base, s.ft, _reading(), s.raw), s.ft.evaluate()))
    assert decide.check_matches_reference([ok], what="Eq. 18").status is Status.PROVED_AT_SIZES
    moved = {("3", 1): s.raw[("3", 2)]}
    bad = decide.Instance("wrong layer", {}, True, lambda: (lora.eq18(s.base, s.ft, _reading(), moved), s.ft.evaluate()))
    v = decide.check_matches_reference([bad], what="Eq. 18")
    assert v.status is Status.REFUTED and v.counterexample.exact_recheck.startswith("exact")
    shifted = decide.Instance("idx=j+1", {}, True,
                              lambda: (lora.eq18(s.base, s.ft, _reading(idx="j+1"), s.raw), s.ft.evaluate()))
    assert decide.check_matches_reference([shifted], what="Eq. 18").status is Status.REFUTED


def test_a4_plus_is_ill_typed_and_the_corrected_form_reproduces():
    s = lora.scenario(3, 1, "W2", True)
    plus = decide.Instance("op=plus", {}, True, lambda: (lora.eq18(s.base, s.ft, _reading(op="plus"), s.raw), s.reference))
    v = decide.check_matches_reference([plus], what="Eq. 18")
    assert v.status is Status.REFUTED and "ill-typed" in v.counterexample.reason
    for exact in (True, False):
        t = lora.scenario(3, 1, "attn", exact)
        got = lora.corrected_eq18(t.base, t.ft)
        if exact:
            assert (got == t.reference).all()
        else:
            assert np.abs(got - t.reference).max() < 1e-12
        # the printed form keeps the base W'_{L,1}: an earlier layer's LoRA changes it (attention input)
        assert lora.changed_parameters(t.base, t.ft)["W'_{3,1}"]


# --------------------------------------------------------------------------------------------
# A5
# --------------------------------------------------------------------------------------------


def test_a5_causal_read_as_bidirectional_is_refuted(registry):
    import symuat.claims.applications as app
    from symuat.kernel.structure import generic_density

    N = sp.Symbol("N", positive=True, integer=True)
    causal, bidir = app._token_matrix("split", "causal"), app._token_matrix("split", "bidir")
    assert generic_density(causal) == (N + 1) / (2 * N) and generic_density(bidir) == 1
    assert app._a5("split", "causal").status is Status.REFUTED
    assert app._a5("split", "bidir").status is Status.PROVED
    pattern = np.array(app._a5("std", "causal").quantities["token blocks (n, n') nonzero at N=4 (rows n, columns n')"])
    assert (pattern == np.tril(np.ones((4, 4), dtype=int))).all()


def test_a2_fixed_rest_changes_the_answer_only_where_it_should():
    d = smallness.delta
    # σ(0) = 1/2: small inner parameters leave α/2 even with α fixed
    assert decide.check_vanishing(d, witness=smallness.unit_witness("logistic", "inner", "fixed")).status is Status.REFUTED
    # σ(0) = 0: with α fixed the contribution vanishes (proved bound |α|(n+1)δ)
    assert decide.check_vanishing(d, bound=smallness.unit_bound("tanh", "inner", rest="fixed")).status is Status.PROVED
    assert smallness.unit_bound("logistic", "inner", rest="fixed") is None
