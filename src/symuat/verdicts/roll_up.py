"""The paper's verdict, claim by claim: checks rolled up into one bottom line.

A check's :class:`~symuat.kernel.status.Verdict` says whether *its statement* holds. Whether
that agrees with the paper depends on the check's ``polarity`` (the paper asserts the statement,
or denies it), and whether it bears on the bottom line depends on its ``role`` and on whether its
reading is one the text ``admitted``. This module is the one place where those are combined:

* :func:`agrees_with_paper` — one check: ``True``/``False``, or ``None`` for definitions,
  informal items and symuat's own extensions;
* :func:`roll_up` — one claim: ``holds`` / ``holds-under-readings`` / ``fails`` / ``informal`` /
  ``definition`` — or ``error`` when any of its checks crashed (a crash is never rolled into a
  verdict), with its strength (the weakest status among the checks that carry it), the
  readings that hold and fail, the failing steps and the corrected statement.

Readings are *full reading combinations*: a check's reading tags are sorted into the reading
axes of ``claims.md`` §0.3 (flattening, sense of the prime, matrix ⋄ matrix, parse, …; a tag
``key=value`` is an axis of its own), and the readings of a claim are the product of the axes
that occur among the checks carrying its bottom line. Tags that name no axis (``Eq. 24``,
``L=3``, a printed form) are *items*: every item must hold under a reading.

Nothing here types a verdict in: every field is derived from results of checks that ran.

>>> from symuat.verdicts.roll_up import reading_axes
>>> reading_axes("P5", ("C-col", "LR", "square"))
({'mm': 'C-col', 'parse': 'LR', 'shape': 'square'}, ())
>>> reading_axes("M4", ("col", "row"))   # two values of one axis: an item, not a reading
({}, ('col', 'row'))
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from symuat.kernel.registry import Check, Claim, Result
from symuat.kernel.status import Status, Verdict

POSITIVE = (Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY)
#: strengths, strongest first
STRENGTHS = ("proved", "proved-at-sizes", "numeric-only")
VERDICTS = ("holds", "holds-under-readings", "fails", "informal", "definition", "cited", "error")

#: the reading axes of claims.md §0.3 (and the readings the entries list), tag → axis
AXES: dict[str, tuple[str, ...]] = {
    "flattening": ("col", "row"),
    "prime": ("dia", "duat", "transposed"),
    "mm": ("C-col", "C-prod"),
    "parse": ("LR", "RL"),
    "shape": ("conf", "square"),
    "projections": ("split", "std"),
    "mask": ("bidir", "causal"),
    "lift": ("const", "pointwise"),
    "list": ("seq", "sim"),
    "alpha": ("α-full", "α-diag"),
    "beta": ("β-const", "β(x)"),
    "side": ("left", "right"),
    "sparsity": ("nnz-frac", "zero-frac"),
    "x_i": ("slice", "input"),
    "lhs": ("matrix", "flat"),
    "last": ("W12", "W12x", "W12dia"),
    "block": ("B-both", "B-ffn"),
    "form": ("D2", "D6"),
    "d3to4": ("lifts", "arbitrary"),
    "layernorm": ("none", "pre", "post"),
    "network": ("eq20", "eq30"),
}
TAG_AXIS = {tag: axis for axis, tags in AXES.items() for tag in tags}
#: what a reading tag means (claims.md §0.3 and the entries), for ``symuat show``
READING_MEANING: dict[str, str] = {
    "col": "T_D = vec_c (column-major)", "row": "T_D = vec_r (row-major)",
    "dia": "y' = W'⋄x' = (W')ᵀx'", "duat": "y' = W'x' (“W' stands for (W')ᵀ”)",
    "transposed": "the primes of H2/H3/H5: (W')ᵀx' = y'",
    "C-col": "A⋄B := AᵀB (D4 on each column of B)", "C-prod": "A⋄B := AB",
    "LR": "a⋄b⋄c := (a⋄b)⋄c", "RL": "a⋄b⋄c := a⋄(b⋄c)",
    "conf": "any conformable shapes", "square": "square matrices, as stated",
    "split": "per-head slices x_i = XS_i", "std": "full-width projections XW_{·i}",
    "bidir": "no mask", "causal": "(H_i)_{nn'} = 0 for n' > n",
    "const": "the lift depends on the layer's parameters only", "pointwise": "the lift may depend on the input",
    "seq": "reassignments evaluated one by one, in printed order",
    "sim": "every right-hand side uses the values before the list",
    "α-full": "α_j an arbitrary m×m matrix", "α-diag": "α_j diagonal",
    "pre": "pre-LN block", "post": "post-LN block", "none": "no LayerNorm",
    "B-both": "y = x + MHA(x), x_next = y + FFN(y)", "B-ffn": "y = MHA(x), x_next = y + FFN(y)",
    "eq20": "Eq. 20 networks (raw parameters independent of the input)", "eq30": "Transformer blocks (Eq. 30)",
}
#: how a correction that holds under one reading only says so, as a condition in words (a reading
#: whose corrected statement already names it — M2's zero-frac, L2's D2 — needs none)
READING_CONDITION = {"causal": "with a causal mask", "bidir": "without a mask"}


def reading_condition(tags) -> str:
    """The condition under which a correction is stated, in words.

    >>> reading_condition(("causal",))
    'with a causal mask'
    >>> reading_condition(("zero-frac", "col"))
    'under zero-frac, col'
    """
    return ", ".join(READING_CONDITION.get(t, "") for t in tags if t in READING_CONDITION) or (
        "under " + ", ".join(tags))


def reading_text(tags) -> str:
    """The reading tags with their meanings: ``C-col (A⋄B := AᵀB), LR (a⋄b⋄c := (a⋄b)⋄c)``.

    >>> reading_text(("C-col", "LR", "L=3"))
    'C-col (A⋄B := AᵀB (D4 on each column of B)), LR (a⋄b⋄c := (a⋄b)⋄c), L=3'
    """
    return ", ".join(f"{t} ({READING_MEANING[t]})" if t in READING_MEANING else t for t in tags or ())
#: tags that are items (each must hold) in these claims although they name a reading elsewhere
ITEM_TAGS = {
    "T10": {"duat", "aaai"},  # the DUAT list and the AAAI list: each paper's own statement
    "H4": set(),
}
#: ``key=value`` tags whose key enumerates items, not readings
ITEM_KEYS = {"i", "L"}


#: roles of symuat's own statements: they never say whether the paper is right
OWN_ROLES = ("extension", "prediction")


def agrees_with_paper(check: Check, verdict: Verdict | None) -> bool | None:
    """Whether the outcome of ``check`` agrees with what the paper says (None: not a paper claim)."""
    if verdict is None or check.polarity is None or check.role in OWN_ROLES:
        return None
    if verdict.status in (Status.DEFINITION, Status.INFORMAL):
        return None
    positive = verdict.status in POSITIVE
    return positive if check.polarity == "asserts" else not positive


def strength(verdict: Verdict) -> str:
    """How strongly a verdict is established: a positive status is its own strength; a refutation
    by an exactly re-checked counterexample is a proof (of the negation), one by float64 residuals
    only is ``numeric-only``."""
    if verdict.status in POSITIVE:
        return str(verdict.status)
    if verdict.status is Status.REFUTED:
        cex = verdict.counterexample
        if cex is not None:
            return "proved" if cex.exact_recheck.startswith("exact") else "numeric-only"
        # refuted by a proof of the statement the claim denies (check_negation)
        inner = verdict.corrected.verdict if verdict.corrected is not None else None
        return str(inner.status) if inner is not None and inner.status in POSITIVE else "proved"
    return str(verdict.status)


def weakest(strengths) -> str | None:
    strengths = [s for s in strengths if s in STRENGTHS]
    return max(strengths, key=STRENGTHS.index) if strengths else None


def _axis(claim_id: str, check_id: str, tag: str, keyed: dict) -> str | None:
    if tag in ITEM_TAGS.get(claim_id, ()):
        return None
    if tag in TAG_AXIS:
        return TAG_AXIS[tag]
    if "=" in tag:
        key = tag.rsplit("=", 1)[0]
        if key in ITEM_KEYS:
            return None
        # one axis per key and per set of values: T6's W3=i|i+1 and T6.aaai's
        # W3=multiplied|unchanged are two questions
        values = keyed.get((check_id, key))
        return f"{key}∈{{{'|'.join(values)}}}" if values else key
    return None


def reading_axes(claim_id: str, tags, keyed: dict | None = None) -> tuple[dict, tuple]:
    """Split a check's reading tags into ``{axis: tag}`` and the remaining item tags.

    A check that names two values of one axis (M4's ``[col,row]``: the second layer in one
    flattening, the first in the other) compares readings: its tags are items."""
    keyed = keyed or {}
    tags = tuple(tags or ())
    check_id = keyed.get("__id__", claim_id)
    axes, items = {}, []
    for tag in tags:
        axis = _axis(claim_id, check_id, tag, keyed)
        if axis is None:
            items.append(tag)
        elif axis in axes:
            return {}, tags
        else:
            axes[axis] = tag
    return axes, tuple(items)


def _keyed_values(checks: list[Check]) -> dict:
    out: dict = {}
    for c in checks:
        for tag in c.reading or ():
            if "=" in tag:
                key, value = tag.rsplit("=", 1)
                vals = out.setdefault((c.id, key), [])
                if value not in vals:
                    vals.append(value)
    return out


@dataclass
class ClaimVerdict:
    """The bottom line of one claim."""

    id: str
    title: str
    verdict: str
    strength: str | None
    readings_that_hold: list[str] = field(default_factory=list)
    readings_that_fail: list[str] = field(default_factory=list)
    failing_steps: list[str] = field(default_factory=list)
    corrected: str | None = None
    corrected_status: str | None = None
    checks: list[str] = field(default_factory=list)
    extension: bool = False
    errors: list[str] = field(default_factory=list)
    #: checks (keys) that carry the bottom line and disagree with the paper under every reading
    failing_items: list[str] = field(default_factory=list)
    #: quantities: key, symuat's value, what the paper says
    quantities: list[dict] = field(default_factory=list)
    #: symuat's alternative readings (not admitted by the text): key → agrees with the paper
    other_readings: dict[str, bool | None] = field(default_factory=dict)
    #: the failing steps by name, one per step and item (``f``, ``forms[duat-5c]``)
    failing_step_names: list[str] = field(default_factory=list)
    #: the readings that hold, written per axis where they form a product (``col|row,input,flat``)
    readings_that_hold_compact: str = ""
    #: the check whose correction ``corrected`` is (a failing item, or a wrong gloss)
    corrected_of: str | None = None
    #: symuat's own predictions beside the verdict (rule 7): key, statement, holds, correction
    predictions: list[dict] = field(default_factory=list)
    #: glosses of the paper that symuat formalised and found wrong (rule 7), by name
    wrong_glosses: list[str] = field(default_factory=list)
    #: the items that carry the bottom line, and the informal items beside them, by name
    checked_items: list[str] = field(default_factory=list)
    informal_items: list[str] = field(default_factory=list)
    #: the keys of the checks the bottom line rests on (its carrying checks but confirmations, its
    #: steps and glosses): what must be certified for the bottom line to be
    grounds: list[str] = field(default_factory=list)
    #: hypotheses of the holding readings that symuat's alternative readings show unnecessary:
    #: ``{"tag": "square", "instead": "conf", "keys": [...]}``
    unneeded: list[dict] = field(default_factory=list)
    #: the checks whose corrections ``corrected`` joins (one per distinct corrected statement)
    corrected_from: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "verdict": self.verdict,
            "strength": self.strength,
            "readings_that_hold": self.readings_that_hold,
            "readings_that_fail": self.readings_that_fail,
            "failing_steps": self.failing_steps,
            "corrected": self.corrected,
            "corrected_status": self.corrected_status,
            "checks": self.checks,
            "extension": self.extension,
            "errors": self.errors,
            "failing_items": self.failing_items,
            "quantities": self.quantities,
            "other_readings": self.other_readings,
            "failing_step_names": self.failing_step_names,
            "readings_that_hold_compact": self.readings_that_hold_compact,
            "corrected_of": self.corrected_of,
            "predictions": self.predictions,
            "wrong_glosses": self.wrong_glosses,
            "checked_items": self.checked_items,
            "informal_items": self.informal_items,
            "grounds": self.grounds,
            "unneeded": self.unneeded,
            "corrected_from": self.corrected_from,
            "bottom_line": self.bottom_line,
        }

    @property
    def bottom_line(self) -> str:
        """One line: the verdict in words, with readings and failing steps."""
        if self.verdict == "holds":
            text = "holds" + (" as printed" if not self.readings_that_hold or len(self.readings_that_hold) > 1
                              else f" (reading {self.readings_that_hold[0]})")
        elif self.verdict == "holds-under-readings":
            shown = self.readings_that_hold_compact or (
                "; ".join(self.readings_that_hold[:3]) + (" …" if len(self.readings_that_hold) > 3 else ""))
            n = len(self.readings_that_hold) + len(self.readings_that_fail)
            text = f"holds under {len(self.readings_that_hold)} of {n} readings: {shown}"
        elif self.verdict == "error":
            n = len(self.errors)
            return f"error: {n} check{'s' if n != 1 else ''} crashed"
        else:
            text = self.verdict
        if self.verdict == "informal" and self.checked_items:
            wrong = set(self.failing_step_names)
            held = [s for s in self.checked_items if s not in wrong]
            text += (f" (the main sentence: {', '.join(self.informal_items)}; its checked parts"
                     + (f" {', '.join(held)} hold" if held else "") + ")")
        elif self.informal_items and self.checked_items:
            text += f" (checked: {', '.join(self.checked_items)}; informal: {', '.join(self.informal_items)})"
        if self.failing_step_names:
            steps = self.failing_step_names
            shown = ", ".join(steps[:4]) + (f" and {len(steps) - 4} more" if len(steps) > 4 else "")
            text += f"; {'step' if len(steps) == 1 else 'steps'} {shown} wrong"
        if self.wrong_glosses:
            text += f"; the gloss {', '.join(self.wrong_glosses)} is wrong"
        corrected_predictions = [p["key"] for p in self.predictions if not p["holds"]]
        if corrected_predictions:
            text += f"; symuat's prediction {', '.join(corrected_predictions)} corrected"
        for u in self.unneeded:
            meaning = READING_MEANING.get(u["instead"])
            text += (f"; the {u['tag']} hypothesis is not needed: it holds for {u['instead']}"
                     + (f" ({meaning})" if meaning else "") + f" too ({', '.join(u['keys'])})")
        return text


def compact_readings(readings: list[dict]) -> str:
    """Readings that form a full product over their axes, written once per axis with ``|``
    between the values; otherwise the readings one by one (``;`` between them).

    >>> compact_readings([{"o": "col", "x": "input"}, {"o": "row", "x": "input"}])
    'col|row,input'
    >>> compact_readings([{"o": "col", "x": "input"}, {"o": "row", "x": "slice"}])
    'col,input; row,slice'
    """
    if not readings:
        return ""
    axes = list(readings[0])
    if all(list(r) == axes for r in readings):
        values = {a: list(dict.fromkeys(r[a] for r in readings)) for a in axes}
        size = 1
        for a in axes:
            size *= len(values[a])
        if size == len({tuple(r.values()) for r in readings}):
            return ",".join("|".join(values[a]) for a in axes)
    return "; ".join(_reading_str(r) for r in readings)


def _reading_str(reading: dict) -> str:
    return ",".join(reading.values())


def _is_extension_claim(mine: list[Result]) -> bool:
    """A claim of symuat's own (spec §8, T12, H7): every check is an extension, a prediction, a
    confirmation, or a value symuat reports without the paper saying anything (a quantity with
    no polarity) — and one at least is an extension or such a value."""
    def own(c: Check) -> bool:
        return c.role in ("extension", "prediction", "confirmation") or (c.role == "quantity" and c.polarity is None)

    return bool(mine) and all(own(r.check) for r in mine) and any(
        r.check.role in ("extension", "quantity") for r in mine)


def _name(claim_id: str, check: Check, items=()) -> str:
    """A check's name on its claim's page: the step ID without the claim prefix, with its items."""
    name = check.id[len(claim_id) + 1:] if check.id.startswith(claim_id + ".") else check.id
    return name + (f"[{','.join(items)}]" if items else "")


def roll_up(claim: Claim, results: list[Result]) -> ClaimVerdict:
    """The bottom line of ``claim`` from the results of its checks.

    Rule (the only place it is written; it reads roles and statuses, never claim IDs):

    0. A claim with a crashed check (no verdict) is ``error``, whatever its other checks say:
       a crash is never rolled into a verdict (the bottom line reads "error: N checks crashed").
    1. The checks that *carry* the bottom line are the admitted checks with role ``claim``,
       ``quantity`` or ``confirmation`` whose outcome bears on the paper (``agrees_with_paper``
       not None). A claim whose checks are all symuat's own (:func:`_is_extension_claim`)
       carries on its ``extension``, ``quantity`` and ``confirmation`` checks (agreeing =
       holding), and is marked ``extension``. A printed chain without a separate conclusion
       carries on its steps; a claim with nothing but a gloss carries on the gloss.
    2. Readings: the product of the reading axes that occur among the carrying checks (one tag
       per axis). A carrying check applies to a reading when its axis tags are in it; the
       reading holds when every applicable carrying check agrees with the paper.
    3. ``holds``: every reading holds; ``holds-under-readings``: some; ``fails``: none. Without
       carrying checks: ``definition`` if a check is a definition, else ``informal``.
    4. Strength: the weakest strength among the carrying checks that make the holding readings
       hold (for ``fails``: among the disagreeing ones). A ``confirmation`` — a float64 run
       beside a proof of the same statement — never lowers it: it is evidence added to the
       proof, not the ground of the verdict (it still fails its reading if it disagrees).
    5. Failing steps: a step (per step ID and item tags) is wrong under a reading when none of
       its variants compatible with the reading agrees; listed for the holding readings (for
       ``fails``: for every reading).
    6. Correction: the first corrected statement symuat proves among the disagreeing carrying
       checks, those that fail under every reading first.
    7. Roles that never carry the bottom line, and what they do instead:

       * ``prediction`` — symuat's own prediction about its construction (which parameters
         depend on the input). Its refutation refutes symuat, not the claim: it is listed
         beside the verdict (``predictions``) with its corrected prediction and that one's
         status, and the bottom line says the prediction was corrected.
       * ``gloss`` — symuat's formalisation of a prose gloss the paper puts on an equation that
         carries the bottom line (“learned elements of a covariance matrix”). The formalisation
         is symuat's choice, so its refutation cannot overturn a proved equation; it cannot be
         passed over either: the bottom line names the gloss as wrong (``wrong_glosses``) and
         carries its proved correction, as a failing step does.
       * ``extension`` in a claim of the paper, and quantities without polarity (a value the
         paper does not state: the rank of a lifted LoRA update): reported, not judged.
       * informal items of a claim that has checkable ones are named (``informal_items``), so
         the bottom line says what was checked and what is prose.
    """
    by_key = {r.check.key: r for r in results}
    mine = [by_key[c.key] for c in claim.checks if c.key in by_key]
    errors = [r.check.key for r in mine if r.error]
    extension = _is_extension_claim(mine)
    keyed = _keyed_values([r.check for r in mine])

    def _agree(r: Result) -> bool | None:
        if r.check.role == "prediction":
            return None
        if extension:
            if r.verdict is None or r.verdict.status in (Status.DEFINITION, Status.INFORMAL):
                return None
            return r.verdict.status in POSITIVE
        return agrees_with_paper(r.check, r.verdict)

    # memoised per result: the loops below ask each result about every reading (T8: 256
    # readings × 384 checks), and the answers depend on the result alone
    agreed: dict[int, bool | None] = {}
    axes_of: dict[int, tuple[dict, tuple]] = {}

    def agree(r: Result) -> bool | None:
        k = id(r)
        if k not in agreed:
            agreed[k] = _agree(r)
        return agreed[k]

    def split(r: Result):
        k = id(r)
        if k not in axes_of:
            axes_of[k] = reading_axes(claim.id, r.check.reading, {**keyed, "__id__": r.check.id})
        return axes_of[k]

    decided = [r for r in mine if agree(r) is not None]
    carry_roles = ("extension", "quantity", "confirmation") if extension else ("claim", "quantity", "confirmation")
    carrying = [r for r in decided if r.check.admitted and r.check.role in carry_roles]
    steps = [r for r in decided if r.check.admitted and r.check.role == "step"]
    glosses = [r for r in decided if r.check.admitted and r.check.role == "gloss"]
    main_informal = [r for r in mine if r.check.role == "claim" and r.verdict is not None
                     and r.verdict.status is Status.INFORMAL]
    prose_main = bool(not carrying and steps and main_informal)
    if not carrying and steps and not prose_main:
        carrying, steps = steps, []
    if not carrying and glosses:
        carrying, glosses = glosses, []
    base: dict[str, Any] = dict(id=claim.id, title=claim.title, checks=[r.check.key for r in mine], errors=errors,
                extension=extension)
    other = {r.check.key: agree(r) for r in decided if not r.check.admitted
             and r.check.role in ("claim", "quantity", "extension")}
    quantities = []
    for r in mine:
        if r.check.role == "quantity" and r.verdict is not None:
            q = {k: v for k, v in r.verdict.quantities.items() if k not in ("how", "witness", "last_instance")}
            quantities.append({"key": r.check.key, "symuat": ", ".join(f"{k} = {v}" for k, v in q.items()) or None,
                               "paper_says": r.check.paper_says,
                               "agrees_with_paper": agree(r) if r.check.polarity is not None else None})
    predictions = [_prediction(r) for r in mine if r.check.role == "prediction" and r.verdict is not None]
    informal_items = [_name(claim.id, r.check, r.check.reading or ()) for r in mine
                      if r.verdict is not None and r.verdict.status is Status.INFORMAL]
    wrong_glosses = [r for r in glosses if not agree(r)]
    extra: dict[str, Any] = dict(predictions=predictions,
                 wrong_glosses=[_name(claim.id, r.check, split(r)[1]) for r in wrong_glosses])
    if errors:
        return ClaimVerdict(verdict="error", strength=None, other_readings=other, quantities=quantities, **extra,
                            **base)
    if prose_main:
        # rule 8: the main sentence is prose; its checked parts are steps, reported beside it
        wrong = [r for r in steps if not agree(r)]
        return ClaimVerdict(
            verdict="informal", strength=None, other_readings=other, quantities=quantities, predictions=predictions,
            informal_items=[_name(claim.id, r.check, r.check.reading or ()) for r in main_informal],
            checked_items=list(dict.fromkeys(_name(claim.id, r.check, split(r)[1]) for r in steps)),
            failing_steps=[r.check.key for r in wrong],
            failing_step_names=list(dict.fromkeys(_name(claim.id, r.check, split(r)[1]) for r in wrong)),
            grounds=[r.check.key for r in steps], **base)
    if not carrying:
        kinds = {r.verdict.status for r in mine if r.verdict is not None}
        word = ("cited" if any(r.check.role == "cited" for r in mine)
                else "definition" if Status.DEFINITION in kinds else "informal")
        return ClaimVerdict(verdict=word, strength=None, other_readings=other, quantities=quantities, **extra,
                            **base)
    extra["informal_items"] = informal_items
    extra["checked_items"] = list(dict.fromkeys(_name(claim.id, r.check, split(r)[1]) for r in carrying))

    axes: dict[str, list[str]] = {}
    for r in carrying:
        for axis, tag in split(r)[0].items():
            axes.setdefault(axis, [])
            if tag not in axes[axis]:
                axes[axis].append(tag)
    names = list(axes)
    readings = [dict(zip(names, combo)) for combo in itertools.product(*(axes[a] for a in names))]

    def applies(r: Result, reading: dict) -> bool:
        return all(reading.get(a) == t for a, t in split(r)[0].items())

    def relevant(reading):
        return [r for r in carrying if applies(r, reading)]

    # each reading names only the axes its applicable checks constrain (T7's eq20 reading says
    # nothing about Transformer blocks); readings that coincide then are one
    outcome: dict[tuple, bool] = {}
    shown: dict[tuple, dict] = {}
    for reading in readings:
        rel = relevant(reading)
        if not rel:
            continue
        used = {a for r in rel for a in split(r)[0]}
        short = {a: t for a, t in reading.items() if a in used}
        k = tuple(short.items())
        outcome[k] = outcome.get(k, True) and all(agree(r) for r in rel)
        shown[k] = short
    hold = [shown[k] for k, ok in outcome.items() if ok]
    fail = [shown[k] for k, ok in outcome.items() if not ok]
    hold_compact = compact_readings(hold)
    word = "holds" if not fail else "holds-under-readings" if hold else "fails"
    if hold:
        carriers = [r for reading in hold for r in relevant(reading)]
    else:
        carriers = [r for r in carrying if not agree(r)]
    # rule 4: a float64 confirmation beside a proof does not lower the strength
    grounds = [r for r in carriers if r.check.role != "confirmation"] or carriers
    strength_ = weakest(strength(r.verdict) for r in grounds)

    failing_steps: list[str] = []
    step_names: list[str] = []
    for reading in hold or readings:
        groups: dict = {}
        for r in steps:
            ax, items = split(r)
            if all(reading.get(a, t) == t for a, t in ax.items()):
                groups.setdefault((r.check.id, items), []).append(r)
        for variants in groups.values():
            if not any(agree(r) for r in variants):
                failing_steps += [r.check.key for r in variants if r.check.key not in failing_steps]
                name = _name(claim.id, variants[0].check, split(variants[0])[1])
                if name not in step_names:
                    step_names.append(name)

    always_wrong = [r for r in carrying if not agree(r)
                    and all(not agree(x) for x in carrying if x.check.id == r.check.id
                            and split(x)[1] == split(r)[1])]
    failing_items = [r.check.key for r in always_wrong] if word != "holds" else []
    corrected = corrected_status = corrected_of = None
    corrected_from: list[str] = []
    pool = (always_wrong + [r for r in carrying if not agree(r) and r not in always_wrong]) if word != "holds" else []

    def proved_fix(r: Result) -> tuple[str, Status] | None:
        """The statement and status of ``r``'s correction when it is proved, else None."""
        c = r.verdict.corrected if r.verdict is not None else None
        if c is not None and c.verdict and c.verdict.status in POSITIVE:
            return c.statement, c.verdict.status
        return None

    if word == "fails":
        # a claim that fails as a whole: its correction is whole too — every distinct proved correction
        # of the items that fail under every reading (D4: the size and row 1; P4: both sides)
        fixes: dict[str, tuple[Result, Status]] = {}
        for r in always_wrong:
            fix = proved_fix(r)
            if fix is not None and fix[0] not in fixes:
                fixes[fix[0]] = (r, fix[1])
        if fixes:
            corrected = r"\ \text{and}\ ".join(fixes)
            corrected_status = weakest(str(s) for _, s in fixes.values())
            corrected_of = next(iter(fixes.values()))[0].check.key
            corrected_from = [r.check.key for r, _ in fixes.values()]
    if corrected is None:
        for r in pool + wrong_glosses:
            fix = proved_fix(r)
            if fix is not None:
                corrected, corrected_status = fix[0], str(fix[1])
                corrected_of, corrected_from = r.check.key, [r.check.key]
                if r in pool and r not in always_wrong and hold:
                    # it fails under some readings only: the correction names them (H1's causal mask)
                    apart = [t for a, t in split(r)[0].items() if all(h.get(a) != t for h in hold)
                             and t in READING_CONDITION]
                    if apart:
                        corrected = rf"\text{{{reading_condition(apart)}: }}" + corrected
                break
    unneeded = _unneeded(claim.id, hold, [r for r in mine if not r.check.admitted and agree(r) and r.check.role in carry_roles
                          and r.check.role != "confirmation"], split)
    grounds = [r.check.key for r in carrying if r.check.role != "confirmation"] + [r.check.key for r in steps + glosses]
    return ClaimVerdict(
        verdict=word, strength=strength_,
        readings_that_hold=[_reading_str(r) for r in hold if r],
        readings_that_fail=[_reading_str(r) for r in fail if r],
        failing_steps=failing_steps, corrected=corrected, corrected_status=corrected_status,
        corrected_of=corrected_of,
        failing_items=failing_items, quantities=quantities, other_readings=other,
        failing_step_names=step_names, readings_that_hold_compact=hold_compact, grounds=grounds,
        unneeded=unneeded, corrected_from=corrected_from, **extra, **base,
    )


