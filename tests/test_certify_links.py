"""A claim page's Coq derivation links every lemma it names to the lemma's statement.

The certified-proof lines ("left side: sum_distrl → … ⟶ symuat's normal form ⟵ …; hence equal
(meq_via_nf)") name the library lemmas the accepted proof term applies. Each of symuat's own names
links to ``../coq/Symuat.<file>.html#name``: the library rendered by ``coqdoc``, or, without it,
highlighted copies of the sources (``plain_library_pages``). These tests build those pages and
check, without a browser, that every name a derivation line can use lands on an existing anchor:
the lemmas the proof terms are probed for, the normal-form step, and the depth theorems.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "_ext"))
docs_ext = pytest.importorskip("symuat_claims", reason="Sphinx (the docs extra) is not installed")


def names_a_derivation_can_use() -> set[str]:
    """Every name a certificate line can show: the probed lemmas (:func:`probed_lemmas`, the
    chains' contents), the normal-form step, the depth theorems and their library step."""
    from symuat.certify.depth import THEOREMS
    from symuat.certify.normal_form import probed_lemmas

    return (set(probed_lemmas()) | {"meq_via_nf", "one_layer_step_holds"}
            | {t.library for t in THEOREMS.values()}
            | {t.own_proof.strip("()@").split()[0] for t in THEOREMS.values() if t.own_proof})


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))


def _derivation_hrefs(links: dict[str, str], names) -> list[tuple[str, str]]:
    """The links the claim page's derivation lines carry for ``names`` (a record naming them all)."""
    cert = {"theorems": ["t_nf", "t_direct"], "proofs": {
        "t_nf": {"proof": "normal form", "chain": {"lhs": sorted(names), "step": "meq_via_nf", "rhs": []}},
        "t_direct": {"proof": "certificate", "chain": {"direct": sorted(names)}}}}
    saved = dict(docs_ext._COQ_LINKS)
    docs_ext._COQ_LINKS.clear()
    docs_ext._COQ_LINKS.update(links)
    try:
        text = "\n".join(docs_ext._coq_derivation(cert))
    finally:
        docs_ext._COQ_LINKS.clear()
        docs_ext._COQ_LINKS.update(saved)
    return re.findall(r"<\.\./coq/([^#>]+)#([^>]+)>`__", text)


def _assert_every_name_lands(target: Path, links: dict[str, str]):
    names = names_a_derivation_can_use()
    unlinked = sorted(n for n in names if n not in links and n not in docs_ext._COQ_FOREIGN)
    assert unlinked == [], f"names a derivation can show with no statement to link to: {unlinked}"
    hrefs = _derivation_hrefs(links, names)
    assert {a for _, a in hrefs} == {n for n in names if n in links}
    for page, anchor in hrefs:
        assert (target / page).is_file(), f"../coq/{page} does not exist"
        assert anchor in _anchors(target / page), f"../coq/{page}#{anchor}: no such anchor"


def test_without_coqdoc_every_lemma_a_derivation_names_links_to_its_line_in_the_source(tmp_path, monkeypatch):
    from symuat.certify.record import COQ_DIR
    from symuat.certify.run import LIBRARY

    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path / "no-record"))  # no compiled library: the fallback
    links = docs_ext.coq_library_pages(tmp_path)
    assert sorted(p.name for p in (tmp_path / "coq").glob("*.html")) == sorted(
        f"Symuat.{Path(n).stem}.html" for n in LIBRARY)
    _assert_every_name_lands(tmp_path / "coq", links)
    # the anchor is the declaration's own line
    tac = (tmp_path / "coq" / "Symuat.SymuatTac.html").read_text(encoding="utf-8")
    line = re.search(r'<span class="line" id="sum_delta_l">.*?</span>\s*(?=<span class="line")', tac, re.S).group(0)
    assert "sum_delta_l" in re.sub(r"<[^>]+>", "", line) and "Lemma" in re.sub(r"<[^>]+>", "", line)
    assert (COQ_DIR / "SymuatTac.v").read_text().count("Lemma sum_delta_l ") == 1


def test_a_name_the_library_does_not_declare_is_caught(tmp_path, monkeypatch):
    """The check above can fail: a library without ``sum_delta_l`` leaves it unlinked."""
    from symuat.certify.record import COQ_DIR
    from symuat.certify.run import LIBRARY

    src = tmp_path / "src"
    src.mkdir()
    for name in LIBRARY:
        text = (COQ_DIR / name).read_text(encoding="utf-8")
        (src / name).write_text(text.replace("Lemma sum_delta_l ", "Lemma sum_delta_left "), encoding="utf-8")
    links = docs_ext.plain_library_pages(sorted(src.glob("*.v")), tmp_path / "coq")
    with pytest.raises(AssertionError, match="sum_delta_l"):
        _assert_every_name_lands(tmp_path / "coq", links)


