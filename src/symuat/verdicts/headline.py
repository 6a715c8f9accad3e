"""The headline: how many claims hold, hold under some readings, fail — one computation for the
terminal (``symuat report``), the docs' index and the Python API.

The papers' claims are counted apart from symuat's own extensions (``ClaimVerdict.extension``)
everywhere; definitions and informal items are not verdicts and are counted apart too. A claim
whose conclusion holds although printed steps of its chain or a gloss on it are wrong (H2, H8)
shows as *holds, parts wrong* (mark ``◑``), never with the plain ``✔`` of a claim that holds step by step; it is
counted among the claims that hold, and the headline says how many of them have wrong steps.

Groups come from the claims themselves (:attr:`Claim.group`): a group made only of symuat's
extensions (the decoder lifts, the weight-processing identities) is set apart from the papers'
claims, with no code naming it.

>>> from symuat.verdicts.roll_up import ClaimVerdict
>>> vs = [ClaimVerdict("P1", "t", "holds", "proved"), ClaimVerdict("P4", "t", "fails", "proved", corrected="x"),
...       ClaimVerdict("H2", "t", "holds", "proved", failing_step_names=["f"]),
...       ClaimVerdict("X1", "t", "holds", "proved", extension=True)]
>>> h = headline(vs)
>>> (h.holds, h.holds_steps_wrong, h.fails, h.fails_corrected, h.extensions)
(2, 1, 1, 1, 1)
>>> h.lines()[0]
'2 claims hold (1 with a wrong printed step or gloss), 0 only under some readings, 1 fails — with a proved correction.'
>>> display_word(vs[2])
'holds-steps-wrong'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: display words of a bottom line: the verdict, or ``error`` / ``holds-steps-wrong``
WORDS = {
    "holds": "holds",
    "holds-steps-wrong": "holds, parts wrong",
    "holds-under-readings": "holds under some readings",
    "fails": "fails",
    "informal": "informal",
    "definition": "definition",
    "cited": "cited theorem",
    "error": "error",
}
MARKS = {"holds": "✔", "holds-steps-wrong": "◑", "holds-under-readings": "◐", "fails": "✘",
         "informal": "·", "definition": "≔", "cited": "↗", "error": "!"}
#: headings of the claims' groups (a group missing here is headed by its own name)
GROUP_TITLES = {
    "lemmas": "UAT, DUAT and the two lemmas",
    "diamond": "The diamond product",
    "linear": "Linear layers in matrix-vector form",
    "attention": "Multi-head attention in matrix-vector form",
    "transformer": "The Transformer as a DUAT",
    "applications": "Applications: pruning, LoRA, in-context learning",
    "decoder": "Decoder LLMs: GQA, RoPE, RMSNorm, SwiGLU",
    "weight-processing": "§9 Weight-processing identities: folding, centring, layouts",
}


def group_title(group: str) -> str:
    return GROUP_TITLES.get(group, group.replace("-", " ").replace("_", " ").capitalize())


def display_word(cv) -> str:
    """What a reader sees for a bottom line: a crash first, then a conclusion that holds while
    something the paper printed with it is wrong — a step of its chain or a gloss on it (one rule
    for H2, A6 and H8: ◑, never the plain ✔) — else the verdict."""
    if cv.errors:
        return "error"
    if cv.verdict == "holds" and (cv.failing_step_names or getattr(cv, "wrong_glosses", None)):
        return "holds-steps-wrong"
    return cv.verdict


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


@dataclass
class Headline:
    """Counts of bottom lines: the papers' claims, and symuat's extensions apart."""

    holds: int = 0
    holds_steps_wrong: int = 0
    holds_under_readings: int = 0
    fails: int = 0
    fails_corrected: int = 0
    errors: int = 0
    crashed_checks: int = 0
    definitions: int = 0
    cited: int = 0
    informal: int = 0
    extensions: int = 0
    extensions_by_word: dict = field(default_factory=dict)

    def lines(self) -> tuple[str, str]:
        """Two lines: the papers' claims, then what is counted apart."""
        first = (f"error: {plural(self.errors, 'claim')} with crashed checks ({self.crashed_checks} crashed); "
                 if self.errors else "")
        first += (f"{plural(self.holds, 'claim')} {'holds' if self.holds == 1 else 'hold'}"
                 + (f" ({self.holds_steps_wrong} with a wrong printed step or gloss)" if self.holds_steps_wrong else "")
                 + f", {self.holds_under_readings} only under some readings, {self.fails} "
                 + ("fails" if self.fails == 1 else "fail"))
        if self.fails:
            first += (" — with a proved correction" if self.fails_corrected == self.fails == 1
                      else " — each with a proved correction" if self.fails_corrected == self.fails
                      else f" ({self.fails_corrected} with a proved correction)")
        rest = []
        if self.definitions:
            rest.append(plural(self.definitions, "definition"))
        if self.cited:
            rest.append(plural(self.cited, "cited theorem"))
        if self.informal:
            rest.append(f"{self.informal} informal")
        if self.extensions:
            ext = ", ".join(f"{n} {WORDS[w]}" for w, n in self.extensions_by_word.items())
            rest.append(f"{plural(self.extensions, 'symuat extension')} ({ext})")
        return first + ".", ("Counted apart: " + ", ".join(rest) + ".") if rest else ""


def headline(verdicts) -> Headline:
    """The counts of ``verdicts`` (:class:`symuat.verdicts.roll_up.ClaimVerdict`)."""
    h = Headline()
    ext: Counter = Counter()
    for v in verdicts:
        word = display_word(v)
        if v.extension:
            h.extensions += 1
            ext[word] += 1
        elif word == "error":
            h.errors += 1
            h.crashed_checks += len(v.errors)
        elif v.verdict == "holds":
            h.holds += 1
            h.holds_steps_wrong += word == "holds-steps-wrong"
        elif v.verdict == "holds-under-readings":
            h.holds_under_readings += 1
        elif v.verdict == "fails":
            h.fails += 1
            h.fails_corrected += bool(v.corrected)
        elif v.verdict == "definition":
            h.definitions += 1
        elif v.verdict == "cited":
            h.cited += 1
        else:
            h.informal += 1
    h.extensions_by_word = {w: ext[w] for w in WORDS if ext[w]}
    return h


def sections(claims, verdicts) -> list[tuple[str, list]]:
    """The claims in groups, in the spec's order: the groups that hold a paper claim first, then
    each group made only of symuat's extensions (``verdicts``: claim ID → ClaimVerdict)."""
    groups: dict[str, list] = {}
    for c in claims:
        groups.setdefault(c.group, []).append(c)
    papers = [(g, cs) for g, cs in groups.items() if not all(_ext(verdicts, c.id) for c in cs)]
    extensions = [(g, cs) for g, cs in groups.items() if all(_ext(verdicts, c.id) for c in cs)]
    return papers + extensions


def _ext(verdicts, cid) -> bool:
    v = verdicts.get(cid)
    return bool(v is not None and v.extension)
