"""A2's vanishing contributions are listed unsupported with what a Coq statement would need.

The bound (``proved``) and the witness family (``refuted``) are limits as δ → 0⁺ through a real
activation; the reason names the limit and what σ needs (the exponential, erf, or — for ReLU,
piecewise linear — the sums and products the linear fragment does not have).
"""

from __future__ import annotations

import pytest

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.coq_terms import Unsupported
from symuat.certify.kinds import export_certificates
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import capture
from symuat.kernel.registry import REGISTRY

KEYS = ["A2[layers=units,parameters=all,σ=logistic,rest=any]", "A2[layers=units,parameters=all,σ=gelu,rest=any]",
        "A2[layers=units,parameters=inner,σ=relu,rest=any]"]


@pytest.fixture(scope="module")
def a2():
    checks = [c for c in REGISTRY.all_checks() if c.key in KEYS]
    kept: dict = {}
    out = capture(checks, kept)
    return {k: (v, kept.get(k, [])) for k, (v, _) in out.items()}


@pytest.mark.parametrize("key, needs", [(KEYS[0], "the real exponential"), (KEYS[1], "erf")])
def test_a_proved_bound_is_unsupported_naming_what_its_sigma_needs(a2, key, needs):
    verdict, certs = a2[key]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["vanishing"]
    with pytest.raises(Unsupported, match=rf"^a limit as δ → 0⁺ of the bound .*{needs}"):
        export_certificates("a2", verdict, certs)


def test_a_refuting_family_is_unsupported_with_its_limit_and_sigma(a2):
    verdict, certs = a2[KEYS[2]]
    assert str(verdict.status) == "refuted"
    with pytest.raises(Unsupported, match=r"tends to 1 as δ → 0⁺ .*Max\(0, t\).*piecewise linear.*negated statement"):
        export_check_refutation("r", verdict, [], [], certs)
