"""Sphinx extension: run every check once and write the claim pages into ``docs/claims/``.

Everything on the generated pages comes from ONE run of every check (what ``symuat prove --all``
runs) and the verdict report built from it (:func:`symuat.verdicts.roll_up.claim_verdicts`):

* ``claims/index.rst`` — the verdict summary, a progress bar per section and the dependency
  graph (edges recorded by the registry while the checks ran, :attr:`Registry.edges`);
* ``claims/section-<group>.rst`` — one page per section of the spec, its claims in the toctree;
* ``claims/<ID>.rst`` — one page per claim, leading with the answer: the claim as printed, the
  bottom line and its strength, the corrected statement where it fails, then the derivation
  (each step with its status badge), counterexamples as exact matrices, the normal forms folded;
* ``model.rst`` — the DUAT rewrite of a real model;
* ``_build``-side: ``verdicts.json`` (the bottom lines) next to the HTML.

The pages are generated, never edited, and nothing on them is typed in.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
import time
from collections import Counter, OrderedDict
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.util import logging

logger = logging.getLogger("symuat")

# ---------------------------------------------------------------------------------------------
# text → reST: math in notes and titles, claim references as links
# ---------------------------------------------------------------------------------------------

VERDICT_WORDS = {
    "holds": "holds",
    "holds-steps-wrong": "holds, printed parts wrong",
    "holds-under-readings": "holds under some readings",
    "fails": "fails",
    "informal": "informal (no checkable identity)",
    "definition": "definition",
    "cited": "cited theorem (the papers cite it; symuat does not prove it)",
    "error": "a check crashed",
}
def section_title(group: str) -> str:
    from symuat.verdicts.headline import group_title

    return group_title(group)


#: claim IDs known to this build (filled by :func:`generate`), for cross-reference links
_CLAIM_IDS: set[str] = set()


def check_target(key: str) -> str:
    """The reST target of a check: its key in ASCII, plus a short hash when the key has characters
    the ASCII form drops (``A4.concl[layer-wise=k]`` and ``[layer-wise=≥k]`` stay distinct)."""
    import hashlib

    slug = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")
    if not key.isascii() or re.search(r"[^A-Za-z0-9.\[\],=_'{}-]", key):
        slug += "-" + hashlib.sha1(key.encode()).hexdigest()[:6]
    return "check-" + slug


def _escape(text: str) -> str:
    """Plain text for reST (no markup survives)."""
    return re.sub(r"([\\*`|_<>\[\]])", r"\\\1", text)


_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "lambda",
          "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta",
          "Theta", "Lambda", "Sigma", "Phi", "Psi", "Omega"}
#: commands whose braced argument is text or a name, not math to scan
_ARG_COMMANDS = {"text", "mathrm", "operatorname", "mathtt", "texttt", "textbf", "textit", "mathit", "begin", "end",
                 "mathbf", "boldsymbol", "mathcal", "mathbb", "hbox", "label"}


def tex_prose(tex: str) -> str:
    r"""Words in a formula typeset as words: a run of words becomes ``\text{…}``, a lone word of
    four letters or more ``\mathrm{…}`` (a Greek name: its letter), so prose never comes out as a
    run of italic one-letter identifiers ("dependsonx₀"). Commands and their text arguments are
    left alone.

    >>> tex_prose("depends on x_0")
    '\\text{depends on }x_0'
    >>> tex_prose(r"\operatorname{to\_duat}(x)")
    '\\mathrm{to}\\_\\mathrm{duat}(x)'
    >>> tex_prose(r"\operatorname{density}(W) = 1/delta")
    '\\operatorname{density}(W) = 1/\\delta'
    """
    out, k, n = [], 0, len(tex)
    while k < n:
        c = tex[k]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[k:])
            word = m.group(1) if m else ""
            out.append(m.group(0) if m else c)
            k += len(m.group(0)) if m else 1
            if word in _ARG_COMMANDS:
                while k < n and tex[k] == " ":
                    out.append(" ")
                    k += 1
                if k < n and tex[k] == "{":
                    depth, j = 0, k
                    while j < n:
                        depth += tex[j] == "{"
                        depth -= tex[j] == "}"
                        j += 1
                        if depth == 0:
                            break
                    arg = tex[k:j]
                    if "\\_" in arg and word in ("text", "operatorname", "texttt", "textbf", "textit"):
                        # MathJax reads these in text mode, where \_ is not an underscore: the
                        # underscores go between the pieces, in math mode
                        out.pop()
                        font = "mathrm" if word == "operatorname" else "mathtt" if word == "texttt" else word
                        out.append("\\_".join(f"\\{font}{{{piece}}}" for piece in arg[1:-1].split("\\_")))
                    else:
                        out.append(arg)
                    k = j
            continue
        m = re.match(r"[A-Za-z]{2,}(?: [A-Za-z]{2,})+ ?|[A-Za-z]{4,}", tex[k:])
        prev = tex[k - 1] if k else ""
        if m and not prev.isalpha() and not (prev and prev in "_^"):
            run = m.group(0)
            if " " in run.strip():
                out.append(r"\text{" + run + "}")
            elif run in _GREEK:
                after = tex[k + len(run):k + len(run) + 1]
                out.append("\\" + run + (" " if after.isalpha() else ""))
            else:
                out.append(r"\mathrm{" + run + "}")
            k += len(run)
            continue
        out.append(c)
        k += 1
    return "".join(out)


_RELATIONS = ("=", "<", ">", r"\le", r"\leq", r"\ge", r"\geq", r"\ne", r"\neq", r"\approx", r"\equiv",
              r"\Rightarrow", r"\Leftrightarrow", r"\iff", r"\to", r"\mapsto", r"\in", r"\subseteq")


def visible_length(tex: str) -> int:
    r"""About how many characters wide ``tex`` typesets: a command is one glyph, braces and
    script marks none, a sub- or superscript counts ⅔, an operator (with its spacing) two.

    >>> visible_length(r"\sum_{k_0<D} W_{1,1}^{k_0,k_1}")
    10
    """
    body = re.sub(r"\\(left|right|mathbf|mathrm|operatorname|text|boldsymbol|mathring|,|;|!|quad)(?![A-Za-z])", "", tex)
    body = re.sub(r"\\[A-Za-z]+", "x", body)
    scripts = sum(len(m) for m in re.findall(r"[_^]\{([^{}]*)\}", body))
    operators = len(re.findall(r"[=+<>−-]", body))  # a relation or a binary operator takes two, with its spacing
    return int(len(re.sub(r"[{}_^ ]", "", body)) - scripts / 3 + operators)


def _pieces(tex: str) -> list[tuple[str, str]]:
    """``tex`` cut before each relation and binary ``+``/``−``, after each comma and between two
    factors (``} {``) outside braces and ``\\left…\\right``: ``(kind, text)`` pairs, kind ``rel``,
    ``op``, ``comma``, ``mul`` or ``""`` (the first)."""
    out, start, stack, k, kind = [], 0, [], 0, ""
    while k < len(tex):
        c = tex[k]
        # a line may break where every open group is a plain ( or [ (not a brace, not \left)
        free = all(g in "([" for g in stack)
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[k:])
            word = m.group(1)
            if word in ("left", "right"):
                if word == "left":
                    stack.append("L")
                elif stack:
                    stack.pop()
                d = re.match(r"\\[A-Za-z]+\s*(\\[{}|]|\\[A-Za-z]+|.)", tex[k:])
                k += len(d.group(0)) if d else len(m.group(0))
                continue
            if free and "\\" + word in _RELATIONS and k > start and not tex[start:k].rstrip().endswith("&"):
                out.append((kind, tex[start:k]))
                start, kind = k, "rel"
            k += len(m.group(0))
            if free and word == " " and k < len(tex):  # after a control space
                out.append((kind, tex[start:k]))
                start, kind = k, "mul"
            continue
        if c in "{([":
            stack.append(c)
        elif c in "})]":
            if stack:
                stack.pop()
        elif free and k > start:
            prev = tex[start:k].rstrip()[-1:]
            if c in "=<>" and tex[k - 1] not in "<>!:" and prev != "&":
                out.append((kind, tex[start:k]))
                start, kind = k, "rel"
            elif c in "+-" and prev and prev not in "=<>(,{[^_+-":
                out.append((kind, tex[start:k]))
                start, kind = k, "op"
            elif c == ",":
                out.append((kind, tex[start:k + 1]))
                start, kind = k + 1, "comma"
            elif c == " " and prev in ")}]" and re.match(r" +[{\\A-Za-z(]", tex[k:]):
                out.append((kind, tex[start:k]))  # between two factors of a product
                start, kind = k, "mul"
        k += 1
    out.append((kind, tex[start:]))
    return [(kd, t) for kd, t in out if t.strip()]


#: characters of a formula per line: a display (about 800 px wide) and a derivation table's
#: statement cell (about 400 px at 1024 px)
DISPLAY_ROOM, CELL_ROOM = 56, 34


def wrap_tex(tex: str, room: int = DISPLAY_ROOM) -> str:
    r"""A display formula wider than ``room`` characters (:func:`visible_length`) set on several
    lines (``aligned``): broken before a relation, before a binary ``+``/``−``, after a comma or
    between factors, never inside a brace group or ``\left…\right``, so it wraps instead of running
    off its box. A chain already set one link per line (:func:`chain_lines`) has each long line
    broken the same way; a short formula is unchanged.

    >>> wrap_tex("a + b = c + d", 4)
    '\\begin{aligned}&a + b \\\\ &\\quad = c \\\\ &\\qquad + d\\end{aligned}'
    >>> wrap_tex(r"\begin{aligned}a &= b + c\\ &= d\end{aligned}", 4)
    '\\begin{aligned}a &= b \\\\&\\qquad + c\\\\ &= d\\end{aligned}'
    >>> wrap_tex("a + b = c", 60)
    'a + b = c'
    """
    chain = re.fullmatch(r"\\begin\{aligned\}(.*)\\end\{aligned\}", tex.strip(), re.S)
    if chain:  # a chain: each link on its own line(s)
        links = re.split(r"\\\\", chain.group(1))
        out = [ln for link in links for ln in _wrap_line(link, room, first="")]
        return r"\begin{aligned}" + r"\\".join(out) + r"\end{aligned}" if len(out) > len(links) else tex
    if visible_length(tex) <= room or r"\begin" in tex or "&" in tex or r"\\" in tex:
        return tex
    lines = _wrap_line(tex, room, first="&")
    if len(lines) == 1:
        return tex
    return r"\begin{aligned}" + r"\\ ".join(lines) + r"\end{aligned}"  # every line from the left


def _wrap_line(tex: str, room: int, first: str) -> list[str]:
    """One line of a formula as lines of about ``room`` characters (``first`` before the first,
    ``&\\quad``/``&\\qquad`` before each continuation); ``[tex]`` when it fits or cannot break."""
    if visible_length(tex) <= room:
        return [tex]
    # \left( … \right) as plain brackets, so that a line may break inside them; a long \text{…}
    # one group per word, so that it may break between words
    plain = re.sub(r"\\right\s*([)\]])", r"\1", re.sub(r"\\left\s*([(\[])", r"\1", tex))
    plain = re.sub(r"\\text\{([^{}]{16,})\}",
                   lambda m: " ".join(r"\text{%s}" % w for w in re.findall(r"\s*\S+\s*", m.group(1))), plain)
    lines, line = [], ""
    for kind, text in _pieces(plain):
        if line and visible_length(line + text) > room:
            lines.append(line)
            line = ""
        if not line and lines:
            line = "&" + (r"\quad " if kind == "rel" else r"\qquad ")
        line += text
    lines.append(line)
    if len(lines) == 1:
        return [tex]
    return [first + lines[0]] + lines[1:]


def _math(tex: str, indent: str = "") -> str:
    body = textwrap.indent(wrap_tex(tex_prose(tex.strip())), indent + "   ")
    return f"{indent}.. math::\n\n{body}\n"


def _m(tex: str) -> str:
    """An inline math role that works anywhere in a line (escaped spaces around it)."""
    tex = tex_prose(tex.strip().replace("`", "'"))
    return f"\\ :math:`{tex}`\\ "


#: bare TeX-ish subscripts in prose: W'_HV, b'_{j,2}, H_i, x'_0
_BARE_SUB = re.compile(r"(?<![\w\\])(Δ?[A-Za-z]{1,2}\d?'*)_(\{[^{}]*\}|[A-Za-z0-9]{1,3}(?![A-Za-z0-9_]))")


#: a name with a superscript and a subscript in prose: UAT^R_i
_BARE_SUPSUB = re.compile(r"(?<![\w\\])([A-Za-z]{1,4})\^([A-Za-z0-9])_([A-Za-z0-9]{1,3})(?![\w])")


#: Markdown emphasis in prose: *linear* (word boundaries, so 2*N*h stays a product)
_EMPHASIS = re.compile(r"(?<![\w*])\*([A-Za-z][A-Za-z ]*[A-Za-z]|[A-Za-z])\*(?![\w*])")


#: where TeX starts in prose written without ``$…$``: a control word, a braced sub/superscript
_TEX_MARK = re.compile(r"\\[A-Za-z]+|[_^]\{")
_OPEN, _CLOSE = "({[", ")}]"


def tex_spans(text: str) -> list[tuple[int, int]]:
    r"""The stretches of ``text`` that are TeX written into prose without ``$…$`` (``\left|f -
    S\right|``, ``W^{T}``, ``b'_{j,2}``): from the start of the word a mark (:data:`_TEX_MARK`)
    is in, on to the first space outside brackets; neighbours joined by an operator are one
    stretch. Typeset as math, never shown as source.

    >>> t = r"holds and \left|{f - S}\right| < \varepsilon + 1 fails; lift of X: W^{T} \otimes I."
    >>> [t[a:b] for a, b in tex_spans(t)]
    ['\\left|{f - S}\\right| < \\varepsilon', 'W^{T} \\otimes']
    """
    spans: list[tuple[int, int]] = []
    for m in _TEX_MARK.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue
        a = m.start()
        while a > 0 and (text[a - 1].isalnum() or text[a - 1] in "'\\(_^"):
            a -= 1
        b, depth = a, 0
        while b < len(text):
            c = text[b]
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                if depth == 0:
                    break
                depth -= 1
            elif c.isspace() and depth == 0:
                break
            b += 1
        while b > m.end() and text[b - 1] in ".,;:" and depth == 0:
            b -= 1
        if spans and re.fullmatch(r"\s*[=<>+\-−·≤≥≠]?\s*", text[spans[-1][1]:a]):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


def _tex_inline(tex: str) -> str:
    r"""A stretch of TeX from prose as inline math; one MathJax could not typeset (unbalanced
    braces, a ``\left`` without its ``\right``) as Unicode text instead."""
    from symuat.render.report import pretty

    if re.fullmatch(r"\\(frac|sqrt|left|right|overset|mathbf|mathrm|operatorname|text|hat|tilde|bar)", tex):
        return f"\\ ``{tex}``\\ "  # prose about a TeX command (“the \\frac numerator”): its name, as code
    balanced = tex.count("{") == tex.count("}") and len(re.findall(r"\\left(?![A-Za-z])", tex)) == len(
        re.findall(r"\\right(?![A-Za-z])", tex))
    depth = 0
    for c in tex:
        depth += (c == "{") - (c == "}")
        balanced = balanced and depth >= 0
    return _m(tex) if balanced else _escape(pretty(tex))


def _label(text: str) -> str:
    """A label (a step's name and reading tags, set in bold) as plain text: TeX in it (``9 ·
    W'_{3,1}``) as Unicode (``9 · W'₃,₁``), since bold cannot hold math."""
    from symuat.render.report import pretty

    return _escape(pretty(text) if _TEX_MARK.search(text) else text)


def _claim_ref_re():
    if not _CLAIM_IDS:
        return None
    ids = "|".join(sorted((re.escape(i) for i in _CLAIM_IDS), key=len, reverse=True))
    return re.compile(rf"(?<![\w.'])({ids})((?:\.[A-Za-z0-9_]+)*(?:\[[^\]\s]*\])?)(?![\w'])")


def _plain(text: str, links: bool = True) -> str:
    """Prose without ``$`` or backticks: bare subscripts become math, claim IDs become links."""
    out, pos = [], 0
    ref_re = _claim_ref_re() if links else None
    tokens = [(a, b, "tex", text[a:b]) for a, b in tex_spans(text)]
    for m in _EMPHASIS.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b, _, _ in tokens):
            tokens.append((m.start(), m.end(), "em", m))
    for m in _BARE_SUPSUB.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b, _, _ in tokens):
            tokens.append((m.start(), m.end(), "supsub", m))
    for m in _BARE_SUB.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b, _, _ in tokens):
            tokens.append((m.start(), m.end(), "sub", m))
    if ref_re is not None:
        for m in ref_re.finditer(text):
            if not any(a < m.end() and m.start() < b for a, b, _, _ in tokens):
                tokens.append((m.start(), m.end(), "ref", m))
    for start, end, kind, m in sorted(tokens, key=lambda t: t[0]):
        out.append(_escape(text[pos:start]))
        if kind == "tex":  # TeX written into prose without $…$: typeset, never shown as source
            out.append(_tex_inline(m))
        elif kind == "em":  # Markdown *word* in a note: reST emphasis, not literal stars
            out.append(f"\\ *{_escape(m.group(1))}*\\ ")
        elif kind == "supsub":
            base = m.group(1) if len(m.group(1)) == 1 else f"\\mathrm{{{m.group(1)}}}"
            out.append(_m(f"{base}^{{{m.group(2)}}}_{{{m.group(3)}}}"))
        elif kind == "sub":
            sub = m.group(2)
            sub = sub if sub.startswith("{") else "{" + sub + "}"
            out.append(_m(m.group(1) + "_" + sub))
        else:
            out.append(f"\\ :ref:`{m.group(0)} <claim-{m.group(1)}>`\\ ")
        pos = end
    out.append(_escape(text[pos:]))
    return "".join(out)


def rich(text: str, links: bool = True) -> str:
    """Prose as reST: ``$…$`` is math, Markdown backticks are code, claim IDs are links."""
    parts = re.split(r"(\$[^$]+\$|`[^`]+`)", text or "")
    out = []
    for part in parts:
        if part.startswith("$") and part.endswith("$") and len(part) > 1:
            out.append(_m(part[1:-1]))
        elif part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"\\ ``{part[1:-1]}``\\ ")
        else:
            out.append(_plain(part, links))
    return "".join(out).replace("\n", " ").strip()


def _badge(status: str) -> str:
    return f":badge:`{status}`"


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...], widths: str | None = None,
           cls: str = "") -> str:
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {widths}")
    if cls:
        out.append(f"   :class: {cls}")
    out.append("")
    for row in [header] + rows:
        empty = "\\ "
        out.append("   * - " + (row[0] or empty))
        out += [f"     - {cell or empty}" for cell in row[1:]]
    return "\n".join(out) + "\n"


def _indent(text: str, n: int = 3) -> str:
    return textwrap.indent(text, " " * n)


# ---------------------------------------------------------------------------------------------
# directives and roles: status badges, folds (<details>)
# ---------------------------------------------------------------------------------------------


class fold_node(nodes.General, nodes.Element):
    pass


def _visit_fold(self, node):
    attrs = " open" if node.get("open") else ""
    self.body.append(f'<details class="fold"{attrs}><summary>{html.escape(node["summary"])}</summary>\n')


def _depart_fold(self, node):
    self.body.append("</details>\n")


class FoldDirective(Directive):
    """``.. fold:: summary`` — content behind a ``<details>`` fold."""

    has_content = True
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"open": directives.flag}

    def run(self):
        node = fold_node(summary=self.arguments[0], open="open" in self.options)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def reading_badge_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``:rb:`C-col,LR|refuted``: a reading and its status badge in one box that does not split."""
    tags, _, status = text.rpartition("|")
    slug = re.sub(r"[^a-z0-9]+", "-", status.lower()).strip("-")
    box = nodes.inline("", "", classes=["reading-badge"])
    if tags:
        # the tags may break only after a comma (<wbr>); the badge is glued to the last one
        code = nodes.literal(tags, "")
        pieces = re.split(r"(?<=[,=])", tags)  # a break is allowed after a comma or an equals sign
        for k, piece in enumerate(pieces):
            code += nodes.Text(piece)
            if k < len(pieces) - 1:
                code += nodes.raw("", "<wbr>", format="html")
        box += code
    box += nodes.inline(status, status, classes=["badge", f"badge-{slug}"])
    return [box], []


def badge_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return [nodes.inline(text, text, classes=["badge", f"badge-{slug}"])], []


# ---------------------------------------------------------------------------------------------
# one check in detail
# ---------------------------------------------------------------------------------------------


def _scalar(x) -> bool:
    return isinstance(x, (int, float, str)) and not isinstance(x, bool)


def _tex_value(v) -> str | None:
    """A small exact value as LaTeX (matrix, vector, scalar), or None if it is not small."""
    def entry(x):  # an integer, a rational, a closed form in e (288 e^{12}/…), a long rational by its size
        from symuat.text.values import value_latex

        return value_latex(x)
    if _scalar(v):
        return entry(v)
    if isinstance(v, list) and v and all(_scalar(x) for x in v) and len(v) <= 10:
        return r"\begin{bmatrix}" + r"\\".join(entry(x) for x in v) + r"\end{bmatrix}"
    if (isinstance(v, list) and v and all(isinstance(r, list) and r and all(_scalar(x) for x in r) for r in v)
            and len(v) <= 10 and max(len(r) for r in v) <= 10):
        return r"\begin{bmatrix}" + r"\\".join("&".join(entry(x) for x in r) for r in v) + r"\end{bmatrix}"
    return None


def _tex_name(name: str) -> str:
    """A value's name as TeX: ``W_1`` → ``W_{1}``, ``\\delta`` as is, ``W_O`` in typewriter (math
    mode, so ``\\_`` is an underscore), a name with spaces as text."""
    m = re.fullmatch(r"([A-Za-z]+)_?(\d*)", name)
    if m and m.group(2):
        return f"{m.group(1)}_{{{m.group(2)}}}"
    if re.fullmatch(r"[A-Za-z]", name) or re.fullmatch(r"\\[A-Za-z]+(_\{?\w+\}?)?", name):
        return name
    if " " in name:
        return r"\text{" + re.sub(r"([_#%&$])", r"\\\1", name) + "}"
    return r"\mathtt{" + re.sub(r"([_#%&$])", r"\\\1", name) + "}"


def _values_block(values: dict, lhs=None, rhs=None) -> list[str]:
    """Counterexample values as small exact matrices (one aligned display), big ones as JSON."""
    shown, big = [], {}
    items = list(values.items()) + [("lhs", lhs), ("rhs", rhs)]
    for name, v in items:
        if v is None:
            continue
        tex = _tex_value(v)
        if tex is None:
            big[name] = v
        else:
            label = r"\text{left side}" if name == "lhs" else r"\text{right side}" if name == "rhs" else _tex_name(name)
            shown.append(f"{label} = {tex}")
    lines = []
    if shown:
        rows = [",\\quad ".join(shown[i:i + 3]) for i in range(0, len(shown), 3)]
        lines += [_math(r"\begin{gathered}" + r"\\[4pt]".join(rows) + r"\end{gathered}")]
    if big:
        lines += [".. code-block:: json", "", "   " + json.dumps(big), ""]
    return lines


#: lemma name → its statement in the Coq library rendered by coqdoc (``coq/Symuat.X.html#name``),
#: filled by :func:`coq_library_pages` when a certify record with a compiled library exists
_COQ_LINKS: dict[str, str] = {}
#: theorem name → its statement as the certify record compiled it (``Theorem name … : ….``),
#: filled by :func:`coq_statements`: shown under the theorem's derivation
_COQ_STATEMENTS: dict[str, str] = {}
#: a theorem's statement in an exported file (``theories/*.v``): up to its proof
_COQ_THEOREM = re.compile(r"^Theorem ([\w']+)\b.*?(?=\nProof\.)", re.M | re.S)
#: names a derivation applies that are not symuat's: what they are
_COQ_FOREIGN = {"ring": "Coq's ring tactic", "exchange_big": "MathComp bigop", "big_ord_recr": "MathComp bigop"}


def coq_library_pages(outdir: Path) -> dict[str, str]:
    """Render the Coq library into ``outdir/coq`` (``Symuat.<file>.html``, an anchor per lemma);
    return lemma name → page and anchor. The library the certify record compiled (``lib/*.v`` with
    their ``.glob`` files) is rendered by ``coqdoc``; without ``coqdoc`` or a compiled library, the
    sources (the record's, else ``coq/``'s) as highlighted copies (:func:`plain_library_pages`),
    so the docs build never needs Coq and a derivation's lemma names always link to statements."""
    import shutil
    import subprocess

    from symuat.certify.record import COQ_DIR, out_dir
    from symuat.certify.run import LIBRARY

    lib = out_dir() / "lib"
    sources = sorted(lib.glob("*.v"))
    target = outdir / "coq"
    if not sources or not all(v.with_suffix(".glob").is_file() for v in sources) or not shutil.which("coqdoc"):
        return plain_library_pages(sources or [COQ_DIR / name for name in LIBRARY], target)
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["coqdoc", "--html", "--utf8", "--no-externals", "-d", str(target), "-R", ".", "Symuat",
                           *[v.name for v in sources]], cwd=lib, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"coqdoc failed on {lib}: {proc.stderr.strip()[-500:]}")
    links = {}
    for page in sorted(target.glob("Symuat.*.html")):
        for name in re.findall(r"<a id=\"([A-Za-z_]\w*)\" class=\"idref\"", page.read_text(encoding="utf-8")):
            links.setdefault(name, f"{page.name}#{name}")
    return links