def _unneeded(claim_id: str, hold: list[dict], alternatives: list[Result], split) -> list[dict]:
    """Hypotheses of a holding reading that an agreeing alternative reading (one the text does not
    admit) drops: the alternative check differs from the holding reading on exactly one axis
    (P5: ``square`` → ``conf``, the conclusion for any conformable shapes)."""
    out: dict[tuple, dict] = {}
    for r in alternatives:
        ax = split(r)[0]
        for reading in hold:
            differ = [a for a, t in ax.items() if reading.get(a) != t]
            if len(differ) == 1 and differ[0] in reading:
                a = differ[0]
                entry = out.setdefault((reading[a], ax[a]), {"tag": reading[a], "instead": ax[a], "keys": []})
                name = _name(claim_id, r.check, (ax[a],))
                if name not in entry["keys"]:
                    entry["keys"].append(name)
    return list(out.values())


def _prediction(r: Result) -> dict:
    """A prediction of symuat's, beside the verdict: did it hold, and if not, its correction."""
    v = r.verdict
    assert v is not None, "a prediction is reported only once decided"
    out = {"key": r.check.key, "statement": r.check.statement, "holds": v.status in POSITIVE,
           "status": str(v.status), "strength": strength(v), "corrected": None, "corrected_status": None}
    if v.status not in POSITIVE and v.corrected is not None and v.corrected.verdict is not None:
        out["corrected"], out["corrected_status"] = v.corrected.statement, str(v.corrected.verdict.status)
    return out


