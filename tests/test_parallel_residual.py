"""Claim X9: the parallel residual is one Eq. 20 term — proved for symbolic sizes, and every wrong
reading of its parameters refuted with an exact counterexample."""

import pytest

from symuat.claims.parallel_residual import MUTANTS, parallel_layer_statement, parallel_trial
from symuat.kernel import decide


def test_x9_checks_proved(registry):
    got = {c.key: registry.verdict(c.key).status.value for c in registry.claims["X9"].checks}
    assert got == {"X9.layer": "proved", "X9.layer[sequential]": "proved", "X9.unrolling": "proved",
                   "X9.layer[numeric]": "numeric-only"}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_x9_parallel_layer_mutants_refuted(mutant):
    v = decide.check_identity(*parallel_layer_statement(mutant))
    assert v.status.value == "refuted" and v.counterexample is not None, mutant


def test_x9_each_form_is_refuted_for_the_other_layer():
    """The sequential reading's W2 = L_in S₂ W1 is wrong for a parallel layer, and the parallel W2 = L_in S₂
    for a sequential one: the two forms differ, and the procedure tells them apart."""
    assert decide.check_identity(*parallel_layer_statement("sequential-W2")).status.value == "refuted"
    assert decide.check_identity(*parallel_layer_statement("parallel-W2", sequential=True)).status.value == "refuted"
    assert decide.check_identity(*parallel_layer_statement(sequential=True)).status.value == "proved"


@pytest.mark.parametrize("mutant", [None, "sequential-W2", "no-ln2-scale"])
def test_x9_numeric_on_the_implementation(mutant):
    ok, msg, _ = parallel_trial({"N": 5, "M": 8, "F": 12}, 0, mutant=mutant)
    assert ok == (mutant is None), msg