#: a declaration the plain pages anchor (the names a derivation can apply: lemmas, theorems, definitions)
_COQ_DECLARATION = re.compile(
    r"^\s*(?:#\[[^\]]*\]\s*)?(?:Local\s+|Global\s+)?"
    r"(?:Lemma|Theorem|Corollary|Fact|Remark|Definition|Fixpoint|Instance|Record|Inductive|Variant|Ltac)\s+"
    r"([A-Za-z_][\w']*)")


def plain_library_pages(sources: list[Path], target: Path) -> dict[str, str]:
    r"""Each Coq source as a page of its own, ``target/Symuat.<stem>.html`` (coqdoc's names): the
    source highlighted by Pygments' Coq lexer, an anchor ``id="name"`` on the line of each
    declaration (:data:`_COQ_DECLARATION`); return name → page and anchor (the first file declaring
    a name wins, as in the coqdoc pages). The fallback when ``coqdoc`` is not installed.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "SymuatT.v").write_text("(** doc *)\nLemma sum_one (n : nat) : n = n.\nProof. by []. Qed.\n")
    >>> links = plain_library_pages([d / "SymuatT.v"], d / "coq")
    >>> links
    {'sum_one': 'Symuat.SymuatT.html#sum_one'}
    >>> 'id="sum_one"' in (d / "coq" / "Symuat.SymuatT.html").read_text()
    True
    """
    import html

    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    target.mkdir(parents=True, exist_ok=True)
    lexer, fmt = get_lexer_by_name("coq"), HtmlFormatter(nowrap=True)
    links: dict[str, str] = {}
    style = fmt.get_style_defs(".highlight")
    for src in sources:
        page = f"Symuat.{src.stem}.html"
        rows = []
        for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
            m = _COQ_DECLARATION.match(line)
            anchor = ""
            if m and m.group(1) not in links:
                links[m.group(1)] = f"{page}#{m.group(1)}"
                anchor = f' id="{html.escape(m.group(1))}"'
            code = highlight(line, lexer, fmt).rstrip("\n")
            rows.append(f'<span class="line"{anchor}><a class="lineno" href="#L{n}" id="L{n}">{n:4d}</a>  {code}</span>')
        (target / page).write_text(
            f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{src.stem} (symuat's Coq library)</title>\n"
            f"<style>{style}\nbody{{font-family:sans-serif;margin:1em 2em}} .lineno{{color:#999;"
            f"text-decoration:none}} .line:target{{background:#ffc}}</style></head><body>\n"
            f"<h1>{src.stem}.v</h1><p>The source of <code>coq/{src.name}</code> (coqdoc was not installed "
            f"when these pages were built).</p>\n<pre class=\"highlight\">" + "\n".join(rows) + "</pre></body></html>\n",
            encoding="utf-8")
    return links


def coq_statements() -> dict[str, str]:
    """Theorem name → its statement, read from the files the current certify record compiled
    (``theories/*.v``; empty without a record for these sources)."""
    from symuat.certify.record import load, out_dir

    if load() is None:
        return {}
    out: dict[str, str] = {}
    for f in sorted((out_dir() / "theories").glob("*.v")):
        for m in _COQ_THEOREM.finditer(f.read_text(encoding="utf-8")):
            out.setdefault(m.group(1), m.group(0))
    return out


def _coq_statement(name: str) -> list[str]:
    """The theorem's statement behind a fold, inside its list item (empty when not known), and
    the library definitions it is written with, each linked to its own statement."""
    text = _COQ_STATEMENTS.get(name)
    if not text:
        return []
    words = dict.fromkeys(w for w in re.findall(r"[A-Za-z_][\w']*", text) if w in _COQ_LINKS and w != name)
    defined = (["", "     Its terms, defined in the library: " + ", ".join(_coq_name(w) for w in words) + "."]
               if words else [])
    return ["", "  .. fold:: the statement Coq checked", "", "     .. code-block:: coq", "",
            *[f"        {line}" for line in text.splitlines()], *defined, ""]


def _coq_name(x: str) -> str:
    """A lemma of a derivation: linked to its statement in the rendered library (``../coq/``), or
    said to be MathComp's or a tactic."""
    if x in _COQ_LINKS:
        return f"`{x} <../coq/{_COQ_LINKS[x]}>`__"
    return f"``{x}``" + (f" ({_COQ_FOREIGN[x]})" if x in _COQ_FOREIGN else "")


def _coq_derivation(cert: dict) -> list[str]:
    """The derivation Coq's kernel checked for a certified check, one item per exported theorem:
    the library lemmas its accepted proof term applies, in order, with the normal-form step named
    (each side rewritten to symuat's normal form, then ``meq_via_nf``); each lemma of symuat's
    library links to its statement in the library's coqdoc pages."""
    def names(xs):
        return " → ".join(_coq_name(x) for x in xs) or "(unfolding only)"

    proofs = cert.get("proofs") or {}
    lines = [":badge:`certified: coq` *The derivation Coq checked* (lemmas of the Coq library in "
             "``coq/`` that the accepted proof term applies, in order):", ""]
    if cert.get("same_statement"):
        lines += [f"This refutation states the same theorem as the refutation of ``{cert['same_statement']}``, "
                  "so that theorem certifies both.", ""]
    if cert.get("link"):
        lines += [f"Refuted through ``{cert['link']}``, a link this check's verdict reuses: the theorem states "
                  "that check's refuted identity, at its counterexample.", ""]
    for name in cert["theorems"]:
        p = proofs.get(name, {})
        chain = p.get("chain") or {}
        if p.get("proof") == "induction over depth":  # one theorem for every depth (coq/SymuatDepth.v, SymuatUnroll.v)
            steps = ([f"the one-layer step ``{p['step']}`` (symuat's identity for one layer)"] if p.get("step") else []) \
                + ([f"the check's own one-layer identity ``{p['check_step']}`` (exported, from symuat's normal form)"
                    if p["check_step"].startswith(name) else
                    f"the check's own one-layer identity, proved by the library's {_coq_name(p['check_step'])}"]
                   if p.get("check_step") else [])
            lines += [f"- ``{name}`` — for every number of layers L, by induction: {_coq_name(p['library'])} "
                      f"applied to {' and '.join(steps)}."]
        elif "lhs" in chain:
            lines += [f"- ``{name}`` — left side: {names(chain['lhs'])} ⟶ **symuat's normal form** "
                      f"⟵ right side: {names(chain['rhs'])}; hence equal ({_coq_name(chain['step'])})."]
        elif "direct" in chain and p.get("proof") == "certificate":
            lines += [f"- ``{name}`` — from symuat's certificate: {names(chain['direct'])}."]
        elif "direct" in chain:
            why = f" ({p['fallback']})" if p.get("fallback") else ""
            lines += [f"- ``{name}`` — direct proof{why}: {names(chain['direct'])}."]
        else:  # a record without per-theorem chains
            lines += [f"- ``{name}`` — " + names(cert.get("lemmas", [])) + "."]
        lines += _coq_statement(name)
    return lines + [""]


def check_detail(r, heading: bool = True) -> list[str]:
    """One check: statement, status badge, method, witness/counterexample, correction, normal form."""
    key = r.check.key
    lines = []
    if heading:
        lines += [f".. _{check_target(key)}:", "",
                  f"``{key}``", "~" * (len(key) + 4), ""]
    status = str(r.verdict.status) if r.verdict else "error"
    lines += [_math(r.check.statement)]
    flags = []
    if not r.check.admitted:
        flags.append("symuat's alternative reading")
    if r.check.role != "claim":
        flags.append(f"role: {r.check.role}")
    if r.check.polarity == "denies":
        flags.append("the paper denies this statement")
    lines += [f"{_badge(status)} " + ("(" + "; ".join(flags) + ")" if flags else ""), ""]
    from symuat.certify.record import certification, not_certified

    cert = certification(key)
    if cert and r.check.coq_states:  # the theorems state less than the check: never "certified" for it
        lines += [f"*Coq compiled* {', '.join(f'``{t}``' for t in cert['theorems'])}; they state "
                  f"{_escape(r.check.coq_states)} — not the statement above, which is not certified.", ""]
    elif cert:  # compiled by coqc in the current certify record: the derivation its proof term applies
        lines += _coq_derivation(cert)
    elif not_certified(key):  # a symbolic proof the certify tier could not certify: why
        # the reason quotes the check's method (``min(d, d_k)``, ``H_{i,nn'}``): typeset as the
        # method line is, never as raw reST (which would eat its backslashes)
        lines += [f"*Not certified by Coq:* {rich(not_certified(key))}", ""]
    if r.check.note:
        lines += [f"*Reading:* {rich(r.check.note)}", ""]
    if r.error:
        lines += [f"**Error:** ``{r.error}``", ""]
        return lines
    v = r.verdict
    from symuat.kernel.why import why_line  # every refuted check: one line of why (#19)

    why = why_line(r.check, v)
    if why:
        from symuat.render.report import pretty

        # LaTeX without $…$ (a hand-written line: W_{1}^{T} x) as Unicode; $…$ is typeset by rich
        lines += [f"*Why:* {rich(why if '$' in why else pretty(why))}", ""]
    lines += [f"*Method:* {rich(v.method)}", ""]
    if v.construction:
        lines += ["*Construction:*", "", _math(v.construction)]
    if v.sizes:
        lines += ["*Sizes:* " + "; ".join(", ".join(f"{k}={x}" for k, x in s.items()) for s in v.sizes), ""]
    if v.numeric:
        n = v.numeric
        lines += [f"*Numeric confirmation:* max relative residual {n.max_residual:.2e} "
                  f"(tolerance {n.tolerance:g}) at {len(n.sizes)} sizes, seeds {n.seeds}.", ""]
    for k, q in v.quantities.items():
        if k in ("how", "last_instance", "witness"):
            continue
        if "\\" in k:  # a LaTeX name (check_rank: "\\dim\\operatorname{span}… (upper bound, structural)")
            tex, rest = re.fullmatch(r"(.*?)((?:\s*\([^()]*\))?)", k).groups()
            lines += [f"{_m(tex)}{_escape(rest)}: {rich(str(q))}", ""]
        else:  # closed forms in a quantity (a mistake's witness: 288*e**12/…) read as 288·e¹²/…
            from symuat.text.values import readable

            label = rich(k, links=False)  # emphasis cannot hold a role: a label with math stays upright
            label = f"{label}:" if ":math:`" in label or "*" in label else f"*{label}:*"
            lines += [f"{label} {rich(readable(str(q)))}", ""]
    if "how" in v.quantities:
        lines += [f"*How:* {rich(str(v.quantities['how']))}", ""]
    for label, x in (("Witness", v.quantities.get("witness")),
                     ("Counterexample", v.counterexample.as_dict() if v.counterexample else None)):
        if not x:
            continue
        sizes = ", ".join(f"{k}={s}" for k, s in x["sizes"].items()) if isinstance(x["sizes"], dict) else str(x["sizes"])
        lines += [f"*{label}* at {_escape(sizes)}: {rich(x['reason'])}", ""]
        lines += _values_block(x.get("values") or {}, x.get("lhs"), x.get("rhs"))
        lines += [f"Re-checked: {rich(x['exact_recheck'])}; {rich(x['numeric_recheck'])}.", ""]
    if v.corrected is not None:
        cv = v.corrected.verdict
        lines += ["*Corrected statement:*", "", _math(v.corrected.statement),
                  (_badge(str(cv.status)) + " " + rich(cv.method)) if cv else "no correction found", ""]
    if v.detail and v.detail.startswith("entry: "):
        lines += [".. fold:: generic entry (index-level normal form)", "",
                  _math(v.detail[len("entry: "):], "   ")]
    elif v.detail:
        lines += [f"*Detail:* {rich(v.detail)}", ""]
    return lines


# ---------------------------------------------------------------------------------------------
# one claim page
# ---------------------------------------------------------------------------------------------


def _status(r) -> str:
    return str(r.verdict.status) if r.verdict else "error"


def _key_link(r) -> str:
    return f"``{r.check.key}``"


def _first_failing_depth(r) -> str:
    cex = r.verdict.counterexample if r.verdict else None
    if cex is not None and isinstance(cex.sizes, dict) and "L" in cex.sizes:
        return f"depth {cex.sizes['L']}"
    return "other"


def bottom_line(cv) -> list[str]:
    from symuat.verdicts.headline import display_word

    word = display_word(cv)
    head = f"**Bottom line:** :verdict:`{word}`"
    if cv.strength:
        head += f" — strength :badge:`{cv.strength}`"
    lines = [".. container:: bottom-line bottom-line-" + word, "", "   " + head, ""]
    if cv.errors:
        lines += [f"   Error: {len(cv.errors)} check{'s' if len(cv.errors) != 1 else ''} crashed: "
                  + ", ".join(f"``{s}``" for s in cv.errors) + ".", ""]
    n = len(cv.readings_that_hold) + len(cv.readings_that_fail)
    if cv.readings_that_hold and cv.verdict != "holds":
        shown = ", ".join(f"``{r}``" for r in cv.readings_that_hold[:8])
        more = f" and {len(cv.readings_that_hold) - 8} more" if len(cv.readings_that_hold) > 8 else ""
        lines += [f"   Holds under {len(cv.readings_that_hold)} of {n} readings: {shown}{more}.", ""]
    elif cv.verdict == "holds" and len(cv.readings_that_hold) == 1:
        lines += [f"   Holds under its one reading ``{cv.readings_that_hold[0]}``.", ""]
    if cv.readings_that_fail and cv.verdict != "fails":
        lines += [f"   Fails under the other {len(cv.readings_that_fail)}"
                  + (": " + ", ".join(f"``{r}``" for r in cv.readings_that_fail) if len(cv.readings_that_fail) <= 6 else "")
                  + ".", ""]
    if cv.failing_step_names:
        steps = cv.failing_step_names
        lead = ("The conclusion holds, but printed steps are wrong: " if word == "holds-steps-wrong"
                else "Wrong printed steps: ")
        lines += ["   .. rst-class:: failing-steps", "",
                  "   " + lead + ", ".join(f"``{s}``" for s in steps[:10]) + (" …" if len(steps) > 10 else "")
                  + " (rows marked ✘ in the derivation below).", ""]
    if cv.wrong_glosses:  # a wrong gloss marks the bottom line ◑ as a wrong step does
        lines += ["   .. rst-class:: failing-steps", "",
                  "   The equations hold, but the gloss the paper puts on them is wrong: "
                  + ", ".join(f"``{g}``" for g in cv.wrong_glosses) + " (corrected below).", ""]
    if cv.verdict == "informal" and cv.checked_items:  # a prose main sentence, its parts checked
        held = [s for s in cv.checked_items if s not in cv.failing_step_names]
        lines += [f"   The main sentence is prose ({', '.join(f'``{s}``' for s in cv.informal_items)})"
                  + (f"; its checked parts {', '.join(f'``{s}``' for s in held)} hold" if held else "") + ".", ""]
    for u in cv.unneeded:  # a hypothesis symuat's own reading shows unnecessary
        lines += [f"   The ``{u['tag']}`` hypothesis is not needed: it holds for ``{u['instead']}`` too ("
                  + ", ".join(f"``{k}``" for k in u["keys"]) + ", symuat's reading).", ""]
    if cv.verdict == "fails" and cv.failing_items and not cv.failing_step_names:
        lines += ["   .. rst-class:: failing-steps", "",
                  "   Wrong: " + ", ".join(f"``{s}``" for s in cv.failing_items[:3])
                  + (f" and {len(cv.failing_items) - 3} more (table under Readings)"
                     if len(cv.failing_items) > 3 else "") + ".", ""]
    if cv.corrected:
        lines += ["   **Corrected statement** " + (f"(:badge:`{cv.corrected_status}`)" if cv.corrected_status else "")
                  + f": `below the printed one <#corrected-{cv.id.lower()}>`__.", ""]
    from symuat.render.report import coq_coverage  # what Coq certified of this bottom line (``symuat report``'s +coq)

    cov = coq_coverage(cv)
    if cov and cov["certified"]:
        lines += ["   " + (":badge:`certified: coq` the whole bottom line" if cov["complete"]
                         else _coverage_rst(cov)) + ".", ""]
    return lines


def _coverage_rst(cov: dict) -> str:
    """The "Coq certified k of n checks …" line, each check key not certified as a code literal
    (a key such as ``L2.9[W'_{3,1}]`` is a name, not TeX)."""
    text = _escape(cov["text"].replace("coq: ", "Coq certified ", 1))
    for key in cov["not_certified"][:3]:
        text = text.replace(_escape(key), f"``{key}``", 1)
    return text


def _split_text(tex: str) -> list[tuple[str, str]]:
    r"""``tex`` as alternating ``("math", …)`` and ``("text", …)`` pieces: the top-level
    ``\text{…}`` groups are the text.

    >>> _split_text(r"a=b\text{ where }c=d")
    [('math', 'a=b'), ('text', ' where '), ('math', 'c=d')]
    """
    out, depth, start, k = [], 0, 0, 0
    while k < len(tex):
        if depth == 0 and tex.startswith("\\text{", k):
            if tex[start:k]:
                out.append(("math", tex[start:k]))
            j, d = k + len("\\text{"), 1
            while j < len(tex) and d:
                d += {"{": 1, "}": -1}.get(tex[j], 0)
                j += 1
            out.append(("text", tex[k + len("\\text{"):j - 1]))
            k = start = j
            continue
        c = tex[k]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[k:])
            k += len(m.group(0)) if m else 1
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        k += 1
    if tex[start:]:
        out.append(("math", tex[start:]))
    return out


