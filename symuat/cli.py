"""The ``symuat`` command.

``symuat prove [ID ...] [--all] [--format table|json|latex]`` runs the checks of the given claim
IDs (``P5`` a claim, ``P5.f`` a step, ``P5.f[C-col,LR,conf]`` one reading) and prints one verdict
per check. Exit status: 0 when every check ran (a refutation is a result), 1 when a check
crashed, 2 for an unknown ID or a usage error.

``symuat list`` prints the claim IDs; ``symuat show ID ...`` prints each check in full
(method, counterexample, corrected statement).
"""

from __future__ import annotations

import argparse
import sys

from symuat.errors import UnknownClaimError


def _registry():
    import symuat.claims  # noqa: F401  (registers the catalogue)
    from symuat.kernel.registry import REGISTRY

    return REGISTRY


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symuat",
        description="Mechanical proofs and numeric checks of the UAT / DUAT papers' claims.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    prove = sub.add_parser("prove", help="run checks and print their verdicts")
    prove.add_argument("ids", nargs="*", metavar="ID", help="claim IDs (P5, P5.f, P5.f[C-col,LR,conf])")
    prove.add_argument("--all", action="store_true", help="every claim symuat knows")
    prove.add_argument("--format", choices=("table", "json", "latex"), default="table")
    sub.add_parser("list", help="list the claims and how many checks each has")
    show = sub.add_parser("show", help="run checks and print each in full")
    show.add_argument("ids", nargs="+", metavar="ID")
    from symuat.models.command import add_parser as add_model_parser

    add_model_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "model":
        from symuat.models.command import run as run_model

        return run_model(args)
    registry = _registry()
    from symuat import report

    if args.command == "list":
        for claim in registry.ordered_claims():
            print(f"{claim.id:<7} {len(claim.checks):>3} checks  {claim.title}")
        return 0
    if args.command == "prove" and not args.all and not args.ids:
        print("symuat prove: give claim IDs or --all (see `symuat list`)", file=sys.stderr)
        return 2
    try:
        checks = registry.all_checks() if getattr(args, "all", False) else registry.select(args.ids)
    except UnknownClaimError as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    results = report.run_with_progress(checks)
    if args.command == "show":
        print("\n\n".join(report.detail(r) for r in results))
    elif args.format == "json":
        print(report.to_json(results))
    elif args.format == "latex":
        print(report.to_latex(results))
    else:
        print(report.table(results))
    crashed = [r for r in results if r.error]
    for r in crashed:
        print(f"symuat: check {r.check.key} crashed: {r.error}", file=sys.stderr)
    return 1 if crashed else 0


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
