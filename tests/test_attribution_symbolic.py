"""X7 and X8 for symbolic sizes: the true statements are proved, their false variants refuted."""

import pytest

from symuat.claims import attribution as at
from symuat.kernel import decide
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status


def test_x7_layer_step_splits_into_heads_mlp_and_bias_for_symbolic_sizes():
    assert decide.check_identity(*at.x7_step_statement()).status is Status.PROVED


@pytest.mark.parametrize("mutant", ["dropped-mlp", "head-twice"])
def test_x7_step_with_a_dropped_term_or_a_head_counted_twice_is_refuted(mutant):
    v = decide.check_identity(*at.x7_step_statement(mutant))
    assert v.status is Status.REFUTED and v.counterexample is not None


@pytest.mark.parametrize("kind", ["linear", "homogeneous"])
def test_x8_bias_free_detached_layer_is_linear_for_symbolic_sizes(kind):
    assert decide.check_identity(*at.x8_statement(kind)).status is Status.PROVED


@pytest.mark.parametrize("kind", ["linear-biased", "homogeneous-biased"])
def test_x8_bias_free_claim_on_a_biased_layer_is_refuted_with_an_exact_counterexample(kind):
    v = decide.check_identity(*at.x8_statement(kind))
    assert v.status is Status.REFUTED and v.counterexample is not None


def test_x8_biased_detached_layer_is_affine_with_correction_f_of_zero():
    assert decide.check_identity(*at.x8_statement("affine")).status is Status.PROVED


@pytest.mark.parametrize("key", ["X7.telescope", "X8.linear-symbolic", "X8.affine"])
def test_the_registered_symbolic_checks_are_proved(key):
    assert REGISTRY.verdict(key).status is Status.PROVED