def statement_prose(tex: str) -> str:
    r"""A long statement that mixes formulas and prose (a correction with its "where …" and "for a
    Transformer layer …") as a paragraph: the prose as text, each formula of a comma-separated
    list as its own inline math, so the lines wrap at the width of the page instead of one
    display wider than its box.

    >>> statement_prose(r"x=y\ \forall L,\ \text{where }a=1,\ b=2\text{ (Eq. 3)}")
    '\\ :math:`x=y\\ \\forall L`\\ , where \\ :math:`a=1`\\ , \\ :math:`b=2`\\  (Eq. 3)'
    """
    out = []
    for kind, piece in _split_text(tex):
        if kind == "text":
            out.append(_plain(piece))
            continue
        lead = re.match(r"^(\\[ ,;!]|\\q?quad|\s|,)*", piece).group(0)
        tail = re.search(r"(\\[ ,;!]|\\q?quad|\s|[,;:.])*$", piece).group(0)
        if lead.strip().startswith(",") and out:
            out.append(", ")
        items = _top_level_list(piece)
        out.append(", ".join(_m(i) for i in items if i.strip()))
        punct = "".join(ch for ch in tail if ch in ",;:.")
        if punct and items:
            out.append(punct[-1] + " ")
        elif tail and items:
            out.append(" ")
    text = re.sub(r"(?<!\\)  +", " ", "".join(out)).strip()  # an escaped space keeps the real one after it
    return re.sub(r"(\\ ?)+$", "", text)


