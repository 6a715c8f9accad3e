"""What the certify tier's tests share: the checks' captured statements and records, and a
false variant of a library file compiled to show Coq rejects it."""

from __future__ import annotations

import subprocess

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.record import COQ_DIR
from symuat.certify.run import capture
from symuat.kernel.registry import REGISTRY


def recorded(*keys) -> dict:
    """key → (verdict, proved pairs, unequal comparisons, recorded certificates) of the checks
    ``keys``, as the tier captures them."""
    checks = [c for c in REGISTRY.all_checks() if c.key in keys]
    certificates: dict = {}
    unequal: dict = {}
    out = capture(checks, certificates, unequal)
    return {k: (v, pairs, unequal.get(k, []), certificates.get(k, [])) for k, (v, pairs) in out.items()}


def compile_library_variant(lib, text: str, stem: str) -> subprocess.CompletedProcess:
    """``text`` compiled as the library file ``stem.v`` of the compiled library ``lib``."""
    path = lib / f"{stem}.v"
    path.write_text(text)
    return subprocess.run(["coqc", "-q", "-w", "-all", "-R", str(lib), "Symuat", str(path)],
                          capture_output=True, text=True, timeout=600, cwd=lib)


def assert_library_variant_rejected(lib, library: str, what: str, old: str, new: str) -> None:
    """The library file ``library`` (``coq/``) with ``old`` (found once) replaced by ``new`` does
    not compile, and is rejected by a proof, not by a syntax or name error in the mutation."""
    source = (COQ_DIR / library).read_text()
    assert source.count(old) == 1, f"mutation site not found once: {old!r}"
    proc = compile_library_variant(lib, source.replace(old, new), library.removesuffix(".v") + "Mutant")
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"Coq accepted a false variant: {what}"
    assert "Syntax error" not in err and "was not found" not in err, err[-400:]
