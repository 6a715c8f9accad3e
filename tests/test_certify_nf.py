"""Proofs replayed from symuat's normal form (symuat.certify.normal_form): the certificate is checked.

An exported identity is proved through the normal form symuat computed for it
(``meq_via_nf NF``: each side equals NF, by the tactic). The certificate must matter: a wrong
normal form (a dropped delta, a wrong coefficient, swapped indices) given for a true identity
must make Coq reject the proof, and the true one must pass. A statement symuat refutes, given
the normal form of its left side, is rejected too. Needs ``coqc`` with MathComp; skips without
it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import subprocess

import pytest
import sympy as sp
from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import kron
from symuat.certify.export import coq_file, export_identity
from symuat.certify.normal_form import entry_nf
from symuat.certify.run import chains_of
from symuat.expr.diamond import Diamond
from symuat.kernel.decide import check_identity

n, m = sp.symbols("n m", positive=True, integer=True)
A, W, x = MatrixSymbol("A", n, n), MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)

#: (name, lhs, rhs): true identities whose normal forms have a delta, a coefficient, two indices
KRON_T = (kron(Identity(n), A).T, kron(Identity(n), A.T))      # δ_{i0 j0} A_{j1 i1}
DOUBLE = (Diamond(W, x) + W.T * x, 2 * (W.T * x))               # 2 · Σ_k W_{k i} x_k (SymPy: 2Wᵀx both)


def _drop_delta(key):
    return tuple((c, tuple(f for f in fs if f[0] != "D"), b) for c, fs, b in key)


def _coeff(k):
    return lambda key: tuple((k, fs, b) for _, fs, b in key)


def _swap(key):  # A_{j1 i1} → A_{i1 j1}
    return tuple((c, tuple(("E", f[1], f[3], f[2]) if f[0] == "E" else f for f in fs), b)
                 for c, fs, b in key)


def _compiles(lib, theorem) -> bool:
    path = lib / "theories" / f"{theorem.name}.v"
    path.parent.mkdir(exist_ok=True)
    path.write_text(coq_file([theorem]))
    proc = subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib / "lib"), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=600, cwd=path.parent)
    return proc.returncode == 0


def test_the_certificate_is_symuats_normal_form():
    t = export_identity("nf_kron_t", *KRON_T)
    assert t.proof_kind == "normal form" and "meq_via_nf" in t.proof
    assert "Lemma nf_kron_t_lhs" in t.sides and "symuat_nf" in t.sides and t.normal_form in t.sides
    assert "delta i0 j0" in t.normal_form and "A (j1, tt) (i1, tt)" in t.normal_form
    nf2 = export_identity("nf_double", *DOUBLE).normal_form  # coefficient 2: the term twice
    assert nf2.count("\\sum_(k0 < m)") == 2
    # the statement is the one the direct proof states (byte-identical)
    assert t.statement == export_identity("nf_kron_t", *KRON_T, proof="symuat_entry.").statement


@pytest.mark.parametrize("case,identity,wrong", [
    ("dropped_delta", KRON_T, _drop_delta),
    ("swapped_indices", KRON_T, _swap),
    ("wrong_coefficient", DOUBLE, _coeff(1)),
    ("wrong_coefficient_3", DOUBLE, _coeff(3)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_coq_rejects_a_wrong_normal_form(coq_lib, case, identity, wrong):
    assert str(check_identity(*identity).status) == "proved"
    key = entry_nf(*identity)[0].key
    assert wrong(key) != key
    assert _compiles(coq_lib, export_identity(f"nf_true_{case}", *identity))
    assert not _compiles(coq_lib, export_identity(f"nf_wrong_{case}", *identity, nf_key=wrong(key)))


def test_a_refuted_statement_with_its_left_sides_normal_form_is_rejected(coq_lib):
    lhs, rhs = Diamond(A, MatrixSymbol("y", n, 1)), A * MatrixSymbol("y", n, 1)  # dropped transpose
    assert str(check_identity(lhs, rhs).status) == "refuted"
    key = entry_nf(lhs, lhs)[0].key
    t = export_identity("nf_mutant", lhs, rhs, nf_key=key)
    assert t.proof_kind == "normal form"
    assert not _compiles(coq_lib, t)


def test_the_chain_is_what_the_probes_of_the_accepted_terms_print():
    """Only the lines printed after the theorem's ``Defined`` marker count (a lemma a search tried
    and abandoned is logged before it, never probed)."""
    out = ("symuat-begin c_X\nsymuat-lemma exchange_big\nsymuat-qed c_X\nsymuat-probe lhs\n"
           "symuat-uses lhs sum_distrr\nsymuat-uses lhs ring\nsymuat-probe rhs\n"
           "symuat-begin c_Y\nsymuat-qed c_Y\nsymuat-probe direct\nsymuat-uses direct sum_split\n")
    assert chains_of(out) == {"c_X": {"lhs": ["sum_distrr", "ring"], "step": "meq_via_nf", "rhs": []},
                              "c_Y": {"direct": ["sum_split"]}}


def test_the_chain_reaches_the_record_of_a_certify_run(coq_lib):
    """A two-theorem batch (one normal-form proof, one direct): the accepted proofs' chains."""
    from symuat.certify.run import compile_batch

    nf = export_identity("ch_nf", *KRON_T)
    direct = export_identity("ch_direct", *KRON_T, proof="symuat_entry.")
    (coq_lib / "theories").mkdir(exist_ok=True)
    path = coq_lib / "theories" / "batch_chain.v"
    res = compile_batch(coq_lib / "lib", [nf, direct], path, timeout=120)
    assert res["ch_nf"]["ok"] and res["ch_direct"]["ok"]
    chains = chains_of(res["ch_nf"]["log"] + res["ch_direct"]["log"])
    assert chains["ch_nf"]["step"] == "meq_via_nf" and "sum_delta_l" not in chains["ch_nf"]["lhs"]
    assert set(chains["ch_direct"]) == {"direct"}