def corrected_box(cv) -> list[str]:
    """The proved correction of the bottom line, right under the statement as printed: a display,
    or, for a long statement with prose in it, a paragraph (:func:`statement_prose`)."""
    if not cv.corrected:
        return []
    title = "Corrected statement" + (f" ({cv.corrected_status})" if cv.corrected_status else "")
    head = [f".. admonition:: {title}", "   :class: claim-correction", f"   :name: corrected-{cv.id.lower()}", ""]
    if "\\text{" in cv.corrected and len(cv.corrected) > 160:
        return head + ["   " + statement_prose(cv.corrected), ""]
    return head + [_math(chain_lines(cv.corrected), "   ")]


def reading_legend(results) -> list[str]:
    """The reading tags the page uses, one line per reading axis (:func:`symuat.verdicts.readings.legend`)."""
    from symuat.verdicts.readings import legend

    tags = []
    for r in results:
        for t in r.check.reading or ():
            if t not in tags:
                tags.append(t)
    if not tags:
        return []
    lines = [".. container:: reading-legend", "", "   .. rst-class:: legend-title", "",
             "   Reading tags on this page (a reading: one tag per axis; symuat report counts readings)", ""]
    for line in legend(tags):
        head, _, rest = line.partition(" — ")
        lines += [f"   ``{head}`` — {rich(rest, links=False)}", ""]
    return lines


