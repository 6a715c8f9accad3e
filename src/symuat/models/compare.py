r"""The comparisons, for every family: ``check`` (every hidden state and the logits from the DUAT
form, against the float64 forward and the reference) and ``explain`` (one logit as the exact sum of
its DUAT terms, checked against the forward and the reference).

The error measure (:func:`row_errors`) is per token row: :math:`\max_n\|a_n-b_n\|_\infty/\|b_n\|_\infty`
with the absolute :math:`\max|a-b|` beside it — a huge entry in one row cannot hide an error in
another. Non-finite numbers are an error (``nan``), never skipped.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from symuat.models.formats import ModelError

ERROR_DEFINITION = ("per token row n: ||a_n - b_n||_inf / ||b_n||_inf, the maximum over the rows (real tokens); "
                    "'_abs' beside it: max |a - b|")


def row_errors(a, b) -> tuple[float, float]:
    """(max over rows of ``‖aₙ − bₙ‖∞ / ‖bₙ‖∞``, ``max |a − b|``); ``(nan, nan)`` when either is not finite.

    >>> row_errors(np.array([[1e8, 0.0], [1.0, 1.0]]), np.array([[1e8, 0.0], [1.0, 1.01]]))[0] > 9e-3
    True
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("nan"), float("nan")
    if a.size == 0:
        return 0.0, 0.0
    a2, b2 = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1), b.reshape(-1, b.shape[-1]) if b.ndim else b.reshape(1, 1)
    diff = np.abs(a2 - b2).max(axis=1)
    scale = np.maximum(np.abs(b2).max(axis=1), np.finfo(float).tiny)
    return float((diff / scale).max()), float(diff.max())


def relative_error(a, b) -> float:
    """The per-row relative error of :func:`row_errors` (``nan`` when either is not finite)."""
    return row_errors(a, b)[0]


def _cmp(row: dict, name: str, a, b) -> None:
    rel, ab = row_errors(a, b) if b is not None else (None, None)
    row[name], row[name + "_abs"] = rel, ab


def check_tolerance(tolerance) -> float:
    t = float(tolerance)
    if not math.isfinite(t) or t <= 0:
        raise ModelError(f"--tolerance must be a positive finite number, not {tolerance!r}")
    return t


# --------------------------------------------------------------------------------------------
# check: every state and the logits
# --------------------------------------------------------------------------------------------


def check(texts: list[str], where="minilm", *, reference: bool = True, progress: Callable[[str], None] | None = None,
          loaded=None, max_memory: int | None = None) -> dict:
    """Every hidden state (and a decoder's logits) from its DUAT form, vs the forward pass and the reference.

    ``max_memory`` (bytes): a decoder's run is planned (:func:`symuat.models.plan.plan`: logit rows
    at a time) after its weights are loaded and before anything else runs, and refused
    (:class:`ModelError`) when it cannot fit; the plan is reported under ``memory_plan``."""
    from symuat.models import family as fam_mod

    say = progress or (lambda msg: None)
    fam = fam_mod.family_of(where) if loaded is None else fam_mod.named(loaded.family)
    plan = None
    kind = fam.kind
    if max_memory is not None and kind != "decoder":  # not planned, so not promised
        raise ModelError(f"--max-memory plans a decoder's run; {where} is an encoder (at most 512 tokens a "
                         "text): run its check without --max-memory")
    if max_memory is not None:
        from symuat.models.plan import plan as make_plan

        say("loading the checkpoint (to plan the memory)")
        loaded = loaded if loaded is not None else fam_mod.load(where)
        N = max(loaded.tokenize(t).size for t in texts)
        plan = make_plan(loaded, N, "check", max_memory, reference=reference)
    if fam.check is not None:  # a family with its own memory plan (gemma3: the reference first, logits in chunks)
        kw = {} if plan is None else {"chunk": plan.rows}
        out = fam.check(texts, where, reference=reference, progress=progress, loaded=loaded, **kw)
        return _with_plan(out, plan)
    say("loading the checkpoint")
    model = loaded if loaded is not None else fam_mod.load(where)
    if reference:
        from symuat.models import reference as ref_mod

        ref_mod.refuse_blind(model)
    if kind == "encoder":
        return _check_encoder(model, texts, str(where), reference, say)
    return _with_plan(_check_decoder(model, texts, str(where), reference, say, chunk=plan and plan.rows), plan)


def _with_plan(report: dict, plan) -> dict:
    if plan is not None:
        report["memory_plan"] = {"budget_bytes": plan.budget, "estimate_bytes": plan.total, "logit_rows": plan.rows,
                                 "estimate": plan.describe()}
    return report