def claim_verdicts(results: list[Result], registry=None) -> list[ClaimVerdict]:
    """Bottom lines for every claim that has a result in ``results``, in the spec's order."""
    if registry is None:
        import symuat.claims  # noqa: F401
        from symuat.kernel.registry import REGISTRY as registry
    ids = {r.check.key for r in results}
    return [roll_up(claim, results) for claim in registry.ordered_claims()
            if any(c.key in ids for c in claim.checks)]


_RELATIONS = ("=", "<", ">", r"\le", r"\ge", r"\in", r"\neq", r"\ne", r"\Rightarrow", r"\iff", r"\subseteq", "≤", "≥", "⇒")


def _strip_text(latex_: str) -> str:
    """``latex_`` without the contents of ``\\text{…}`` (prose inside a formula)."""
    out, i = [], 0
    while i < len(latex_):
        if latex_.startswith(r"\text{", i):
            depth, i = 1, i + len(r"\text{")
            while i < len(latex_) and depth:
                depth += {"{": 1, "}": -1}.get(latex_[i], 0)
                i += 1
            out.append(" ")
        else:
            out.append(latex_[i])
            i += 1
    return "".join(out)


def correction_defects(latex_: str) -> list[str]:
    """Why a corrected statement is not a whole statement (empty: it is one).

    A correction replaces a claim: it must be a relation in its own right (an ``=``, ``<``,
    ``\\in``, ``\\Rightarrow`` … outside prose), must not continue another sentence (``…except``),
    and a quantity must name what it measures (``\\operatorname{density}(\\mathbf W'_{HVi}) = …``,
    not ``density = …``).

    >>> correction_defects(r"\\text{depends on }x_0")
    ['no relation outside prose']
    >>> correction_defects(r"\\operatorname{density}(\\mathbf W'_{HVi}) = \\frac{N+1}{2N}")
    []
    """
    defects = []
    text = latex_.strip()
    math = _strip_text(text)
    if not any(rel in math for rel in _RELATIONS):
        defects.append("no relation outside prose")
    if text.lstrip(r"\text{ ").startswith(("…", "...")):
        defects.append("continues another statement (starts with an ellipsis)")
    first = min((math.find(rel) for rel in _RELATIONS if rel in math), default=-1)
    if first > 0:
        lhs = text[:first] if r"\text{" not in text[:first] else ""
        if lhs.strip() and all(ch.isalpha() or ch in " -" for ch in lhs.strip()):
            defects.append(f"the quantity {lhs.strip()!r} names no object")
    return defects
