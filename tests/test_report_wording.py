"""The report says exactly what is true and what was certified (issue 30, item 8): ``+coq`` only on
a bottom line certified whole; no certificate claimed for a statement its theorems do not state;
the papers' informal sentences and cited theorems called what they are; corrections that are
whole statements; minimal counterexamples; one rule (◑) for a conclusion that holds beside a wrong
printed part; symuat's extensions outside the papers' table as outside its count.

Each test fails on the code before the fix (main at 0a5d9a0) and can fail: the positive controls
(P1 certified whole, a claim without a wrong part) pass through the same code."""

import json

import pytest

from symuat.render import report
from symuat.certify import record as rec
from symuat.verdicts.headline import display_word, headline
from symuat.verdicts.roll_up import ClaimVerdict, claim_verdicts, correction_defects, roll_up


@pytest.fixture(scope="module")
def claims():
    import symuat.claims  # noqa: F401
    from symuat.kernel.registry import REGISTRY

    return REGISTRY.claims


def _roll(claim):
    return roll_up(claim, [c.run() for c in claim.checks])


@pytest.fixture
def certify_record(tmp_path, monkeypatch):
    """Write a certify record for these sources in which ``keys`` are certified; cleared after."""
    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path))

    def write(keys):
        entry = {"status": "certified", "theorems": ["c_x_0"], "hashes": ["x"], "lemmas": ["ring"]}
        data = {"fingerprint": rec.fingerprint(), "pattern": "test", "checks": {k: dict(entry) for k in keys},
                "summary": {"certified": len(keys), "failed": 0, "unsupported": 0, "symbolic_proved": len(keys)}}
        (tmp_path / "record.json").write_text(json.dumps(data))
        rec.load.cache_clear()

    yield write
    rec.load.cache_clear()


# ---------------------------------------------------------------------------------------------
# +coq: the whole bottom line, or the report names what was certified
# ---------------------------------------------------------------------------------------------


def test_plus_coq_only_when_the_whole_bottom_line_failures_included_was_certified(claims, certify_record):
    d4, p1 = _roll(claims["D4"]), _roll(claims["P1"])
    certify_record(["D4.rows[row2]", "D4.rows[rown]", "P1"])  # D4's holding parts only, all of P1
    table = report.verdict_table([d4, p1], width=200)
    d4_row = next(line for line in table.splitlines() if line.startswith("D4 "))
    p1_row = next(line for line in table.splitlines() if line.startswith("P1 "))
    assert "+coq" not in d4_row and "+coq" in p1_row  # the positive control: the rule can pass
    assert "coq: 2 of 4 checks of the bottom line (not D4.size, D4.row1; the correction is not sent to Coq)" in table
    js = {v["id"]: v for v in json.loads(report.verdicts_json([d4, p1]))["claims"]}
    assert js["D4"]["coq"]["complete"] is False and js["P1"]["coq"]["complete"] is True
    assert js["D4"]["coq"]["not_certified"] == ["D4.size", "D4.row1"]


def test_h4_fails_without_plus_coq_when_only_its_holding_parts_were_certified(claims, certify_record):
    results = [c.run() for c in claims["H4"].checks]
    h4 = roll_up(claims["H4"], results)
    proved = [r.check.key for r in results if r.verdict is not None and str(r.verdict.status) == "proved"]
    certify_record(proved)  # every proof of H4 certified; its failures cannot be
    row = next(line for line in report.verdict_table([h4], width=200).splitlines() if line.startswith("H4 "))
    assert h4.verdict == "fails" and "+coq" not in row
    cov = report.coq_coverage(h4)
    assert not cov["complete"] and set(cov["not_certified"]) >= set(h4.failing_items)


def test_a_check_is_not_called_certified_by_theorems_that_state_less_than_it(claims, certify_record):
    """``coq_states`` (what weaker statement the theorems make) keeps "certified: coq" off a check;
    shown on M1.pic as it was exported before its theorems stated the flat positions."""
    import dataclasses

    (pic,) = [c for c in claims["M1"].checks if c.key == "M1.pic[row,dia]"]
    certify_record([pic.key])
    weaker = dataclasses.replace(pic, coq_states="two identities on the multi-indices, which hold in the "
                                                  "column-major layout too")
    result = weaker.run()
    text = report.detail(result)
    assert "certified: coq" not in text
    assert "column-major layout too" in text and "not the statement above" in text
    assert "certified" not in result.as_dict() and result.as_dict()["coq_compiled"]["states"]
    assert not rec.certified_for_statement(weaker)


def test_the_picture_is_called_certified_now_that_its_theorems_pin_the_flat_positions(claims, certify_record):
    (pic,) = [c for c in claims["M1"].checks if c.key == "M1.pic[row,dia]"]
    certify_record([pic.key])
    assert pic.coq_states is None and rec.certified_for_statement(pic)
    assert "certified: coq" in report.detail(pic.run())


# ---------------------------------------------------------------------------------------------
# what the papers wrote is called what it is
# ---------------------------------------------------------------------------------------------


def test_the_papers_informal_sentences_are_labelled_their_informal_claims(claims):
    (many,) = [c for c in claims["A6"].checks if c.key == "A6.many"]
    text = report.detail(many.run())
    assert "the papers' informal claim" in text and "not a claim of the paper" not in text


