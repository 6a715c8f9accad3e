"""Coq certificates for proofs under hypotheses, and for the Hadamard product.

A statement symuat proves under a hypothesis on the lines of a leaf (H7: every attention row
sums to one, :class:`~symuat.kernel.hypotheses.LineSums`) is exported with that hypothesis as a
premise of the theorem, exactly as symuat assumed it (rows or columns, masked causally or not,
per head), and proved by the generic ``symuat_entry using (symuat_line Hl0)``. Coq must accept
it with the premise, and reject the same statement without the premise or with a premise on
the other lines: the premise is used, and only the true one closes the proof.

The statement used is the lemma H7 rests on (``token_shared``: the attention lift applied to a
token-shared vector), the smallest identity that needs the hypothesis; the four H7 checks
themselves are certified by the certify tier (``symuat certify --pattern H7``).

Needs ``coqc`` with MathComp; skips without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import sympy as sp
from sympy import MatrixSymbol

from symuat.certify.export import Unsupported, coq_file, export_identity, premise, _Ctx
from symuat.certify.run import compile_library
from symuat.kernel.decide import check_identity
from symuat.kernel.hypotheses import LineSums

REQUIRED = bool(os.environ.get("CI") or os.environ.get("SYMUAT_REQUIRE_COQ"))


@pytest.fixture(scope="module")
def coq_lib(tmp_path_factory):
    if shutil.which("coqc") is None:
        if REQUIRED:
            pytest.fail("coqc not found (required: CI / SYMUAT_REQUIRE_COQ is set)")
        pytest.skip("coqc not installed")
    out = tmp_path_factory.mktemp("certify")
    compile_library(out)
    return out


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


def _token_shared(mask):
    from symuat.claims.attention import rows_sum_to_one, token_shared

    W, lhs_vec, rhs, _ = token_shared(mask)
    return W * lhs_vec, rhs, rows_sum_to_one(mask)


def test_the_premise_is_the_hypothesis_symuat_assumed():
    ctx = _Ctx(leaves={"H": "'I_h -> mx R [:: N] [:: N]", "A": "mx R [:: N; M] [:: K]"})
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


@pytest.mark.parametrize("mask", ["bidir", "causal"])
def test_coq_needs_the_true_premise(coq_lib, mask):
    lhs, rhs, hyp = _token_shared(mask)
    columns = LineSums(hyp.name, "columns", causal=hyp.causal)
    # symuat: proved under the hypothesis, refuted without it and under the column sums
    assert str(check_identity(lhs, rhs, hypotheses=[hyp]).status) == "proved"
    assert str(check_identity(lhs, rhs).status) == "refuted"
    assert str(check_identity(lhs, rhs, hypotheses=[columns]).status) == "refuted"
    # Coq: the same three
    assert _compiles(coq_lib, f"true_{mask}", lhs, rhs, [hyp])
    assert not _compiles(coq_lib, f"no_premise_{mask}", lhs, rhs, (),
                         proof="symuat_entry using idtac.")
    assert not _compiles(coq_lib, f"columns_{mask}", lhs, rhs, [columns])
    if mask == "causal":  # the unmasked row sum is another hypothesis
        unmasked = LineSums(hyp.name, "rows", causal=False)
        assert not _compiles(coq_lib, "unmasked_causal", lhs, rhs, [unmasked])


def test_coq_accepts_the_hadamard_product_and_rejects_a_transposed_operand(coq_lib):
    from symuat.decoder import Diag, Hadamard
    from symuat.vec import Vec

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
