"""``symuat certify``: the certify tier from the command line."""

from __future__ import annotations

import shutil
import sys
from textwrap import shorten


def run(args) -> int:
    if shutil.which("coqc") is None:
        print("symuat certify: coqc not found (apt-get install coq libcoq-mathcomp-algebra)", file=sys.stderr)
        return 2
    import re

    from symuat.certify.run import TIER, CoqProcessLimit, certify

    pattern = args.pattern or TIER
    try:
        re.compile(pattern)
    except re.error as exc:
        print(f"symuat certify: --pattern {pattern!r} is not a regular expression ({exc})", file=sys.stderr)
        return 2

    def progress(n, total, key, status):
        print(f"\r[{n}/{total}] {status:<11} {key[:60]:<60}", end="", file=sys.stderr, flush=True)

    try:
        record = certify(pattern=pattern, out=args.out, jobs=args.jobs,
                         progress=progress if sys.stderr.isatty() else None, check=getattr(args, "coqchk", False))
    except CoqProcessLimit as exc:  # loud: a slow machine never means fewer certified checks
        print(f"\nsymuat certify: {exc}", file=sys.stderr)
        return 1
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print("\n".join(summary_lines(record)))
    chk = record.get("coqchk")
    if chk is not None and not chk["ok"]:
        print(f"symuat certify: coqchk failed: {chk.get('reason', '')[:400]}", file=sys.stderr)
        return 1
    return 0


def summary_lines(record: dict, width: int | None = None) -> list[str]:
    """What ``symuat certify`` prints for ``record``: the count, the kinds of theorems, then every
    check not certified with its reason — wrapped to ``width`` (default: the terminal's)."""
    from symuat.render.report import terminal_width, wrap

    width = width or terminal_width()
    s = record["summary"]
    out = wrap(f"{s['certified']} of {s['symbolic_proved']} symbolic proved checks certified by Coq "
               f"({s['failed']} failed, {s['unsupported']} not exported: outside the fragment or not "
               f"an identity of matrices"
               + (f"; {s['excluded']} excluded: over the tier's statement budget of {record.get('budget')} "
                  "characters outside the core groups" if s.get("excluded") else "") + "); "
               f"library {record['library_seconds']} s, proofs {record['compile_seconds']} s"
               + _coqchk_text(record.get("coqchk")), width, "", "  ")
    kinds = s.get("proofs", {})
    out += wrap(f"theorems: {kinds.get('normal form', 0)} identities replay symuat's normal form "
                f"(meq_via_nf), {kinds.get('direct', 0)} by the direct tactic"
                + (f"; {kinds['certificate']} of other kinds (witnesses, counts, printed sums)"
                   if kinds.get("certificate") else "")
                + (f"; {kinds['induction over depth']} by induction over the number of layers "
                   "(one theorem for every depth L)" if kinds.get("induction over depth") else ""),
                width, "  ", "    ")
    for key, entry in sorted(record["checks"].items()):
        if entry["status"] != "certified":
            out += wrap(f"{entry['status']:<11} {key}: {shorten(' '.join(entry['reason'].split()), 160, placeholder=' …')}", width, "  ", "    ")
    r = s.get("refutations")
    if r is not None:
        out += wrap(f"{r['certified']} of {r['total']} refuted checks that a failing bottom line rests on "
                    f"certified by Coq (the negated identity proved at the counterexample, or the identity a "
                    f"refuted negation denies; {r['failed']} failed, {r['unsupported']} not exported"
                    + (f", {r['excluded']} over the budget" if r.get("excluded") else "") + ")", width, "", "  ")
        for key, entry in sorted(record.get("refutations", {}).items()):
            if entry["status"] != "certified":
                out += wrap(f"{entry['status']:<11} {key}: {shorten(' '.join(entry['reason'].split()), 160, placeholder=' …')}", width, "  ", "    ")
    c = s.get("corrections")
    if c is not None:
        out += wrap(f"{c['certified']} of {c['total']} corrections of failing bottom lines certified by Coq "
                    f"({c['failed']} failed, {c['unsupported']} not exported"
                    + (f", {c['excluded']} over the budget" if c.get("excluded") else "") + ")", width, "", "  ")
        for key, entry in sorted(record.get("corrections", {}).items()):
            if entry["status"] != "certified":
                out += wrap(f"{entry['status']:<11} {key}: {shorten(' '.join(entry['reason'].split()), 160, placeholder=' …')}", width, "  ", "    ")
    return out


def _coqchk_text(chk) -> str:
    if chk is None:
        return ""
    when = (f"the library's {chk['library_seconds']} s beside the proofs, {chk['after_proofs_seconds']} s after them"
            if "after_proofs_seconds" in chk else f"{chk['seconds']} s")
    return (f"; coqchk {'ok' if chk['ok'] else 'FAILED'} ({chk['theorems']} certified theorems re-checked "
            f"with the library and MathComp, axioms: {chk['axioms']}, {when})")
