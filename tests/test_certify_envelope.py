"""A2's units through logistic, tanh and GELU: stated over any ordered field, σ a function with
its envelope as the one premise (``coq/SymuatEnv.v``, :func:`symuat.certify.vanishing.envelope_theorems`).

Each proved reading gets the bound (``…_bound``) and the check's ∀η ∃δ statement, over any
``realFieldType`` ``R`` with ``s : R -> R`` and the premise ``|s t| <= 1`` (logistic, and tanh
for the outer weight alone) or ``|s t| <= |t|`` (tanh, GELU), said in the comment and the record's
reason. Mutants — the premise dropped or weakened, the bound halved, the (n + 1) dropped, a fixed
parameter made uniform — are rejected by Coq (the Coq test needs ``coqc``: the ``coq`` tier).
"""

from __future__ import annotations

import dataclasses

import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import recorded
from symuat.certify.kinds import export_certificates
from symuat.certify.run import capture
from symuat.certify.vanishing import premises
from symuat.kernel.registry import REGISTRY

PROVED = [f"A2[layers=units,parameters={p},σ={s},rest={r}]" for p, s, r in [
    ("all", "gelu", "any"), ("all", "gelu", "fixed"), ("all", "logistic", "any"), ("all", "logistic", "fixed"),
    ("all", "tanh", "any"), ("all", "tanh", "fixed"), ("inner", "gelu", "fixed"), ("inner", "tanh", "fixed"),
    ("outer", "gelu", "fixed"), ("outer", "logistic", "any"), ("outer", "logistic", "fixed"),
    ("outer", "tanh", "any"), ("outer", "tanh", "fixed")]]


@pytest.fixture(scope="module")
def units():
    return {k: (v, certificates) for k, (v, _pairs, _unequal, certificates) in recorded(*PROVED).items()}


def test_the_thirteen_units_are_exported_with_their_premise_said(units):
    assert set(units) == set(PROVED)
    for key, (verdict, certs) in units.items():
        assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["vanishing"]
        bound, limit = export_certificates("a2", verdict, certs)
        sigma = key.split("σ=")[1].split(",")[0]
        premise = "`|s t| <= 1" if "logistic" in key or key.endswith("outer,σ=tanh,rest=any]") else "`|s t| <= `|t|"
        for t in (bound, limit):
            assert t.requires == "SymuatEnv"
            assert f"(forall (R : realFieldType) (s : R -> R), (forall t, {premise}) ->" in t.statement
            assert f"(* s is {sigma}" in t.statement
        assert "R any ordered field" in limit.statement and f"premise true of {sigma}: " in limit.statement
        assert limit.statement.rstrip().endswith("`|alpha * s (\\sum_(i < n) w i * x i + theta)| <= eta)%R.")
        reason = premises(certs)
        assert f"σ = {sigma} a function s" in reason and premise in reason and "as a premise" in reason


def test_the_bound_is_the_checks_and_fixed_parameters_come_before_eta(units):
    _, certs = units["A2[layers=units,parameters=all,σ=tanh,rest=any]"]
    bound, _ = export_certificates("a2", None, certs)
    assert bound.statement.rstrip().endswith("<= delta ^+ 2 * (n%:R + 1))%R.")
    _, certs = units["A2[layers=units,parameters=inner,σ=gelu,rest=fixed]"]
    bound, limit = export_certificates("a2", None, certs)
    assert bound.statement.rstrip().endswith("<= delta * (n%:R + 1) * `|alpha|)%R.")
    assert "forall (n : nat) (alpha : R) (eta : R), 0 < eta -> exists delta : R" in limit.statement
    _, certs = units["A2[layers=units,parameters=outer,σ=tanh,rest=fixed]"]
    bound, limit = export_certificates("a2", None, certs)
    assert bound.statement.rstrip().endswith("<= (\\sum_(i < n) `|w i| + `|theta|) * delta)%R.")
    assert "forall (n : nat) (w : nat -> R) (theta : R) (eta : R)" in limit.statement


