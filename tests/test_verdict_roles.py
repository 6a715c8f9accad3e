"""Issue 19: bottom lines a reviewer would sign.

The roll-up's roles (symuat.verdicts.roll_up.roll_up, rule 4 and rule 7) on a registry of their own —
a prediction, a gloss, a confirmation, a value the paper does not state, informal items — then
the catalogue: the bottom lines the issue names, no correction that is a fragment, no "none
found" where a correction exists, and counterexamples a reader can check by hand."""

from fractions import Fraction

import pytest
from sympy import MatrixSymbol, symbols

from symuat.expr.algebra import T
from symuat.kernel import decide, minimise
from symuat.kernel.registry import Registry
from symuat.kernel.status import Corrected, Status
from symuat.verdicts.roll_up import claim_verdicts, correction_defects, roll_up

n = symbols("n", integer=True, positive=True)
A = MatrixSymbol("A", n, n)
TRUE = lambda: decide.check_identity(A, A)
FALSE = lambda: decide.check_identity(A, T(A))


def FALSE_CORRECTED():
    v = decide.check_identity(A, T(A))
    v.corrected = Corrected(r"\mathbf A=\mathbf A", decide.check_identity(A, A))
    return v


def NUMERIC():
    return decide.check_numeric(lambda sizes, seed: (True, "ok", {}), [{"n": 2}], what="a float64 run")


def _roll(claim):
    return roll_up(claim, [c.run() for c in claim.checks])


# --------------------------------------------------------------------------------------------
# the rule, on a registry of its own
# --------------------------------------------------------------------------------------------


def test_a_refuted_prediction_is_corrected_beside_the_verdict_not_a_failing_reading():
    reg = Registry()
    e = reg.claim("Z1", "t", where="-", statement="-", group="-")
    e.check("block", ("pre",), "a=a", TRUE, polarity=None, role="extension")
    e.check("block", ("post",), "a=a", TRUE, polarity=None, role="extension")
    e.check("dep", ("pre",), "deps", FALSE_CORRECTED, polarity=None, role="prediction")
    v = _roll(e)
    assert v.extension and v.verdict == "holds" and v.strength == "proved"
    (p,) = v.predictions
    assert p["key"] == "Z1.dep[pre]" and not p["holds"] and p["corrected_status"] == "proved"
    assert "prediction Z1.dep[pre] corrected" in v.bottom_line


def test_a_wrong_gloss_is_named_with_its_correction_and_does_not_overturn_the_equation():
    reg = Registry()
    c = reg.claim("Z2", "t", where="-", statement="-", group="-")
    c.check("1", None, "a=a", TRUE)
    c.check("cov", None, "a=aᵀ", FALSE_CORRECTED, role="gloss")
    v = _roll(c)
    assert v.verdict == "holds" and v.wrong_glosses == ["cov"]
    assert v.corrected == r"\mathbf A=\mathbf A" and v.corrected_of == "Z2.cov"
    assert "gloss cov is wrong" in v.bottom_line
    # the equation failing still fails the claim
    d = reg.claim("Z3", "t", where="-", statement="-", group="-")
    d.check("1", None, "a=aᵀ", FALSE)
    d.check("cov", None, "a=a", TRUE, role="gloss")
    assert _roll(d).verdict == "fails"


def test_a_confirmation_beside_a_proof_does_not_lower_the_strength_but_can_fail():
    reg = Registry()
    c = reg.claim("Z4", "t", where="-", statement="-", group="-")
    c.check("exact", ("induction",), "a=a", TRUE)
    c.check("exact", ("numeric",), "a=a", NUMERIC, role="confirmation")
    v = _roll(c)
    assert v.verdict == "holds" and v.strength == "proved"
    d = reg.claim("Z5", "t", where="-", statement="-", group="-")
    d.check("exact", ("induction",), "a=a", TRUE)
    d.check("exact", ("numeric",), "a=aᵀ", FALSE, role="confirmation")
    assert _roll(d).verdict == "fails"
    # a numeric-only check that is not marked a confirmation still lowers it
    e = reg.claim("Z6", "t", where="-", statement="-", group="-")
    e.check("exact", ("induction",), "a=a", TRUE)
    e.check("other", None, "a=a", NUMERIC)
    assert _roll(e).strength == "numeric-only"


