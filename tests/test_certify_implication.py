"""A1's implications in Coq: the theorem states the check's formula over ℚ, Coq re-decides it.

A1's ``proved`` checks (sign cases + Fourier–Motzkin) are exported as ``forall vars : Q, H_1 ->
… -> C`` and proved by the same case split and ``lra``; its refuted readings (the literal index
ranges) as ``~ (forall …)`` at symuat's rational model. Each mutant is a statement symuat does not
conclude, fed through the same exporter: the conclusion reversed, a strict hypothesis made
non-strict, a dropped hypothesis, a bound halved, a "counterexample" at which the conclusion holds
or a hypothesis fails, a limit halved or the smallness on the kept part — Coq must reject it. The Coq test needs ``coqc`` (the ``coq`` tier); the
others run in the fast tier.
"""

from __future__ import annotations

import pytest
import sympy as sp

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.coq_terms import Unsupported
from symuat.certify.implication import (export_implication, export_implication_refutation, export_uniform_limit,
                                        rational)
from symuat.certify.kinds import export_certificates
from symuat.certify.refutation import export_check_refutation
from symuat.certify.run import capture, compile_batch
from symuat.expr import pruning
from symuat.kernel.registry import REGISTRY

S1, S2, f, eps, delta = pruning.VARIABLES

PROVED = ["A1.ii[hyp=S2,to0=uniform,sums=Λ]", "A1.i[hyp=S1,to0=uniform]", "A1.prune[hyp=S2]",
          "A1.i[hyp=S1,to0=limit]", "A1.i[hyp=none]", "A1.prune[hyp=S2,to0=limit]"]
REFUTED = ["A1.ii[hyp=S2,to0=uniform,sums=literal]", "A1.prune.tight[hyp=S2]"]


@pytest.fixture(scope="module")
def a1():
    checks = [c for c in REGISTRY.all_checks() if c.key in PROVED + REFUTED]
    kept: dict = {}
    out = capture(checks, kept)
    return {k: (v, kept.get(k, [])) for k, (v, _) in out.items()}


def test_a_proved_implication_is_stated_over_q_as_the_check_has_it(a1):
    verdict, certs = a1["A1.ii[hyp=S2,to0=uniform,sums=Λ]"]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["implication"]
    (t,) = export_certificates("a1", verdict, certs)
    assert t.statement == (
        "Theorem a1_implication0 :\n"
        "  forall S_1 S_2 f varepsilon delta_ : Q, (Qabs (S_1 + S_2 - f) < varepsilon)%Q -> (varepsilon > 0)%Q -> "
        "(Qabs S_2 <= delta_)%Q -> (delta_ > 0)%Q -> (Qabs (S_1 - f) < varepsilon + Qabs S_2)%Q.")
    assert t.proof == "symuat_linear." and t.requires == "SymuatArith"


def test_a_reading_that_reuses_a_memoised_verdict_rests_on_the_same_certificate(a1):
    """A1.i[hyp=S1,to0=limit] is decided as A1.i[hyp=none] (a limit constrains no member): the
    memoised verdict comes with the certificate its decision recorded."""
    limit, none = a1["A1.i[hyp=S1,to0=limit]"], a1["A1.i[hyp=none]"]
    assert limit[0] is none[0] and limit[1] and limit[1] == none[1]


def test_a_refuted_literal_reading_is_stated_at_its_rational_model(a1):
    verdict, certs = a1["A1.ii[hyp=S2,to0=uniform,sums=literal]"]
    assert str(verdict.status) == "refuted"
    (t,) = export_check_refutation("r", verdict, [], [], certs)
    assert t.statement.startswith("Theorem r :\n  ~ (forall t_1 t_2 f varepsilon delta_ : Q, ")
    # the point is the counterexample's (t_1, t_2, f, ε, δ), in the binders' order
    values = [sp.Rational(verdict.counterexample.values[k]) for k in ("t_1", "t_2", "f", r"\varepsilon", r"\delta")]
    point = " ".join(f"({rational(v)})%Q" for v in values)
    assert t.proof == f"intro H; specialize (H {point}); symuat_refute_point."


def test_the_limit_reading_states_limsup_of_the_sup_at_most_epsilon(a1):
    """A1.prune[hyp=S2,to0=limit]: along a sequence m, at every point x, with sup_x |S_2^(m)| ≤ d m → 0:
    from some M on, |S_1^(m)(x) − f(x)| ≤ ε + η for every η > 0 — limsup_m sup_x |S_1^(m) − f| ≤ ε."""
    verdict, certs = a1["A1.prune[hyp=S2,to0=limit]"]
    assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["uniform_limit"]
    (t,) = export_certificates("u", verdict, certs)
    assert t.statement.splitlines()[1:] == [
        "  forall (X : Type) (S_1 S_2 : nat -> X -> Q) (f : X -> Q) (varepsilon : Q) (d : nat -> Q),",
        "  (forall (m : nat) (x : X), (Qabs (S_1 m x + S_2 m x - f x) < varepsilon)%Q) ->",
        "  (varepsilon > 0)%Q ->",
        "  (forall (m : nat) (x : X), (Qabs (S_2 m x) <= d m)%Q) ->",
        "  (forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> (d m <= eta)%Q) ->",
        "  forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> forall x : X, "
        "(Qabs (S_1 m x - f x) <= varepsilon + eta)%Q."]


