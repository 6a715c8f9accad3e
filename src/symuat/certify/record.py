"""The certify record: which checks' exported proofs compiled, valid only for these sources.

The record (``build/certify/record.json``) carries a fingerprint of everything that can change a
statement or its proof: every source (``coq/*.v`` and ``src/symuat/**/*.py``) and the toolchain
(:func:`toolchain`: the ``coqc`` version, the installed MathComp — a digest of its compiled
``.vo`` files, which no version string names portably —, and the Python, SymPy, mpmath and NumPy
versions that compute the exported statements). :func:`load` returns it only when the
fingerprint matches the current sources and toolchain, so a verdict never shows
``certified: coq`` for a statement that changed since the proof was compiled, nor for a proof
checked by another Coq or MathComp.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
#: the checkout (``src/symuat`` is the package): the Coq library lies beside it
ROOT = PACKAGE.parents[1]
#: the pattern of the tier: every claim of the catalogue (a record made with it counts "of the catalogue")
TIER = r".+"

COQ_DIR = ROOT / "coq"


def out_dir() -> Path:
    """Where the certify tier writes (``$SYMUAT_CERTIFY_DIR``, default ``build/certify``)."""
    return Path(os.environ.get("SYMUAT_CERTIFY_DIR") or ROOT / "build" / "certify")


def _mathcomp_dirs() -> list[Path]:
    import subprocess

    roots = [Path(p) for p in os.environ.get("COQPATH", "").split(os.pathsep) if p]
    try:
        where = subprocess.run(["coqc", "-where"], capture_output=True, text=True, timeout=60).stdout.strip()
        if where:
            roots.append(Path(where) / "user-contrib")
    except (OSError, subprocess.SubprocessError):
        pass
    return [r / "mathcomp" for r in roots if (r / "mathcomp").is_dir()]


@lru_cache(maxsize=1)
def toolchain() -> dict[str, str]:
    """What besides the sources can change an exported statement or its proof: ``coqc --version``
    (first line), MathComp (SHA-256 of its ``.vo`` files: names and bytes), and the versions of
    Python, SymPy, mpmath and NumPy. ``absent`` for what is not installed.

    >>> sorted(toolchain())
    ['coqc', 'mathcomp', 'mpmath', 'numpy', 'python', 'sympy']
    """
    import subprocess
    import sys
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for name in ("sympy", "mpmath", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    try:
        proc = subprocess.run(["coqc", "--version"], capture_output=True, text=True, timeout=60)
        out["coqc"] = (proc.stdout.strip().splitlines() or ["absent"])[0]
    except (OSError, subprocess.SubprocessError):
        out["coqc"] = "absent"
    dirs = _mathcomp_dirs()
    if dirs:
        h = hashlib.sha256()
        for f in sorted(dirs[0].rglob("*.vo")):
            h.update(str(f.relative_to(dirs[0])).encode() + b"\0" + f.read_bytes())
        out["mathcomp"] = "vo-sha256:" + h.hexdigest()
    else:
        out["mathcomp"] = "absent"
    return out


def fingerprint(versions: dict | None = None) -> str:
    """SHA-256 over the Coq library, symuat's Python sources (names and contents) and the
    :func:`toolchain` (or ``versions`` given in its place)."""
    h = hashlib.sha256()
    for name, version in sorted((toolchain() if versions is None else versions).items()):
        h.update(f"{name}={version}\n".encode())
    files = sorted(COQ_DIR.glob("*.v")) + sorted(PACKAGE.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def load(path: str | None = None) -> dict | None:
    """The record, or None if absent or written for other sources."""
    p = Path(path) if path else out_dir() / "record.json"
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    if data.get("fingerprint") != fingerprint():
        return None
    return data


def certification(key: str) -> dict | None:
    """``{"by": "coq", "theorems": [...], "lemmas": [...], "proofs": {...}}`` for a certified check,
    else None. ``proofs``: theorem → ``{"proof": "normal form" | "direct" | "certificate",
    "chain": {"lhs": [...], "step": "meq_via_nf", "rhs": [...]} or {"direct": [...]}}`` — the
    library lemmas the accepted proof term applies (:func:`symuat.certify.run.chains_of`)."""
    data = load()
    if not data:
        return None
    # a refuted check: its refutation (the negated identity at its counterexample), if certified
    entry = data.get("checks", {}).get(key) or data.get("refutations", {}).get(key)
    if not entry or entry.get("status") != "certified":
        return None
    return {"by": "coq", "theorems": entry["theorems"], "lemmas": entry.get("lemmas", []),
            "statement_hashes": entry.get("hashes", []), "proofs": entry.get("proofs", {}),
            # a refutation stated by another check's theorem (the same statement), or through the
            # refuted identity of a link the verdict reuses
            "same_statement": entry.get("same_statement"), "link": entry.get("link")}


def not_certified(key: str) -> str | None:
    """Why a symbolic ``proved`` check is not certified in the current record (its status and
    the reason: outside the exported fragment, or rejected by Coq), else None."""
    data = load()
    entry = (data or {}).get("checks", {}).get(key)
    if not entry or entry.get("status") == "certified":
        return None
    return f"{entry.get('status')}: {entry.get('reason') or 'no reason recorded'}"


def claim_certified(claim) -> bool:
    """Whether every symbolic ``proved`` check of ``claim`` (a registry Claim) is certified by Coq
    in the current record (False without a current record or with no such check)."""
    data = load()
    if not data:
        return False
    entries = [data["checks"][c.key] for c in claim.checks if c.key in data.get("checks", {})]
    return bool(entries) and all(e["status"] == "certified" for e in entries)


def certified_for_statement(check) -> bool:
    """Whether ``check`` (a registry Check) is certified for the statement it reports: its
    theorems compiled, and they state what it states (not a weaker form, ``Check.coq_states``)."""
    return certification(check.key) is not None and not check.coq_states


def claim_coverage(claim, cv) -> dict | None:
    """What Coq certified of the bottom line ``cv`` (a ClaimVerdict) of ``claim``, from the current
    record (None without one): ``{"complete": bool, "certified": [keys], "grounds": [keys],
    "not_certified": [keys], "correction": "not exported" | None, "text": …}``.

    ``complete`` — the report's ``+coq`` — only when every check the bottom line rests on
    (``cv.grounds``: the failures included) is certified for its statement, every symbolic proof
    of the claim in the record compiled, and no correction is left uncertified (the tier exports
    checks and the corrections of failing bottom lines: ``correction`` is None once every check
    the correction comes from, ``cv.corrected_from``, has its correction certified). Otherwise
    ``text`` names what was certified."""
    data = load()
    if not data or not cv.grounds:
        return None
    checks = {c.key: c for c in claim.checks}
    grounds = [k for k in cv.grounds if k in checks]
    done = [k for k in grounds if certified_for_statement(checks[k])]
    entries = [data["checks"][c.key] for c in claim.checks if c.key in data.get("checks", {})]
    all_in_record = all(e["status"] == "certified" for e in entries)
    fixes = [data.get("corrections", {}).get(k, {}) for k in (getattr(cv, "corrected_from", None) or [])]
    correction = ("not exported" if cv.corrected and not (fixes and all(f.get("status") == "certified" for f in fixes))
                  else None)
    complete = bool(grounds) and len(done) == len(grounds) and all_in_record and not correction
    missing = [k for k in grounds if k not in done]
    if complete:
        text = f"coq: all {len(grounds)} checks of the bottom line"
    elif done:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        text = (f"coq: {len(done)} of {len(grounds)} checks of the bottom line"
                + (f" (not {shown}" if missing else " (" if correction else
                   " (another symbolic proof of the claim did not compile")
                + ("; " if missing and correction else "") + ("the correction is not sent to Coq" if correction else "")
                + ")")
    else:
        text = f"coq: none of the {len(grounds)} checks of the bottom line"
    return {"complete": complete, "certified": done, "grounds": grounds, "not_certified": missing,
            "correction": correction, "text": text}


def summary_line() -> str | None:
    """``Coq: 95 of 101 symbolic proofs certified …`` from the current record, else None."""
    data = load()
    if not data:
        return None
    s = data["summary"]
    which = "of the catalogue" if data["pattern"] == TIER else f"({data['pattern']})"
    return (f"Coq: {s['certified']} of {s['symbolic_proved']} symbolic proofs {which} "
            f"certified by coqc in the last `symuat certify` run for these sources.")