def _mutants(units) -> list:
    """False variants of the exported theorems (each statement edited once)."""
    out = []

    def edit(key, which, name, old, new):
        t = export_certificates(name, None, units[key][1])[which]
        assert t.statement.count(old) == 1, (old, t.statement)
        out.append(dataclasses.replace(t, statement=t.statement.replace(old, new)))

    tanh_all, gelu_inner = PROVED[4], PROVED[6]
    logistic_outer, tanh_outer = PROVED[9], PROVED[12]
    # the premise dropped (s any function): false, s = a large constant
    edit(tanh_all, 1, "m_no_premise", "(forall t, `|s t| <= `|t|) ->", "")
    edit(logistic_outer, 1, "m_no_premise_bounded", "(forall t, `|s t| <= 1) ->", "")
    # the premise weakened to an envelope with c0 = 1 (not what the bound δ²(n + 1) needs): false
    edit(tanh_all, 0, "m_weak_premise", "(forall t, `|s t| <= `|t|) ->", "(forall t, `|s t| <= 1 + `|t|) ->")
    # the bound halved, the (n + 1) dropped, ‖w‖₁ + |θ| dropped
    edit(tanh_all, 0, "m_halved", "<= delta ^+ 2 * (n%:R + 1))", "<= delta ^+ 2 * (n%:R + 1) / 2%:R)")
    edit(tanh_all, 0, "m_no_n", "<= delta ^+ 2 * (n%:R + 1))", "<= delta ^+ 2)")
    edit(tanh_outer, 0, "m_no_w", "<= (\\sum_(i < n) `|w i| + `|theta|) * delta)", "<= delta)")
    edit(logistic_outer, 0, "m_bounded_halved", "<= delta)%R.", "<= delta / 2%:R)%R.")
    # the fixed α made uniform (after δ): false, α = 1/δ² breaks it
    edit(gelu_inner, 1, "m_uniform_alpha", "forall (n : nat) (alpha : R) (eta : R)", "forall (n : nat) (eta : R)")
    out[-1] = dataclasses.replace(out[-1], statement=out[-1].statement.replace(
        "forall (w : nat -> R)", "forall (alpha : R) (w : nat -> R)"))
    return out


def test_coq_proves_the_units_and_rejects_their_mutants(coq_lib, units):
    from symuat.certify.run import compile_batch

    true = [t for n, key in enumerate(PROVED) for t in export_certificates(f"t{n}", *units[key])]
    mutants = _mutants(units)
    res = compile_batch(coq_lib / "lib", [t for pair in zip(true, mutants) for t in pair] + true[len(mutants):],
                        coq_lib / "theories" / "envelope_batch.v", timeout=120)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)


# --------------------------------------------------------------------------------------------
# H9.dep (and A6.weights, its verdict): the witness through softmax, e for exp and l for ln 2
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def h9():
    checks = [c for c in REGISTRY.all_checks() if c.key == "H9.dep"]
    kept: dict = {}
    (verdict, _), = capture(checks, kept).values()
    return verdict, kept.get("H9.dep", [])


def test_h9_witness_is_stated_with_the_exp_facts_as_premises(h9):
    from symuat.certify.coq_terms import Unsupported

    verdict, certs = h9
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["softmax_witness"]
    (t,) = export_certificates("h9", verdict, certs)
    assert t.requires == "SymuatEnv"
    assert "(forall (F : numFieldType) (e : F -> F) (l : F), e 0 = 1 -> e (- l) = 2%:R^-1 ->" in t.statement
    assert "e(k·l) = 2^k at the two scores k = 0, −1" in t.statement and "W_V W_O ≠ 0" in t.statement
    # another witness (a different X_2) is not stated
    kind, data = certs[0]
    other = dict(data["witness"], values=dict(data["witness"]["values"], X_2=[[1], [0]]))
    with pytest.raises(Unsupported, match="only the witness at N = 2, M = 1, h = 1"):
        export_certificates("h9", verdict, [(kind, {"witness": other})])