def test_a_non_linear_atom_is_unsupported_naming_it():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(Unsupported, match=r"x\*y is not a linear term"):
        export_implication("n", {"variables": [x, y], "hypotheses": [], "conclusion": x * y >= 0})


def _data(a1, key, kind):
    return next(d for k, d in a1[key][1] if k == kind)


def _mutants(a1) -> list:
    ii = _data(a1, "A1.ii[hyp=S2,to0=uniform,sums=Λ]", "implication")
    prune = _data(a1, "A1.prune[hyp=S2]", "implication")
    concl = ii["conclusion"]
    hyps = ii["hypotheses"]
    # Eq. 10 non-strict: |S_1 − f| = ε at S_2 = 0, S_1 + S_2 − f = ε, so the strict conclusion fails
    weak = [sp.Abs(S1 + S2 - f) <= eps] + hyps[1:]
    refuted = _data(a1, "A1.ii[hyp=S2,to0=uniform,sums=literal]", "implication_refutation")
    t = refuted["variables"]
    limit = _data(a1, "A1.prune[hyp=S2,to0=limit]", "uniform_limit")
    return [
        # limsup ≤ ε/2, and the smallness on the part that is kept: both false
        export_uniform_limit("m_limit_halved", dict(limit, limit=eps / 2)),
        export_uniform_limit("m_limit_wrong_part", dict(limit, small=sp.Abs(S1) <= delta)),
        export_implication("m_reversed", dict(ii, conclusion=sp.StrictGreaterThan(concl.lhs, concl.rhs))),
        export_implication("m_nonstrict", dict(ii, hypotheses=weak)),
        export_implication("m_dropped", dict(prune, hypotheses=[h for h in prune["hypotheses"]
                                                                 if h != (sp.Abs(S2) <= delta)])),
        export_implication("m_halved", dict(prune, conclusion=sp.Abs(S1 - f) < eps + delta / 2)),
        # a "counterexample" at which the conclusion holds (everything 0, ε = δ = 1)
        export_implication_refutation("m_holds", dict(refuted, model={v: 0 for v in t[:3]} | {t[3]: 1, t[4]: 1})),
        # one at which a hypothesis fails (ε = 0)
        export_implication_refutation("m_hypothesis", dict(refuted, model={**refuted["model"], t[3]: 0})),
    ]


def test_coq_decides_the_implications_and_rejects_their_mutants(coq_lib, a1):
    true = [t for key in PROVED for t in export_certificates("t" + str(PROVED.index(key)), *a1[key])]
    true += [t for n, key in enumerate(REFUTED) for t in export_check_refutation(f"r{n}", a1[key][0], [], [],
                                                                                  a1[key][1])]
    mutants = [t for ts in _mutants(a1) for t in ts]
    res = compile_batch(coq_lib / "lib", [t for pair in zip(true, mutants) for t in pair] + true[len(mutants):],
                        coq_lib / "theories" / "implication_batch.v", timeout=120)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)


def test_a_theorem_over_q_is_placed_after_the_section_below_its_import():
    """The section's ``Variable R : comRingType`` is not the theorem's business: a theorem that
    requires SymuatArith comes after ``End Certified.``, in a section that imports it, and the line numbers
    that name a failing theorem follow the file."""
    from symuat.certify.export import Exported, batch_file

    x = sp.Symbol("x", real=True)
    (q,) = export_implication("q", {"variables": [x], "hypotheses": [x > 0], "conclusion": x >= 0})
    ring = Exported("r", "Theorem r : forall a : R, a = a.", "by [].")
    text, starts = batch_file([q, ring, q])
    lines = text.splitlines()
    end = lines.index("End Certified.")
    assert lines[end + 1: end + 4] == ["From Symuat Require SymuatArith.", "Section RequiresSymuatArith.",
                                       "Import SymuatArith."] and text.count("Require SymuatArith") == 1
    # then the batch's one axiom check, naming every theorem
    assert [name for _, name in starts] == ["r", "q", "q", "symuat_batch_theorems"]
    assert [lines[n - 1].split()[1] for n, _ in starts] == ["r", "q", "q", "symuat_batch_theorems"]
    assert starts[1][0] > end + 1


def test_a_librarys_names_and_scopes_reach_only_the_theorems_that_require_it(coq_lib):
    """SymuatRef defines ``kron`` over Q's matrices and exports ZArith (``%N``: the binary
    naturals); imported for every theorem after the section (a full run's batch), it broke
    SymuatMx's ``kron`` and ``2%N`` in the theorems of the other libraries after it. Each library is
    imported in a section of its own theorems: a theorem that requires SymuatRef, then one that
    requires SymuatFamily and uses SymuatMx's ``kron`` and ``%N`` as nat, both compile."""
    from symuat.certify.export import Exported
    from symuat.certify.run import compile_batch

    ref = Exported("needs_ref", "Theorem needs_ref : qmx_eqb (kron [:: [:: q1]] [:: [:: q1]]) [:: [:: q1]] = true.",
                   "vm_compute; reflexivity.", requires="SymuatRef")
    mx = Exported("needs_mx", "Theorem needs_mx (R : comRingType) (A : mx R [:: 2%N] [:: 2%N]) :\n"
                  "  kron A A = kron A A.", "reflexivity.", requires="SymuatFamily")
    res = compile_batch(coq_lib / "lib", [ref, mx], coq_lib / "theories" / "scoped_batch.v", timeout=300)
    assert {n: r["ok"] for n, r in res.items()} == {"needs_ref": True, "needs_mx": True}, res
