"""The bottom line per claim (symuat.verdicts.roll_up) and `symuat report`: the roll-up rule on a small
registry of its own, the catalogue's negated claims, quantities and reading-dependent claims per
claim group, mutants that flip one check and so the bottom line, the totals line against the
JSON, and every statement a relation."""

import json
import re

import pytest
from sympy import MatrixSymbol, symbols

from symuat import cli
from symuat.render import report
from symuat.expr.algebra import T
from symuat.kernel import decide
from symuat.kernel.registry import Registry, Result
from symuat.verdicts.headline import headline
from symuat.verdicts.roll_up import VERDICTS, agrees_with_paper, claim_verdicts, roll_up

n = symbols("n", integer=True, positive=True)
A = MatrixSymbol("A", n, n)
TRUE = lambda: decide.check_identity(A, A)  # proved
FALSE = lambda: decide.check_identity(A, T(A))  # refuted, with a counterexample


def _roll(claim):
    return roll_up(claim, [c.run() for c in claim.checks])


# --------------------------------------------------------------------------------------------
# the rule, on a registry of its own
# --------------------------------------------------------------------------------------------


def test_rule_readings_are_full_combinations():
    reg = Registry()
    c = reg.claim("Z1", "t", where="-", statement="-", group="-")
    c.check("exist", ("col", "split"), "a=a", TRUE)
    c.check("exist", ("row", "split"), "a=a", TRUE)
    c.check("density", ("bidir",), "d=1", TRUE, role="quantity", paper_says="dense")
    c.check("density", ("causal",), "d=1", FALSE, role="quantity", paper_says="dense")
    v = _roll(c)
    assert v.verdict == "holds-under-readings"
    assert v.readings_that_hold == ["col,split,bidir", "row,split,bidir"]
    assert v.readings_that_fail == ["col,split,causal", "row,split,causal"]
    assert v.quantities[1]["paper_says"] == "dense" and v.quantities[1]["agrees_with_paper"] is False


def test_rule_negated_claim_and_chain_steps():
    reg = Registry()
    c = reg.claim("Z2", "t", where="-", statement="-", group="-")
    c.check("lin", None, "f(x+y)=f(x)+f(y)", FALSE, polarity="denies")
    c.check("end", ("C-col",), "a=b", TRUE)
    c.check("end", ("C-prod",), "a=b", FALSE)
    c.check("f", ("C-col",), "a=b", FALSE, role="step")
    c.check("f", ("C-prod",), "a=b", TRUE, role="step")
    c.check("g", None, "a=b", TRUE, role="step")
    c.check("alt", ("C-col",), "a=b", FALSE, admitted=False)
    v = _roll(c)
    assert v.verdict == "holds-under-readings" and v.readings_that_hold == ["C-col"]
    assert v.failing_steps == ["Z2.f[C-col]"] and v.failing_step_names == ["f"]
    assert v.other_readings == {"Z2.alt[C-col]": False}
    assert "steps" not in v.bottom_line and "step f wrong" in v.bottom_line


def test_rule_definitions_informal_and_extensions():
    reg = Registry()
    d = reg.claim("Z3", "t", where="-", statement="-", group="-")
    d.check(None, None, "a:=b", lambda: decide.define(A), polarity=None)
    assert _roll(d).verdict == "definition"
    e = reg.claim("Z4", "t", where="-", statement="-", group="-")
    e.check(None, ("pre",), "a=b", FALSE, polarity=None, role="extension")
    e.check(None, ("post",), "a=b", TRUE, polarity=None, role="extension")
    v = _roll(e)
    assert v.extension and v.verdict == "holds-under-readings" and v.readings_that_hold == ["post"]
    assert agrees_with_paper(e.checks[0], e.checks[0].run().verdict) is None


def test_a_mutant_that_flips_one_check_flips_the_bottom_line():
    reg = Registry()
    c = reg.claim("Z5", "t", where="-", statement="-", group="-")
    c.check(None, ("col",), "a=a", TRUE)
    c.check(None, ("row",), "a=a", TRUE)
    results = [x.run() for x in c.checks]
    assert roll_up(c, results).verdict == "holds"
    refuted = FALSE()
    mutant = [results[0], Result(results[1].check, refuted, 0.0)]
    assert roll_up(c, mutant).verdict == "holds-under-readings"
    assert roll_up(c, [Result(r.check, refuted, 0.0) for r in results]).verdict == "fails"


# --------------------------------------------------------------------------------------------
# the catalogue
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verdicts(all_results, registry):
    return {v.id: v for v in claim_verdicts(list(all_results.values()), registry)}