def _chains(results):
    """Group a claim's checks into printed chains: same reading, steps in registry order."""
    by_step: "OrderedDict[str, list]" = OrderedDict()
    for r in results:
        by_step.setdefault(r.check.id, []).append(r)
    return by_step


def _pair(r) -> str:
    """A reading and its badge, kept together (``span.reading-badge``)."""
    return f":rb:`{','.join(r.check.reading) if r.check.reading else ''}|{_status(r)}`"


def derivation(claim, results, wrong: set | None = None) -> list[str]:
    """The steps of the claim, one row per distinct statement: its label(s), the statement and one
    badge per reading. A step printed with several statements gets one label per statement (the
    tags that tell them apart: ``pre · W12x``); the same statement under two labels (``main`` and
    ``end``) is one row with both labels."""
    by_step = _chains(results)
    rows: "OrderedDict[str, list]" = OrderedDict()  # statement → [(label, results)]
    for step, rs in by_step.items():
        label = step[len(claim.id):].lstrip(".") or "—"
        statements: "OrderedDict[str, list]" = OrderedDict()
        for r in rs:
            statements.setdefault(r.check.statement, []).append(r)
        common_all = set.intersection(*(set(r.check.reading or ()) for r in rs)) if rs else set()
        for k, (statement, group) in enumerate(statements.items(), 1):
            name = label
            if len(statements) > 1:
                own = set.intersection(*(set(r.check.reading or ()) for r in group)) - common_all
                order = [t for t in (group[0].check.reading or ()) if t in own]
                name = f"{label} · {','.join(order)}" if order else f"{label} ({k})"
            rows.setdefault(statement.strip(), []).append((name, group))
    out_rows = []
    merged = False
    for statement, labelled in rows.items():
        names = [n for n, _ in labelled]
        merged |= len(names) > 1
        cells = []
        for name, group in labelled:
            if len(group) > 8:
                counts = Counter(_status(r) for r in group)
                body = " ".join(f"{_badge(s)}\\ ×{n}" for s, n in counts.most_common())
            else:
                body = " ".join(_pair(r) for r in group)
            cells.append((f"**{_label(name)}:** " if len(labelled) > 1 else "") + body)
        label = " = ".join(f"**{_label(n)}**" for n in names)
        if wrong and any(n.split(" ")[0] in wrong or n in wrong for n in names):
            label += " ✘"
        # a statement wider than its cell broken into lines (a cell holds about 34 characters at 1024 px)
        tex = wrap_tex(tex_prose(statement.replace('`', chr(39))), CELL_ROOM)
        out_rows.append((label, f":math:`{tex}`", " ".join(cells)))
    lines = [_table(out_rows, ("step", "statement", "status per reading"), widths="10 54 36", cls="derivation"), ""]
    if merged:
        lines += ["A row with two labels (``main = end``): the same statement, checked in two roles — "
                  "the claim's conclusion and the last link of its printed chain.", ""]
    return lines


def readings_section(claim, results) -> list[str]:
    """Admitted readings first (in full); the rest summarised, the full table folded."""
    admitted = [r for r in results if r.check.admitted]
    other = [r for r in results if not r.check.admitted]
    lines = []
    many = len(results) > 100
    if many:
        positive = [r for r in results if r.verdict is not None and str(r.verdict.status) in
                    ("proved", "proved-at-sizes", "numeric-only")]
        failing = [r for r in results if r not in positive]
        lines += [f"{len(results)} checks. **Surviving** ({len(positive)}): the readings under which "
                  "the statement holds.", ""]
        if positive:
            lines += [_table([(_key_link(r), _badge(_status(r))) for r in positive], ("check", "status"),
                             widths="80 20"), ""]
        groups = Counter(_first_failing_depth(r) if r.verdict and r.verdict.counterexample else _status(r)
                         for r in failing)
        if failing:
            lines += [f"**Not surviving** ({len(failing)}), counted by where they first fail:", ""]
            lines += [_table([(_escape(g), str(n)) for g, n in sorted(groups.items())],
                             ("first fails at", "readings"), widths="70 30"), ""]
        lines += [".. fold:: full table of every reading", "",
                  _indent(_table([(_key_link(r), _badge(_status(r)), _escape(_first_failing_depth(r)))
                                  for r in results], ("check", "status", "first failing"), widths="70 15 15")),
                  ""]
        return lines
    def grouped(rs):
        """One row per reading: every step checked under exactly that reading, with its badge."""
        rows: "OrderedDict[str, list]" = OrderedDict()
        for r in rs:
            rows.setdefault(",".join(r.check.reading) if r.check.reading else "(any)", []).append(r)
        return [(f"``{reading}``", " · ".join(
            f"{_escape(r.check.id[len(claim.id):].lstrip('.') or claim.id)} {_badge(_status(r))}" for r in group))
            for reading, group in rows.items()]

    for label, rs in (("Readings the text admits", admitted), ("symuat's alternative readings", other)):
        if rs:
            lines += [f"**{label}** (one row per reading; each step checked under it):", "",
                      _table(grouped(rs), ("reading", "steps"), widths="35 65"), ""]
    lines += [".. fold:: every check with its time", "",
              _indent(_table([(_key_link(r), _badge(_status(r)), f"{r.seconds:.2f} s") for r in results],
                             ("check", "status", "time"), widths="70 18 12")), ""]
    return lines


def _detail_selection(results):
    """Which checks get a detail block: all, unless many (then: survivors, and the first of each
    failure group)."""
    if len(results) <= 100:
        return results, []
    out, seen = [], set()
    for r in results:
        positive = r.verdict is not None and str(r.verdict.status) in ("proved", "proved-at-sizes", "numeric-only")
        group = _first_failing_depth(r)
        if positive or group not in seen:
            out.append(r)
            if not positive:
                seen.add(group)
    return out, [r for r in results if r not in out]


def _top_level_list(tex: str) -> list[str]:
    """``a=b,\\ c=d`` → ``["a=b", "c=d"]``: the items of a comma-separated list outside any group."""
    items, depth, start, k = [], 0, 0, 0
    while k < len(tex):
        c = tex[k]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[k:])
            k += len(m.group(0)) if m else 1
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(tex[start:k])
            start = k + 1
        k += 1
    items.append(tex[start:])
    strip = lambda t: re.sub(r"^(\\[ ,;!]|\\q?quad|\s)+|(\\[ ,;!]|\\q?quad|\s)+$", "", t)
    return [strip(i) for i in items if strip(i)]


