"""Coq certificates for proofs under hypotheses, and for the Hadamard product.

A statement symuat proves under a hypothesis on the lines of a leaf (H7: every attention row
sums to one, :class:`~symuat.kernel.hypotheses.LineSums`) is exported with that hypothesis as a
premise of the theorem, exactly as symuat assumed it (rows or columns, masked causally or not,
per head), and proved by the generic ``symuat_entry using (symuat_line Hl0)``. Coq must accept
it with the premise, and reject the same statement without the premise or with a premise on
the other lines: the premise is used, and only the true one closes the proof.

The Coq test uses a small row-stochastic statement (seconds); H7's own statement is checked for its
premise text, and the four H7 checks are certified by the certify tier (``symuat certify --pattern H7``).

Needs ``coqc`` with MathComp; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import sympy as sp
from sympy import MatrixSymbol

from symuat.certify.coq_terms import Ctx, Unsupported
from symuat.certify.export import coq_file, export_identity, premise
from symuat.kernel.decide import check_identity
from symuat.kernel.hypotheses import LineSums



def _compiles(lib, name, lhs, rhs, hypotheses=(), proof=None) -> bool:
    thm = export_identity(name, lhs, rhs, hypotheses=hypotheses)
    if proof is not None:
        thm.proof = proof
    path = lib / "theories" / f"{name}.v"
    path.parent.mkdir(exist_ok=True)
    path.write_text(coq_file([thm]))
    proc = subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib / "lib"), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=900, cwd=path.parent)
    return proc.returncode == 0


def _h7(order, mask):
    from symuat.claims.attention import h7_sides, rows_sum_to_one

    lhs, rhs, _ = h7_sides(order, mask)
    return lhs, rhs, rows_sum_to_one(mask)


def test_the_premise_is_the_hypothesis_symuat_assumed():
    ctx = Ctx(leaves={"H": "'I_h -> mx R [:: N] [:: N]", "A": "mx R [:: N; M] [:: K]"})
    assert premise(LineSums("H"), ctx) == (
        r"forall (i : 'I_h) (a : 'I_N), \sum_(b < N) H i (a, tt) (b, tt) = 1")
    assert premise(LineSums("H", causal=True), ctx) == (
        r"forall (i : 'I_h) (a : 'I_N), \sum_(b < N) H i (a, tt) (b, tt) * (b <= a)%N%:R = 1")
    assert premise(LineSums("H", "columns"), ctx) == (
        r"forall (i : 'I_h) (b : 'I_N), \sum_(a < N) H i (a, tt) (b, tt) = 1")
    assert premise(LineSums("A"), ctx) == r"forall (a : idx [:: N; M]), \sum_(b < K) A a (b, tt) = 1"
    with pytest.raises(Unsupported, match="does not mention"):
        premise(LineSums("G"), ctx)
    with pytest.raises(Unsupported, match="not an integer"):
        premise(LineSums("H", value=sp.Rational(1, 2)), ctx)
    with pytest.raises(Unsupported, match="causal mask on rows that are not one index"):
        premise(LineSums("A", causal=True), ctx)


def test_coq_needs_the_true_premise(coq_lib):
    """A row-stochastic H maps the ones vector to itself, so H 1 1ᵀ W = 1 1ᵀ W: accepted with
    the row-sum premise; rejected without it and with the column sums (symuat: proved under the
    row sums, refuted without them and under the column sums). The four H7 theorems themselves
    are compiled by the certify tier (about a minute of Coq each)."""
    N, M = sp.symbols("N M", positive=True, integer=True)
    H, W = MatrixSymbol("H", N, N), MatrixSymbol("W", N, M)
    ones = sp.OneMatrix(N, 1)
    lhs, rhs = H * ones * ones.T * W, ones * ones.T * W
    rows, columns = LineSums("H"), LineSums("H", "columns")
    assert str(check_identity(lhs, rhs, hypotheses=[rows]).status) == "proved"
    assert str(check_identity(lhs, rhs).status) == "refuted"
    assert str(check_identity(lhs, rhs, hypotheses=[columns]).status) == "refuted"
    assert _compiles(coq_lib, "true_rows", lhs, rhs, [rows])
    assert not _compiles(coq_lib, "no_premise_rows", lhs, rhs, (), proof="symuat_entry using idtac.")
    assert not _compiles(coq_lib, "columns_rows", lhs, rhs, [columns])


def test_h7_is_exported_with_its_premise():
    """H7[row,causal]'s statement carries exactly the causal row sums symuat assumed."""
    lhs, rhs, hyp = _h7("row", "causal")
    text = export_identity("h7", lhs, rhs, hypotheses=[hyp]).statement
    assert ("(Hl0 : forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (a, tt) (b, tt) * (b <= a)%N%:R = 1) :"
            in text)