#: logit rows formed at a time by ``check`` (every family): never an N × vocab array
LOGIT_CHUNK = 64
#: from this many tokens on, ``check`` frees transformers' model once its reference states are taken
LONG_TEXT = 1024


def _check_decoder(net, texts, name, reference, say, chunk: int | None = None) -> dict:
    """Streamed: the forward's states are kept (:math:`O(LNM)`), the rewrite's are compared as the
    one pass produces them (:func:`symuat.models.rewrite.rewrite_states`: one layer's patterns
    alive at a time) and the logits — of the forward, of the DUAT form through the head frozen at
    its last state (X5), of the reference — are formed ``chunk`` rows at a time."""
    from symuat.models import reference as ref_mod
    from symuat.models.rewrite import rewrite_states

    chunk = chunk or LOGIT_CHUNK
    reports, ref_ok = [], False
    for k, text in enumerate(texts):
        ids = net.tokenize(text)
        tag = f"text {k + 1}/{len(texts)}"
        ref = stock = None
        stock_error = None
        if reference:
            say(f"{tag}: reference (transformers, float64)")
            ref = ref_mod.decoder_reference(net, ids, faithful=True, logits=False)
            if ref is not None:
                ref_ok = True
                try:
                    stock = ref_mod.decoder_reference(net, ref_mod.stock_prefix(ids), faithful=False, logits=False)
                except RuntimeError as exc:  # stock HF cannot run in float64 (GPT-2's reorder_and_upcast_attn)
                    stock_error = f"{type(exc).__name__}: {exc}"
            if ids.size >= LONG_TEXT:
                ref_mod.release(net)  # its float64 weights are as large as symuat's; its lm_head stays
        say(f"{tag}: {ids.size} tokens, forward")
        with np.errstate(all="ignore"):
            states = net.hidden_states(ids)
        last = len(states) - 1
        entry = {"text": text, "tokens": int(ids.size), "padded_to": int(ids.size)}
        if stock_error is not None:
            entry["stock_hf_float64_error"] = stock_error  # a finding about HF, not a failure of the check
        if stock is not None:  # the gap of stock HF float64; then only its last state is kept (its logits)
            P = stock["hidden_states"][0].shape[0]  # the prefix it ran on (the whole text when short)
            gaps = [relative_error(stock["hidden_states"][s], states[s][:P] if s < last else net.final_norm(states[s][:P]))
                    for s in range(len(states))]
            stock["hidden_states"] = None
        say(f"{tag}: the DUAT rewrite")
        rows, mine_last = [], None
        with np.errstate(all="ignore"):
            for s, mine in enumerate(rewrite_states(net, states[0], progress=say)):
                row = {"state": s}
                _cmp(row, "rewrite_vs_forward", mine, states[s])
                normed, fwd = (mine, states[s]) if s < last else (net.final_norm(mine), net.final_norm(states[s]))
                r = ref["hidden_states"][s] if ref is not None else None
                _cmp(row, "rewrite_vs_reference", normed, r)
                _cmp(row, "forward_vs_reference", fwd, r)
                rows.append(row)
                mine_last = mine
        say(f"{tag}: logits, {chunk} rows at a time")
        acc = {key: [] for key in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference", "stock")}
        finite, pred = True, None
        with np.errstate(all="ignore"):
            for i in range(0, ids.size, chunk):
                idx = np.arange(i, min(i + chunk, ids.size))
                X = mine_last[idx]
                d_rows = (net.head(X) @ X.reshape(-1)).reshape(idx.size, -1)  # the head frozen at x'_L's rows
                if hasattr(net, "head_bias"):  # a final norm with a bias (LayerNorm's β): the head's constant
                    d_rows = d_rows + net.head_bias(X)
                f_rows = net.logits(states[-1][idx])
                finite = finite and bool(np.isfinite(f_rows).all())
                acc["rewrite_vs_forward"].append(row_errors(d_rows, f_rows))
                if ref is not None:
                    r_rows = ref["logit_rows"](idx)
                    acc["rewrite_vs_reference"].append(row_errors(d_rows, r_rows))
                    acc["forward_vs_reference"].append(row_errors(f_rows, r_rows))
                if stock is not None and idx[0] < P:
                    acc["stock"].append(row_errors(stock["logit_rows"](idx[idx < P]), f_rows[idx < P]))
                if idx[-1] == ids.size - 1 and np.isfinite(f_rows[-1]).all():
                    pred = net.decode(int(np.argmax(f_rows[-1])))
        row = {"state": "logits"}
        for key in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference"):
            row[key], row[key + "_abs"] = worst_of(acc[key]) if acc[key] else (None, None)
        rows.append(row)
        entry.update({"states": rows, "finite": finite, "prediction": pred if finite else None})
        if stock is not None:
            entry["stock_hf_float64_gap"] = {"worst_state": max(gaps), "logits": worst_of(acc["stock"])[0],
                                             "tokens": int(P)}
        reports.append(entry)
        del states, ref, stock, mine_last
    out = {"model": name, "family": net.family, "source": str(net.source), "reference": ref_ok, "texts": reports,
           "error_definition": ERROR_DEFINITION}
    if ref_ok:
        out["reference_definition"] = _reference_note(net)
    return out


def worst_of(errors: list[tuple[float, float]]) -> tuple[float, float]:
    """The worst (rel, abs) of the chunks' :func:`row_errors` (``nan`` wins: non-finite is an error).

    >>> worst_of([(1e-15, 1e-13), (2e-15, 5e-14)])
    (2e-15, 1e-13)
    >>> worst_of([(1e-15, 1e-13), (float("nan"), float("nan"))])
    (nan, nan)
    """
    rel, ab = zip(*errors)
    if not all(math.isfinite(v) for v in rel + ab):
        return float("nan"), float("nan")
    return max(rel), max(ab)


def _reference_note(model) -> str:
    from symuat.models import reference as ref_mod
    from symuat.models.family import named

    how = " with gguf_file=" if str(model.source).endswith(".gguf") else " on the folder"
    return (named(model.family).reference_note or ref_mod.NOTE).format(cls="AutoModelForCausalLM", how=how)


def _check_encoder(bert, texts, name, reference, say) -> dict:
    from symuat.models import reference as ref_mod
    from symuat.numeric.transformer import to_duat

    ids_list = [bert.tokenize(t) for t in texts]
    N = max(len(i) for i in ids_list)
    batch = np.zeros((len(texts), N), dtype=np.int64)
    mask = np.zeros((len(texts), N), dtype=np.int64)
    for k, ids in enumerate(ids_list):
        batch[k, : len(ids)] = ids
        mask[k, : len(ids)] = 1
    ref = None
    if reference:
        say("reference: HF BertModel in float64")
        ref = ref_mod.encoder_reference(bert.folder, batch, mask)
    reports = []
    for k, text in enumerate(texts):
        keep = mask[k].astype(bool)
        real = int(keep.sum())
        say(f"text {k + 1}/{len(texts)}: {real} tokens (padded to {N})")
        blocks = bert.blocks_for(keep)
        X0 = bert.embed(batch[k])
        states = [X0]
        with np.errstate(all="ignore"):
            for block in blocks:  # the independent forward pass
                if not np.isfinite(states[-1]).all():
                    break  # a non-finite state is a failure, reported below; nothing to rewrite past it
                states.append(block.forward(states[-1]))
            finite = all(np.isfinite(S).all() for S in states) and len(states) == len(blocks) + 1
            say("  the DUAT form and every state from it, in one pass")
            rewritten = to_duat(blocks, X0).states() if finite else None
        rows = []
        for s in range(len(states)):
            rewrite = rewritten[s] if rewritten is not None else np.full_like(X0, np.nan)
            fwd = states[s][keep]
            row = {"state": s}
            _cmp(row, "rewrite_vs_forward", rewrite[keep], fwd)
            r = ref[s][k][keep] if ref is not None else None
            _cmp(row, "rewrite_vs_reference", rewrite[keep], r)
            _cmp(row, "forward_vs_reference", fwd, r)
            rows.append(row)
        reports.append({"text": text, "tokens": real, "padded_to": N, "states": rows, "finite": finite})
    out = {"model": name, "family": bert.family, "source": str(bert.source), "reference": ref is not None,
           "texts": reports, "error_definition": ERROR_DEFINITION}
    if ref is not None:
        out["reference_definition"] = _reference_note(bert)
    return out


def verdict(report: dict, tolerance: float) -> dict:
    """``passed``, ``worst`` and ``non_finite`` of a check report: every rewrite error (vs the forward
    and vs the reference) finite and ≤ ``tolerance``; a non-finite state or error fails."""
    errors, nonfinite = [], not all(t.get("finite", True) for t in report["texts"])
    for t in report["texts"]:
        for s in t["states"]:
            for key in ("rewrite_vs_forward", "rewrite_vs_reference"):
                v = s.get(key)
                if v is None:
                    continue
                if not math.isfinite(v):
                    nonfinite = True
                else:
                    errors.append(v)
    worst = math.inf if nonfinite or not errors else max(errors)
    confirmed = report.get("constants_confirmed_by_transformers", True)  # gemma3: a constant HF reads otherwise fails
    confirmed = confirmed and report.get("weight_processing", {}).get("passed", True)  # gemma3: spec §9, WP9/WP11
    return {"tolerance": tolerance, "passed": bool(errors) and not nonfinite and worst <= tolerance and confirmed,
            "worst": worst if math.isfinite(worst) else None, "non_finite": nonfinite}


# --------------------------------------------------------------------------------------------
# explain: one logit as the exact sum of its DUAT terms, checked
# --------------------------------------------------------------------------------------------


def explain(where, text: str, token: str | None = None, *, tolerance: float = 1e-12, reference: bool = True,
            loaded=None) -> tuple[dict, object, list[str]]:
    """The decomposition of the next-token logit after ``text`` and its checks; returns
    (report, the decomposition, the input tokens as text)."""
    from symuat.models import family as fam_mod
    from symuat.models import reference as ref_mod
    from symuat.models.rewrite import decompose_logit

    net = loaded if loaded is not None else fam_mod.load(where)
    if getattr(net, "kind", "decoder") != "decoder":
        raise ModelError(f"explain takes a decoder (smollm2, a .gguf, a decoder folder), not {where!r} "
                         f"({net.family}, an encoder)")
    if reference:
        ref_mod.refuse_blind(net)
    ids = net.tokenize(text)
    tid = None
    if token is not None:
        enc = net.tokenizer.encode(token, add_special_tokens=False).ids if token else []  # no <bos> (gemma3)
        if len(enc) != 1:
            raise ModelError(f"--token {token!r} is {len(enc)} tokens {enc}; give exactly one token "
                             "(mind the leading space: ' Paris')")
        tid = enc[0]
    with np.errstate(all="ignore"):
        states = net.hidden_states(ids)
        dec = decompose_logit(net, ids, tid, states=states)  # streamed: one layer's patterns at a time
        n = dec.position
        logits_n = net.logits(states[-1][n:n + 1])[0]  # the position's logits only, never N × vocab
    scale = float(np.abs(logits_n).max()) if np.isfinite(logits_n).all() else float("nan")
    scale = max(scale, np.finfo(float).tiny)
    checks = []

    def add(name, value, against):
        ab = abs(value - against)
        rel = ab / scale
        ok = math.isfinite(rel) and rel <= tolerance
        checks.append({"check": name, "value": _clean(value), "against": _clean(against), "abs_error": _clean(ab),
                       "rel_error": _clean(rel), "passed": bool(ok)})

    add("sum of the terms = the forward's logit", dec.total, dec.logit)
    add("the rewrite's logit (DUAT form through the frozen head) = the forward's logit", dec.rewrite_logit, dec.logit)
    ref_used = False
    if reference:
        ref = ref_mod.decoder_reference(net, ids, faithful=True, logits=False)
        if ref is not None:
            ref_used = True
            r = float(ref["logit_rows"]([n])[0, dec.token])
            add("the forward's logit = the reference's logit (transformers, float64)", dec.logit, r)
            add("sum of the terms = the reference's logit", dec.total, r)
    words = [net.decode(int(i)) for i in ids]
    passed = all(c["passed"] for c in checks)
    report = {
        "model": str(where), "family": net.family, "source": str(net.source), "text": text, "tokens": words,
        "position": n, "token": dec.token_text, "token_id": dec.token, "logit": _clean(dec.logit),
        "sum_of_terms": _clean(dec.total), "abs_error": _clean(dec.abs_error),
        "rel_error": _clean(dec.abs_error / scale), "error_definition": "|a - b| / ||logits_n||_inf (the logits "
        "of the position); every check below must be within the tolerance", "tolerance": tolerance,
        "reference": ref_used, "checks": checks, "passed": passed,
        "terms": ([{"term": "linear path A_L x'_0", "value": _clean(dec.linear),
                    "per_input_token": [{"token": w, "value": _clean(float(v))}
                                        for w, v in zip(words, dec.linear_per_token)]}]
                  + [{"term": f"layer {j + 1} sigma-term", "value": _clean(float(v))} for j, v in enumerate(dec.layers)]
                  + [{"term": "bias terms c_L", "value": _clean(dec.bias)}]),
    }
    return report, dec, words


def _clean(v):
    v = float(v)
    return v if math.isfinite(v) else None
