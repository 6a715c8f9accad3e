"""A2's vanishing contributions: ReLU units stated over ℚ and decided by Coq (logistic, tanh and
GELU units over an ordered field: tests/test_certify_envelope.py), the others listed unsupported
with what a Coq statement would need (a deep family: coq/SymuatFamily.v, tests/test_certify_family.py).

The bound (``proved``) and the witness family (``refuted``) are limits as δ → 0⁺ through a real
activation; the reason names the limit and what σ needs (the exponential, erf, or — for a deep
ReLU reading — the residual network the statement is about). A ReLU unit's bound is stated for
every δ > 0 and every n, with the check's ∀η ∃δ statement; its refuting family as the negation
of that statement. Mutants — the bound halved, the (n + 1) or the ‖w‖₁ + |θ| dropped, a fixed
parameter made uniform, a "family" at which the unit stays small — are rejected by Coq (the Coq
tests need ``coqc``: the ``coq`` tier).
"""

from __future__ import annotations

import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.kinds import export_certificates
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import capture
from symuat.kernel.registry import REGISTRY

KEYS = ["A2[layers=units,parameters=all,σ=logistic,rest=any]", "A2[layers=units,parameters=all,σ=gelu,rest=any]",
        "A2[layers=deep,parameters=inner,σ=relu,rest=fixed]"]


@pytest.fixture(scope="module")
def a2():
    return {k: (v, certificates) for k, (v, _pairs, _unequal, certificates) in recorded(*KEYS).items()}


@pytest.mark.parametrize("key, sigma", [(KEYS[0], "logistic"), (KEYS[1], "gelu")])
def test_a_proved_bound_through_exp_or_erf_is_stated_over_an_ordered_field(a2, key, sigma):
    """(no longer unsupported: tests/test_certify_envelope.py) σ a function with its envelope as the premise"""
    verdict, certs = a2[key]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["vanishing"]
    bound, limit = export_certificates("a2", verdict, certs)
    assert {bound.requires, limit.requires} == {"SymuatEnv"} and f"(* s is {sigma}" in limit.statement


def test_a_bound_with_no_stated_envelope_is_unsupported_naming_what_its_sigma_needs(a2):
    verdict, certs = a2[KEYS[0]]
    kind, data = certs[0]
    with pytest.raises(Unsupported, match=r"^a limit as δ → 0⁺ of the bound .*the real exponential"):
        export_certificates("a2", verdict, [(kind, dict(data, facts=["|σ(t)| ≤ 2 + 0|t| (no such fact)"]))])


def test_a_deep_refuting_family_is_stated_and_another_is_unsupported_with_its_limit(a2):
    verdict, certs = a2[KEYS[2]]
    assert str(verdict.status) == "refuted"
    # the kernel's family: stated about the residual network (coq/SymuatFamily.v, tests/test_certify_family.py)
    (t,) = export_check_refutation("r", verdict, [], [], certs)
    assert t.requires == "SymuatFamily" and "forward_without (fun t => Num.max 0 t)" in t.statement
    # another family (a_1 = 2, not the kernel's): not stated, the reason names its limit and the network
    kind, data = certs[0]
    other = dict(data, family=dict(data["family"], a_1=2))
    with pytest.raises(Unsupported, match=r"tends to 1 as δ → 0⁺ .*Max\(0, t\).*piecewise linear.*residual network"):
        export_check_refutation("r", verdict, [], [], [(kind, other)])


# --------------------------------------------------------------------------------------------
# ReLU units over ℚ: the bound for every δ > 0 and every n, and the check's ∀η ∃δ statement
# --------------------------------------------------------------------------------------------

RELU = ["A2[layers=units,parameters=all,σ=relu,rest=any]", "A2[layers=units,parameters=inner,σ=relu,rest=fixed]",
        "A2[layers=units,parameters=outer,σ=relu,rest=fixed]"]
REFUTED = ["A2[layers=units,parameters=inner,σ=relu,rest=any]", "A2[layers=units,parameters=outer,σ=relu,rest=any]"]


@pytest.fixture(scope="module")
def relu():
    checks = [c for c in REGISTRY.all_checks() if c.key in RELU + REFUTED]
    kept: dict = {}
    out = capture(checks, kept)
    return {k: (v, kept.get(k, [])) for k, (v, _) in out.items()}