@pytest.mark.parametrize("claim, verdict, detail", [
    # diamond: negated claims, reading-dependent chains
    ("P3", "holds", None),                      # "not associative": the negation is proved
    ("P4", "fails", "W"),                       # "not distributive": it is distributive
    ("P5", "holds-under-readings", ["C-col,LR,square,W12x"]),
    ("D4", "fails", "size"),                    # the stated size (m,1) of W ⋄ x
    # linear: a denied identity (mixed flattenings), a quantity read two ways
    ("M4", "holds", None),
    ("M2", "holds-under-readings", ["nnz-frac,col", "nnz-frac,row"]),
    # attention: MHA is not linear (a refutation agrees); W'_HVi's density against "dense" (H1)
    ("H9", "holds", None),
    ("H2", "holds", None),                      # density of W'_HV: a value symuat reports (not a paper claim)
    ("H1", "holds-under-readings", ["col,bidir", "row,bidir"]),
    # lemmas: D3's constant MHA lift is denied; Lemma 2 holds as a DUAT form
    ("D3", "holds", None),
    ("L2", "holds-under-readings", ["D6"]),
    # transformer: readings of the block and the index
    ("T3", "holds-under-readings", ["B-both,W1=id+mha", "B-ffn,W1=mha"]),
    ("T11", "fails", "j - 1"),
])
def test_catalogue_bottom_lines(verdicts, claim, verdict, detail):
    v = verdicts[claim]
    assert v.verdict == verdict, v.as_dict()
    if isinstance(detail, list):
        assert v.readings_that_hold == detail
    elif detail:
        assert detail in (v.corrected or "") + " ".join(v.failing_items)


def test_chains_list_their_wrong_steps(verdicts):
    assert verdicts["P5"].failing_step_names[:2] == ["f", "g"]
    assert verdicts["P6"].failing_step_names == ["e", "f"]
    assert "5[i=1]" in verdicts["L2"].failing_step_names


def test_mutants_in_the_catalogue_flip_the_bottom_line(all_results, registry):
    results = dict(all_results)
    refuted = results["P5.f[C-col,LR,square]"].verdict
    proved = results["P1"].verdict
    flips = {  # key → the verdict put in its place
        "P1": refuted,                           # holds → fails
        "H9.lin": proved,                        # MHA linear: the paper's negation now fails
        "P5.end[C-col,LR,square]": refuted,      # the only holding reading of P5 goes
        "H1.dense[causal]": proved,              # W'_HVi dense under the causal mask too: H1 holds
    }
    before = {v.id: v.verdict for v in claim_verdicts(list(results.values()), registry)}
    for key, verdict in flips.items():
        mutant = dict(results)
        mutant[key] = Result(results[key].check, verdict, 0.0)
        after = {v.id: v.verdict for v in claim_verdicts(list(mutant.values()), registry)}
        claim = key.split(".")[0].split("[")[0]
        assert after[claim] != before[claim], key
        assert {k: w for k, w in after.items() if k != claim} == {k: w for k, w in before.items() if k != claim}


def test_every_claim_has_a_bottom_line_and_the_totals_match_the_json(verdicts, registry):
    assert set(verdicts) == set(registry.claims)
    document = json.loads(report.verdicts_json(list(verdicts.values())))
    data = document["claims"]
    assert document["headline"]["lines"] == [t for t in headline(list(verdicts.values())).lines() if t]
    assert all({"id", "title", "verdict", "strength", "readings_that_hold", "readings_that_fail",
                "failing_steps", "corrected", "checks", "extension", "errors"} <= set(d) for d in data)
    assert all(d["verdict"] in VERDICTS for d in data)
    line = headline(list(verdicts.values())).lines()[0]  # the one headline (symuat.verdicts.headline)
    held, some, failed = map(int, re.match(r"(\d+) claims? holds?(?: \(\d+ with a wrong printed step or gloss\))?, "
                                           r"(\d+) only under some readings, (\d+) fails?", line).groups())
    paper = [d for d in data if not d["extension"]]
    assert held == sum(d["verdict"] == "holds" for d in paper)
    assert some == sum(d["verdict"] == "holds-under-readings" for d in paper)
    assert failed == sum(d["verdict"] == "fails" for d in paper)


def test_every_prove_record_says_how_it_bears_on_the_paper(all_results):
    for key, r in all_results.items():
        rec = report.record(r)
        assert rec.get("extension") is True or rec["agrees_with_paper"] in (True, False, None), key
    assert report.record(all_results["H9.lin"])["agrees_with_paper"] is True
    assert report.record(all_results["M4[col,row]"])["agrees_with_paper"] is True
    assert report.record(all_results["H7[row,bidir]"])["extension"] is True


