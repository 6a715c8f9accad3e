"""The Coq terms symuat writes and the library's one unfold list are kept in step.

Every node kind the exporter writes declares, in one table (:data:`symuat.certify.coq_terms.NODES`),
the library definitions its Coq term is built with; the library unfolds node definitions in one
place only, the Ltac ``symuat_unfold_nodes`` (``coq/SymuatMx.v``), which every tactic calls. A
definition the table names and the Ltac does not unfold (a proof would be stuck at the folded
constant), one the Ltac names without a writer, one the library does not define, or a second hand
kept ``unfold`` list of node definitions anywhere in ``coq/*.v`` fails :func:`unfold_problems`; the
planted variants below show each is caught. No Coq is run here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sympy import MatrixSymbol, symbols

from symuat.certify import coq_terms
from symuat.certify.coq_terms import Ctx, Unsupported, definitions, term
from symuat.certify.record import COQ_DIR
from symuat.expr.diamond import Diamond

LTAC = "symuat_unfold_nodes"


def code(text: str) -> str:
    """A Coq text with its comments blanked (the lines kept)."""
    return re.sub(r"\(\*.*?\*\)", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def unfold_clauses(text: str) -> list[tuple[int, list[str]]]:
    """(line, names) of every ``unfold a, b, …`` of a Coq text (not in a comment; ``eval unfold`` too)."""
    code_ = code(text)
    out = []
    for m in re.finditer(r"\bunfold\s+([\w', \n]+?)\s*(?=[;.)]|\bin\b)", code_):
        names = [n.strip() for n in m.group(1).replace("\n", " ").split(",") if n.strip()]
        out.append((code_.count("\n", 0, m.start()) + 1, names))
    return out


def unfold_problems(library: dict[str, str], table: list[str]) -> list[str]:
    """What breaks the one unfold list: ``library`` maps a ``.v`` file's name to its text, ``table`` is
    the node definitions symuat writes terms with."""
    problems = []
    ltacs = []
    for name, text in sorted(library.items()):
        m = re.search(rf"^Ltac {LTAC} :=\s*unfold\s+([^.]*)\.", text, re.M)
        if m:
            ltacs.append((name, [n.strip() for n in m.group(1).split(",")]))
    if len(ltacs) != 1:
        return [f"Ltac {LTAC} is defined {len(ltacs)} times in the library (once wanted)"]
    home, listed = ltacs[0]
    problems += [f"{d}: written by symuat (coq_terms.NODES) but not unfolded by {LTAC}" for d in table
                 if d not in listed]
    problems += [f"{d}: unfolded by {LTAC} but no node is written with it (coq_terms.NODES)" for d in listed
                 if d not in table]
    defined = set(re.findall(r"^Definition\s+(\w+)", library[home], re.M))
    problems += [f"{d}: no Definition of it in {home}" for d in listed if d not in defined]
    for name, text in sorted(library.items()):
        for line, names in unfold_clauses(text):
            nodes = [n for n in names if n in table or n in listed]
            if nodes and not (name == home and names == listed):
                problems.append(f"{name}:{line}: an unfold list of node definitions ({', '.join(nodes)}) "
                                f"besides {LTAC}: call {LTAC}")
    return problems


def _library() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(COQ_DIR.glob("*.v"))}


def test_the_library_unfolds_exactly_the_definitions_symuat_writes_and_in_one_place():
    assert unfold_problems(_library(), definitions()) == []


def test_every_tactic_that_reaches_the_entries_calls_the_one_list():
    calls = {name: len(re.findall(rf"\b{LTAC}\b", code(text))) for name, text in _library().items()}
    # its definition, and the callers: symuat_entry (twice), symuat_nf, symuat_unfold (counts),
    # symuat_witness and symuat_refute
    assert calls["SymuatMx.v"] == 1 and calls["SymuatTac.v"] == 3 and calls["SymuatCount.v"] == 1 \
        and calls["SymuatWitness.v"] == 2


def test_a_definition_missing_from_the_list_is_caught():
    lib = _library()
    lib["SymuatMx.v"] = lib["SymuatMx.v"].replace(", hadamard,", ",", 1)
    assert unfold_problems(lib, definitions()) == [
        "hadamard: written by symuat (coq_terms.NODES) but not unfolded by symuat_unfold_nodes"]


def test_a_node_written_with_a_definition_the_list_lacks_is_caught():
    assert unfold_problems(_library(), definitions() + ["softcap"]) == [
        "softcap: written by symuat (coq_terms.NODES) but not unfolded by symuat_unfold_nodes"]


def test_a_listed_definition_with_no_writer_or_no_definition_is_caught():
    lib = _library()
    lib["SymuatMx.v"] = lib["SymuatMx.v"].replace("shift, conv.", "shift, conv, unvec_r, softcap.", 1)
    assert unfold_problems(lib, definitions()) == [
        "unvec_r: unfolded by symuat_unfold_nodes but no node is written with it (coq_terms.NODES)",
        "softcap: unfolded by symuat_unfold_nodes but no node is written with it (coq_terms.NODES)",
        "softcap: no Definition of it in SymuatMx.v"]


def test_a_second_hand_kept_unfold_list_is_caught():
    lib = _library()
    lib["SymuatWitness.v"] = lib["SymuatWitness.v"].replace(
        "repeat progress symuat_unfold_nodes;", "repeat progress (unfold mul, tr, diamond, conv);", 1)
    problems = unfold_problems(lib, definitions())
    assert len(problems) == 1 and problems[0].startswith("SymuatWitness.v:") \
        and "(mul, tr, diamond, conv) besides symuat_unfold_nodes" in problems[0]


def test_every_node_kind_writes_a_term_and_an_unknown_one_is_unsupported():
    m, n = symbols("m n", positive=True, integer=True)
    W, x = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)
    ctx = Ctx()
    assert term(Diamond(W, x), ctx) == "(diamond W x)"
    assert coq_terms.NODES["Diamond"].definitions == ("diamond", "diamond_vm", "diamond_prod")
    from sympy import HadamardPower

    with pytest.raises(Unsupported, match="no Coq definition for HadamardPower"):
        term(HadamardPower(W, 2), ctx)


def test_a_leaf_named_like_a_node_definition_is_renamed():
    assert {d: coq_terms.ident(d) for d in ("hadamard", "conv", "W")} == {
        "hadamard": "hadamard_", "conv": "conv_", "W": "W"}


def test_the_unfold_parser_reads_a_list_over_lines_and_skips_comments():
    text = "(* unfold mul, tr. *)\nLtac t :=\n  unfold mul,\n    tr; cbn.\nGoal True. let t := eval unfold c in c in idtac.\n"
    assert unfold_clauses(text) == [(3, ["mul", "tr"]), (5, ["c"])]
    assert Path(COQ_DIR / "SymuatMx.v").is_file()