def test_a_relu_unit_bound_is_stated_for_every_n_and_the_limit_as_the_check_reads_it(relu):
    verdict, certs = relu[RELU[0]]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["vanishing"]
    bound, limit = export_certificates("a2", verdict, certs)
    assert bound.statement.splitlines() == [
        "Theorem a2_vanishing0_bound :",
        "  forall (n : nat) (delta : Q) (alpha : Q) (w : nat -> Q) (theta : Q) (x : nat -> Q),",
        "  (0 < delta)%Q -> (Qabs alpha <= delta)%Q -> (forall i, lt i n -> (Qabs (w i) <= delta)%Q) -> "
        "(Qabs theta <= delta)%Q ->",
        "  (forall i, lt i n -> (0 <= x i <= 1)%Q) ->",
        "  (Qabs (alpha * Qmax 0 (qsum n (fun i => w i * x i) + theta)) <= delta ^ 2 * (qnat n + 1))%Q."]
    # rest=any: every parameter after δ (one δ for all of them)
    assert limit.statement.splitlines()[1:3] == [
        "  forall (n : nat) (eta : Q), (0 < eta)%Q -> exists delta : Q, (0 < delta)%Q /\\",
        "  forall (alpha : Q) (w : nat -> Q) (theta : Q) (x : nat -> Q),"]
    assert {t.requires for t in (bound, limit)} == {"SymuatSmall"}


def test_a_fixed_parameter_is_quantified_before_eta(relu):
    """rest=fixed: δ may depend on the parameters the reading does not constrain (α for inner)."""
    _, limit = export_certificates("a2", *relu[RELU[1]])
    assert limit.statement.splitlines()[1] == (
        "  forall (n : nat) (alpha : Q) (eta : Q), (0 < eta)%Q -> exists delta : Q, (0 < delta)%Q /\\")
    assert "(qnat n + 1) * Qabs alpha" in limit.proof


def test_a_relu_unit_family_refutes_the_checks_own_statement(relu):
    """The refutation is ``~`` (the ∀η ∃δ statement of the reading), word for word the statement a
    proved reading gets, at the family: α = 1/δ (``i``), w = δ (``e``), θ = 0, x = 1, n = 1, η = 1/2."""
    from symuat.certify.vanishing import _limit_statement

    verdict, certs = relu[REFUTED[0]]
    assert str(verdict.status) == "refuted"
    (t,) = export_check_refutation("r", verdict, [], [], certs)
    reading = {"part": "units", "params": "inner", "rest": "any"}
    assert t.statement == f"Theorem r :\n  ~ ({_limit_statement(reading)[1]})."
    assert "(H 1%nat ((1 # 2))%Q" in t.proof and "(Hall (i) (fun _ => e) ((0)) (fun _ => 1))" in t.proof


def _relu_mutants(relu) -> list:
    from symuat.certify.vanishing import relu_unit_refutation, relu_unit_theorems
    from symuat.expr import smallness

    d, n = smallness.delta, smallness.n
    data = next(v for k, v in relu[RELU[0]][1] if k == "vanishing")
    outer = next(v for k, v in relu[RELU[2]][1] if k == "vanishing")
    inner_family, outer_family = (next(v for k, v in relu[key][1] if k == "vanishing_refutation") for key in REFUTED)
    return [relu_unit_theorems("m_halved", dict(data, bound=d ** 2 * (n + 1) / 2))[0],   # the bound halved
            relu_unit_theorems("m_no_n", dict(data, bound=d ** 2))[0],                  # the (n + 1) dropped
            relu_unit_theorems("m_outer_no_w", dict(outer, bound=smallness.alpha ** 0 * d))[0],  # W dropped
            # the limit with the fixed α moved after δ (uniform in α): false, α = 1/δ² breaks it
            relu_unit_theorems("m_uniform", dict(next(v for k, v in relu[RELU[1]][1] if k == "vanishing"),
                                                 reading={"part": "units", "params": "inner", "rest": "any"}))[1],
            # "families" at which the claim holds: α = δ, w = 1/δ (the unit is 1, not above η = 1);
            # α = 1/δ, w = δ² (the unit is δ → 0)
            relu_unit_refutation("m_holds", dict(outer_family, family={"α": d, "w": 1 / d, "θ": 0}))[0],
            relu_unit_refutation("m_vanishes", dict(inner_family, family={"α": 1 / d, "w": d ** 2, "θ": 0}))[0]]


def test_coq_proves_the_relu_units_and_rejects_their_mutants(coq_lib, relu):
    from symuat.certify.run import compile_batch

    true = [t for n, key in enumerate(RELU) for t in export_certificates(f"t{n}", *relu[key])]
    true += [t for n, key in enumerate(REFUTED) for t in export_check_refutation(f"r{n}", relu[key][0], [], [],
                                                                                  relu[key][1])]
    mutants = _relu_mutants(relu)
    res = compile_batch(coq_lib / "lib", [t for pair in zip(true, mutants) for t in pair] + true[len(mutants):],
                        coq_lib / "theories" / "relu_batch.v", timeout=120)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)
