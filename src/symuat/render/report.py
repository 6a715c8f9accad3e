"""Rendering results: the verdict table, JSON, LaTeX, and the derivation text of ``proofs/``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Iterable

from symuat.kernel import registry as _registry
from symuat.kernel.registry import REGISTRY, Result
from symuat.kernel.status import Status
from symuat.text.plain_text import pretty  # LaTeX → Unicode for the terminal (report.pretty)


def _certification(key: str) -> dict | None:
    from symuat.certify.record import certification  # the certify tier's record, if current

    return certification(key)


_registry.install_certification(_certification)  # Result.as_dict reports it; the kernel reads no record

POSITIVE_STATUSES = (Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY)

_MARK = {
    "proved": "✔",
    "proved-at-sizes": "✔ₛ",
    "numeric-only": "≈",
    "refuted": "✘",
    "informal": "·",
    "definition": "≔",
    "error": "!",
}
#: the bottom lines' marks
#: the width when the terminal's is unknown (output to a pipe or a file, no ``COLUMNS``)
WIDTH = 100
#: the narrowest width symuat lays out for (a narrower terminal gets lines of this width)
MIN_WIDTH = 60


def terminal_width() -> int:
    """The width to lay out for: ``COLUMNS`` when set, else the terminal's, else :data:`WIDTH`;
    never below :data:`MIN_WIDTH`.

    >>> import os; os.environ["COLUMNS"] = "80"; terminal_width()
    80
    >>> os.environ["COLUMNS"] = "20"; terminal_width()
    60
    >>> del os.environ["COLUMNS"]
    """
    import os
    import shutil

    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        columns = shutil.get_terminal_size((WIDTH, 24)).columns or WIDTH
    return max(columns, MIN_WIDTH)


def wrap(text: str, width: int, indent: str = "", hang: str | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` characters: the first indented by ``indent``, the
    others by ``hang`` (default: as the first). Breaks at spaces, then after ``,`` or ``;`` inside a
    long run (``C-col,LR,square,W12x``), and only then inside a word: nothing is clipped.

    >>> wrap("1 of 12 readings: C-col,LR,square,W12x; steps f, g wrong", 24, "", "  ")
    ['1 of 12 readings:', '  C-col,LR,square,W12x;', '  steps f, g wrong']
    """
    import re

    hang = indent if hang is None else hang
    lines: list[str] = []
    line = indent
    fresh = True  # nothing but the indent on the line yet
    for word in re.findall(r"\S+", text):
        pieces = [word]
        room = width - len(hang)
        if len(word) > room:
            pieces = re.findall(r"[^,;]*[,;]|[^,;]+$", word) or [word]
            pieces = [p[k:k + room] for p in pieces for k in range(0, len(p), max(room, 1))]
        for k, piece in enumerate(pieces):
            sep = "" if fresh or k > 0 else " "
            if not fresh and len(line) + len(sep) + len(piece) > width:
                lines.append(line)
                line, fresh, sep = hang, True, ""
            line += sep + piece
            fresh = False
    if not fresh or not lines:
        lines.append(line)
    return [ln.rstrip() for ln in lines]