def test_with_coqdoc_every_lemma_a_derivation_names_links_to_its_statement(coq_lib, tmp_path, monkeypatch):
    """The compiled library (with its ``.glob`` files) rendered by ``coqdoc``, as the docs build
    does when a certify record and coqdoc are there."""
    import shutil

    if shutil.which("coqdoc") is None:
        pytest.skip("coqdoc not installed (the docs then ship the plain pages, tested above)")
    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(coq_lib))
    links = docs_ext.coq_library_pages(tmp_path)
    assert (tmp_path / "coq" / "coqdoc.css").is_file()  # coqdoc's pages, not the fallback
    _assert_every_name_lands(tmp_path / "coq", links)


def test_each_certified_theorem_shows_the_statement_coq_checked(tmp_path, monkeypatch):
    """Under each theorem's derivation, its statement as the record's files state it (read from
    ``theories/*.v``): for M1.pic, the picture's flat positions."""
    import json

    from symuat.certify import record as rec
    from symuat.certify.export import batch_file
    from symuat.certify.kinds import export_certificates
    from symuat.certify.run import capture
    import symuat.claims  # noqa: F401  (registration)
    from symuat.kernel.registry import REGISTRY

    (check,) = [c for c in REGISTRY.all_checks() if c.key == "M1.pic[row,dia]"]
    kept: dict = {}
    (verdict, _), = capture([check], kept).values()
    theorems = export_certificates("pic", verdict, kept[check.key])
    (tmp_path / "theories").mkdir()
    (tmp_path / "theories" / "batch0.v").write_text(batch_file(theorems)[0])
    (tmp_path / "record.json").write_text(json.dumps({"fingerprint": rec.fingerprint(), "checks": {}}))
    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path))
    rec.load.cache_clear()
    try:
        statements = docs_ext.coq_statements()
    finally:
        rec.load.cache_clear()
    assert statements == {t.name: t.statement for t in theorems}
    monkeypatch.setattr(docs_ext, "_COQ_STATEMENTS", statements)
    monkeypatch.setattr(docs_ext, "_COQ_LINKS", docs_ext.plain_library_pages(
        [rec.COQ_DIR / "SymuatMx.v", rec.COQ_DIR / "SymuatFlat.v"], tmp_path / "coq"))
    cert = {"theorems": [t.name for t in theorems],
            "proofs": {t.name: {"proof": "certificate", "chain": {"direct": ["fpos_front", "ring"]}} for t in theorems}}
    text = "\n".join(docs_ext._coq_derivation(cert))
    assert text.count(".. fold:: the statement Coq checked") == 3
    assert "        forall p : nat, flatm_at (tr (kron W (idm [:: M]))) p 1%N = printed_col M 1%N" in text
    # the statement's vocabulary links to the library: the flat positions and the picture's column
    assert ("     Its terms, defined in the library: `mx <../coq/Symuat.SymuatMx.html#mx>`__, "
            "`flatm_at <../coq/Symuat.SymuatFlat.html#flatm_at>`__, `tr <../coq/Symuat.SymuatMx.html#tr>`__") in text
    assert "`printed_col <../coq/Symuat.SymuatFlat.html#printed_col>`__" in text


def test_a_shared_or_linked_refutation_says_whose_theorem_certifies_it():
    """T8's readings share one theorem per statement, T7.exact's are stated through T3.1: the page
    of a check certified so names the check whose theorem it is."""
    cert = {"theorems": ["rc_T8_a"], "proofs": {"rc_T8_a": {"proof": "certificate", "chain": {"direct": []}}},
            "same_statement": "T8[a]", "link": None}
    text = "\n".join(docs_ext._coq_derivation(cert))
    assert "the same theorem as the refutation of ``T8[a]``" in text
    text = "\n".join(docs_ext._coq_derivation(dict(cert, same_statement=None, link="T3.1[B-both,W1=mha]")))
    assert "Refuted through ``T3.1[B-both,W1=mha]``" in text and "same theorem" not in text


def test_a_check_whose_verdict_is_another_checks_is_certified_through_it():
    """A6.biases is L2.9[b'_{2,2}]'s verdict (REGISTRY.verdict): it records no certificate of its
    own, and the tier certifies it through that check's dependence theorem; a check that computes
    its own verdict is not linked."""
    import symuat.claims  # noqa: F401
    from symuat.certify.run import capture, reused_verdict
    from symuat.kernel.registry import REGISTRY

    keys = ("A6.biases", "L2.9[b'_{2,2}]", "L2.9[b'_{3,2}]")
    certificates: dict = {}
    captured = capture([c for c in REGISTRY.all_checks() if c.key in keys], certificates)
    assert not certificates.get("A6.biases") and certificates.get("L2.9[b'_{2,2}]")
    assert reused_verdict("A6.biases", captured["A6.biases"][0], captured) == "L2.9[b'_{2,2}]"
    assert reused_verdict("L2.9[b'_{3,2}]", captured["L2.9[b'_{3,2}]"][0], captured) is None