def test_a_cited_theorem_is_counted_as_cited_not_as_a_definition(claims):
    d1, d5 = _roll(claims["D1"]), _roll(claims["D5"])
    assert (d1.verdict, d5.verdict) == ("cited", "definition")
    h = headline([d1, d5])
    assert (h.cited, h.definitions) == (1, 1)
    assert "1 definition, 1 cited theorem" in h.lines()[1]


def test_a6_bottom_line_is_its_prose_main_sentence_with_its_checked_parts_beside_it(claims):
    a6 = _roll(claims["A6"])
    assert a6.verdict == "informal" and a6.strength is None
    assert a6.checked_items == ["weights", "biases"] and not a6.failing_step_names
    assert "which" not in " ".join(a6.checks)  # T10's list is T10's claim
    assert "its checked parts weights, biases hold" in a6.bottom_line


# ---------------------------------------------------------------------------------------------
# corrections are whole statements
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cid", ["H1", "H6", "A5"])
def test_a_correction_under_one_reading_names_the_causal_mask(claims, cid):
    cv = _roll(claims[cid])
    assert cv.corrected.startswith(r"\text{with a causal mask: }") and not correction_defects(cv.corrected)


def test_p4_correction_states_both_sides(claims):
    cv = _roll(claims["P4"])
    assert r"\mathbf W\diamond(\mathbf x+\mathbf y)" in cv.corrected
    assert r"(\mathbf W+\mathbf V)\diamond\mathbf x" in cv.corrected
    assert len(cv.corrected_from) == 4


def test_d4_correction_states_the_size_and_row_1(claims):
    cv = _roll(claims["D4"])
    assert r"\mathbb R^{(n,1)}" in cv.corrected and r"w_{2,1}x_2" in cv.corrected
    assert cv.corrected_from == ["D4.size", "D4.row1"] and cv.corrected_status == "proved"


def test_d4_row1_counterexample_is_minimal(claims):
    (row1,) = [c for c in claims["D4"].checks if c.key == "D4.row1"]
    cex = row1.run().verdict.counterexample
    assert cex.sizes == {"m": 3, "n": 1}  # m = 3: the row prints three explicit terms
    assert set(cex.values.values()) <= {0, 1} and sum(cex.values.values()) == 2
    assert cex.exact_recheck == "exact: 0 ≠ 1"


# ---------------------------------------------------------------------------------------------
# hypotheses the proof does not need; one rule for a wrong printed part
# ---------------------------------------------------------------------------------------------


def test_p5_bottom_line_says_square_is_not_needed(claims):
    cv = _roll(claims["P5"])
    assert [u["tag"] for u in cv.unneeded] == ["square"] and "main[conf]" in cv.unneeded[0]["keys"]
    assert "the square hypothesis is not needed" in cv.bottom_line
    h4 = _roll(claims["H4"])  # an agreeing alternative beside a failing claim: no hypothesis dropped
    assert h4.verdict == "fails" and not h4.unneeded


def test_a_wrong_gloss_and_a_wrong_step_get_the_same_mark(claims):
    h8, h2 = _roll(claims["H8"]), _roll(claims["H2"])
    assert h8.wrong_glosses and h2.failing_step_names
    assert display_word(h8) == display_word(h2) == "holds-steps-wrong"
    plain = ClaimVerdict("Z", "t", "holds", "proved")
    assert display_word(plain) == "holds"  # the control: nothing wrong, plain ✔


def test_extensions_among_the_papers_claims_are_outside_the_papers_table(claims):
    vs = [_roll(claims[c]) for c in ("lemma", "M1", "H7", "H3")]
    table = report.verdict_table(vs, width=200).splitlines()
    heading = next(i for i, line in enumerate(table) if line.startswith("symuat's extensions"))
    ids = [line.split()[0] for line in table[:heading] if line[:1].isalnum() and not line.startswith(("ID", "Counted"))]
    assert [i for i in ids if i in ("lemma", "M1", "H7", "H3")] == ["M1", "H3"]
    after = [line.split()[0] for line in table[heading:] if line[:1].isalnum()]
    assert "lemma" in after and "H7" in after


def test_claim_verdicts_carry_the_new_fields(claims):
    from symuat.kernel.registry import REGISTRY

    cvs = claim_verdicts([c.run() for c in claims["D4"].checks], REGISTRY)
    d = cvs[0].as_dict()
    assert d["grounds"] == ["D4.size", "D4.row1", "D4.rows[row2]", "D4.rows[rown]"]


def test_the_claim_page_names_what_coq_certified(claims, certify_record):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "_ext"))
    docs_ext = pytest.importorskip("symuat_claims", reason="Sphinx (the docs extra) is not installed")
    d4, p1 = _roll(claims["D4"]), _roll(claims["P1"])
    certify_record(["D4.rows[row2]", "D4.rows[rown]", "P1"])
    d4_page, p1_page = "\n".join(docs_ext.bottom_line(d4)), "\n".join(docs_ext.bottom_line(p1))
    assert "Coq certified 2 of 4 checks of the bottom line" in d4_page and "certified: coq" not in d4_page
    assert ":badge:`certified: coq` the whole bottom line" in p1_page
    a6, p5, h8 = (docs_ext.bottom_line(_roll(claims[c])) for c in ("A6", "P5", "H8"))
    assert any("its checked parts ``weights``, ``biases`` hold" in line for line in a6)
    assert any("``square`` hypothesis is not needed" in line for line in p5)
    assert any("the gloss the paper puts on them is wrong: ``cov``" in line for line in h8)