def plural(n: int, word: str) -> str:
    """``1 check``, ``2 checks``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _clip(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def _wrap_key(key: str, width: int) -> list[str]:
    """A check key in lines of at most ``width`` characters, broken after commas."""
    if len(key) <= width:
        return [key]
    lines, line = [], ""
    for part in key.replace(",", ",\x00").split("\x00"):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = "  " + part
        else:
            line += part
    lines.append(line)
    return lines


def status_of(result: Result) -> str:
    return str(result.verdict.status) if result.verdict else "error"


def paper_word(result: Result) -> str:
    """How the result bears on the paper: ``agrees``, ``differs``, ``extension``, ``—``; a reading
    the text does not admit is marked ``(alt)``."""
    from symuat.verdicts.roll_up import agrees_with_paper

    c = result.check
    if c.role == "extension":
        return "ext."
    agree = agrees_with_paper(c, result.verdict)
    word = "—" if agree is None else "agrees" if agree else "differs"
    return word + ("*" if not c.admitted and agree is not None else "")


def summary_line(results: list[Result]) -> str:
    counts = Counter(status_of(r) for r in results)
    order = ["proved", "proved-at-sizes", "numeric-only", "refuted", "informal", "definition", "error"]
    parts = [f"{counts[s]} {s}" for s in order if counts[s]]
    total = sum(r.seconds for r in results)

    return f"{plural(len(results), 'check')}: " + ", ".join(parts) + f" ({total:.1f} s)"


def paper_line(results: list[Result]) -> str:
    """How many checks, on the readings the text admits, agree with the paper."""
    from symuat.verdicts.roll_up import agrees_with_paper

    agree = Counter(agrees_with_paper(r.check, r.verdict) for r in results
                    if r.check.admitted and r.check.role != "extension")
    ext = sum(1 for r in results if r.check.role == "extension")
    return (f"Checks on the readings the text admits: {agree[True]} agree with the paper, "
            f"{agree[False]} differ" + (f"; {plural(ext, 'check')} of symuat's extensions" if ext else "")
            + " (bottom lines per claim and per reading: symuat report)")


def short_note(result: Result, unicode: bool = True) -> str:
    return "; ".join(note_bits(result))


def note_bits(result: Result) -> list[str]:
    """The notes of a ``prove`` row, one piece each: hypotheses, what the paper says, quantities,
    sizes, the counterexample, the witness, the correction."""
    if result.error:
        return [result.error]
    v = result.verdict
    bits = []
    if v.hypotheses:
        bits.append("assuming " + "; ".join(v.hypotheses))
    if result.check.paper_says:
        bits.append(f"paper: {result.check.paper_says}")
    if v.quantities:
        q = {k: x for k, x in v.quantities.items() if k not in ("how", "witness", "last_instance")}
        if q:
            bits.append(", ".join(f"{k} = {x}" for k, x in q.items()))
    if v.sizes:
        bits.append("sizes " + "; ".join(",".join(f"{k}={x}" for k, x in s.items()) for s in v.sizes[:3])
                    + (" …" if len(v.sizes) > 3 else ""))
    if v.counterexample is not None:
        sizes = ",".join(f"{k}={x}" for k, x in v.counterexample.sizes.items())
        bits.append(f"counterexample at {sizes}: {v.counterexample.reason}")
    if "witness" in v.quantities:
        w = v.quantities["witness"]
        bits.append("witness at " + ",".join(f"{k}={x}" for k, x in w["sizes"].items()))
    if v.corrected is not None:
        status = v.corrected.verdict.status if v.corrected.verdict else "none found"
        bits.append(f"corrected: {status}")
    return bits


_NUMBER = __import__("re").compile(r"(?<![A-Za-z_=])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _merged_notes(notes: list[list[str]]) -> list[str]:
    """The notes of a group's members (equal but for their numbers), each number that differs
    shown as its range over the group (``0.702–1.49``)."""
    first = notes[0]
    out = []
    for k, text in enumerate(first):
        columns = [_NUMBER.findall(n[k]) for n in notes]
        pieces, pos = [], 0
        for j, m in enumerate(_NUMBER.finditer(text)):
            vals = {c[j] for c in columns if j < len(c)}
            shown = m.group(0)
            if len(vals) > 1:
                nums = sorted(vals, key=float)
                shown = f"{nums[0]}–{nums[-1]}"
            pieces.append(text[pos:m.start()] + shown)
            pos = m.end()
        out.append("".join(pieces) + text[pos:])
    return out


def grouped_rows(results: list[Result], width: int | None = None, wide: bool = False) -> list[str]:
    """The verdict table with the readings of one step that share an outcome on one row.

    Results of one step (a check ID) with the same status, the same agreement with the paper and
    the same notes form a group; a group prints once, with how many readings it holds and the
    axis values that set it apart (an axis every value of which the group covers is left out).
    ``prove T8 --failed --group`` is a screen, not 3,000 lines.
    """
    from symuat.verdicts.roll_up import _keyed_values, reading_axes

    width = width or terminal_width()
    by_id: dict = {}
    for r in results:
        by_id.setdefault(r.check.id, []).append(r)
    out: list[str] = []
    current = None
    for check_id, mine in by_id.items():
        claim_id = check_id.split(".")[0]
        if claim_id != current:
            if current is not None:
                out.append("")
            current = claim_id
            claim = REGISTRY.claims.get(claim_id)
            head = f"{claim_id} — {claim.title if claim else ''}"
            out += [head] if wide else wrap(head, width, "", "  ")
        # every reading of this step symuat has (not just the shown ones): the axis values a
        # group does not cover are what sets it apart
        every = [c for c in REGISTRY.all_checks() if c.id == check_id]
        keyed = {**_keyed_values(every), "__id__": check_id}
        values: dict = {}
        for c in every:
            for axis, tag in reading_axes(claim_id, c.reading, keyed)[0].items():
                values.setdefault(axis, [])
                if tag not in values[axis]:
                    values[axis].append(tag)
        groups: dict = {}
        for r in mine:
            bits = note_bits(r)
            key = (status_of(r), paper_word(r), tuple(_NUMBER.sub("#", b) for b in bits))
            groups.setdefault(key, []).append((r, bits))
        for (status, word, _), members in groups.items():
            rs = [r for r, _ in members]
            bits = _merged_notes([b for _, b in members])
            n_all = len(every)
            if not any(r.check.reading for r in rs):
                which = ""
            else:
                seen: dict = {}
                items: list = []
                for r in rs:
                    axes, extra = reading_axes(claim_id, r.check.reading, keyed)
                    for axis, tag in axes.items():
                        seen.setdefault(axis, [])
                        if tag not in seen[axis]:
                            seen[axis].append(tag)
                    items += [t for t in extra if t not in items]
                apart = ["|".join(tags) for axis, tags in seen.items()
                         if len(tags) < len(values.get(axis, ()))]
                which = "; ".join(apart + items) or "any reading"
            count = f"{len(rs)} of {n_all} readings" if n_all > 1 else "1 check"
            head = f"  {check_id}  {_MARK[status]:<2} {status:<15} {word:<9} {count}"
            out.append(head if wide else head[:width])
            for text in ([f"readings: {which}"] if which else []) + list(bits):
                out += [f"      {text}"] if wide else wrap(text, width, " " * 6, " " * 8)
    return out


class TableWriter:
    """The verdict table, one row per check, written as results arrive (``prove`` streams)."""

    def __init__(self, results_or_keys=(), width: int | None = None, wide: bool = False, out=None):
        self.wide = wide
        self.width = width or terminal_width()
        keys = [r.check.key if isinstance(r, Result) else r for r in results_or_keys]
        longest = max([len(k) for k in keys] + [8])
        self.keyw = longest if wide else min(longest, 30, max(self.width - 50, 12))
        self.current = None
        self.out = out
        self.lines: list[str] = []

    def _emit(self, line: str):
        self.lines.append(line)
        if self.out is not None:
            self.out.write(line + "\n")
            self.out.flush()

    def row(self, r: Result):
        claim_id = r.check.id.split(".")[0]
        if claim_id != self.current:
            claim = REGISTRY.claims.get(claim_id)
            title = claim.title if claim else ""
            if self.current is not None:
                self._emit("")
            self.current = claim_id
            for line in ([f"{claim_id} — {title}"] if self.wide else wrap(f"{claim_id} — {title}", self.width, "", "  ")):
                self._emit(line)
        status = status_of(r)
        bits = note_bits(r)
        note = "; ".join(bits)
        key_lines = [r.check.key] if self.wide else _wrap_key(r.check.key, self.keyw)
        head = (f"  {key_lines[0]:<{self.keyw}}  {_MARK[status]:<2} {status:<15} {paper_word(r):<9}"
                f"{r.seconds:6.2f}s  ")
        if self.wide or len(head) + len(note) <= self.width:
            self._emit((head + note).rstrip())
            for extra in key_lines[1:]:
                self._emit(f"  {extra}")
            return
        # the notes do not fit beside the row: each on its own line(s) below it
        self._emit(head.rstrip())
        for extra in key_lines[1:]:
            self._emit(f"  {extra}")
        for bit in bits:
            for line in wrap(bit, self.width, " " * 6, " " * 8):
                self._emit(line)

    def finish(self, results: list[Result], shown: int | None = None):
        self._emit("")
        if shown is not None and shown != len(results):
            self._emit(f"shown: {shown} of {plural(len(results), 'check')} (the filter of --status/--failed)")
        for text in (summary_line(results), paper_line(results),
                     "paper: does the outcome agree with the paper? (* reading not admitted by the text; "
                     "ext. symuat's)"):
            for line in ([text] if self.wide else wrap(text, self.width, "", "  ")):
                self._emit(line)

    def text(self) -> str:
        return "\n".join(self.lines)


def table(results: list[Result], width: int | None = None, wide: bool = False) -> str:
    writer = TableWriter(results, width=width, wide=wide)
    for r in results:
        writer.row(r)
    writer.finish(results)
    return writer.text()


def record(result: Result) -> dict:
    """One ``prove --format json`` record: the result, how it bears on the paper, and the
    check's annotations."""
    from symuat.verdicts.roll_up import agrees_with_paper

    c = result.check
    out = result.as_dict()
    if c.role == "extension":
        out["extension"] = True
        out["agrees_with_paper"] = None
    else:
        out["agrees_with_paper"] = agrees_with_paper(c, result.verdict)
    out.update(polarity=c.polarity, admitted=c.admitted, role=c.role)
    if c.paper_says is not None:
        out["paper_says"] = c.paper_says
    return out


