"""One line of why for a refuted check, derived from its counterexample.

``symuat show`` prints, for every refuted check, one line saying why the statement fails. A
check may carry a hand-written line (:attr:`symuat.kernel.registry.Check.why`) where it adds an
insight; every other refuted check gets one derived from its verdict, never typed in:

* the sides with the reading's definitions applied (``⋄`` rewritten into transposes and
  products, :attr:`symuat.kernel.status.Verdict.sides`) when the reading changes a definition;
* the first entry where the sides differ, with both values (a long rational by its size);
* for a side undefined where the other is defined, which dimensions clash;
* for a verdict without a counterexample (a denied identity that holds, a quantity), the
  method's own words.

>>> from symuat.kernel.status import Counterexample, Status, Verdict
>>> import numpy as np
>>> cex = Counterexample({"n": 2}, {"A": np.array([[0, 0], [1, 0]])}, np.array([[0, 0], [1, 0]]),
...                      np.array([[0, 1], [0, 0]]), "values differ", "exact: entry (0, 1) differs by -1 (2 of 4 entries differ)")
>>> derived_why(Verdict(Status.REFUTED, "exact counterexample", counterexample=cex))
'at n = 2, entry (0, 1): left side 0, right side 1 (2 of 4 entries differ)'
"""

from __future__ import annotations

import re

import numpy as np

from symuat.kernel.status import Status, Verdict
from symuat.text.plain_text import pretty
from symuat.text.values import readable, show_array, show_value

#: a why line longer than this is cut (the full account follows in ``show``)
MOST = 240


def _sizes(sizes) -> str:
    if not isinstance(sizes, dict) or not sizes:
        return ""
    return ", ".join(f"{k} = {v}" for k, v in sizes.items())


def _entry(arr, idx):
    try:
        return np.asarray(arr, dtype=object)[idx]
    except (IndexError, TypeError, ValueError):
        return None


def _short(text: str, most: int = 90) -> str:
    """A message with the long expression dumps in it cut to their first words."""
    text = re.sub(r"(\b[A-Za-z]\w*\((?:[^()]|\([^()]*\)){40,}?)(?=[\s;:,]|$)", lambda m: m[1][:30] + "…)", text)
    return text if len(text) <= most else text[: most - 1] + "…"


def _undefined(verdict: Verdict, cex) -> str:
    side = "right" if "right side undefined" in cex.exact_recheck else "left"
    other = "left" if side == "right" else "right"
    shape = ""
    defined = cex.lhs if side == "right" else cex.rhs
    if defined is not None and hasattr(defined, "shape"):
        shape = f" (a {'×'.join(str(s) for s in defined.shape)} array)"
    detail = verdict.detail or ""
    if detail.startswith(("ill-typed", "index spaces differ")) or "≠" in detail:
        clash = detail.rsplit(": ", 1)[-1]
        if " against " in clash:  # (rows)×(columns) of each side, from the normal form
            clash = "index spaces (rows × columns) " + clash
    else:
        clash = re.sub(r"^.*?undefined where the other is defined: ", "", cex.reason)
    return (f"at {_sizes(cex.sizes)} the {side} side is undefined and the {other} side is defined{shape}: "
            f"{_short(clash)}")


def derived_why(verdict: Verdict | None, reading_meaning: str = "") -> str | None:
    """The why line of a refuted verdict (None for any other status)."""
    if verdict is None or verdict.status is not Status.REFUTED:
        return None
    link = re.match(r"link (\S+) refuted", verdict.method or "")
    prefix = f"link {link[1]}: " if link else ""
    sides = getattr(verdict, "sides", None)
    if sides:
        left, left_applied, right, right_applied = (pretty(x) for x in sides)
        prefix += (f"under {reading_meaning}, " if reading_meaning else "") + (
            f"{left} = {left_applied}" if left != left_applied else left) + ", but " + (
            f"{right} = {right_applied}" if right != right_applied else right) + "; "
    cex = verdict.counterexample
    if cex is None:
        words = verdict.method
        if verdict.corrected is not None and verdict.corrected.verdict is not None \
                and verdict.corrected.verdict.status is Status.PROVED:
                words += f": {pretty(verdict.corrected.statement)} is proved"
        return _cut(prefix + words)
    recheck = cex.exact_recheck or ""
    where = _sizes(cex.sizes)
    m = re.match(r"exact: entry (\([^)]*\)) differs", recheck)
    if m and cex.lhs is not None and cex.rhs is not None:
        idx = tuple(int(x) for x in re.findall(r"-?\d+", m[1]))
        left, right = _entry(cex.lhs, idx), _entry(cex.rhs, idx)
        many = re.search(r"\((\d+ of \d+ entries differ)\)", recheck)
        if left is not None and right is not None:
            return _cut(prefix + (f"at {where}, " if where else "at these values, ")
                        + f"entry {m[1]}: left side {show_value(left)}, right side {show_value(right)}"
                        + (f" ({many[1]})" if many else "") + _named_lists(cex.values))
    if "side undefined" in recheck:
        return _cut(prefix + _undefined(verdict, cex))
    if recheck.startswith("exact: shapes"):
        return _cut(prefix + f"at {where} the sides have different shapes: {recheck[len('exact: shapes '):]}")
    reason = re.sub(r" \((minimised|the opaque σ)[^)]*\)", "", cex.reason or verdict.method)
    tail = ""
    if _plain(cex.lhs) and _plain(cex.rhs) and show_array(cex.lhs) != show_array(cex.rhs):
        tail = f": left side {show_array(cex.lhs)}, right side {show_array(cex.rhs)}"
    return _cut(prefix + (f"at {where}: " if where and where not in reason else "") + _short(reason, 160) + tail)


def _plain(v) -> bool:
    """A value short enough to print inline (a scalar, a closed form, a small array)."""
    if v is None or isinstance(v, dict):
        return False
    if isinstance(v, (list, np.ndarray)):
        return np.asarray(v, dtype=object).size <= 4 and len(str(np.asarray(v).tolist())) <= 40
    return len(str(v)) <= 80


def _cut(text: str) -> str:
    text = readable(text)
    return text if len(text) <= MOST else text[: MOST - 1] + "…"


def _named_lists(values) -> str:
    """Values that are lists of names (which weights changed, …), as ``; key: a, b``."""
    out = []
    for k, v in (values or {}).items():
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v) and "changed" in k:
            out.append(f"{k}: {', '.join(v)}")
    return "".join(f"; {x}" for x in out)


def why_line(check, verdict: Verdict | None) -> str | None:
    """The check's own why line if it has one, else the derived one; None unless refuted (or
    a check with a hand-written line)."""
    if getattr(check, "why", ""):
        return check.why
    meaning = ""
    if check.reading and getattr(verdict, "sides", None):  # the tags (their meanings: the reading line)
        meaning = ", ".join(t for t in check.reading if t in _DEFINING)
    return derived_why(verdict, meaning)


#: reading tags that change a definition (their meaning is printed before the sides)
_DEFINING = ("C-col", "C-prod", "LR", "RL", "col", "row")
