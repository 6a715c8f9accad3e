"""A2's refuting families through σ (``coq/SymuatFamily.v``, :mod:`symuat.certify.family`).

The 16 deep readings are stated as ``~`` (the check's statement about SymuatDepth's residual
network: every depth, widths, removed layer ``k``, ``W1 = 1``) and the tanh/GELU units as ``~``
(SymuatEnv's unit statement), over any ``realFieldType`` with σ a function ``s`` and the lower
bounds the family uses as premises (or ReLU as ``Num.max 0`` itself, no premise), said in the
comment and the record's reason. Mutants — a premise dropped or weakened so that a function
meeting it satisfies the claim, ReLU replaced by ``0``, a family that stays bounded (layer 1's
``K = 1`` instead of ``1/e``), a bound above the family's limit — are rejected by Coq (the ``coq`` tier).
"""

from __future__ import annotations

import dataclasses

import pytest

import symuat.claims  # noqa: F401  (registration)
from certify_helpers import assert_library_variant_rejected, recorded

DEEP = [f"A2[layers=deep,parameters={p},σ={s},rest=any]" for p in ("all", "inner", "outer")
        for s in ("gelu", "logistic", "relu", "tanh")] + [
    f"A2[layers=deep,parameters=inner,σ={s},rest=fixed]" for s in ("gelu", "logistic", "relu", "tanh")]
UNITS = ["A2[layers=units,parameters=inner,σ=gelu,rest=any]", "A2[layers=units,parameters=inner,σ=tanh,rest=any]",
         "A2[layers=units,parameters=outer,σ=gelu,rest=any]"]
KEYS = DEEP + UNITS


@pytest.fixture(scope="module")
def families():
    return {k: (v, certificates) for k, (v, _pairs, _unequal, certificates) in recorded(*KEYS).items()}


def _theorem(families, key, name):
    from symuat.certify.refutation import export_check_refutation

    verdict, certs = families[key]
    (t,) = export_check_refutation(name, verdict, [], [], certs)
    return t


def test_the_nineteen_families_are_stated_with_their_premises_said(families):
    from symuat.certify.vanishing import refutation_premises

    assert set(families) == set(KEYS)
    for n, key in enumerate(KEYS):
        verdict, certs = families[key]
        assert str(verdict.status) == "refuted"
        t = _theorem(families, key, f"f{n}")
        assert t.requires == "SymuatFamily"
        reason = refutation_premises(certs)
        assert "realFieldType" in reason and "R any ordered field" in t.statement
        if "relu" in key:
            assert "(forall (R : realFieldType), " in t.statement and "(fun t => Num.max 0 t)" in t.statement
            assert "no premise" in reason
            continue
        assert "(forall (R : realFieldType) (s : R -> R), " in t.statement and "as premises" in reason
        if "rest=any" in key and "deep" in key:
            assert "(forall t, 0 <= t -> 0 <= s t) ->" in t.statement and "(forall t, 1 <= t -> s 0 + " in t.statement
            assert "s t >= s 0 + " in reason and "for t >= 1" in reason
        elif "deep" in key:
            assert "(forall t, 0 <= t -> 0 <= s t) ->" in t.statement and "s 0 +" not in t.statement
        else:
            assert "t / 2%:R <= s t" in t.statement and "s t >= t/2" in reason


def test_the_deep_statement_is_about_every_residual_network(families):
    t = _theorem(families, "A2[layers=deep,parameters=outer,σ=tanh,rest=any]", "d")
    assert ("forall (D F L k : nat) (N : net R D F) (x0 : mx R [:: D] [::]),\n     (k < L)%nat -> "
            "(forall l, nW1 N l =m idm [:: D]) ->") in t.statement
    assert "(forall i j, `|nW3 N k i j| <= delta) -> (forall i j, `|nb3 N k i j| <= delta)" in t.statement
    assert "nW2 N k" not in t.statement
    assert t.statement.rstrip().endswith("`|forward s N x0 L i j - forward_without s N x0 k L i j| <= eta))%R.")
    fixed = _theorem(families, "A2[layers=deep,parameters=inner,σ=tanh,rest=fixed]", "f")
    # the network (its fixed parameters) before η, the removed layer's inner parameters after δ
    assert fixed.statement.index("(N : net R D F)") < fixed.statement.index("forall eta") < fixed.statement.index(
        "forall (W2 : mx R [:: F] [:: D]) (b2 : mx R [:: F] [::])")
    assert "forward s (with_inner N k W2 b2) x0 L i j" in fixed.statement