def to_json(results: list[Result]) -> str:
    return json.dumps([record(r) for r in results], indent=2, ensure_ascii=False)


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


def sizes_text(sizes) -> str:
    """Sizes as a reader writes them: ``{'m': 1, 'n': 2}`` → ``m = 1, n = 2``; a list of them
    separated by ``;``; anything else as it prints.

    >>> sizes_text({'n': 2}), sizes_text([{'m': 1, 'n': 2}, {'m': 3, 'n': 3}])
    ('n = 2', 'm = 1, n = 2; m = 3, n = 3')
    """
    if isinstance(sizes, dict):
        return ", ".join(f"{k} = {x}" for k, x in sizes.items())
    if isinstance(sizes, (list, tuple)) and sizes and all(isinstance(s, dict) for s in sizes):
        return "; ".join(sizes_text(s) for s in sizes)
    return str(sizes)


def fit_lines(lines: list[str], width: int) -> list[str]:
    """Lines of a labelled account (``  method:    exact …``) wrapped to ``width``: a continuation
    starts under the text after its label (or 4 columns in, when the label is wide); nothing is
    clipped.

    >>> fit_lines(["  note:      one two three four five six seven eight"], 40)
    ['  note:      one two three four five six', '             seven eight']
    """
    import re

    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        m = re.match(r"(\s*)((?:[A-Za-z][\w ,=]{0,40}?:|→)\s+)?", line)
        lead = m.group(1) + (m.group(2) or "")
        hang = " " * (len(lead) if len(lead) <= width // 3 else len(m.group(1)) + 4)
        out += wrap(line[len(lead):], width, lead, hang)
    return out


def detail(result: Result, width: int | None = None) -> str:
    """A human-readable account of one check: statement, method, evidence, correction — in lines
    of at most ``width`` columns (``symuat show`` passes the terminal's; default: unwrapped)."""
    lines = _detail_lines(result)
    return "\n".join(lines if width is None else fit_lines(lines, width))


def details_json(results: list[Result]) -> str:
    """``show --format json``: the records of ``prove --format json``, each with the statement in
    Unicode, the reading's tags with their meanings and the why line of a refutation."""
    from symuat.kernel.why import why_line
    from symuat.verdicts.roll_up import reading_text

    out = []
    for r in results:
        rec = record(r)
        rec["statement_text"] = pretty(r.check.statement)
        if r.check.reading:
            rec["reading_text"] = reading_text(r.check.reading)
        why = why_line(r.check, r.verdict)
        if why:
            rec["why"] = pretty(why)
        out.append(rec)
    return json.dumps(out, indent=2, ensure_ascii=False, default=str)


def claim_list(claims, fmt: str = "table", width: int | None = None) -> str:
    """``symuat list``: one row per claim (ID, how many checks, title wrapped under the title
    column), or a JSON list of ``{id, title, group, checks}``."""
    claims = list(claims)
    if fmt == "json":
        return json.dumps([{"id": c.id, "title": c.title, "group": c.group, "checks": len(c.checks)}
                           for c in claims], indent=2, ensure_ascii=False)
    width = width or terminal_width()
    lines = []
    for c in claims:
        head = f"{c.id:<7} {plural(len(c.checks), 'check'):>10}  "
        lines += wrap(c.title, width, head, " " * len(head))
    return "\n".join(lines)


def reading_legend(width: int | None = None, wide: bool = False) -> list[str]:
    """The one-line legend of the reading syntax (``,`` ``;`` ``|``), for output that prints
    readings."""
    from symuat.verdicts.readings import READINGS

    return [READINGS] if wide else wrap(READINGS, width or terminal_width(), "", "  ")


def _detail_lines(result: Result) -> list[str]:
    from symuat.text.values import readable, show_array  # exact values in Unicode; long rationals by size

    c = result.check
    lines = [f"{c.key}: {status_of(result)}  ({result.seconds:.2f} s)",
             f"  statement: {pretty(c.statement)}", f"  LaTeX:     {c.statement}"]
    if c.reading:
        from symuat.verdicts.roll_up import reading_text  # issue 19: each tag with its meaning

        lines.append(f"  reading:   {reading_text(c.reading)}"
                     + ("" if c.admitted else "; symuat's alternative, the text does not admit it"))
    bearing = {"asserts": "the paper asserts this statement", "denies": "the paper asserts it is false",
               None: "not a claim of the paper"}[c.polarity]
    status = result.verdict.status if result.verdict is not None else None
    if c.role == "extension":
        bearing = "symuat's own extension, not a claim of the paper"
    elif c.role == "cited":
        bearing = "a theorem the papers cite and use; symuat neither proves nor refutes it"
    elif c.polarity is None and status is Status.INFORMAL:  # the papers wrote it: their informal claim
        bearing = "the papers' informal claim (prose: no checkable identity)"
    elif c.polarity is None and status is Status.DEFINITION:
        bearing = "a definition the papers give"
    lines.append(f"  paper:     {bearing}; {paper_word(result)}"
                 + (f"; the paper says: {c.paper_says}" if c.paper_says else "")
                 + (f"; {c.role} of the claim" if c.role in ("step", "quantity") else ""))
    if c.note:
        lines.append(f"  note:      {c.note}")
    from symuat.kernel.why import why_line  # every refuted check: hand-written, else derived (#19)

    why = why_line(c, result.verdict)
    if why:
        lines.append(f"  why:       {pretty(why)}")
    if result.error:
        lines.append(f"  ERROR: {result.error}")
        return lines
    v = result.verdict
    lines.append(f"  method:    {readable(v.method)}")
    from symuat.certify.record import certification

    cert = certification(c.key)
    if cert and c.coq_states:  # the theorems state less than the check: never "certified" for it
        lines.append(f"  coq:       {', '.join(cert['theorems'])} compiled; they state {c.coq_states} — "
                     "not the statement above, which is not certified")
    elif cert:
        lines.append(f"  certified: coq ({', '.join(cert['theorems'])}; lemmas: {', '.join(cert['lemmas'])})")
    if v.hypotheses:
        lines.append(f"  assuming:  {'; '.join(v.hypotheses)}")
    if v.construction:
        lines.append(f"  construction: {v.construction}")
    if v.sizes:
        lines.append(f"  sizes:     {sizes_text(v.sizes)}")
    if v.detail:
        lines.append(f"  detail:    {v.detail}")
    if v.numeric:
        n = v.numeric
        lines.append(f"  numeric:   max residual {n.max_residual:.3g} ≤ {n.tolerance:g} at {len(n.sizes)} sizes × "
                     f"seeds {n.seeds}")
    for k, q in v.quantities.items():
        if k == "witness":
            lines.append(f"  witness:   at {sizes_text(q['sizes'])}: {q['reason']}")
            lines.append("             values " + ", ".join(f"{n} = {show_array(x)}" for n, x in q["values"].items()))
            if q.get("lhs") is not None:
                lines.append(f"             lhs = {show_array(q['lhs'])}   rhs = {show_array(q['rhs'])}")
            lines.append(f"             {q['exact_recheck']}; {q['numeric_recheck']}")
        elif k != "last_instance":
            lines.append(f"  {k}: {readable(str(q))}")
    if v.counterexample is not None:
        x = v.counterexample
        lines.append(f"  counterexample at {sizes_text(x.sizes)}: "
                     f"{pretty(x.reason) if '$' in x.reason else readable(x.reason)}")
        if x.values:
            lines.append("    values: " + ", ".join(f"{k} = {show_array(v)}" for k, v in x.as_dict()["values"].items()))
        if x.lhs is not None:
            lines.append(f"    lhs = {show_array(x.as_dict()['lhs'])}   rhs = {show_array(x.as_dict()['rhs'])}")
        lines.append(f"    {readable(x.exact_recheck)}; {x.numeric_recheck}")
    if v.corrected is not None:
        cv = v.corrected.verdict
        lines.append(f"  corrected: {pretty(v.corrected.statement)}")
        lines.append(f"    LaTeX:   {v.corrected.statement}")
        lines.append(f"    → {cv.status if cv else 'none found'}" + (f" ({readable(cv.method)})" if cv else ""))
    return lines


# ----------------------------------------------------------------------------------------------
# symuat report: one bottom line per claim
# ----------------------------------------------------------------------------------------------


def _detail_words(v, wide: bool = False, most: int = 6) -> str:
    """What follows the verdict word on a report row: readings, failing steps, quantities (at most
    ``most`` readings that hold are listed one by one, unless ``wide``)."""
    bits = []
    if v.verdict == "holds-under-readings":
        n = len(v.readings_that_hold) + len(v.readings_that_fail)
        shown = v.readings_that_hold_compact or "; ".join(v.readings_that_hold)
        if not wide and ";" in shown and len(v.readings_that_hold) > most:
            shown = ("; ".join(v.readings_that_hold[:most])
                     + f"; … and {len(v.readings_that_hold) - most} more (symuat report {v.id} --wide)")
        bits.append(f"holds under {len(v.readings_that_hold)} of {plural(n, 'reading')}: {shown}")
    elif v.verdict == "holds" and len(v.readings_that_hold) == 1:
        bits.append(f"reading {v.readings_that_hold[0]}")
    for q in v.quantities:
        if q.get("paper_says") and q.get("agrees_with_paper") is False:
            bits.append(f"{q['key']}: {pretty(str(q['symuat']))} (paper: {q['paper_says']})")
    if v.verdict == "fails" and v.failing_items and not any(q.get("agrees_with_paper") is False
                                                           for q in v.quantities):
        items = v.failing_items
        bits.append("wrong: " + ", ".join(items[:3]) + (f" +{len(items) - 3}" if len(items) > 3 else ""))
    if v.failing_step_names:
        steps = v.failing_step_names
        bits.append(("printed step " if len(steps) == 1 else "printed steps ") + ", ".join(steps[:6])
                    + (f" +{len(steps) - 6}" if len(steps) > 6 else "") + " wrong")
    if v.errors:
        bits.append(f"error: {plural(len(v.errors), 'check')} crashed")
    # issue 19: what the roll-up says beside the verdict (roles gloss / prediction, informal items)
    if getattr(v, "wrong_glosses", None):
        bits.append(f"gloss {', '.join(v.wrong_glosses)} wrong")
    if v.verdict == "informal" and getattr(v, "checked_items", None):  # prose main sentence, checked parts
        held = [s for s in v.checked_items if s not in v.failing_step_names]
        bits.append(f"the main sentence is prose ({', '.join(v.informal_items)})"
                    + (f"; its checked parts {', '.join(held)} hold" if held else ""))
    elif getattr(v, "informal_items", None) and getattr(v, "checked_items", None):
        bits.append(f"checked: {', '.join(v.checked_items)}; informal: {', '.join(v.informal_items)}")
    for u in getattr(v, "unneeded", None) or ():  # an alternative reading drops a hypothesis
        bits.append(f"the {u['tag']} hypothesis is not needed: it holds for {u['instead']} too "
                    f"({', '.join(u['keys'])}, symuat's reading)")
    values = list(dict.fromkeys(q["symuat"] for q in v.quantities
                                if q.get("agrees_with_paper") is None and q.get("symuat")))
    if 0 < len(values) <= 2 and v.verdict != "definition":
        bits.append("; ".join(pretty(str(x)) for x in values))
    wrong = [p["key"] for p in getattr(v, "predictions", []) if not p["holds"]]
    if wrong:
        bits.append(f"symuat's prediction {', '.join(wrong)} corrected")
    return "; ".join(bits)


def _correction(v) -> str:
    if v.verdict not in ("fails", "holds-under-readings") and not getattr(v, "wrong_glosses", None):
        return ""
    if v.corrected:
        return f"↳ correction ({v.corrected_status}): {pretty(v.corrected)}"
    return "↳ correction: none found" if v.verdict == "fails" else ""


def verdict_table(verdicts, width: int | None = None, wide: bool = False, groups: dict | None = None) -> str:
    """``symuat report``: the headline, then one row per claim — the verdict, then (wrapped, never
    clipped) the readings that hold, the wrong steps and the correction — in at most ``width``
    columns (default: the terminal's, :func:`terminal_width`). Groups made only of symuat's
    extensions follow the papers' claims under their own headings (``groups``: claim ID → group;
    default: the registry's)."""
    from symuat.verdicts.headline import MARKS, WORDS, display_word, group_title, headline

    width = width or terminal_width()
    if groups is None:
        groups = {cid: c.group for cid, c in REGISTRY.claims.items()}

    def fit(text: str, indent: str = "", hang: str | None = None) -> list[str]:
        return [indent + text] if wide else wrap(text, width, indent, hang)

    lines: list[str] = []
    for text in headline(verdicts).lines():
        if text:
            lines += fit(text)
    lines.append("")
    head_w = 6 + 3 + 26 + 16
    header = f"{'ID':<6}   {'verdict':<25} {'strength':<15} claim"
    lines.append(header if wide else header[:width])

    from symuat.certify.record import summary_line

    def strength_word(v):  # "+coq": the whole bottom line certified (coq_coverage), failures included
        cov = coq_coverage(v)
        return (v.strength or "—") + ("+coq" if cov and cov["complete"] and v.strength else "")

    def row(v):
        word = display_word(v)
        head = f"{v.id:<6} {MARKS[word]} {WORDS[word]:<25} {strength_word(v):<15} "
        title = v.title + (" (symuat's)" if v.extension and "extension" not in v.title else "")
        if wide or len(head) + len(title) <= width:
            out = [head + title]
        elif width - head_w >= 24:
            out = wrap(title, width, head, " " * head_w)
        else:
            out = [head.rstrip()] + wrap(title, width, " " * 8)
        detail = _detail_words(v, wide)
        if detail:
            out += fit(detail, " " * 8)
        fix = _correction(v)
        if fix:
            out += fit(fix, " " * 8, " " * 10)
        cov = coq_coverage(v)
        if cov and cov["certified"] and not cov["complete"]:  # part of it certified: say which
            out += fit(cov["text"], " " * 8)
        return out

    by_group: dict[str, list] = {}
    for v in verdicts:
        by_group.setdefault(groups.get(v.id, ""), []).append(v)
    apart = [g for g, vs in by_group.items() if g and all(v.extension for v in vs)]
    # the papers' table holds the papers' claims only, as the headline counts them; symuat's
    # extensions among them (lemma, H7, T12) follow it under their own heading
    beside = [v for v in verdicts if v.extension and groups.get(v.id, "") not in apart]
    for v in verdicts:
        if groups.get(v.id, "") not in apart and not v.extension:
            lines += row(v)
    if beside:
        lines.append("")
        lines += fit("symuat's extensions — beside the papers' claims (counted apart)")
        for v in beside:
            lines += row(v)
    for g in apart:
        lines.append("")
        lines += fit(f"symuat's extensions — {group_title(g)}")
        for v in by_group[g]:
            lines += row(v)
    lines.append("")
    if summary_line():
        lines += fit(summary_line())
    legend = "  ".join(f"{MARKS[w]} {WORDS[w]}" for w in MARKS if w != "error")
    lines += fit(legend)
    lines += fit("A reading: one choice on each reading axis the claim leaves open (symuat show ID "
                 "names them). Drill down: symuat prove ID (every check of a claim; --failed for the "
                 "failing ones), symuat show KEY (one in full).")
    if any(v.verdict == "holds-under-readings" for v in verdicts):
        lines += reading_legend(width, wide)
    return "\n".join(lines)


def coq_coverage(v) -> dict | None:
    """What Coq certified of the bottom line ``v`` (:func:`symuat.certify.record.claim_coverage`),
    None without a current certify record."""
    from symuat.certify.record import claim_coverage

    claim = REGISTRY.claims.get(v.id)
    return claim_coverage(claim, v) if claim is not None else None


def verdicts_json(verdicts) -> str:
    """``report --format json``: ``{"headline": …, "claims": [...]}`` — the counts of the table's
    first lines (:func:`symuat.verdicts.headline.headline`, with those lines as ``lines``) and one object
    per claim row, as the docs' ``verdicts.json``; a claim's ``coq``: what the certify tier
    certified of its bottom line (null without a current record)."""
    import dataclasses

    from symuat.verdicts.headline import headline

    h = headline(verdicts)
    head = {**dataclasses.asdict(h), "lines": [t for t in h.lines() if t]}
    claims = [{**v.as_dict(), "coq": coq_coverage(v)} for v in verdicts]
    return json.dumps({"headline": head, "claims": claims}, indent=2, ensure_ascii=False)


def verdicts_markdown(verdicts) -> str:
    from symuat.verdicts.headline import display_word, headline

    def cell(text):
        return (text or "").replace("|", r"\|").replace("\n", " ")

    first, second = headline(verdicts).lines()
    rows = [f"**{first}** {second}", "",
            "| ID | claim | verdict | strength | readings that hold | wrong steps | correction |",
            "|---|---|---|---|---|---|---|"]
    for v in verdicts:
        rows.append("| " + " | ".join([
            v.id, cell(v.title), display_word(v) + (" (extension)" if v.extension else ""), v.strength or "—",
            cell("; ".join(v.readings_that_hold)) if v.verdict == "holds-under-readings" else "",
            cell(", ".join(v.failing_step_names + [f"gloss {g}" for g in v.wrong_glosses])),
            f"${cell(v.corrected)}$ ({v.corrected_status})" if v.corrected else "",
        ]) + " |")
    return "\n".join(rows)


def verdicts_latex(verdicts) -> str:
    from symuat.verdicts.headline import display_word, headline

    rows = [r"\noindent " + _tex_escape(" ".join(headline(verdicts).lines())) + r"\par",
            r"\begin{longtable}{lp{0.3\textwidth}llp{0.3\textwidth}}",
            r"\textbf{ID} & \textbf{claim} & \textbf{verdict} & \textbf{strength} & \textbf{readings / correction}\\\hline"]
    for v in verdicts:
        extra = _tex_escape("; ".join(v.readings_that_hold)) if v.verdict == "holds-under-readings" else ""
        if v.corrected:
            extra += (r"\newline " if extra else "") + f"${v.corrected}$"
        rows.append(rf"\texttt{{{_tex_escape(v.id)}}} & {_tex_escape(v.title)} & \texttt{{{display_word(v)}}}"
                    + (" (extension)" if v.extension else "") + rf" & {v.strength or '--'} & {extra}\\")
    rows.append(r"\end{longtable}")
    return "\n".join(rows)


def run_with_progress(checks, stream=None, on_result=None, jobs: int | None = 1) -> list[Result]:
    """Run checks (on ``jobs`` processes, see :mod:`symuat.kernel.runner`; results in the order of
    ``checks``), showing progress on ``stream`` when it is a terminal and handing each
    result to ``on_result`` as soon as it is there (``prove`` streams its rows this way)."""
    from symuat.kernel.runner import run_checks

    stream = stream if stream is not None else sys.stderr
    show = hasattr(stream, "isatty") and stream.isatty()
    results = []
    for k, result in enumerate(run_checks(checks, jobs), 1):
        if show:
            stream.write(f"\r\033[K[{k}/{len(checks)}] {result.check.key[:60]}")
            stream.flush()
        results.append(result)
        if on_result is not None:
            if show:
                stream.write("\r\033[K")
                stream.flush()
            on_result(result)
    if show:
        stream.write("\r\033[K")
        stream.flush()
    return results


def _reading_line(r: Result, width: int, with_statement: bool) -> str:
    status = status_of(r)
    head = f"      {_MARK[status]:<2} {status:<15} {paper_word(r):<9} "
    tail = ",".join(r.check.reading) if r.check.reading else ""
    note = short_note(r)
    line = _clip(head + tail + ("  — " + note if note else ""), width)
    return line + ("\n          " + pretty(r.check.statement) if with_statement else "")


def _failing_depth(r: Result):
    cex = r.verdict.counterexample if r.verdict is not None else None
    if cex is not None and "L" in cex.sizes:
        return f"L={cex.sizes['L']}"
    return None


def derivation(claim_ids: Iterable[str], width: int = WIDTH) -> tuple[str, list[Result]]:
    """The printed chains of the claims, step by step, each with its verdict (for ``proofs/``).

    Per claim: where it is printed, the bottom line, then each step or item in the order the
    papers print them; per step its readings, those the text admits first. A step with many
    readings (T8, T9) shows the readings that agree with the paper and summarises the others by
    the first depth at which they fail."""
    from symuat.verdicts.headline import MARKS
    from symuat.verdicts.roll_up import agrees_with_paper, roll_up

    out, results = [], []
    for cid in claim_ids:
        claim = REGISTRY.claims[cid]
        res = run_with_progress(claim.checks)
        results += res
        v = roll_up(claim, res)
        out.append("=" * width)
        out.append(f"{claim.id} — {claim.title}")
        out.append(_clip(f"  where:       {claim.where}", width))
        out.append(f"  as printed:  {pretty(claim.statement)}")
        if claim.remarks:
            out.append(f"  {pretty(claim.remarks)}")
        out.append(f"  bottom line: {MARKS[v.verdict]} {v.bottom_line}"
                   + (f"  [{v.strength}]" if v.strength else ""))
        if v.corrected:
            out.append(f"  correction ({v.corrected_status}): {pretty(v.corrected)}")
        groups: dict[str, list[Result]] = {}
        for r in res:
            groups.setdefault(r.check.id, []).append(r)
        for sid, rs in groups.items():
            rs = sorted(rs, key=lambda r: not r.check.admitted)  # the readings the text admits first
            role = rs[0].check.role
            label = {"step": "step", "quantity": "quantity", "extension": "symuat's"}.get(role, "")
            same = len({r.check.statement for r in rs}) == 1
            out.append("")
            out.append(f"  {sid}" + (f" ({label})" if label else "") + (f":  {pretty(rs[0].check.statement)}" if same else ""))
            if rs[0].check.note and same and len({r.check.note for r in rs}) == 1:
                out.append(_clip(f"      note: {rs[0].check.note}", width))
            if len(rs) <= 12:
                out += [_reading_line(r, width, not same) for r in rs]
                continue
            good = [r for r in rs if agrees_with_paper(r.check, r.verdict) or
                    (r.check.role == "extension" and r.verdict and r.verdict.status in POSITIVE_STATUSES)]
            out += [_reading_line(r, width, not same) for r in good]
            rest = [r for r in rs if r not in good]
            depths = Counter(_failing_depth(r) or status_of(r) for r in rest)
            summary = ", ".join(f"{k}: {n}" for k, n in sorted(depths.items()))
            out.append(_clip(f"      ✘  the other {plural(len(rest), 'reading')}, by first failing depth: {summary}",
                             width))
            out.append("         (each in full: symuat prove " + sid + ", symuat show KEY)")
        out.append("")
    return "\n".join(out), results

