"""The paper's verdict, claim by claim: checks rolled up into one bottom line.

A check's :class:`~symuat.kernel.status.Verdict` says whether *its statement* holds. Whether
that agrees with the paper depends on the check's ``polarity`` (the paper asserts the statement,
or denies it), and whether it bears on the bottom line depends on its ``role`` and on whether its
reading is one the text ``admitted``. This module is the one place where those are combined:

* :func:`agrees_with_paper` — one check: ``True``/``False``, or ``None`` for definitions,
  informal items and symuat's own extensions;
* :func:`roll_up` — one claim: ``holds`` / ``holds-under-readings`` / ``fails`` / ``informal`` /
  ``definition``, with its strength (the weakest status among the checks that carry it), the
  readings that hold and fail, the failing steps and the corrected statement.

Nothing here types a verdict in: every field is derived from results of checks that ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symuat.kernel.registry import Check, Claim, Result
from symuat.kernel.status import Status, Verdict

POSITIVE = (Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY)
#: strengths, strongest first
STRENGTHS = ("proved", "proved-at-sizes", "numeric-only")
VERDICTS = ("holds", "holds-under-readings", "fails", "informal", "definition")


def agrees_with_paper(check: Check, verdict: Verdict | None) -> bool | None:
    """Whether the outcome of ``check`` agrees with what the paper says (None: not a paper claim)."""
    if verdict is None or check.polarity is None or check.role == "extension":
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


def _reading_str(reading: tuple[str, ...] | None) -> str:
    return ",".join(reading) if reading else ""


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
        }


def roll_up(claim: Claim, results: list[Result]) -> ClaimVerdict:
    """The bottom line of ``claim`` from the results of its checks.

    Rule: the checks that carry the bottom line are the admitted, non-extension checks with
    role ``claim`` or ``quantity``. Their readings are the reading tuples that occur among them;
    a reading *R* holds when every carrying check whose tags are a subset of *R* (a reading-free
    check applies to every reading) agrees with the paper. ``holds``: every reading holds;
    ``holds-under-readings``: some do; ``fails``: none. Without carrying checks: ``definition``
    if any check is a definition, else ``informal``.
    """
    by_key = {r.check.key: r for r in results}
    mine = [by_key[c.key] for c in claim.checks if c.key in by_key]
    errors = [r.check.key for r in mine if r.error]
    carrying = [r for r in mine if r.check.admitted and r.check.role in ("claim", "quantity")
                and agrees_with_paper(r.check, r.verdict) is not None]
    base = dict(id=claim.id, title=claim.title, checks=[r.check.key for r in mine], errors=errors,
                extension=bool(mine) and all(r.check.polarity is None or r.check.role == "extension"
                                             for r in mine if r.verdict is None
                                             or r.verdict.status not in (Status.DEFINITION, Status.INFORMAL)))
    if not carrying:
        kinds = {r.verdict.status for r in mine if r.verdict is not None}
        word = "definition" if Status.DEFINITION in kinds else "informal"
        return ClaimVerdict(verdict=word, strength=None, **base)

    readings = sorted({r.check.reading for r in carrying if r.check.reading}, key=_reading_str) or [None]

    def relevant(reading):
        tags = set(reading or ())
        return [r for r in carrying if set(r.check.reading or ()) <= tags]

    hold, fail = [], []
    for reading in readings:
        (hold if all(agrees_with_paper(r.check, r.verdict) for r in relevant(reading)) else fail).append(reading)
    if not fail:
        word = "holds"
    elif hold:
        word = "holds-under-readings"
    else:
        word = "fails"
    # the strength of the bottom line: of the checks that make the readings hold, or, for a
    # failure, of the refutations that make every reading fail
    if hold:
        carriers = [r for reading in hold for r in relevant(reading)]
    else:
        carriers = [r for r in carrying if not agrees_with_paper(r.check, r.verdict)]
    strength_ = weakest(strength(r.verdict) for r in carriers)

    admitted_tags = set().union(*(set(rd or ()) for rd in readings))
    failing_steps = [r.check.key for r in mine if r.check.role == "step" and r.check.admitted
                     and set(r.check.reading or ()) <= admitted_tags
                     and agrees_with_paper(r.check, r.verdict) is False]
    corrected = corrected_status = None
    if word != "holds":
        for r in carrying:
            v = r.verdict
            if agrees_with_paper(r.check, v) is False and v.corrected is not None and v.corrected.verdict \
                    and v.corrected.verdict.status in POSITIVE:
                corrected, corrected_status = v.corrected.statement, str(v.corrected.verdict.status)
                break
    return ClaimVerdict(
        verdict=word, strength=strength_,
        readings_that_hold=[_reading_str(r) for r in hold if r],
        readings_that_fail=[_reading_str(r) for r in fail if r],
        failing_steps=failing_steps, corrected=corrected, corrected_status=corrected_status, **base,
    )


def claim_verdicts(results: list[Result], registry=None) -> list[ClaimVerdict]:
    """Bottom lines for every claim that has a result in ``results``, in the spec's order."""
    if registry is None:
        import symuat.claims  # noqa: F401
        from symuat.kernel.registry import REGISTRY as registry
    ids = {r.check.key for r in results}
    return [roll_up(claim, results) for claim in registry.ordered_claims()
            if any(c.key in ids for c in claim.checks)]
