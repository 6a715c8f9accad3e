"""The Coq certify tier: exported statements are faithful, and Coq rejects mutants.

Each mutant below is a statement symuat refutes (a dropped transpose, swapped Kronecker factors,
the other flattening), exported with the same generic proof as the true statements: Coq must
reject it, and must accept the true statement beside it. Needs ``coqc`` with MathComp; skips
without it unless ``CI`` or ``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import subprocess

import pytest
import sympy as sp
from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import kron
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import coq_file, export_identity
from symuat.expr.diamond import Diamond
from symuat.kernel.decide import check_identity
from symuat.expr.vec import Vec

n, m, N = sp.symbols("n m N", positive=True, integer=True)
W, Wsq = MatrixSymbol("W", m, n), MatrixSymbol("W", n, n)
x, X = MatrixSymbol("x", m, 1), MatrixSymbol("X", n, n)
Xr = MatrixSymbol("X", n, N)


def test_statement_is_the_checked_identity():
    t = export_identity("P1", Diamond(W, x), W.T * x)
    assert t.statement == ("Theorem P1 (m n : nat) (W : mx R [:: m] [:: n]) (x : mx R [:: m] [::]) :\n"
                           "  diamond W x =m mul (tr W) x.")
    A = MatrixSymbol("A", m, n)
    v = export_identity("M1", Vec(A * Xr, "col"), kron(Identity(N), A) * Vec(Xr, "col"))
    assert "vec_c (mul A X) =m mul (kron (idm [:: N]) A) (vec_c X)" in v.statement


def test_unsupported_is_an_error_with_a_reason():
    with pytest.raises(Unsupported, match="index spaces differ"):
        export_identity("bad", Diamond(W, x), W * MatrixSymbol("y", n, 1))


#: (name, true statement, mutant): the mutant differs by one slip and symuat refutes it
CASES = [
    ("dropped_transpose", (Diamond(Wsq, MatrixSymbol("y", n, 1)), Wsq.T * MatrixSymbol("y", n, 1)),
     (Diamond(Wsq, MatrixSymbol("y", n, 1)), Wsq * MatrixSymbol("y", n, 1))),
    ("swapped_kron", (Vec(Wsq * X, "col"), kron(Identity(n), Wsq) * Vec(X, "col")),
     (Vec(Wsq * X, "col"), kron(Wsq, Identity(n)) * Vec(X, "col"))),
    ("other_flattening", (Vec(Wsq * X, "row"), kron(Wsq, Identity(n)) * Vec(X, "row")),
     (Vec(Wsq * X, "row"), kron(Wsq, Identity(n)) * Vec(X, "col"))),
    ("transpose_of_kron", (kron(Wsq, X).T, kron(Wsq.T, X.T)), (kron(Wsq, X).T, kron(Wsq, X.T))),
]


def _compiles(lib, name, lhs, rhs) -> bool:
    path = lib / "theories" / f"{name}.v"
    path.parent.mkdir(exist_ok=True)
    path.write_text(coq_file([export_identity(name, lhs, rhs)]))
    proc = subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib / "lib"), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=600, cwd=path.parent)
    return proc.returncode == 0


@pytest.mark.parametrize("name,true,mutant", CASES, ids=[c[0] for c in CASES])
def test_coq_accepts_the_identity_and_rejects_its_mutant(coq_lib, name, true, mutant):
    assert str(check_identity(*true).status) == "proved"
    assert str(check_identity(*mutant).status) == "refuted"
    assert _compiles(coq_lib, f"true_{name}", *true)
    assert not _compiles(coq_lib, f"mutant_{name}", *mutant)


def test_certified_shows_only_with_a_record_for_these_sources(tmp_path, monkeypatch):
    import json

    from symuat.certify import record as rec
    from symuat.kernel.registry import REGISTRY
    from symuat.render import report
    import symuat.claims  # noqa: F401

    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path))
    entry = {"status": "certified", "theorems": ["c_P1_0"], "hashes": ["x"], "lemmas": ["mulr_assoc_r", "ring"]}
    data = {"fingerprint": rec.fingerprint(), "pattern": "P1", "checks": {"P1": entry},
            "summary": {"certified": 1, "failed": 0, "unsupported": 0, "symbolic_proved": 1}}
    (tmp_path / "record.json").write_text(json.dumps(data))
    rec.load.cache_clear()
    try:
        (check,) = REGISTRY.select(["P1"])
        result = check.run()
        assert result.as_dict()["certified"]["by"] == "coq"
        assert "certified: coq (c_P1_0; lemmas: mulr_assoc_r, ring)" in report.detail(result)
        assert rec.claim_certified(REGISTRY.claims["P1"])
        data["fingerprint"] = "stale"  # written for other sources: ignored
        (tmp_path / "record.json").write_text(json.dumps(data))
        rec.load.cache_clear()
        assert "certified" not in result.as_dict()
    finally:
        rec.load.cache_clear()


class _AdmittedTheorem:
    """An exported theorem whose proof ends in ``Admitted`` (an axiom): never certified."""

    def __init__(self, inner):
        self.name, self.statement, self.proof = inner.name, inner.statement, inner.proof
        self.requires, self.probes = inner.requires, ()

    def batch_text(self, timeout):
        return (f"{self.statement}\nProof. idtac \"symuat-begin {self.name}\". Admitted.\n"
                f"Goal True. idtac \"symuat-qed {self.name}\". Abort.\n")


def test_a_batch_never_lets_a_failing_theorem_pass(coq_lib):
    """One batch file: true, mutant, true, admitted, true. The mutant is named as failed (from
    Coq's error line), the theorems after it are compiled again (then the one before it), the
    admitted one is refused (the batch's axiom check lists an axiom; the theorems that use it are
    named one by one), and only the true ones are accepted."""
    from symuat.certify.run import compile_batch

    name, true, mutant = CASES[1]
    thms = [export_identity("b_true0", *true), export_identity("b_mutant", *mutant),
            export_identity("b_true1", *CASES[0][1]),
            _AdmittedTheorem(export_identity("b_admitted", *mutant)),
            export_identity("b_true2", *CASES[3][1])]
    (coq_lib / "theories").mkdir(exist_ok=True)
    res = compile_batch(coq_lib / "lib", thms, coq_lib / "theories" / "batch_test.v", timeout=120)
    assert {k: v["ok"] for k, v in res.items()} == {
        "b_true0": True, "b_mutant": False, "b_true1": True, "b_admitted": False, "b_true2": True}
    assert res["b_mutant"]["reason"].startswith("Coq:")
    assert len(res["b_mutant"]["reason"]) > len("Coq: Error: "), res["b_mutant"]  # Coq's message, not its heading
    assert "axioms" in res["b_admitted"]["reason"]
    # the one accepted before the failure is compiled again after the rest: every accepted theorem
    # is in a file that compiled whole (a .vo coqchk re-checks), the mutant in none
    assert all(res[k].get("vo") for k in ("b_true0", "b_true1", "b_true2")) and not res["b_mutant"].get("vo")


def test_coq_rejects_a_wrong_convolution_shift(coq_lib):
    """M5.conv's lift with the shift off by one (S_{t-r+1}) is rejected; the true lift compiles."""
    from symuat.expr.linear import conv1d_symbols

    conv, lift, X = conv1d_symbols()
    _, wrong, _ = conv1d_symbols(shift_error=1)
    assert _compiles(coq_lib, "true_conv", Vec(conv, "row"), lift("row") * Vec(X, "row"))
    assert not _compiles(coq_lib, "mutant_conv", Vec(conv, "row"), wrong("row") * Vec(X, "row"))


def test_a_proof_under_a_hypothesis_is_exported_with_it_as_a_premise():
    """H7 is proved under 'every attention row sums to one': the capture keeps that hypothesis
    (the identity does not hold without it), and the exported theorem states it as a premise
    (tests/test_certify_hypotheses.py: Coq accepts it, and rejects it without the premise)."""
    import symuat.claims  # noqa: F401
    from symuat.certify.export import export_identity
    from symuat.certify.run import capture
    from symuat.kernel.hypotheses import LineSums
    from symuat.kernel.registry import REGISTRY

    (check,) = [c for c in REGISTRY.all_checks() if c.key == "H7[col,bidir]"]
    (verdict, pairs), = capture([check]).values()
    assert str(verdict.status) == "proved"
    assert any(hyps == (LineSums("H", "rows"),) for _, _, hyps in pairs)
    lhs, rhs, hyps = next(p for p in pairs if p[2])
    thm = export_identity("h7", lhs, rhs, hypotheses=hyps)
    assert "(Hl0 : forall (i : 'I_h) (a : 'I_N), \\sum_(b < N) H i (a, tt) (b, tt) = 1)" in thm.statement


def test_every_symbolic_proved_is_counted_and_a_non_identity_is_listed(coq_lib, library_compiled_once, tmp_path):
    """The denominator is every symbolic ``proved`` check of the pattern, whatever procedure
    proved it: M5.cmp (a token pattern read off the normal form, no exporter) is counted and
    listed as not exported, with its method; H8.1 and H8.2 (identities) and H8.rank (a rank
    bound, stated over MathComp's rank: a kind with an exporter) are certified."""
    from symuat.certify.run import certify

    rec = certify(pattern=r"H8|M5", out=tmp_path / "c", jobs=1, depth=False)
    checks = rec["checks"]
    assert rec["summary"]["symbolic_proved"] == len(checks) >= 5
    assert checks["M5.cmp"]["status"] == "unsupported"
    assert "not an identity of matrices" in checks["M5.cmp"]["reason"] and "proved by:" in checks["M5.cmp"]["reason"]
    assert checks["H8.1"]["status"] == checks["H8.2"]["status"] == checks["H8.rank"]["status"] == "certified"


def test_capture_observes_a_check_whose_verdict_was_computed_before():
    """A verdict is computed once per process; certify's capture must still see the statements a
    check proves when a report or another test ran that check first (else it would be counted
    'no statement captured' and never certified)."""
    import symuat.claims  # noqa: F401
    from symuat.certify.run import capture
    from symuat.kernel.registry import REGISTRY

    (check,) = [c for c in REGISTRY.all_checks() if c.key == "P1"]
    before = check.run().verdict
    (verdict, pairs), = capture([check]).values()
    assert str(verdict.status) == "proved" and len(pairs) == 1
    assert check.verdict() is before   # the earlier verdict is put back


# -- names and the record's fingerprint (pure Python: no coqc) ---------------------------------------


def test_coq_names_are_injective_over_every_key_of_the_registry_and_adversarial_pairs():
    """Main wrote ``A4.concl[layer-wise=k]`` and ``A4.concl[layer-wise=≥k]`` both as
    ``c_A4_concl_layer_wise_k_0``: with ``--jobs 2`` one result could be credited to both."""
    import re

    import symuat.claims  # noqa: F401
    from symuat.certify.run import coq_name, key_of_coq_name
    from symuat.kernel.registry import REGISTRY

    keys = [c.key for c in REGISTRY.all_checks()]
    adversarial = ["A4.concl[layer-wise=k]", "A4.concl[layer-wise=≥k]", "P5.a", "P5_a", "P5__a", "P5.a.",
                   "P5..a", "a_L_b", "a[b", "a_5b_b", "x_", "_x", "x_0", "x", "A.B[c,d]", "A.B[c-d]",
                   "A.B[c=d]", "A.B[c d]", "é", "e\u0301", "k≥", "k≤", "", "0", "_", "__", "_2e_", "2e"]
    names = {}
    for key in keys + adversarial:
        for n in range(3):
            name = coq_name(key, n)
            assert re.fullmatch(r"c_[A-Za-z0-9_]+", name), name  # a Coq identifier, and the probes' \w+
            assert key_of_coq_name(name) == (key, n)  # a left inverse: injective
            assert names.setdefault(name, (key, n)) == (key, n), (name, names[name], (key, n))
    assert coq_name("A4.concl[layer-wise=k]", 0) != coq_name("A4.concl[layer-wise=≥k]", 0)
    for bad in ["c_P5_a", "c_P5__a_x", "c_P5_2E__0", "c_P5_2e__0", "c_P5_41__0", "c_P5_0041__0", "P5_0", "c_P5_L__01"]:
        with pytest.raises(ValueError):
            key_of_coq_name(bad)


def test_the_certify_fingerprint_covers_coqc_mathcomp_and_the_python_libraries():
    """A record made under another coqc, MathComp, SymPy or NumPy is not shown as current
    (main's fingerprint covered the sources only)."""
    from symuat.certify import record as rec

    versions = rec.toolchain()
    assert {"coqc", "mathcomp", "sympy", "numpy", "mpmath", "python"} <= set(versions)
    base = rec.fingerprint(versions)
    assert rec.fingerprint() == base
    for name in ("coqc", "mathcomp", "sympy", "numpy"):
        assert rec.fingerprint({**versions, name: versions[name] + " (another)"}) != base, name


def test_a_record_made_under_another_toolchain_is_not_current(tmp_path, monkeypatch):
    import json

    from symuat.certify import record as rec

    monkeypatch.setenv("SYMUAT_CERTIFY_DIR", str(tmp_path))
    versions = rec.toolchain()
    data = {"fingerprint": rec.fingerprint(versions), "toolchain": versions, "pattern": "P1", "checks": {}}
    (tmp_path / "record.json").write_text(json.dumps(data))
    rec.load.cache_clear()
    try:
        assert rec.load() is not None
        for name in ("coqc", "mathcomp", "sympy", "numpy"):
            data["fingerprint"] = rec.fingerprint({**versions, name: "another"})
            (tmp_path / "record.json").write_text(json.dumps(data))
            rec.load.cache_clear()
            assert rec.load() is None, name
    finally:
        rec.load.cache_clear()


@pytest.mark.parametrize("stage", ["library", "batch", "waiting"])
def test_sigterm_during_certify_ends_its_coqc_at_once_and_exits_143(tmp_path, stage):
    """Main's coqc ran on after SIGTERM (the threads waited for their batches). A stand-in
    ``coqc`` on the PATH (no Coq needed) announces itself and then waits: at the library
    (main thread) or at a batch (a worker thread) — the test signals once it runs. ``waiting``:
    at the library with no check to run, so the signal comes while the main thread waits for
    the library (it was outside the handler that ends Coq: the run waited for its coqc)."""
    import os
    import signal
    import sys
    import time
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _signals import ROOT, alive

    fake = tmp_path / "bin"
    fake.mkdir()
    marker = tmp_path / "coqc.pid"
    wait_at = "theories" if stage == "batch" else "SymuatMx"
    (fake / "coqc").write_text(f"""#!/bin/sh
case "$*" in
  *--version*) echo "The Coq Proof Assistant, version 0 (stand-in)"; exit 0;;
  *-where*) echo /nonexistent; exit 0;;
  *{wait_at}*) echo $$ > {marker}.tmp; mv {marker}.tmp {marker}; exec sleep 600;;
esac
exit 0
""")
    (fake / "coqc").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "SYMUAT_CACHE": "off",
           "SYMUAT_CERTIFY_DIR": str(tmp_path / "out")}
    pattern = "no-such-claim" if stage == "waiting" else "P1"
    proc = subprocess.Popen([sys.executable, "-m", "symuat.cli", "certify", "--pattern", pattern, "--jobs", "1"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        coqc = int(marker.read_text())
        assert alive(coqc)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err[-2000:]
    assert err.strip().splitlines() == ["symuat: terminated"], err[-2000:]
    assert not alive(coqc)