def test_coq_accepts_the_hadamard_product_and_rejects_a_transposed_operand(coq_lib):
    from symuat.expr.decoder import Diag, Hadamard
    from symuat.expr.vec import Vec

    n, m = sp.symbols("n m", positive=True, integer=True)
    A, B, S = MatrixSymbol("A", n, m), MatrixSymbol("B", n, m), MatrixSymbol("S", n, n)
    T = MatrixSymbol("T", n, n)
    true = (Vec(Hadamard(A, B), "row"), Diag(Vec(A, "row")) * Vec(B, "row"))
    flat = (Vec(Hadamard(A, B), "row"), Diag(Vec(A, "col")) * Vec(B, "col"))   # other flattening
    transposed = (Hadamard(S, T), Hadamard(S.T, T))
    assert str(check_identity(*true).status) == "proved"
    assert str(check_identity(*transposed).status) == "refuted"
    assert "hadamard A B" in export_identity("h", *true).statement
    assert _compiles(coq_lib, "true_hadamard", *true)
    assert _compiles(coq_lib, "true_hadamard_comm", Hadamard(S, T), Hadamard(T, S))
    assert not _compiles(coq_lib, "mutant_hadamard_transposed", *transposed)
    with pytest.raises(Unsupported, match="index spaces differ"):
        export_identity("bad", *flat)


def _tier_record_with_coqchk():
    """The certify tier's record (``$SYMUAT_CERTIFY_DIR``, default ``build/certify``) when it was
    written with ``--coqchk``, and coqchk passed, for these very sources and this toolchain (its
    fingerprint: the Coq library, symuat's Python sources, coqc and MathComp's compiled files),
    else None (then the test runs coqchk itself). CI runs
    ``symuat certify --coqchk`` just before this tier: its coqchk of the library, MathComp and
    every compiled proof is the one of these bytes, so it is not run a second time here."""
    import json

    from symuat.certify.record import fingerprint, out_dir

    try:
        data = json.loads((out_dir() / "record.json").read_text())
    except (OSError, ValueError):
        return None
    if data.get("fingerprint") != fingerprint() or not data.get("coqchk", {}).get("ok"):
        return None  # not for these sources, or its coqchk failed or did not finish: checked here
    return data


def test_coqchk_rechecks_the_tier_and_fails_on_an_axiom(coq_lib, library_compiled_once, tmp_path, monkeypatch):
    """``certify(check=True)`` re-checks the compiled files with coqchk (no axioms: ok, and every
    certified theorem is in a checked file): the tier's own record when it is there for these
    sources (CI: ``symuat certify --coqchk`` ran just before), else a run on P1 here (coqchk then
    re-checks MathComp, about a minute of CPU). A compiled file that assumes an axiom, or rests on
    a library the check of the library did not take in, is not ok: shown with a one-file library
    (coqchk of it and Coq's prelude: seconds), by the same :func:`coqchk`."""
    from symuat.certify import run
    from symuat.certify.run import THEORIES, _coqc, certify, coqchk

    if shutil.which("coqchk") is None:
        pytest.skip("coqchk not installed")
    rec = _tier_record_with_coqchk() or certify(pattern=r"P1", out=tmp_path / "p1", jobs=1, check=True, depth=False)
    chk = rec["coqchk"]
    n = rec["summary"]["certified"]
    assert chk["ok"] and chk["axioms"] == "<none>" and n >= 1, chk
    assert chk["theorems"].split(" of ")[0] == chk["theorems"].split(" of ")[1]
    # the verdicts of coqchk on an axiom and on an unchecked library: a library of one file
    out = tmp_path / "c"
    (out / "lib").mkdir(parents=True)
    (out / "theories").mkdir()
    (out / "lib" / "SymuatTiny.v").write_text("Definition two := S (S O).\n")
    _coqc(out / "lib", out / "lib" / "SymuatTiny.v", timeout=300)
    monkeypatch.setattr(run, "LIBRARY", ("SymuatTiny.v",))
    good = out / "theories" / "good.v"
    good.write_text("From Symuat Require Import SymuatTiny.\nTheorem two_is_two : two = 2. Proof. reflexivity. Qed.\n")
    assert _coqc(out / "lib", good, timeout=300).returncode == 0
    first = coqchk(out)
    assert first["ok"] and first["axioms"] == "<none>" and first["files"] == ["good.vo"], first
    bad = out / "theories" / "cheat.v"
    bad.write_text("Axiom cheat : forall n : nat, n = 0.\nTheorem one_is_zero : 1 = 0. Proof. exact (cheat 1). Qed.\n")
    assert _coqc(out / "lib", bad, timeout=300).returncode == 0
    again = coqchk(out)
    assert not again["ok"] and "cheat" in again["axioms"], again
    assert again["library_seconds"] == first["library_seconds"]  # the same library: checked once per process
    # a file resting on a library the library's check did not take in: admitted unchecked, not ok
    bad.unlink()
    (out / "theories" / "cheat.vo").unlink()
    other = out / "theories" / "reals.v"
    other.write_text("From Coq Require Import Reals.\nTheorem r : (0 <= 1)%R. Proof. left; exact Rlt_0_1. Qed.\n")
    assert _coqc(out / "lib", other, timeout=300).returncode == 0
    third = coqchk(out)
    assert not third["ok"] and third["reason"].startswith("admitted without a check ("), third
    assert THEORIES == "SymuatCertified"
