"""The ``symuat`` command.

``symuat report [ID ...] [--format table|json|markdown|latex]`` runs the checks and prints one
bottom line per claim of the papers (holds / holds under some readings / fails, with strength
and correction); start here. ``symuat prove [ID ...] [--all] [--format table|json|latex]`` runs
the checks of the given claim IDs (``P5`` a claim, ``P5.f`` a step, ``P5.f[C-col,LR,conf]`` one
reading, ``P5.f[C-col]`` every reading with these tags) and prints one verdict per check, row by
row as they finish. Exit status: 0 when every check ran (a refutation is a result), 1 when a
check crashed, 2 for an unknown ID or a usage error.

Ctrl-C (SIGINT) stops a run: one line on stderr, exit status 130, worker processes ended.

``symuat list`` prints the claim IDs; ``symuat show ID ...`` prints each check in full
(method, counterexample, corrected statement).
"""

from __future__ import annotations

import argparse
import re
import sys

from symuat.errors import UnknownClaimError


def _registry():
    import symuat.claims  # noqa: F401  (registers the catalogue)
    from symuat.kernel.registry import REGISTRY

    return REGISTRY


def select(registry, patterns):
    """Checks for IDs, as :meth:`Registry.select`, plus partial readings: ``P5.f[C-col]`` selects
    every reading of ``P5.f`` whose tags include ``C-col`` (an error lists the valid readings)."""
    out = []
    for pattern in patterns:
        pattern = pattern.strip()
        m = re.fullmatch(r"([^\[]+)\[(.*)\]", pattern)
        if m is None or any(c.key == pattern for c in registry.all_checks()):
            hits = registry.select([pattern])
        else:
            base, tags = m.group(1), [t.strip() for t in m.group(2).split(",") if t.strip()]
            candidates = registry.select([base])
            hits = [c for c in candidates if c.reading and all(t in c.reading for t in tags)]
            if not hits:
                valid = sorted({",".join(c.reading) for c in candidates if c.reading})
                listed = "; ".join(valid[:12]) + (" …" if len(valid) > 12 else "")
                raise UnknownClaimError(
                    f"no reading of {base} has the tags {','.join(tags)!r}"
                    + (f"; valid readings: {listed}" if valid else f"; {base} has no readings"))
        out += [c for c in hits if c not in out]
    return out


def _parser() -> argparse.ArgumentParser:
    from symuat import __version__

    parser = argparse.ArgumentParser(
        prog="symuat",
        description="Mechanical proofs and numeric checks of the UAT / DUAT papers' claims. "
                    "Start with `symuat report`.",
    )
    parser.add_argument("--version", action="version", version=f"symuat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="one bottom line per claim: holds / holds under some readings / fails")
    report.add_argument("ids", nargs="*", metavar="ID", help="claim IDs (default: every claim)")
    report.add_argument("--format", choices=("table", "json", "markdown", "latex"), default="table")
    report.add_argument("--wide", action="store_true", help="do not clip lines to 100 columns")
    report.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes to run the checks on (default: every core); output order is fixed")
    prove = sub.add_parser("prove", help="run checks and print their verdicts")
    prove.add_argument("ids", nargs="*", metavar="ID",
                       help="claim IDs (P5, P5.f, P5.f[C-col,LR,conf], P5.f[C-col])")
    prove.add_argument("--all", action="store_true", help="every claim symuat knows")
    prove.add_argument("--format", choices=("table", "json", "latex"), default="table")
    prove.add_argument("--wide", action="store_true", help="full keys and notes, no wrapping to 100 columns")
    prove.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="processes to run the checks on (default: every core); output order is fixed")
    sub.add_parser("list", help="list the claims and how many checks each has")
    show = sub.add_parser("show", help="run checks and print each in full")
    show.add_argument("ids", nargs="+", metavar="ID")
    certify = sub.add_parser("certify", help="export every symbolic `proved` of D, P, M, H, X1, X3 to Coq and "
                             "compile it (needs coqc and MathComp)")
    certify.add_argument("--out", default=None, help="build directory (default: build/certify)")
    certify.add_argument("--jobs", type=int, default=2, metavar="N", help="coqc processes (default 2)")
    from symuat.models.command import add_parser as add_model_parser

    add_model_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "model":
        from symuat.models.command import run as run_model

        return run_model(args)
    if args.command == "certify":
        from symuat.certify.cli import run as run_certify

        return run_certify(args)
    registry = _registry()
    from symuat import report

    if args.command == "list":
        for claim in registry.ordered_claims():
            print(f"{claim.id:<7} {report.plural(len(claim.checks), 'check'):>10}  {claim.title}")
        return 0
    if args.command == "prove" and not args.all and not args.ids:
        print("symuat prove: give claim IDs or --all (see `symuat list`, or `symuat report` for the "
              "bottom lines)", file=sys.stderr)
        return 2
    try:
        if getattr(args, "all", False) or (args.command == "report" and not args.ids):
            checks = registry.all_checks()
        else:
            checks = select(registry, args.ids)
    except UnknownClaimError as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print("symuat prove: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.command == "report":
        from symuat.verdicts import claim_verdicts

        results = report.run_with_progress(checks, jobs=jobs)
        verdicts = claim_verdicts(results, registry)
        render = {"table": lambda v: report.verdict_table(v, wide=args.wide), "json": report.verdicts_json,
                  "markdown": report.verdicts_markdown, "latex": report.verdicts_latex}[args.format]
        print(render(verdicts))
    elif args.command == "show":
        results = report.run_with_progress(checks, jobs=jobs)
        print("\n\n".join(report.detail(r) for r in results))
    elif args.format == "table":
        writer = report.TableWriter(checks_keys(checks), wide=args.wide, out=sys.stdout)
        results = report.run_with_progress(checks, on_result=writer.row, jobs=jobs)
        writer.finish(results)
    else:
        results = report.run_with_progress(checks, jobs=jobs)
        print(report.to_json(results) if args.format == "json" else report.to_latex(results))
    crashed = [r for r in results if r.error]
    for r in crashed:
        print(f"symuat: check {r.check.key} crashed: {r.error}", file=sys.stderr)
    return 1 if crashed else 0


def checks_keys(checks) -> list[str]:
    return [c.key for c in checks]


def _quiet_on_broken_pipe(run):
    """``symuat prove --all | head -1``: when the reader closes the pipe, stop quietly (exit 0),
    with no BrokenPipeError traceback and no second error when Python flushes stdout at exit."""
    import functools
    import os

    @functools.wraps(run)
    def wrapper(argv: list[str] | None = None) -> int:
        try:
            code = run(argv)
            sys.stdout.flush()
            return code
        except KeyboardInterrupt:  # Ctrl-C: one line, exit 130 (128 + SIGINT); the runner ended its workers
            print("symuat: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError):  # stdout is not a real file (captured in tests)
                pass
            return 0

    return wrapper


main = _quiet_on_broken_pipe(main)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