_RELATION = re.compile(r"(:=|=|\\neq(?![A-Za-z])|\\ne(?![A-Za-z])|\\leq?(?![A-Za-z])|\\geq?(?![A-Za-z])|<|>"
                       r"|\\in(?![A-Za-z])|\\notin|\\mapsto|\\approx|\\subseteq|\\equiv)")


def test_every_statement_is_a_relation(registry):
    """No placeholder: outside \\text{…}, every statement relates two things (=, ≠, ≤, ∈, …)."""
    for c in registry.all_checks():
        if c.statement.startswith(r"\text{“"):  # the paper's prose, quoted (an informal item)
            continue
        formula = re.sub(r"\\text(tt)?\{[^{}]*\}", "", c.statement)
        assert _RELATION.search(formula), f"{c.key}: {c.statement!r}"
        assert "step " not in c.statement, f"{c.key}: placeholder {c.statement!r}"


def test_report_cli_formats(capsys):
    assert cli.main(["report", "P1", "P4", "M4"]) == 0
    out = capsys.readouterr().out
    assert " hold" in out.splitlines()[0] and "only under some readings" in out.splitlines()[0]
    assert all(len(line) <= 100 for line in out.splitlines())
    assert "P4" in out and "correction" in out
    assert cli.main(["report", "P1", "P4", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data["claims"]] == ["P1", "P4"] and data["claims"][1]["verdict"] == "fails"
    # the headline object: the counts of the table's first lines (one computation)
    assert (data["headline"]["holds"], data["headline"]["fails"]) == (1, 1)
    assert cli.main(["report", "P1", "P4"]) == 0
    assert data["headline"]["lines"][0] == capsys.readouterr().out.splitlines()[0]
    assert cli.main(["report", "P1", "--format", "markdown"]) == 0
    assert "| P1 |" in capsys.readouterr().out
    assert cli.main(["report", "P1", "--format", "latex"]) == 0
    assert r"\begin{longtable}" in capsys.readouterr().out


def test_prove_streams_wraps_and_selects_partial_readings(capsys):
    assert cli.main(["prove", "P5.f[C-col]"]) == 0
    out = capsys.readouterr().out
    assert "P5.f[C-col,LR,square]" in out and "C-prod" not in out
    assert all(len(line) <= 100 for line in out.splitlines())
    assert "4 checks" in out and "differs" in out
    assert cli.main(["prove", "P5.f[C-xx]"]) == 2
    assert "valid readings: C-col,LR,conf" in capsys.readouterr().err
    assert cli.main(["prove", "T8[eq30,W1rhs=raw,unprimed=acc,abs=all,W3=all,W2in34=layer,W3in34=stage,"
                     "b3in34=acc]"]) == 0
    assert all(len(line) <= 100 for line in capsys.readouterr().out.splitlines())
    assert cli.main(["list"]) == 0
    assert "1 checks" not in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("symuat ")


def test_pretty_prints_statements_in_unicode():
    assert report.pretty(r"\mathbf W\diamond\mathbf x=\mathbf W^{T}\mathbf x") == "W⋄x=Wᵀx"
    assert report.pretty(r"\operatorname{density}(W'_{HV})=1") == "density(W'_(HV))=1"
    assert "\\" not in report.pretty(r"\exists\mathbf W'\ (\texttt{const}):\ MHA(\mathbf x)'=\mathbf W'\mathbf x'")


def test_quantities_show_symuats_value_beside_the_paper(verdicts):
    q = {x["key"]: x for x in verdicts["H1"].quantities}
    assert q["H1.dense[causal]"]["paper_says"] == "dense"
    assert q["H1.dense[causal]"]["symuat"] == r"\operatorname{density}\,\mathbf W'_{HVi} = (N + 1)/(2*N)"  # names its object (issue 19)
    assert q["H1.dense[causal]"]["agrees_with_paper"] is False
    q = {x["key"]: x for x in verdicts["H2"].quantities}  # a value the papers do not state
    assert q["H2.density[bidir]"]["symuat"] == r"\operatorname{density}\,\mathbf W'_{HV} = 1/h"
    assert q["H2.density[bidir]"]["agrees_with_paper"] is None
    assert verdicts["T11"].quantities[0]["agrees_with_paper"] is False
    dep = {x["key"]: x for x in verdicts["L2"].quantities}
    assert dep["L2.9[b'_{2,2}]"]["agrees_with_paper"] is True
    assert dep["L2.9[b'_{2,2}]"]["paper_says"] == "depends on the input"