def chain_lines(tex: str, longer_than: int = 90) -> str:
    r"""A long printed chain ``a = b = c`` (the links may carry labels, ``\overset{f}{=}``) as one
    link per line (``aligned``), so that every step shows without scrolling; short or unchainable
    statements unchanged.

    >>> chain_lines(r"a = b \overset{f}{=} c", 3)
    '\\begin{aligned}a &= b\\\\ &\\overset{f}{=} c\\end{aligned}'
    """
    if len(tex) <= longer_than or r"\begin" in tex or "&" in tex:
        return tex
    items = _top_level_list(tex)
    if len(items) > 1 and all("=" in item for item in items):
        return r"\begin{gathered}" + r",\\ ".join(items) + r"\end{gathered}"
    exprs, rels, depth, start, k = [], [], 0, 0, 0
    while k < len(tex):
        c = tex[k]
        m = re.match(r"\\overset\{[^{}]*\}\{=\}", tex[k:]) if depth == 0 else None
        if m:
            exprs.append(tex[start:k])
            rels.append(m.group(0))
            k += len(m.group(0))
            start = k
            continue
        if c == "\\":
            k += len(re.match(r"\\([A-Za-z]+|.)", tex[k:]).group(0)) if re.match(r"\\([A-Za-z]+|.)", tex[k:]) else 1
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == "=" and depth == 0 and (k == 0 or tex[k - 1] not in "<>!:"):
            exprs.append(tex[start:k])
            rels.append("=")
            start = k + 1
        k += 1
    exprs.append(tex[start:])
    if not rels or any(not e.strip() for e in exprs):
        return tex
    body = exprs[0].strip() + "".join(
        (" &" if i == 0 else r"\\ &") + rel + " " + e.strip() for i, (rel, e) in enumerate(zip(rels, exprs[1:])))
    return r"\begin{aligned}" + body + r"\end{aligned}"


def claim_page(claim, results, cv, rests_on, used_by, section) -> str:
    title = f"{claim.id} — {claim.title}"
    from symuat.render.report import pretty

    # the title in plain Unicode (no math role): the sidebar, the browser tab and the search
    # results show it as text, never as TeX source
    title_rst = f"{claim.id} — {_escape(pretty(claim.title))}"
    lines = [f".. _claim-{claim.id}:", "", title_rst, "=" * max(len(title_rst), len(title)), ""]
    # the first screen: the bottom line (with the failing steps) and the tags it uses, then the
    # statement as printed and its proved correction
    lines += bottom_line(cv)
    lines += reading_legend(results)
    lines += [".. admonition:: As printed", "   :class: claim-statement", "",
              f"   *Where:* {rich(claim.where, links=False)}", "", _math(chain_lines(claim.statement), "   ")]
    if claim.remarks:
        lines += ["   " + rich(claim.remarks), ""]
    lines += corrected_box(cv)
    if rests_on or used_by:
        deps = []
        if rests_on:
            deps.append("Rests on " + ", ".join(f":ref:`{d} <claim-{d}>`" for d in rests_on) + ".")
        if used_by:
            deps.append("Used by " + ", ".join(f":ref:`{d} <claim-{d}>`" for d in used_by) + ".")
        lines += [" ".join(deps) + " (recorded while the checks ran; see the :ref:`dependency graph <claims-graph>`.)", ""]
    lines += ["Derivation", "----------", "",
              "Each step as printed, with the status of every reading it was checked under.", ""]
    lines += derivation(claim, results, set(cv.failing_step_names))
    if claim.figures:
        lines += ["Structure", "---------", ""]
        for stem, caption, _ in claim.figures:
            alt = caption.replace("\n", " ")
            lines += [f".. figure:: figures/{stem}.png", "   :width: 100%", f"   :alt: {alt}", "",
                      f"   {rich(caption)}", ""]
    lines += ["Readings", "--------", ""]
    lines += readings_section(claim, results)
    shown, hidden = _detail_selection(results)
    lines += ["Checks in detail", "----------------", ""]
    if hidden:
        lines += [f"The {len(shown)} checks below are the surviving readings and the first of each failure "
                  f"group; the other {len(hidden)} fail in the same way (full table above).", ""]
    for r in shown:
        lines += check_detail(r)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# dependency graph (SVG written here: no graphviz, works offline) and progress bars
# ---------------------------------------------------------------------------------------------

COLOURS = {
    "holds": "#2e7d32",
    "holds-steps-wrong": "#546e7a",
    "holds-under-readings": "#b7791f",
    "fails": "#c62828",
    "informal": "#757575",
    "definition": "#1565c0",
    "cited": "#00838f",
    "error": "#6a1b9a",
}


def _word(cv) -> str:
    from symuat.verdicts.headline import display_word

    return display_word(cv)


def dependency_svg(sections, verdicts, edges, href) -> str:
    """One node per claim in one column per section, an arrow from a claim to each claim it rests
    on; nodes coloured by the computed bottom line and linked to their pages."""
    col_w, node_w, node_h, row_h, top, left = 168, 92, 26, 34, 56, 20
    pos = {}
    n_rows = max(len(claims) for _, claims in sections)
    width = left * 2 + col_w * len(sections)
    height = top + row_h * n_rows + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="symuat-graph" class="dependency-graph" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
           f'aria-label="Dependency graph of the claims, coloured by bottom line">',
           "<title>Which claims rest on which: recorded by the registry while the checks ran</title>",
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
           '<style>text{font-family:sans-serif} .sec{font-size:13px;font-weight:bold;fill:#333}'
           ' .id{font-size:13px;fill:#fff;font-weight:bold} a:hover rect{stroke:#000;stroke-width:2}'
           ' .edge{fill:none;stroke:#555;stroke-width:1.3;opacity:.75}</style>']
    for c, (group, claims) in enumerate(sections):
        x = left + c * col_w
        out.append(f'<text class="sec" x="{x + node_w / 2 + 10}" y="{top - 22}" text-anchor="middle">'
                   f'{html.escape(group)}</text>')
        for r, claim in enumerate(claims):
            pos[claim.id] = (x + 20, top + r * row_h)
    for src, dsts in sorted(edges.items()):
        if src not in pos:
            continue
        for dst in sorted(dsts):
            if dst not in pos:
                continue
            (x1, y1), (x2, y2) = pos[src], pos[dst]
            y1c, y2c = y1 + node_h / 2, y2 + node_h / 2
            if abs(x1 - x2) < 1:  # same column: bow out to the right
                xs, xe = x1 + node_w, x2 + node_w
                bow = xs + 28 + 4 * abs(y1 - y2) / row_h
                d = f"M {xs} {y1c} C {bow} {y1c}, {bow} {y2c}, {xe} {y2c}"
            elif x2 < x1:
                xs, xe = x1, x2 + node_w
                d = f"M {xs} {y1c} C {xs - 50} {y1c}, {xe + 50} {y2c}, {xe} {y2c}"
            else:
                xs, xe = x1 + node_w, x2
                d = f"M {xs} {y1c} C {xs + 50} {y1c}, {xe - 50} {y2c}, {xe} {y2c}"
            out.append(f'<path class="edge" d="{d}" marker-end="url(#arrow)"><title>{src} rests on {dst}</title></path>')
    for group, claims in sections:
        for claim in claims:
            x, y = pos[claim.id]
            cv = verdicts[claim.id]
            word = _word(cv)
            tip = f"{claim.id} — {claim.title}: {VERDICT_WORDS[word]}"
            out.append(f'<a href="{href(claim.id)}" class="node node-{word}"><title>{html.escape(tip)}</title>'
                       f'<rect x="{x}" y="{y}" width="{node_w}" height="{node_h}" rx="5" fill="{COLOURS[word]}"/>'
                       f'<text class="id" x="{x + node_w / 2}" y="{y + 17.5}" text-anchor="middle">'
                       f'{html.escape(claim.id)}</text></a>')
    ly = top + row_h * n_rows + 24
    lx = left
    for word, colour in COLOURS.items():
        out.append(f'<rect x="{lx}" y="{ly}" width="14" height="14" rx="3" fill="{colour}"/>'
                   f'<text x="{lx + 19}" y="{ly + 12}" font-size="12">{html.escape(VERDICT_WORDS[word].split(" (")[0])}</text>')
        lx += 40 + 7 * len(VERDICT_WORDS[word].split(" (")[0])
    out.append(f'<text x="{left}" y="{ly + 36}" font-size="12" fill="#444">arrow: the claim rests on the '
               "verdict of a check of the claim it points to</text>")
    out.append("</svg>")
    return "\n".join(out)


def _graph_columns(sections, edges):
    """The section columns in the order that keeps the arrows shortest (ties: the spec's order)."""
    from itertools import permutations

    if len(sections) > 8:
        return sections
    col_of = {c.id: g for g, claims in sections for c in claims}
    pairs = [(col_of[a], col_of[b]) for a, bs in edges.items() for b in bs if a in col_of and b in col_of]
    best = min(permutations(range(len(sections))),
               key=lambda perm: (sum(abs(perm[[g for g, _ in sections].index(x)] - perm[[g for g, _ in sections].index(y)])
                                     for x, y in pairs), perm))
    out = [None] * len(sections)
    for i, p in enumerate(best):
        out[p] = sections[i]
    return out


def progress_bar(cvs) -> str:
    counts = Counter(_word(cv) for cv in cvs)
    total = max(1, len(cvs))
    segs = "".join(
        f'<span class="seg seg-{w}" style="width:{100 * counts[w] / total:.2f}%;background:{COLOURS[w]}" '
        f'title="{counts[w]} {html.escape(VERDICT_WORDS[w])}"></span>'
        for w in COLOURS if counts[w])
    legend = ", ".join(f"{counts[w]} {html.escape(VERDICT_WORDS[w].split(' (')[0])}" for w in COLOURS if counts[w])
    return (f'<div class="progress"><div class="bar">{segs}</div>'
            f'<div class="progress-legend">{len(cvs)} claims: {legend}</div></div>')


def _raw(html_text: str, indent: str = "") -> list[str]:
    return [f"{indent}.. raw:: html", "", textwrap.indent(html_text, indent + "   "), ""]


# ---------------------------------------------------------------------------------------------
# the build
# ---------------------------------------------------------------------------------------------

_STATE: dict = {}


def _sections(claims):
    out: "OrderedDict[str, list]" = OrderedDict()
    for c in claims:
        out.setdefault(c.group, []).append(c)
    return list(out.items())


def _summary_rows(claims, verdicts, prefix=""):
    rows = []
    for claim in claims:
        cv = verdicts[claim.id]
        word = _word(cv)
        rows.append((f":ref:`{claim.id} <claim-{claim.id}>`", rich(claim.title, links=False),
                     f":verdict:`{word}`", f":badge:`{cv.strength}`" if cv.strength else "",
                     str(len(cv.checks))))
    return rows


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    label = VERDICT_WORDS.get(text, text).split(" (")[0]
    return [nodes.inline(label, label, classes=["verdict", f"verdict-{text}"])], []