def test_a_theorem_is_probed_for_every_lemma_its_run_could_have_applied():
    """The probes after a batch (export.probe_file) look only for the lemmas a run announced and
    for those a tactic may apply silently: a lemma counts as announced only if every line of the
    library's tactics that names it prints it (or rewrites it with symuat_rw, which does)."""
    import re

    from symuat.certify.normal_form import announced_lemmas, probe_candidates, probed_lemmas
    from symuat.certify.record import COQ_DIR

    announced = announced_lemmas()
    silent = [n for n in probed_lemmas() if n not in announced]
    assert "sum_distrl" in announced and "exchange_big" in announced
    assert "sum_const_ord" in silent and "ring" in silent  # SymuatCount applies them without a word
    tactics = "".join(m.group(0) for f in COQ_DIR.glob("*.v") for m in re.finditer(
        r"^(?:Ltac|Tactic Notation)\b.*?(?=^\S)", f.read_text(), re.M | re.S))
    for n in announced:
        for line in tactics.splitlines():
            if re.search(rf"(?<![\w']){re.escape(n)}(?![\w'])", line):
                assert f"symuat_rw {n}" in line or f'"symuat-lemma {n}"' in line, (n, line)
    assert probe_candidates("") == silent
    log = "symuat-lemma exchange_big\nsymuat-lemma sum_distrl\n"
    assert set(probe_candidates(log)) == set(silent) | {"exchange_big", "sum_distrl"}


def test_a_statement_stated_twice_in_a_batch_is_proved_once_and_read_through_its_first_proof(coq_lib):
    """Two identities whose side lemmas state the same thing word for word (the one-layer step
    behind every depth theorem): the second's are proved by the first's (``exact:``), its chain is
    read from the first's proof terms, and a statement that differs by one token is proved anew;
    the theorems themselves each by their own proof."""
    from symuat.certify.export import batch_file
    from symuat.certify.run import compile_batch

    first = export_identity("sh_a", *KRON_T)
    again = export_identity("sh_b", *KRON_T)
    other = export_identity("sh_c", *DOUBLE)
    aliases: dict = {}
    text, _ = batch_file([first, again, other], aliases=aliases)
    assert {"sh_b_lhs", "sh_b_rhs"} <= set(aliases) and aliases["sh_b_lhs"] == ("sh_a_lhs", "sh_a")
    assert "sh_c_lhs" not in aliases and "sh_b" not in aliases  # a theorem: by its own proof
    # (SymPy writes both sides of each identity alike, so each one's right side is its left one's)
    assert text.count("symuat_nf.") == 2
    (coq_lib / "theories").mkdir(exist_ok=True)
    res = compile_batch(coq_lib / "lib", [first, again, other], coq_lib / "theories" / "batch_share.v", timeout=120)
    assert all(res[n]["ok"] for n in ("sh_a", "sh_b", "sh_c"))
    chains = chains_of("".join(res[n]["log"] for n in ("sh_a", "sh_b")))
    assert chains["sh_b"] == chains["sh_a"] and chains["sh_a"]["lhs"]