def test_a_family_the_library_does_not_state_is_unsupported(families):
    from symuat.certify.coq_terms import Unsupported
    from symuat.certify.vanishing import export_vanishing_refutation

    _, certs = families["A2[layers=deep,parameters=inner,σ=tanh,rest=any]"]
    kind, data = certs[0]
    other = dict(data, family=dict(data["family"], w_2=1))  # not the kernel's family
    with pytest.raises(Unsupported):
        export_vanishing_refutation("x", other)


def _mutant(t, name, old, new, count=1):
    assert t.statement.count(old) == count, (old, t.statement)
    return dataclasses.replace(t, name=name, statement=t.statement.replace(f"Theorem {t.name} ", f"Theorem {name} ")
                               .replace(old, new))


def test_coq_proves_the_families_and_rejects_their_mutants(coq_lib, families):
    from symuat.certify.run import compile_batch

    true = [_theorem(families, key, f"f{n}") for n, key in enumerate(KEYS)]
    by_key = dict(zip(KEYS, true))
    tanh_any = by_key["A2[layers=deep,parameters=all,σ=tanh,rest=any]"]
    logistic_fixed = by_key["A2[layers=deep,parameters=inner,σ=logistic,rest=fixed]"]
    relu_outer = by_key["A2[layers=deep,parameters=outer,σ=relu,rest=any]"]
    gelu_outer = by_key["A2[layers=units,parameters=outer,σ=gelu,rest=any]"]
    tanh_unit = by_key["A2[layers=units,parameters=inner,σ=tanh,rest=any]"]
    mutants = [
        # the step premise dropped or made c = 0: s = 0 meets it, and the claim holds for it
        _mutant(tanh_any, "m_no_step", "(forall t, 1 <= t -> s 0 + 2%:R^-1 <= s t) ->", ""),
        _mutant(tanh_any, "m_step_zero", "(forall t, 1 <= t -> s 0 + 2%:R^-1 <= s t) ->",
                "(forall t, 1 <= t -> s 0 + 0 <= s t) ->"),
        # s t >= 0 dropped: s = −1 makes the one-layer change 1 + s(2δ) = 0
        _mutant(logistic_fixed, "m_no_nonneg", "(forall t, 0 <= t -> 0 <= s t) ->", ""),
        # ReLU replaced by 0: removing a layer whose outer parameters are within δ changes the output by ≤ δ
        _mutant(relu_outer, "m_sigma_zero", "(fun t => Num.max 0 t)", "(fun t => 0)", count=2),
        # a unit's premise dropped (s = 0), or halved (s t = t/4: the family stays at 1/4 ≤ η)
        _mutant(gelu_outer, "m_unit_no_half", "(forall t, 0 <= t -> t / 2%:R <= s t) ->", ""),
        _mutant(tanh_unit, "m_unit_quarter", "(forall t, 0 <= t <= 1 -> t / 2%:R <= s t) ->",
                "(forall t, 0 <= t <= 1 -> t / 4%:R <= s t) ->"),
    ]
    res = compile_batch(coq_lib / "lib", [*true, *mutants], coq_lib / "theories" / "family_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {m.name: res[m.name]["ok"] for m in mutants} == {m.name: False for m in mutants}
    assert all(res[m.name]["reason"].startswith("Coq:") for m in mutants)


def test_coq_rejects_a_bounded_family_and_a_bound_above_the_limit(coq_lib):
    # layer 1 with K = 1 instead of 1/e: the change e(1 + u) + s(1 + u) − s 0 stays bounded
    assert_library_variant_rejected(
        coq_lib / "lib", "SymuatFamily.v", "a family that stays bounded",
        "~ (forall i j, `|forward s (fam2 e e e e e^-1) (fam_cst 1) 2 i j\n"
        "                  - forward_without s (fam2 e e e e e^-1) (fam_cst 1) 0 2 i j| <= 1).",
        "~ (forall i j, `|forward s (fam2 e e e e 1) (fam_cst 1) 2 i j\n"
        "                  - forward_without s (fam2 e e e e 1) (fam_cst 1) 0 2 i j| <= 1).")
    # the one-layer change 1 + s(2e) tends to 1 for ReLU, tanh, GELU: not above 1 for s = 0
    assert_library_variant_rejected(coq_lib / "lib", "SymuatFamily.v", "a bound at the family's limit",
                                    "                 <= 2%:R^-1).", "                 <= 1).")
    # a unit's inner family s(e)/e ≥ 1/2: not above 1/2 for s t = t/2
    assert_library_variant_rejected(coq_lib / "lib", "SymuatFamily.v", "a unit's bound at the family's value",
                                    "  ~ (`|e^-1 * s (\\sum_(i < 1) e * 1 + 0)| <= 4%:R^-1).",
                                    "  ~ (`|e^-1 * s (\\sum_(i < 1) e * 1 + 0)| <= 2%:R^-1).")
