"""Independence and dependence of a leaf in Coq: the statements say what symuat concluded, mutants fail.

"``expr`` does not depend on ``x``" (L1.form[β-const], L2.9's fixed parameters) is stated as what
it means: ``expr``, a Coq function of ``x``, is constant (``forall x x', F x =m F x'``), proved by
conversion. T12.bias[pre,token-shared]'s independence rests on an identity with a form free of
``H`` (premise: the rows of ``H`` sum to 1) and that form's constancy. T10.c[per-token] and
T12.bias[pre,per-token]'s dependence is two values of ``H``, both with rows summing to 1 (premises
of the theorem), at which the expression differs. Mutants — an expression that mentions ``x``, the
form replaced by the expression, the verdict's own witness (rows summing to 0), a witness whose
two values of ``H`` are equal, a premise with another line sum — must be rejected by Coq. Needs
``coqc`` with MathComp for the Coq test; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is
set.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sympy import MatrixSymbol, Symbol

from certify_helpers import recorded
from symuat.certify.coq_terms import Unsupported
from symuat.certify.independence import constant_in, export_dependence_on_hypotheses, export_independence, reason
from symuat.certify.kinds import export_certificates
from symuat.expr.algebra import dims, mul, T

FIXED = ["L2.9[W'_{1,2}]", "L2.9[W'_{1,3}]", "L2.9[W'_{2,2}]", "L2.9[W'_{2,3}]", "L2.9[W'_{3,1}]",
         "L2.9[W'_{3,2}]", "L2.9[W'_{3,3}]", "L2.9[b'_{1,2}]", "L2.9[b'_{3,1}]"]
SHARED, PER_TOKEN = "T12.bias[pre,token-shared]", ("T10.c[per-token]", "T12.bias[pre,per-token]")


@pytest.fixture(scope="module")
def captured():
    return recorded("L1.form[β-const]", *FIXED, SHARED, *PER_TOKEN)


def _theorems(captured, key):
    verdict, _, _, certs = captured[key]
    return export_certificates("t", verdict, certs)


def test_every_structural_independence_records_its_expression(captured):
    for key in ["L1.form[β-const]", *FIXED]:
        verdict, _, _, certs = captured[key]
        assert str(verdict.status) == "proved" and [k for k, _ in certs] == ["independence"], key
        assert "form" not in certs[0][1]


def test_independence_is_stated_as_a_constant_function_of_the_variable(captured):
    (t,) = _theorems(captured, "L1.form[β-const]")
    assert t.statement.splitlines()[1:] == [
        "  (* x does not occur: the expression, a function of x (a matrix of any index spaces), is constant *)",
        "  let F := fun x : mx R rs_x cs_x => mul beta alpha_j in",
        "  forall x x' : mx R rs_x cs_x, F x =m F x'."]
    assert t.proof == "move=> F x x' i j; reflexivity."
    # a size named F (L2.9's hidden width): the function gets a fresh name
    (t,) = _theorems(captured, "L2.9[W'_{1,2}]")
    assert "let F_ := fun x_0 : mx R rs_x_0 cs_x_0 => mul W__1_2_ (idm [:: D]) in" in t.statement


def test_the_token_shared_bias_is_the_identity_with_its_premise_and_the_forms_constancy(captured):
    verdict, _, _, certs = captured[SHARED]
    assert [k for k, _ in certs] == ["independence"]
    eq, form = _theorems(captured, SHARED)
    assert "(Hl0 : forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (a, tt) (b, tt) = 1)" in eq.statement
    assert "let F := fun H : 'I_h -> mx R [:: N] [:: N] =>" in form.statement
    assert "forall H H' : 'I_h -> mx R [:: N] [:: N], F H =m F H'." in form.statement
    assert "(H :" not in form.statement  # H is not a binder of the theorem: only F's argument
    assert "premise: \\sum_{b}H_{ab}=1" in reason(certs)


def test_a_form_that_mentions_the_variable_is_unsupported(captured):
    _, _, _, certs = captured[SHARED]
    data = certs[0][1]
    with pytest.raises(Unsupported, match="occurs in the form"):
        export_independence("x", dict(data, form=data["expr"]))


def test_the_dependence_witness_is_on_the_hypotheses_and_they_are_premises(captured):
    from symuat.kernel.assumptions import assuming
    from symuat.kernel.hypotheses import violated

    for key in PER_TOKEN:
        verdict, _, _, certs = captured[key]
        assert [k for k, _ in certs] == ["dependence_hypotheses"], key
        data = certs[0][1]
        with assuming(data["hypotheses"]):
            values = {k: np.asarray(v, dtype=object) for k, v in data["values"].items()}
            assert not violated(values) and not violated({"H": values["H'"]})
        assert data["verdict_witness_on_hypotheses"]  # the verdict's own witness: the search keeps to them
        assert "breaks the hypothesis" not in reason(certs)
        w = verdict.quantities["witness"]["values"]
        with assuming(data["hypotheses"]):
            assert not violated({"H": np.asarray(w["first"]["H"], dtype=object)})
            assert not violated({"H": np.asarray(w["second H"], dtype=object)})
        (t,) = export_certificates("t", verdict, certs)
        assert "(forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (a, tt) (b, tt) = 1) ->" in t.statement
        assert "(forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H' i (a, tt) (b, tt) = 1) ->" in t.statement
        assert t.proof.endswith("symuat_refute.")


def _off_hypothesis_witness(data):
    """The certificate at a witness off the hypothesis: N = 1, H = [[0]] (its row sums to 0, not
    1) against H' = [[1]] — the witness the verdict printed before its search kept to the
    hypotheses (the expression does differ there: 1 against 2)."""
    one = lambda v: np.asarray([[v]], dtype=object)
    values = {"H": np.asarray([[[0]]], dtype=object), "H'": np.asarray([[[1]]], dtype=object), "P": one(1),
              "W_O": one(1), "W_V": np.asarray([[[1]]], dtype=object), "b_{L,3}": one(0)}
    assert set(values) == set(data["values"]), sorted(data["values"])
    return dict(data, sizes={"N": 1, "d": 1, "d_v": 1, "h": 1}, values=values, lhs_value=one(1), rhs_value=one(2))


def _unchecked(monkeypatch, name, data):
    """The dependence theorem of ``data`` without symuat's check that the recorded sides evaluate
    to the recorded values (:func:`~symuat.certify.witness.sigma_of`)."""
    import symuat.certify.witness as witness

    with monkeypatch.context() as m:
        m.setattr(witness, "sigma_of", lambda data: None)
        return export_dependence_on_hypotheses(name, data)


def test_coq_accepts_the_independence_and_dependence_theorems_and_rejects_their_mutants(captured, coq_lib, monkeypatch):
    from symuat.certify.run import coq_name, compile_batch

    true = [t for key in ("L1.form[β-const]", "L2.9[b'_{3,1}]", SHARED, *PER_TOKEN)
            for t in export_certificates(coq_name(key, 0), captured[key][0], captured[key][3])]
    m, n, p, q = dims("m n p q")
    x, u = MatrixSymbol("x", n, 1), MatrixSymbol("u", m, 1)
    beta_x = mul(MatrixSymbol("P", p, n), x, T(u))  # L1.form[β-x]: β(x) = P x uᵀ
    shared = captured[SHARED][3][0][1]
    verdict, _, _, certs = captured["T10.c[per-token]"]
    dep = certs[0][1]
    hyp = dep["hypotheses"][0]
    mutants = [
        # an expression that mentions x: its function of x is not constant
        constant_in("mut_beta_x", mul(beta_x, MatrixSymbol("alpha_j", m, q)), "x"),
        # T12's expression itself (H occurs) said constant in H, without the identity
        constant_in("mut_shared_expr", shared["expr"], "H"),
        # a witness off the hypothesis: H = [[0]] at N = 1, whose row sums to 0, not 1
        *export_dependence_on_hypotheses("mut_off_hypothesis", _off_hypothesis_witness(dep)),
        # the two values of H equal: the expression does not differ (symuat's own re-evaluation of
        # the recorded sides, which refuses it first, bypassed: Coq must refuse it too)
        *_unchecked(monkeypatch, "mut_same_h", dict(dep, values=dict(dep["values"], **{"H'": dep["values"]["H"]}))),
        # a premise with another line sum (rows summing to 2): the witness does not satisfy it
        *export_dependence_on_hypotheses("mut_rows_two", dict(dep, hypotheses=(dataclasses.replace(hyp, value=2),))),
    ]
    res = compile_batch(coq_lib / "lib", true + mutants, coq_lib / "theories" / "independence_batch.v", timeout=300)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    for t in mutants:  # rejected by a proof that fails, not by a mistyped or misspelled mutation
        why = res[t.name]["reason"]
        assert why.startswith("Coq:") and "Syntax error" not in why and "was not found" not in why, why
        assert "has type" not in why or "cannot be applied" in why or "Unable to unify" in why, why


def test_the_reason_reads_only_its_own_certificates():
    """A check whose certificates are another exporter's (A1's implications carry SymPy
    relations as ``hypotheses``) gets no reason from this module, and no crash."""
    x = Symbol("x")
    assert reason([("implication", {"hypotheses": (x < 1,), "var": "x"})]) == ""