def test_a_value_the_paper_does_not_state_is_reported_not_judged_and_informal_items_are_named():
    reg = Registry()
    c = reg.claim("Z7", "t", where="-", statement="-", group="-")
    c.check("eq", None, "a=a", TRUE)
    c.check("rank", None, "rank = N r", FALSE, role="quantity", polarity=None)
    c.check("prose", None, "…", lambda: decide.informal("prose"), polarity=None)
    v = _roll(c)
    assert v.verdict == "holds"
    assert v.quantities[0]["agrees_with_paper"] is None
    assert v.checked_items == ["eq"] and v.informal_items == ["prose"]
    assert "checked: eq; informal: prose" in v.bottom_line


def test_correction_defects_catches_fragments():
    assert correction_defects(r"\text{depends on }x_0")
    assert correction_defects(r"\text{…except }W=1")
    assert correction_defects(r"density = \frac{N+1}{2N}")
    assert correction_defects(r"zero-frac = \frac{M-1}{M}")
    assert not correction_defects(r"\operatorname{density}\,\mathbf W'_{HVi} = \frac{N+1}{2N}")
    assert not correction_defects(r"\mathbf W\diamond\mathbf x\in\mathbb R^{(n,1)}")


def test_minimal_counterexample_smallest_sizes_then_entries():
    d, k = symbols("d d_k", integer=True, positive=True)
    x, WQ, WK = MatrixSymbol("x", n, d), MatrixSymbol("W_Q", d, k), MatrixSymbol("W_K", d, k)
    lhs = x * WQ * T(WK) * T(x)
    cex = minimise.minimal_counterexample(lhs, T(lhs))
    assert cex.sizes == {"d": 2, "d_k": 1, "n": 2} or sorted(cex.sizes.values()) == [1, 2, 2]
    assert all(abs(v) <= 1 for arr in cex.values.values() for v in arr.flat)
    assert cex.exact_recheck.startswith("exact")
    assert minimise.minimal_counterexample(A, A) is None  # never refutes what holds


# --------------------------------------------------------------------------------------------
# the catalogue
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verdicts(all_results, registry):
    return {v.id: v for v in claim_verdicts(list(all_results.values()), registry)}


@pytest.mark.parametrize("claim, verdict, strength", [
    ("T12", "holds", "proved"),   # the prediction T12.dep[pre] is corrected, not a failing reading
    ("X1", "holds", "proved"),    # X1.dense is the spec's question, answered as a quantity
    ("A3", "holds", "proved"),    # the rank N·r is a value beside the verdict
    ("D6", "definition", None),
    ("A6", "informal", None),     # the main sentence is prose; its checked parts are steps beside it
    ("H8", "holds", "proved"),    # Eq. 35 holds; the gloss is wrong and corrected (shown ◑, like H2)
    ("L2", "holds-under-readings", "proved"),  # float64 beside the induction does not lower it
    ("T7", "holds-under-readings", "proved"),
    ("T10", "fails", "proved"),   # refuted by an exact instance
])
def test_issue19_bottom_lines(verdicts, claim, verdict, strength):
    v = verdicts[claim]
    assert (v.verdict, v.strength) == (verdict, strength), v.as_dict()


def test_issue19_details(verdicts, all_results):
    assert [p["key"] for p in verdicts["T12"].predictions if not p["holds"]] == ["T12.dep[pre]"]
    assert verdicts["H8"].wrong_glosses == ["cov"] and verdicts["H8"].corrected_status == "proved"
    assert "symmetric for every" in verdicts["H8"].corrected
    assert verdicts["A6"].informal_items == ["many"] and set(verdicts["A6"].checked_items) == {"weights", "biases"}
    assert any("N*r" in (q["symuat"] or "") for q in verdicts["A3"].quantities)
    cex = all_results["H8.cov"].verdict.counterexample
    assert cex.sizes == {"N": 2, "d": 2, "d_k": 1}
    assert all(v in (0, 1) for arr in cex.values.values() for v in arr.flat)
    for key in ("T10[duat]", "T10[aaai]"):
        assert all_results[key].verdict.counterexample.exact_recheck.startswith("exact")


