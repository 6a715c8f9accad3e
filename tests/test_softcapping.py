"""Claim X10 (soft-capping) and its procedure: the secant-slope split of a capped logit proved for a
symbolic number of terms; wrong splits refuted with exact counterexamples; the capped pattern frozen."""

import numpy as np
import pytest
import sympy as sp

from symuat.errors import KernelInconsistencyError
from symuat.kernel.decide import softcap
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status


def _ell(t, k, n, c):
    return sp.Sum(t[k], (k, 1, n))


def _cap(t, k, n, c):
    return c * sp.tanh(_ell(t, k, n, c) / c)


def test_x10_verdicts():
    import symuat.claims  # noqa: F401  (registration)

    want = {"X10.pattern[causal]": "proved", "X10.logit": "proved", "X10.layer[causal]": "numeric-only",
            "X10.explain": "numeric-only", "X10.mutant[per-term]": "refuted", "X10.mutant[uncapped]": "refuted",
            "X10.wp3": "refuted", "X10.mistakes": "proved"}
    for key, status in want.items():
        v = REGISTRY.verdict(key)
        assert v.status.value == status, (key, v.method)
        if status == "refuted":
            assert "transcendental" in v.counterexample.exact_recheck


def test_secant_split_with_a_wrong_slope_is_refuted():
    """κ taken at the first term instead of at the whole logit: refuted exactly; the true split proved."""
    def slope_of_first(t, k, n, c):
        return sp.Sum(c * sp.tanh(t[1] / c) / t[1] * t[k], (k, 1, n))

    def true_split(t, k, n, c):
        return sp.Sum(_cap(t, k, n, c) / _ell(t, k, n, c) * t[k], (k, 1, n))

    v = softcap.check_capped_sum(slope_of_first, _cap, instances=((2, (1, 1), 1),))
    assert v.status is Status.REFUTED and v.counterexample.values == {"t": [1, 1], "c": 1}
    assert softcap.check_capped_sum(true_split, _cap).status is Status.PROVED
    with pytest.raises(KernelInconsistencyError):  # neither proved nor refuted at the instances given: an error
        softcap.check_capped_sum(slope_of_first, _cap, instances=((1, (1,), 1),))


def test_secant_slope_numbers():
    from symuat.models.softcap import secant_slope, slope_is_exact, softcap as cap

    ell = np.array([-1e3, -2.0, 0.0, 1e-300, 0.5, 40.0])
    k = secant_slope(ell, 30.0)
    assert np.all((k > 0) & (k <= 1)) and k[2] == 1.0
    assert slope_is_exact(ell, 30.0) <= 1e-15 and np.all(np.abs(cap(ell, 30.0)) <= 30.0)


def test_capped_layer_trial_fails_without_the_cap_in_the_patterns():
    from symuat.claims import softcapping

    ok, why, _ = softcapping._layer_trial({"N": 6, "M": 8}, 0)
    assert ok, why
    assert "off by" in why
