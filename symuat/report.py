"""Rendering results: the verdict table, JSON, LaTeX, and the derivation text of ``proofs/``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Iterable

from symuat.kernel.registry import REGISTRY, Result
from symuat.kernel.status import Status

_MARK = {
    "proved": "✔",
    "proved-at-sizes": "✔ₛ",
    "numeric-only": "≈",
    "refuted": "✘",
    "informal": "·",
    "definition": "≔",
    "error": "!",
}


def status_of(result: Result) -> str:
    return str(result.verdict.status) if result.verdict else "error"


def summary_line(results: list[Result]) -> str:
    counts = Counter(status_of(r) for r in results)
    order = ["proved", "proved-at-sizes", "numeric-only", "refuted", "informal", "definition", "error"]
    parts = [f"{counts[s]} {s}" for s in order if counts[s]]
    total = sum(r.seconds for r in results)
    return f"{len(results)} checks: " + ", ".join(parts) + f" ({total:.1f} s)"


def short_note(result: Result) -> str:
    if result.error:
        return result.error
    v = result.verdict
    bits = []
    if v.sizes:
        bits.append("sizes " + "; ".join(",".join(f"{k}={x}" for k, x in s.items()) for s in v.sizes[:3])
                    + (" …" if len(v.sizes) > 3 else ""))
    if v.counterexample is not None:
        sizes = ",".join(f"{k}={x}" for k, x in v.counterexample.sizes.items())
        bits.append(f"counterexample [{sizes}]: {v.counterexample.reason}")
    if v.quantities:
        q = {k: x for k, x in v.quantities.items() if k not in ("how", "witness", "last_instance")}
        if q:
            bits.append(", ".join(f"{k} = {x}" for k, x in q.items()))
    if "witness" in v.quantities:
        w = v.quantities["witness"]
        bits.append("witness at " + ",".join(f"{k}={x}" for k, x in w["sizes"].items()))
    if v.corrected is not None:
        status = v.corrected.verdict.status if v.corrected.verdict else "none found"
        bits.append(f"corrected: {status}")
    return "; ".join(bits)


def table(results: list[Result], width: int | None = None) -> str:
    import shutil

    width = width or max(140, shutil.get_terminal_size((140, 20)).columns)
    keyw = max([len(r.check.key) for r in results] + [8])
    lines = []
    current = None
    for r in results:
        claim_id = r.check.id.split(".")[0]
        if claim_id != current:
            current = claim_id
            claim = REGISTRY.claims.get(claim_id)
            title = claim.title if claim else ""
            lines.append(f"\n{claim_id} — {title}")
        status = status_of(r)
        note = short_note(r)
        room = max(30, width - keyw - 34)
        if len(note) > room:
            note = note[: room - 1] + "…"
        lines.append(f"  {r.check.key:<{keyw}}  {_MARK[status]:<2} {status:<16} {r.seconds:6.2f}s  {note}")
    lines.append("")
    lines.append(summary_line(results))
    return "\n".join(lines).lstrip("\n")


def to_json(results: list[Result]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2, ensure_ascii=False)


def _tex_escape(text: str) -> str:
    return (text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%")
            .replace("&", r"\&").replace("#", r"\#").replace("{", r"\{").replace("}", r"\}"))


def to_latex(results: list[Result]) -> str:
    rows = [
        r"\begin{longtable}{lp{0.45\textwidth}ll}",
        r"\textbf{ID} & \textbf{statement} & \textbf{status} & \textbf{s}\\\hline",
    ]
    for r in results:
        rows.append(
            rf"\texttt{{{_tex_escape(r.check.key)}}} & ${r.check.statement}$ & "
            rf"\texttt{{{status_of(r)}}} & {r.seconds:.2f}\\"
        )
    rows.append(r"\end{longtable}")
    return "\n".join(rows)


def detail(result: Result) -> str:
    """A human-readable account of one check: statement, method, evidence, correction."""
    c = result.check
    lines = [f"{c.key}: {status_of(result)}  ({result.seconds:.2f} s)", f"  statement: {c.statement}"]
    if c.note:
        lines.append(f"  reading:   {c.note}")
    if result.error:
        lines.append(f"  ERROR: {result.error}")
        return "\n".join(lines)
    v = result.verdict
    lines.append(f"  method:    {v.method}")
    if v.construction:
        lines.append(f"  construction: {v.construction}")
    if v.sizes:
        lines.append(f"  sizes:     {v.sizes}")
    if v.detail:
        lines.append(f"  detail:    {v.detail}")
    if v.numeric:
        n = v.numeric
        lines.append(f"  numeric:   max residual {n.max_residual:.3g} ≤ {n.tolerance:g} at {len(n.sizes)} sizes × "
                     f"seeds {n.seeds}")
    for k, q in v.quantities.items():
        if k == "witness":
            lines.append(f"  witness:   at {q['sizes']}: {q['reason']}")
            lines.append(f"             values {q['values']}")
            lines.append(f"             {q['exact_recheck']}; {q['numeric_recheck']}")
        elif k != "last_instance":
            lines.append(f"  {k}: {q}")
    if v.counterexample is not None:
        x = v.counterexample
        lines.append(f"  counterexample at {x.sizes}: {x.reason}")
        if x.values:
            lines.append(f"    values: {json.dumps(x.as_dict()['values'])}")
        if x.lhs is not None:
            lines.append(f"    lhs = {json.dumps(x.as_dict()['lhs'])}   rhs = {json.dumps(x.as_dict()['rhs'])}")
        lines.append(f"    {x.exact_recheck}; {x.numeric_recheck}")
    if v.corrected is not None:
        cv = v.corrected.verdict
        lines.append(f"  corrected: {v.corrected.statement}")
        lines.append(f"    → {cv.status if cv else 'none found'}" + (f" ({cv.method})" if cv else ""))
    return "\n".join(lines)


def run_with_progress(checks, stream=None, jobs: int | None = 1) -> list[Result]:
    """Run checks (on ``jobs`` processes, see :mod:`symuat.kernel.runner`; results in the order
    of ``checks``), showing progress on ``stream`` when it is a terminal."""
    from symuat.kernel.runner import run_checks

    stream = stream if stream is not None else sys.stderr
    show = hasattr(stream, "isatty") and stream.isatty()
    results = []
    for k, result in enumerate(run_checks(checks, jobs), 1):
        if show:
            stream.write(f"\r\033[K[{k}/{len(checks)}] {result.check.key}")
            stream.flush()
        results.append(result)
    if show:
        stream.write("\r\033[K")
        stream.flush()
    return results


def derivation(claim_ids: Iterable[str]) -> tuple[str, list[Result]]:
    """The printed chains of the claims, step by step, each with its verdict (for ``proofs/``)."""
    out, results = [], []
    for cid in claim_ids:
        claim = REGISTRY.claims[cid]
        out.append(f"{'=' * 78}\n{claim.id} — {claim.title}\n  where: {claim.where}\n  as printed: {claim.statement}")
        if claim.remarks:
            out.append(f"  {claim.remarks}")
        for result in run_with_progress(claim.checks):
            results.append(result)
            out.append("\n" + "\n".join("  " + line for line in detail(result).splitlines()))
    return "\n".join(out), results