def test_no_correction_is_a_fragment_and_none_is_missing(verdicts, all_results):
    """A correction is a whole statement with its own verdict; a claim that fails, a wrong gloss
    and a refuted prediction each carry a proved one (never "none found")."""
    for v in verdicts.values():
        if v.corrected:
            assert not correction_defects(v.corrected), (v.id, v.corrected, correction_defects(v.corrected))
        if v.verdict == "fails" and not v.extension:
            assert v.corrected and v.corrected_status in ("proved", "proved-at-sizes"), v.id
        if v.wrong_glosses:
            assert v.corrected and v.corrected_status == "proved", v.id
        for p in v.predictions:
            if not p["holds"]:
                assert p["corrected"] and not correction_defects(p["corrected"]), p
    for r in all_results.values():
        cv = r.verdict.corrected if r.verdict is not None else None
        if cv is not None and cv.verdict is not None and cv.verdict.status in (Status.PROVED,):
            assert not correction_defects(cv.statement), (r.check.key, cv.statement)


def _is_rotation(v) -> bool:
    """A matrix of exact entries whose rows all have squared norm 1 (a true rotation, WP7/WP11)."""
    rows = v.tolist() if hasattr(v, "tolist") else v
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        return False
    try:
        return all(sum(Fraction(x) ** 2 for x in r) == 1 for r in rows) and any(
            Fraction(x).denominator != 1 for r in rows for x in r)
    except (TypeError, ValueError):
        return False


def _entries(values):
    for key, v in values.items():
        if "seed" in key:
            continue  # a seed names an instance; it is no entry
        if _is_rotation(v):
            continue  # c² + s² = 1 fixes a rotation's entries (Pythagorean triples), not chosen small
        arr = v if hasattr(v, "flat") else [v]
        for x in getattr(arr, "flat", arr):
            if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
                yield key, x


def test_counterexample_entries_are_small(all_results):
    """Every exact counterexample of the catalogue has entries |x| ≤ 10 (numerators and
    denominators), so a reader can re-check it by hand."""
    for r in all_results.values():
        v = r.verdict
        if v is None or v.counterexample is None or not v.counterexample.exact_recheck.startswith("exact"):
            continue
        for key, x in _entries(v.counterexample.values):
            x = Fraction(x)
            assert abs(x.numerator) <= 10 and x.denominator <= 10, (r.check.key, key, x)


# the minimal sizes of every identity refutation: tests/test_counterexamples.py


def test_rope_for_every_even_width_and_its_mutants():
    """X2 for symbolic m: the relative identity and the GGUF→HF layout are proved; the wrong order
    (R_n' R_nᵀ… as R_n R_n') and the unpermuted layout are refuted."""
    from symuat.claims import decoder as dec
    from symuat.expr.algebra import mul

    for conv in ("interleaved", "half"):
        place, A, B = dec.rope_blocks(conv)
        assert decide.check_identity(mul(T(place(A)), place(B)), place(mul(T(A), B))).status is Status.PROVED
        assert decide.check_identity(mul(place(A), place(B)), place(mul(T(A), B))).status is Status.REFUTED
    perm, A, _ = dec.rope_blocks("interleaved", permuted=True)
    half, A2, _ = dec.rope_blocks("half")
    inter, A3, _ = dec.rope_blocks("interleaved")
    assert decide.check_identity(perm(A), half(A2)).status is Status.PROVED
    assert decide.check_identity(inter(A3), half(A2)).status is Status.REFUTED


def test_the_logit_telescope_and_its_forward_chain_mutant():
    """X6.telescope's step, and the forward-chain mutant (ρ pulled back with W1, not W1ᵀ), refuted."""
    from symuat.expr.algebra import dims, mul

    D, K = dims("D K")
    rho, W1, Mk = MatrixSymbol("rho", D, 1), MatrixSymbol("W1", D, D), MatrixSymbol("M", D, K)
    assert decide.check_identity(mul(T(rho), mul(W1, Mk)), mul(T(mul(T(W1), rho)), Mk)).status is Status.PROVED
    assert decide.check_identity(mul(T(rho), mul(W1, Mk)), mul(T(mul(W1, rho)), Mk)).status is Status.REFUTED