def _progress(items, label, app, name):
    """Items with Sphinx's progress line on a terminal; off a terminal (CI logs), none: one
    summary line is logged after the work instead of one line per item."""
    import sys

    from sphinx.util.display import status_iterator

    if sys.stdout.isatty() and app.verbosity >= 0:
        return status_iterator(items, label, "darkgreen", len(items), app.verbosity, stringify_func=name)
    return iter(items)


def run_checks(app):
    """Every check, once, with progress; the verdict report from the same results."""
    import symuat.claims  # noqa: F401
    from symuat.kernel.registry import REGISTRY
    from symuat.verdicts.roll_up import claim_verdicts

    start = time.perf_counter()
    checks = REGISTRY.all_checks()
    results = []
    for c in _progress(checks, "symuat: running checks (the run of prove --all)... ", app, lambda c: c.key):
        results.append(c.run())
    seconds = time.perf_counter() - start
    verdicts = {cv.id: cv for cv in claim_verdicts(results, REGISTRY)}
    logger.info(f"symuat: {len(results)} checks of {len(verdicts)} claims in {seconds:.1f} s")
    for r in results:
        if r.error:  # a crash fails the build under -W, as it fails `symuat prove`
            logger.warning(f"symuat: check {r.check.key} crashed: {r.error}")
    return REGISTRY, results, verdicts, seconds


def generate(app):
    build_start = time.perf_counter()
    registry, results, verdicts, seconds = run_checks(app)
    claims = [c for c in registry.ordered_claims() if c.id in verdicts]
    _CLAIM_IDS.clear()
    _CLAIM_IDS.update(c.id for c in claims)
    by_claim: dict[str, list] = {}
    of = {c.key: claim.id for claim in claims for c in claim.checks}
    for r in results:
        by_claim.setdefault(of[r.check.key], []).append(r)
    edges = registry.claim_edges()
    used_by: dict[str, set[str]] = {}
    for a, bs in edges.items():
        for b in bs:
            used_by.setdefault(b, set()).add(a)
    order = {c.id: i for i, c in enumerate(claims)}
    sections = _sections(claims)

    _COQ_LINKS.clear()
    _COQ_LINKS.update(coq_library_pages(Path(app.outdir)))
    _COQ_STATEMENTS.clear()
    _COQ_STATEMENTS.update(coq_statements())
    out = Path(app.srcdir) / "claims"
    out.mkdir(exist_ok=True)
    for stale in out.glob("*.rst"):
        stale.unlink()
    fig_start = time.perf_counter()
    stems = [stem for claim in claims for stem, _, _ in claim.figures]
    in_own_process(draw_figures, stems, out / "figures")  # X1's and X6's load SmolLM2: never in this process
    fig_seconds = time.perf_counter() - fig_start
    for group, members in sections:
        for claim in members:
            page = claim_page(claim, by_claim[claim.id], verdicts[claim.id],
                              sorted(edges.get(claim.id, ()), key=order.get),
                              sorted(used_by.get(claim.id, ()), key=order.get), group)
            (out / f"{claim.id}.rst").write_text(page, encoding="utf-8")
        title = section_title(group)
        ids = f"{members[0].id}–{members[-1].id}" if len(members) > 1 else members[0].id
        sec_title = f"{title} ({ids})"
        lines = [f".. _section-{group}:", "", sec_title, "=" * len(sec_title), ""]
        lines += _raw(progress_bar([verdicts[c.id] for c in members]))
        lines += [_table(_summary_rows(members, verdicts), ("claim", "title", "bottom line", "strength", "checks"),
                         widths="8 52 18 14 8"), ""]
        lines += [".. toctree::", "   :hidden:", "   :titlesonly:", ""] + [f"   {c.id}" for c in members] + [""]
        (out / f"section-{group}.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")

    svg = dependency_svg(_graph_columns(sections, edges), verdicts, edges, lambda cid: f"{cid}.html")
    n_edges = sum(len(v) for v in edges.values())
    index = ["Claims", "======", "",
             f"Generated at build time from one run of every check ({len(results)} checks, {seconds:.0f} s); "
             "nothing on these pages is typed in. The bottom line of a claim is the verdict report's "
             "(:mod:`symuat.verdicts.roll_up`).", ""]
    for group, members in sections:
        index += [f"**{section_title(group)}** (:ref:`{members[0].id}–{members[-1].id} <section-{group}>`)", ""]
        index += _raw(progress_bar([verdicts[c.id] for c in members]))
    index += [".. toctree::", "   :hidden:", "   :titlesonly:", ""]
    index += [f"   section-{g}" for g, _ in sections] + [""]
    index += [".. _claims-graph:", "", "Dependency graph", "----------------", "",
              f"{n_edges} edges between claims, recorded by the registry whenever a check's procedure "
              "asked for the verdict of another claim's check. Click a claim to open its page.", ""]
    index += _raw('<div class="graph-wrap">\n' + svg + "\n</div>")
    (out / "index.rst").write_text("\n".join(index) + "\n", encoding="utf-8")

    from symuat.verdicts.headline import headline

    first, second = headline(list(verdicts.values())).lines()
    papers = [c for c in claims if not verdicts[c.id].extension]
    extensions = [c for c in claims if verdicts[c.id].extension]
    summary = [f"**{_escape(first)}** {_escape(second)} (the same count as ``symuat report``'s first lines: "
               ":func:`symuat.verdicts.headline.headline`)", ""]
    summary += ["**The papers' claims**", ""] + _raw(progress_bar([verdicts[c.id] for c in papers]))
    summary += [_table(_summary_rows(papers, verdicts), ("claim", "title", "bottom line", "strength", "checks"),
                       widths="8 52 18 14 8"), ""]
    if extensions:
        summary += ["**symuat's extensions** (not claims of the papers; counted apart)", ""]
        summary += _raw(progress_bar([verdicts[c.id] for c in extensions]))
        summary += [_table(_summary_rows(extensions, verdicts), ("claim", "title", "bottom line", "strength", "checks"),
                           widths="8 52 18 14 8"), ""]
    (out / "summary.inc").write_text("\n".join(summary), encoding="utf-8")

    _STATE.update(verdicts=[cv.as_dict() for cv in verdicts.values()], results=results,
                  check_seconds=seconds, figure_seconds=fig_seconds, build_start=build_start,
                  edges={k: sorted(v) for k, v in edges.items()})
    logger.info(f"symuat: pages generated in {time.perf_counter() - build_start:.1f} s "
                f"(checks {seconds:.1f} s, figures {fig_seconds:.1f} s)")


MODEL_TEXTS = ["The cat sat on the mat.",
               "A transformer is, the papers say, a universal approximator with dynamic parameters."]


def generate_model_page(app):
    """The DUAT rewrite of all-MiniLM-L6-v2: the check table and the figure, when the model tier is there."""
    start = time.perf_counter()
    import os
    import sys

    if not sys.stdout.isatty():  # a quiet log off a terminal: no progress bars from HF either
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except Exception:  # transformers absent: nothing to silence
            pass
    out = Path(app.srcdir) / "model.rst"
    lines = ["The DUAT rewrite of real models", "===============================", "",
             "symuat rewrites real pretrained models into the DUAT form and recomputes them from it, one "
             "module per model family: the BERT family (:mod:`symuat.models.families.bert`, an encoder), the "
             "Llama family (:mod:`symuat.models.families.llama`, a decoder) and the Gemma-3 family "
             "(:mod:`symuat.models.families.gemma3`, a current decoder). All three run below, in this build.", "",
             "An encoder: all-MiniLM-L6-v2 (the BERT family)", "----------------------------------------------", "",
             "``symuat model check`` rewrites every layer of all-MiniLM-L6-v2 (6 post-LayerNorm BERT layers, "
             "384 features, 12 heads, GELU, biases) into the DUAT form of Eq. 20 — attention as the input-dependent "
             "matrix :math:`W'(x)=\\sum_iH_i\\otimes B_i^\\top` applied matrix-free, LayerNorm as an input-dependent "
             "affine map — and recomputes every hidden state from the combined parameters alone.", ""]
    run = in_own_process(minilm_run, Path(app.srcdir) / "claims" / "figures" / "minilm-dynamic.png")
    if "error" in run:
        lines += [f"**Not generated in this build: the model tier is not installed** ({_escape(run['error'])}). "
                  "Install it with ``pip install -e '.[model]' && symuat model install``.", ""]
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    report = run["report"]
    ref = bool(report["reference"])
    lines += [f"Error: {_escape(report['error_definition'])}.", ""]
    if ref:
        lines += ["**HF reference:** included — every state is also compared with HF ``BertModel`` run in "
                  "float64 (the reference tier is installed in this build).", ""]
    else:
        lines += ["**HF reference: not installed in this build**, so the rewrite is compared with symuat's "
                  "own NumPy forward pass only. Install the reference tier with "
                  "``pip install -e '.[reference]'`` to add the comparison with HF ``BertModel``.", ""]
    for t in report["texts"]:
        if ref:
            rows = [(str(x["state"]), f"{x['rewrite_vs_forward']:.2e}", f"{x['rewrite_vs_reference']:.2e}",
                     f"{x['forward_vs_reference']:.2e}") for x in t["states"]]
            header = ("hidden state", "rewrite vs forward", "rewrite vs HF (float64)", "forward vs HF (float64)")
        else:
            rows = [(str(x["state"]), f"{x['rewrite_vs_forward']:.2e}") for x in t["states"]]
            header = ("hidden state", "rewrite vs forward")
        lines += [f"*{_escape(t['text'])}* — {t['tokens']} tokens (batch padded to {t['padded_to']})", "",
                  _table(rows, header), ""]
    lines += [".. figure:: claims/figures/minilm-dynamic.png", "   :width: 100%",
              "   :alt: Three line plots, one line per sentence: per layer, the size of the attention matrix "
              "W'(x), the norm of the dynamic bias e_j, and the LayerNorm scales of the last layer per token.", "",
              "   What to see: the lines of the two sentences differ in every panel — the parameters of the "
              "DUAT form are functions of the input. Left: the Frobenius norm per token of each layer's "
              "attention matrix :math:`W'(x)`; middle: the norm per token of the dynamic bias "
              ":math:`e_j`; right: the LayerNorm scale :math:`1/\\mathrm{std}` of each token entering the "
              "last layer.", ""]
    from symuat_run import release_memory

    release_memory()
    lines += in_own_process(llama_section, Path(app.srcdir) / "claims" / "figures")
    lines += in_own_process(gemma3_section)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _STATE["model_seconds"] = time.perf_counter() - start


#: what the pages use of the MathJax distribution: the one combined component they load (found in
#: the pages), the TeX extensions it autoloads, the CHTML fonts, the accessibility and menu code
#: it may pull in; the other components (SVG output, MathML input, the speech engine) go
MATHJAX_KEEP = ("input/tex/extensions/", "output/chtml/fonts/", "a11y/", "ui/", "loader.js", "startup.js", "core.js")