def test_coq_proves_h9s_witness_and_rejects_its_mutants(coq_lib, h9):
    from symuat.certify.run import compile_batch

    (t,) = export_certificates("h9", *h9)

    def mutant(name, old, new):
        assert t.statement.count(old) == 1
        return dataclasses.replace(t, name=name, statement=t.statement.replace(f"Theorem {t.name} ", f"Theorem {name} ")
                                   .replace(old, new))

    mutants = [mutant("m_no_half", "e (- l) = 2%:R^-1 ->", ""),             # exp's fact at k = −1 dropped
               mutant("m_flat", "e (- l) = 2%:R^-1 ->", "e (- l) = 1 ->"),  # e(−l) = 1: the patterns agree
               mutant("m_b_zero", "wv * wo != 0 ->", "")]                   # W_V W_O = 0: W' is 0
    res = compile_batch(coq_lib / "lib", [t, *mutants], coq_lib / "theories" / "h9_batch.v", timeout=120)
    assert res[t.name]["ok"]
    assert {m.name: res[m.name]["ok"] for m in mutants} == {m.name: False for m in mutants}
    assert all(res[m.name]["reason"].startswith("Coq:") for m in mutants)


# --------------------------------------------------------------------------------------------
# A2's logistic units refuted for the inner parameters: s 0 = 1/2 the premise
# --------------------------------------------------------------------------------------------

LOGISTIC_REFUTED = ["A2[layers=units,parameters=inner,σ=logistic,rest=any]",
                    "A2[layers=units,parameters=inner,σ=logistic,rest=fixed]"]


@pytest.fixture(scope="module")
def logistic():
    checks = [c for c in REGISTRY.all_checks() if c.key in LOGISTIC_REFUTED]
    kept: dict = {}
    out = capture(checks, kept)
    return {k: (v, kept.get(k, [])) for k, (v, _) in out.items()}


def _refutations(logistic):
    from symuat.certify.refutation import export_check_refutation

    return [t for n, key in enumerate(LOGISTIC_REFUTED)
            for t in export_check_refutation(f"r{n}", logistic[key][0], [], [], logistic[key][1])]


def test_a_logistic_family_refutes_the_checks_statement_with_s0_the_premise(logistic):
    from symuat.certify.vanishing import refutation_premises

    for key, t in zip(LOGISTIC_REFUTED, _refutations(logistic)):
        assert str(logistic[key][0].status) == "refuted" and t.requires == "SymuatEnv"
        assert "(forall (R : realFieldType) (s : R -> R), s 0 = 2%:R^-1 ->\n  ~ (forall (n : nat) " in t.statement
        assert "s 0 = 1/2 as a premise" in refutation_premises(logistic[key][1])


def test_coq_proves_the_logistic_refutations_and_rejects_their_mutants(coq_lib, logistic):
    from symuat.certify.run import compile_batch

    true = _refutations(logistic)
    # s 0 = 1/2 dropped, or s 0 = 0: s = 0 satisfies the limit, the negation is false
    mutants = [dataclasses.replace(true[0], name="m_no_s0", statement=true[0].statement.replace(
                   "Theorem r0 ", "Theorem m_no_s0 ").replace("s 0 = 2%:R^-1 ->", "")),
               dataclasses.replace(true[1], name="m_s0_zero", statement=true[1].statement.replace(
                   "Theorem r1 ", "Theorem m_s0_zero ").replace("s 0 = 2%:R^-1 ->", "s 0 = 0 ->"))]
    res = compile_batch(coq_lib / "lib", [*true, *mutants], coq_lib / "theories" / "logistic_batch.v", timeout=120)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {m.name: res[m.name]["ok"] for m in mutants} == {m.name: False for m in mutants}
    assert all(res[m.name]["reason"].startswith("Coq:") for m in mutants)
