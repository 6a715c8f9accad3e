"""A size's inverse in Coq (``-1/M``: LayerNorm's centring ``C_M``, the logits' mean), and banded masks.

A coefficient ``k/D`` with ``D`` a size is exported as ``k · inv_D``, ``inv_D`` an element of the
ring bound with the premise ``D%:R * inv_D = 1`` (any commutative ring in which ``D`` is a unit;
over ℝ every size ≥ 1 is one). WP12.ln (``C_M C_M = C_M``) needs the premise; Coq rejects it
with ``1/(M+1)`` in place of ``1/M`` and without the premise. A refutation with ``1/M`` (WP12's
mistake) is proved over ℚ at ``inv_M = 1/M``; values at which the sides agree are rejected. Two
windows (WP9) are stated as the booleans "n attends to n′"; an entry where they agree does not
refute. The Coq tests need ``coqc`` with MathComp (the ``coq`` tier); the others run in the fast tier.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import recorded
from symuat.certify.bands import export_band_masks
from symuat.certify.coq_terms import Ctx, Unsupported, _scalar
from symuat.certify.exponential import export_capped_sum, export_softmax_shift
from symuat.certify.export import export_identity
from symuat.certify.refutation import export_check_refutation, export_refutation, refutation_data
from symuat.certify.run import compile_batch

M = sp.Symbol("M", positive=True, integer=True)


@pytest.fixture(scope="module")
def cases():
    return recorded("WP12.ln[LayerNorm]", "WP3.shift", "WP12.mutant[no-norm]", "WP9.mutant[off-by-one]",
                     "WP9.corrected[lt-w,fa(w-1,0)]", "X10.logit")


def _identity(cases, key, name, **kw):
    _, pairs, _, _ = cases[key]
    ((lhs, rhs, _),) = pairs
    return export_identity(name, lhs, rhs, **kw)


def test_a_size_inverse_is_an_element_of_the_ring_with_the_premise_that_it_is_one(cases):
    t = _identity(cases, "WP3.shift", "s")
    assert t.statement.startswith("Theorem s (M N V : nat) (inv_V : R) (Hinv_V : V%:R * inv_V = 1) ")
    assert "(* inv_V = 1/V: over any commutative ring R in which it is a unit" in t.statement
    assert "(scale (- inv_V) (ones [:: V] [:: V]))" in t.statement
    # linear in 1/V (the premise is not used); C_M C_M = C_M is not: the cancelling sums merged
    assert t.proof == "symuat_entry using (symuat_units)."
    assert _identity(cases, "WP12.ln[LayerNorm]", "c").proof == "symuat_entry using (symuat_units_merged)."


def test_one_inverse_per_size_and_a_coefficient_not_over_a_size_is_unsupported():
    ctx = Ctx()
    assert _scalar(-1 / M, ctx) == _scalar(-1 / M, ctx) == "(- inv_M)" and list(ctx.inverses) == ["inv_M"]
    assert _scalar(sp.Rational(1, 2), ctx) == "inv_2"
    with pytest.raises(Unsupported, match="integer over a size"):
        _scalar(sp.sqrt(2) / M, Ctx())
    with pytest.raises(Unsupported, match="integer over a size"):
        _scalar(1 / sp.Symbol("c"), Ctx())


def test_a_refutation_with_a_size_inverse_is_stated_over_rat_at_its_value(cases):
    verdict, equal, unequal, certs = cases["WP12.mutant[no-norm]"]
    (t,) = export_check_refutation("r", verdict, unequal, equal, certs)
    assert "(inv_M : [comRingType of rat]) (Hinv_M : M%:R * inv_M = 1)" in t.statement
    assert " 1%:Q erefl " in t.proof  # M = 1 at the counterexample: inv_M = 1, its premise by computation


def test_a_band_refutation_names_the_two_windows(cases):
    verdict, equal, unequal, certs = cases["WP9.mutant[off-by-one]"]
    (t,) = export_check_refutation("b", verdict, unequal, equal, certs)
    assert "0 ≤ n−n′ ≤ w and 0 ≤ n−n′ < w" in t.statement and t.statement.count("~ (forall (N w : nat)") == 1


def test_only_x10s_secant_identity_is_stated_as_a_capped_sum(cases):
    _, _, _, certs = cases["X10.logit"]
    ((kind, data),) = certs
    (t,) = export_capped_sum("x", data)
    assert kind == "capped_sum" and "\\sum_(k < n) t k != 0 ->" in t.statement
    c = data["c"]
    with pytest.raises(Unsupported, match="other than X10.logit"):
        export_capped_sum("y", dict(data, rhs=c * sp.tanh(data["rhs"] / c)))


def test_coq_certifies_the_exp_identities_under_their_hypotheses_and_not_without(coq_lib, cases):
    _, _, _, ((_, data),) = cases["X10.logit"]
    true = export_softmax_shift("t_softmax", {}) + export_capped_sum("t_capped", data)
    # e^a ≠ 0 dropped: false for expF = 0 (0 / 0 = 0 on the left); ℓ ≠ 0 dropped: false at ℓ = 0
    mutants = (export_softmax_shift("m_softmax", {}, hypotheses="(forall a b, expF (a + b) = expF a * expF b)")
               + export_capped_sum("m_capped", data, premise="True"))
    res = compile_batch(coq_lib / "lib", mutants + true, coq_lib / "theories" / "exp_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}


def test_coq_certifies_the_inverse_and_rejects_a_wrong_one_a_dropped_premise_and_agreeing_values(coq_lib, cases):
    true = [_identity(cases, "WP12.ln[LayerNorm]", "t_wp12"), _identity(cases, "WP3.shift", "t_wp3")]
    verdict, equal, unequal, certs = cases["WP12.mutant[no-norm]"]
    true += export_check_refutation("t_wp12_mistake", verdict, unequal, equal, certs)
    for key, name in (("WP9.mutant[off-by-one]", "t_band"), ("WP9.corrected[lt-w,fa(w-1,0)]", "t_band_same")):
        _, _, _, certs9 = cases[key]
        true += export_band_masks(name, certs9[-1][1])

    # 1/(M+1) in place of 1/M: C'C' ≠ C' (its premise is (1 + M)%:R * inv = 1)
    _, ((lhs, rhs, _),), _, _ = cases["WP12.ln[LayerNorm]"]
    shifted = {sp.Integer(-1) / M: sp.Integer(-1) / (M + 1)}
    wrong = export_identity("m_wp12_shifted", lhs.xreplace(shifted), rhs.xreplace(shifted))
    assert "inv_1_M" in wrong.statement
    # the premise dropped: false where inv_M is no inverse (over ℤ, M = 2, inv_M = 1: C² = I ≠ C)
    dropped = dataclasses.replace(true[0], name="m_wp12_no_premise",
                                  statement=true[0].statement.replace(" (Hinv_M : M%:R * inv_M = 1)", "")
                                  .replace("t_wp12", "m_wp12_no_premise"))
    assert "Hinv_M" not in dropped.statement
    # the mistake's refutation at values where its sides agree (W_out = 0, b_out = 0: both X W_r)
    _, data = refutation_data(verdict, unequal)
    zero = {k: np.zeros_like(np.asarray(data["values"][k])) for k in ("W_out", "b_out")}
    agree = export_refutation("m_mistake_agrees", dict(data, values=dict(data["values"], **zero)))
    # the windows at an entry where both masks keep the token (n = n′)
    _, _, _, certs9 = cases["WP9.mutant[off-by-one]"]
    band_agrees = export_band_masks("m_band_agrees", dict(certs9[-1][1], entry=(0, 0)))
    mutants = [wrong, dropped, *agree, *band_agrees]

    # the mutants first: a failing theorem makes the batch compile again those accepted before it
    res = compile_batch(coq_lib / "lib", mutants + true, coq_lib / "theories" / "units_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)