def trim_mathjax(outdir: Path) -> tuple[int, int]:
    """Delete the parts of ``_static/mathjax`` no page uses; return (bytes before, bytes after)."""
    root = outdir / "_static" / "mathjax"
    if not root.is_dir():
        return 0, 0
    loaded = set()
    for page in (outdir / "index.html", outdir / "claims" / "index.html"):
        if page.is_file():
            loaded |= set(re.findall(r'_static/mathjax/([\w.-]+\.js)', page.read_text(encoding="utf-8")))
    if not loaded:
        return 0, 0  # cannot tell what the pages load: keep everything
    before = after = 0
    for f in sorted(root.rglob("*")):
        if not f.is_file():
            continue
        rel = f.relative_to(root).as_posix()
        size = f.stat().st_size
        before += size
        if rel in loaded or rel.startswith(MATHJAX_KEEP):
            after += size
        else:
            f.unlink()
    for d in sorted((d for d in root.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
        if not any(d.iterdir()):
            d.rmdir()
    return before, after


LLAMA_TEXT = "The capital of France is"


def minilm_run(figure: Path) -> dict:
    """The MiniLM check (with the HF reference when the tier is installed) and its figure, for
    :func:`in_own_process`: ``{"report": …}``, or ``{"error": …}`` when the model tier is missing."""
    try:
        from symuat.models import ModelError
        from symuat.models.families.bert import BertNumpy, check_rewrite, load_bert
        from symuat.numeric.figures import dynamic_parameters_figure
    except ImportError as exc:
        return {"error": str(exc)}
    try:
        try:
            report = check_rewrite(MODEL_TEXTS, reference=True)
        except ImportError:
            report = check_rewrite(MODEL_TEXTS, reference=False)
        figure.parent.mkdir(parents=True, exist_ok=True)
        dynamic_parameters_figure(MODEL_TEXTS, figure, BertNumpy(load_bert("minilm")))
    except (ImportError, ModelError) as exc:
        return {"error": str(exc)}
    return {"report": report}


def draw_figures(stems: list[str], folder: Path) -> None:
    """The claims' figures ``stems``, drawn into ``folder`` — in :func:`in_own_process`: two of them
    read SmolLM2-135M in float64 (1.1 GB, cached by the claims module for the process's life), which
    the build's own process would otherwise hold beside every model it starts later."""
    import symuat.claims  # noqa: F401
    from symuat.kernel.registry import REGISTRY

    draws = {stem: draw for claim in REGISTRY.ordered_claims() for stem, _, draw in claim.figures}
    folder.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        draws[stem](folder / f"{stem}.png")


def in_own_process(section, *args):
    """A model section's result, computed in a fresh Python process (``spawn``): the model's
    weights (1.1 GB for SmolLM2 in float64; 0.8 GB for Gemma-3, its vocabulary kept as the GGUF
    stores it; torch and HF's MiniLM for the reference) are loaded and freed there, so the build's
    memory is its own process's (small: no model) plus one model's, never the sum of the models'."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(section, *args).result()


def llama_section(figures: Path) -> list[str]:
    """The Llama family (SmolLM2-135M from its GGUF): ``symuat model check --model smollm2`` and
    ``symuat model explain``, run in this build; a note when the model package is absent."""
    title = "A decoder: SmolLM2-135M (the Llama family)"
    lines = [title, "-" * len(title), "",
             "``symuat model check --model smollm2`` rewrites every layer of SmolLM2-135M-Instruct (30 pre-RMSNorm "
             "Llama layers, grouped-query attention 9/3, RoPE, SwiGLU; read from its GGUF file, dequantized to "
             "float64) into the DUAT form with the decoder lifts X1–X6, and recomputes every hidden state and "
             "the logits from it. ``symuat model explain`` writes one next-token logit as the exact sum of its "
             "DUAT terms: the linear path from the embeddings, one σ-term per layer, the bias terms.", ""]
    try:
        import numpy as np

        from symuat.models.compare import check
        from symuat.models.family import load
        from symuat.models.rewrite import decompose_logit
        net = load("smollm2")
    except Exception as exc:  # the package is not installed: say so, the build goes on
        return lines + [f"**Not run in this build:** {_escape(str(exc))}. Install it with "
                        "``symuat model install smollm2``.", ""]
    with np.errstate(all="ignore"):
        report = check([LLAMA_TEXT], "smollm2", reference=False, loaded=net)
        ids = net.tokenize(LLAMA_TEXT)
        token = net.tokenizer.encode(" Paris").ids
        dec = decompose_logit(net, ids, token[0] if len(token) == 1 else None)
    t = report["texts"][0]
    worst = max((s["rewrite_vs_forward"] for s in t["states"] if s["rewrite_vs_forward"] is not None), default=0.0)
    lines += [f"*{_escape(LLAMA_TEXT)}* — {t['tokens']} tokens; next token {_escape(repr(t['prediction']))}. "
              f"Worst relative error of the rewrite against the float64 forward pass over the "
              f"{len(t['states'])} states and the logits: {worst:.1e} ({_escape(report['error_definition'])}). "
              "The comparison with HF's ``LlamaForCausalLM`` (made float64 throughout) is "
              "``symuat model check --model smollm2`` with the reference tier installed.", ""]
    rows = [("linear path from the embeddings", f"{dec.linear:+.6f}")]
    top = sorted(range(len(dec.layers)), key=lambda j: -abs(dec.layers[j]))[:5]
    rows += [(f"σ-term of layer {j + 1} (one of the five largest)", f"{dec.layers[j]:+.6f}") for j in sorted(top)]
    rows += [("bias terms", f"{dec.bias:+.6f}"),
             ("sum of all terms (30 σ-terms)", f"{dec.total:+.6f}"), ("the model's logit", f"{dec.logit:+.6f}")]
    lines += [f"``symuat model explain --model smollm2 --token ' Paris'``: the logit of "
              f"{_escape(repr(dec.token_text))} at the last position, term by term "
              rf"(\|sum − logit\| = {dec.abs_error:.1e}):", "", _table(rows, ("term", "value")), ""]
    try:
        from symuat.numeric.figures import duat_terms_figure

        figures.mkdir(parents=True, exist_ok=True)
        words = [net.tokenizer.decode([int(i)]) for i in ids]
        duat_terms_figure(dec, words, figures / "smollm2-explain.png")
        lines += [".. figure:: claims/figures/smollm2-explain.png", "   :width: 100%",
                  "   :alt: Bar chart: the contribution of each DUAT term to the logit of ' Paris', and a line "
                  "with the running sum reaching the model's logit; a second panel splits the linear path "
                  "over the input tokens.", "",
                  "   What to see: the running sum of the terms ends exactly on the model's logit; most of it "
                  "comes from a few late layers' σ-terms. ``--figure FILE`` draws it (it needs matplotlib: "
                  "``pip install -e '.[docs]'``).", ""]
    except ImportError:
        pass
    return lines


def gemma3_section() -> list[str]:
    """The Gemma-3 family (Gemma-3-270M from its GGUF): ``symuat model check --model gemma3``, run
    in this build without the HF reference (about 8 s of CPU and 1.3 GiB); a note when the model
    package is absent."""
    title = "A current decoder: Gemma-3-270M (the Gemma-3 family)"
    lines = [title, "-" * len(title), "",
             "``symuat model check --model gemma3`` rewrites every layer of Gemma-3-270M (18 layers: five local "
             "sliding-window layers to one global, grouped-query attention with QK-norm, RoPE with two bases, "
             "pre- and post-RMSNorm with the stored :math:`1+w` weights, GeGLU; read from its GGUF chunks, "
             "dequantized to float64) into the DUAT form and recomputes every hidden state and the logits from "
             "it. ``symuat model explain --model gemma3`` decomposes a logit as for SmolLM2; with the "
             "reference tier, ``model check`` also compares with HF's Gemma-3 made float64 throughout.", ""]
    text = "The capital of France is"
    try:
        import numpy as np

        from symuat.models.compare import check, verdict
        from symuat.models.families.gemma3 import gemma3_path

        gemma3_path()
        with np.errstate(all="ignore"):
            report = check([text], "gemma3", reference=False)
    except Exception as exc:  # the package is not installed: say so, the build goes on
        return lines + [f"**Not run in this build:** {_escape(str(exc))}. Install it with "
                        "``symuat model install gemma3``.", ""]
    v = verdict(report, 1e-12)
    worst = "non-finite" if v["worst"] is None else f"{v['worst']:.1e}"
    t = report["texts"][0]
    pred = f"; next token {_escape(repr(t['prediction']))}" if t.get("prediction") is not None else ""
    lines += [f"*{_escape(text)}* — {t['tokens']} tokens{pred}. Worst relative error of the rewrite against "
              f"the float64 forward pass over the {len(t['states'])} states and the logits: {worst} "
              f"({'PASS' if v['passed'] else 'FAIL'} at 1e-12; {_escape(report['error_definition'])}).", ""]
    return lines


def _finished(app, exc):
    if exc is not None or "verdicts" not in _STATE:
        return
    outdir = Path(app.outdir)
    before, after = trim_mathjax(outdir)
    if before:
        logger.info(f"symuat: MathJax trimmed to what the pages load: {after / 1e6:.1f} MB of {before / 1e6:.1f} MB")
    (outdir / "verdicts.json").write_text(json.dumps(
        {"claims": _STATE["verdicts"], "edges": _STATE["edges"],
         "seconds": {"checks": round(_STATE["check_seconds"], 2), "figures": round(_STATE["figure_seconds"], 2),
                     "model": round(_STATE.get("model_seconds", 0.0), 2),
                     "build": round(time.perf_counter() - _STATE["build_start"], 2)}}, indent=1),
        encoding="utf-8")
    logger.info(f"symuat: docs built in {time.perf_counter() - _STATE['build_start']:.1f} s "
                f"(checks {_STATE['check_seconds']:.1f} s, figures {_STATE['figure_seconds']:.1f} s, "
                f"model page {_STATE.get('model_seconds', 0.0):.1f} s)")


def setup(app):
    app.add_node(fold_node, html=(_visit_fold, _depart_fold),
                 latex=(lambda s, n: None, lambda s, n: None), text=(lambda s, n: None, lambda s, n: None))
    app.add_directive("fold", FoldDirective)
    app.add_role("badge", badge_role)
    app.add_role("rb", reading_badge_role)
    app.add_role("verdict", verdict_role)
    app.connect("builder-inited", generate)
    app.connect("builder-inited", generate_model_page)
    app.connect("build-finished", _finished)
    return {"version": "0.2", "parallel_read_safe": True}
