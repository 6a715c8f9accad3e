"""Pieces of the docs that need no build: dependency edges the registry records, prose → reST
(math in notes and titles, claim references as links), the dependency graph's SVG."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from symuat.kernel import decide
from symuat.kernel.registry import Registry

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "_ext"))
docs_ext = pytest.importorskip("symuat_claims", reason="Sphinx (the docs extra) is not installed")


def _registry():
    reg = Registry()
    base = reg.claim("B1", "base", where="-", statement="x=x", group="one")
    base.check("y", None, "x=x", lambda: decide.informal("a base fact"))
    top = reg.claim("T1", "top", where="-", statement="x=x", group="two")
    top.check("z", None, "x=x", lambda: reg.verdict("B1.y"))
    top.check("w", None, "x=x", lambda: decide.informal("rests on nothing"))
    return reg


def test_edges_are_recorded_when_a_procedure_asks_for_a_verdict():
    reg = _registry()
    for c in reg.all_checks():
        c.run()
    assert reg.edges == {"T1.z": {"B1.y"}}
    assert reg.claim_edges() == {"T1": {"B1"}}
    # asked from outside any check: no edge
    reg.verdict("B1.y")
    assert reg.edges == {"T1.z": {"B1.y"}}


def test_edge_recorded_even_when_the_verdict_was_already_memoised():
    reg = _registry()
    reg.all_checks()[0].run()          # B1.y first
    reg.all_checks()[1].run()          # T1.z asks for the memoised verdict
    assert reg.claim_edges() == {"T1": {"B1"}}


def test_prose_becomes_math_code_and_links():
    docs_ext._CLAIM_IDS.clear()
    docs_ext._CLAIM_IDS.update({"H5", "P5"})
    out = docs_ext.rich("rests on H5.exist; $x_i$ and `code_name`, W'_HV and b'_{j,2}; H5x stays")
    assert ":ref:`H5.exist <claim-H5>`" in out
    assert ":math:`x_i`" in out and "``code_name``" in out
    assert ":math:`W'_{HV}`" in out and ":math:`b'_{j,2}`" in out
    assert "H5x" in out and "claim-H5>`\\ x" not in out
    # no stray underscores or dollars survive outside roles
    plain = docs_ext.rich("a_b is text, cost $5")
    assert "$" not in plain.replace("\\$", "") or ":math:" in plain
    # the legends' prose: a braced subscript followed by a letter, a Δ in front, a superscript too
    out = docs_ext.rich("the absorption W'_{j,2} ← W'_{j,2}W'_{j,1}; ΔW_{L+1,·} := 0; in front of UAT^R_i",
                        links=False)
    assert ":math:`W'_{j,2}`" in out and ":math:`W'_{j,2}W'_{j,1}`" in out  # a product is one formula
    assert ":math:`ΔW_{L+1,·}`" in out and ":math:`\\mathrm{UAT}^{R}_{i}`" in out
    # issue 36: TeX written into prose without $…$ is typeset, never left as source; prose about a
    # TeX command names it as code; a TeX fragment MathJax could not typeset falls back to Unicode
    out = docs_ext.rich(r"holds and \left|{f - S}\right| < \varepsilon fails; lift W^{T} \otimes I; "
                        r"upper bound \min\left(d, d_k\right); the \frac numerator; bad \left(x", links=False)
    assert ":math:`\\left|{f - S}\\right| < \\varepsilon`" in out and ":math:`W^{T} \\otimes`" in out
    assert ":math:`\\min\\left(d, d_k\\right)`" in out and "``\\frac``" in out
    assert "bad (x" in out and "\\left(x" not in out


def test_graph_has_one_linked_node_per_claim_and_an_arrow_per_edge():
    reg = _registry()
    for c in reg.all_checks():
        c.run()
    from symuat.verdicts.roll_up import claim_verdicts

    results = [c.run() for c in reg.all_checks()]
    verdicts = {cv.id: cv for cv in claim_verdicts(results, reg)}
    sections = docs_ext._sections(reg.ordered_claims())
    svg = docs_ext.dependency_svg(sections, verdicts, reg.claim_edges(), lambda cid: f"{cid}.html")
    assert svg.count('<a href="') == 2 and 'href="T1.html"' in svg
    assert svg.count('class="edge"') == 1
