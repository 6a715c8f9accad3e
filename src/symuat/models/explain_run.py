"""``symuat model explain`` as a run: load the checkpoint, plan the memory (``--max-memory``), the
DUAT rewrite's own decomposition (streamed), the exact views of :mod:`symuat.models.attribution`,
the checks against the rewrite and the reference, the lenses, and the table or JSON it prints.

The attribution itself (the trace, the views, their report and figure) is
:mod:`symuat.models.attribution`; this module is the command around it, which is why it may import
the planner, the lenses and the reference (they import the attribution, never this module).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from symuat.models.attribution import ADAPTERS, Attribution, explain, json_safe, print_table, report, write_figure
from symuat.models.formats import ModelError


def _one_token(tokenizer, text: str, option: str) -> int:
    # an answer string is tokenized without special tokens (Gemma's tokenizer prepends <bos> otherwise)
    ids = tokenizer.encode(text, add_special_tokens=False).ids if text else []
    if len(ids) != 1:
        raise ModelError(f"{option} {text!r} is {len(ids)} tokens {ids}; give exactly one token "
                         "(mind the leading space: ' Paris')")
    return int(ids[0])


def _reference_checks(net, ids, att: Attribution, tol: float) -> list[dict]:
    """The explained value against transformers' model of the checkpoint's own files (float64, its
    float32 islands patched): one check, or none when the reference tier is not installed."""
    from symuat.models import reference

    reference.refuse_blind(net)
    ref = reference.decoder_reference(net, ids, faithful=True, logits=False)  # the last row's logits only
    if ref is None:
        return []
    tg, n = att.target, att.trace.N - 1
    row = ref["logit_rows"]([n])[0]
    value = float(row[tg.token] - (0.0 if tg.vs is None else row[tg.vs]))
    err = abs(value - tg.value)
    return [{"check": "the explained value = the reference's (transformers, float64)", "value": value,
             "abs_error": err, "passed": bool(err <= tol * max(tg.scale, np.finfo(float).tiny))}]


def _rewrite_checks(net, ids, att: Attribution, tol: float, dec=None) -> list[dict]:
    """The papers' DUAT rewrite itself (:func:`symuat.models.rewrite.decompose_logit`: every layer's
    Eq. 20 parameters, the readout pulled back through them) against the explained token's logit
    (``dec``: that decomposition, formed before the trace on a long text)."""
    from symuat.models.rewrite import decompose_logit

    dec = decompose_logit(net, ids, att.target.token) if dec is None else dec
    value = float(att.trace.logits[att.target.token])
    scale = max(att.target.scale, abs(value), np.finfo(float).tiny)
    return [{"check": f"the DUAT rewrite's terms = the forward's {what}", "value": v,
             "abs_error": abs(v - value), "passed": bool(abs(v - value) <= tol * scale)}
            for what, v in (("logit (their sum)", dec.total), ("logit (through the frozen head)", dec.rewrite_logit))]


def run_explain(args, *, tolerance: float | None = None, say: Callable | None = None,
                load: Callable | None = None, fallback: Callable | None = None) -> int:
    """``symuat model explain`` with ``--vs/--by/--view/--top/--rows``: exit 0 when every view adds
    up, 1 when one does not (or a number is non-finite), 2 on bad input (one line, nothing written)."""
    import importlib.util
    import json
    import sys
    from pathlib import Path

    by = getattr(args, "by", None) or "layer"
    k = 5 if getattr(args, "top", None) is None else args.top
    limit = 20 if getattr(args, "rows", None) is None else args.rows
    view = getattr(args, "view", None) or "residual"
    tol = float(args.tolerance) if tolerance is None else tolerance
    if args.figure:
        if importlib.util.find_spec("matplotlib") is None:
            print("symuat: --figure needs matplotlib (pip install -e '.[docs]')", file=sys.stderr)
            return 2
        fpath = Path(args.figure)
        if fpath.suffix.lower() not in (".png", ".pdf", ".svg") or not fpath.parent.is_dir():
            print(f"symuat: {args.figure}: the figure must be .png, .pdf or .svg in an existing folder",
                  file=sys.stderr)
            return 2
    if k < 0 or limit < 1:
        print("symuat: --top must be ≥ 0 and --rows ≥ 1", file=sys.stderr)
        return 2
    try:
        if load is None:
            from symuat.models.family import load
        if say:
            say("loading the checkpoint; the forward pass and both views")
        net = load(args.model)
        ids = net.tokenize(args.text)
        if fallback is not None and type(net).__name__ not in ADAPTERS:
            if getattr(args, "max_memory", None) is not None:  # planned as that explain runs; refused if it cannot fit
                from symuat.models.plan import parse_size, plan

                plan(net, ids.size, "explain", parse_size(args.max_memory),
                     reference=not getattr(args, "no_reference", True), view="duat")
            return fallback(net)  # a family the views do not read yet: the caller's DUAT-terms explain
        token = None if args.token is None else _one_token(net.tokenizer, args.token, "--token")
        vs = None if getattr(args, "vs", None) is None else _one_token(net.tokenizer, args.vs, "--vs")
        keep, memory = None, None
        if getattr(args, "max_memory", None) is not None:  # planned before anything runs; refused if it cannot fit
            from symuat.models.plan import parse_size, plan

            pl = plan(net, ids.size, "explain", parse_size(args.max_memory),
                      reference=not getattr(args, "no_reference", True), view=view)
            keep, memory = pl.keep_patterns, {"budget_bytes": pl.budget, "estimate_bytes": pl.total,
                                              "patterns_kept": pl.keep_patterns, "estimate": pl.describe()}
        dec = None
        if view in ("duat", "both"):  # first, streamed: its peak and the trace's are never at once
            from symuat.models.rewrite import decompose_logit

            if say:
                say(f"{ids.size} tokens: the DUAT rewrite's own decomposition (streamed)")
            with np.errstate(all="ignore"):
                dec = decompose_logit(net, ids, token, forward=False)  # the trace runs the forward
        if say:
            say(f"{ids.size} tokens: the forward pass and both views")
        with np.errstate(all="ignore"):  # non-finite numbers are reported (null, FAIL), not warned about
            att = explain(net, ids, token, vs, tol=tol, keep=keep)
        if dec is not None and dec.token != att.target.token:  # the same forward, the same prediction
            dec = None
        if vs is not None and att.target.token == vs:
            raise ModelError(f"--vs {args.vs!r} is the explained token itself; the difference is 0")
        rep = {"model": args.model, "text": args.text, **report(att, by=by, k=k, tol=tol)}
        if memory is not None:
            rep["memory_plan"] = memory
        rep["checks"] = _rewrite_checks(net, ids, att, tol, dec) if view in ("duat", "both") else []
        if not getattr(args, "no_reference", True):
            rep["checks"] += _reference_checks(net, ids, att, tol)
        if rep["checks"]:
            rep["passed"] = rep["passed"] and all(c["passed"] for c in rep["checks"])
        if getattr(args, "lens", False):
            from symuat.models.lens import lenses

            lz = lenses(net, ids, att.target.token, k, tr=att.trace)
            rep["lens"], rep["lens_table"] = json_safe(lz.rows), str(lz)
        rep = json_safe(rep)
        if say:
            print("\r\033[K", end="", file=sys.stderr)
        if args.figure:
            write_figure(att, args.figure)
            rep["figure"] = args.figure
    except ModelError as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    views = ("residual", "duat") if view == "both" else (view,)
    if args.format == "json":
        print(json.dumps(rep, indent=1, allow_nan=False, ensure_ascii=False))
    else:
        print_table(rep, args.text, limit=limit, views=views, quiet=getattr(args, "quiet", False))
        if args.figure:
            print(f"figure: {args.figure}")
    return 0 if rep["passed"] else 1
