"""The claim registry: claims keyed by the spec's IDs, each with the checks that decide it.

A :class:`Claim` is one entry of ``claims.md`` (``P5``); a :class:`Check` is one labelled step
or item of it under one reading (``P5.f[C-col,LR,conf]``). A check holds the statement it
decides (LaTeX, and the SymPy objects inside its procedure) and a procedure that returns a
:class:`~symuat.kernel.status.Verdict`. The registry holds no statuses: they exist only as the
return values of running checks.
"""

from __future__ import annotations

import contextvars
import difflib
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from symuat.errors import UnknownClaimError
from symuat.kernel.status import Status, Verdict

#: the check whose procedure is running (so :meth:`Registry.verdict` can record who asked)
_RUNNING: contextvars.ContextVar["Check | None"] = contextvars.ContextVar("symuat_running_check", default=None)


#: how a check bears on its claim (see :attr:`Check.role`)
ROLES = ("claim", "step", "quantity", "extension", "prediction", "gloss", "confirmation", "cited")


@dataclass
class Check:
    """One step or item of a claim, under one reading."""

    id: str  # e.g. "P5.f"
    reading: tuple[str, ...] | None
    statement: str  # LaTeX of what is checked
    procedure: Callable[[], Verdict]
    note: str = ""
    #: How this check bears on the paper (the verdict report rolls these up, see
    #: :mod:`symuat.verdicts.roll_up`):
    #:
    #: * ``polarity`` — ``"asserts"``: the statement is what the paper asserts, so a positive
    #:   status agrees with it; ``"denies"``: the paper asserts the statement is false (a negated
    #:   claim written positively), so ``refuted`` agrees; ``None``: definitions, informal items
    #:   and symuat's own extensions (``agrees_with_paper`` is null).
    #: * ``admitted`` — the reading is one the text admits (False: symuat's alternative reading,
    #:   shown but not carrying the bottom line).
    #: * ``role`` — ``"claim"`` (carries the bottom line), ``"step"`` (a step of a printed chain:
    #:   listed when it fails, the conclusion carries the bottom line), ``"quantity"`` (a value
    #:   symuat computes; ``paper_says`` is what the paper says of it), ``"extension"`` (symuat's
    #:   own lemma, not a paper claim), ``"prediction"`` (symuat's own prediction about its
    #:   construction — which parameters depend on the input, a rank: reported with its correction
    #:   beside the bottom line, never carrying it), ``"gloss"`` (symuat's formalisation of a
    #:   paper's prose gloss on a claim whose equations carry the bottom line), ``"confirmation"``
    #:   (a float64 confirmation beside a proof: a failure fails its reading, but it never lowers
    #:   the strength the proof gives), ``"cited"`` (a theorem of the literature the papers cite and
    #:   use, which symuat neither proves nor refutes: D1's Cybenko). How each role bears on the
    #:   verdict: :func:`symuat.verdicts.roll_up.roll_up`.
    polarity: str | None = "asserts"
    admitted: bool = True
    role: str = "claim"
    paper_says: str | None = None
    #: one line of why the outcome is what it is, in words (``symuat show`` prints it)
    why: str = ""
    #: what the theorems the certify tier exports for this check state, when that is less than
    #: ``statement`` (M1.pic: the column identities on multi-indices, which hold for either
    #: flattening, not the picture's flat positions). Such a check is never reported as
    #: certified for its statement: the report says what the theorems state instead.
    coq_states: str | None = None
    _verdict: Verdict | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.id + (f"[{','.join(self.reading)}]" if self.reading else "")

    def verdict(self) -> Verdict:
        """The verdict, computed once (claims that rest on this check reuse it)."""
        if self._verdict is None:
            token = _RUNNING.set(self)
            try:
                self._verdict = self.procedure()
            finally:
                _RUNNING.reset(token)
        return self._verdict

    def run(self) -> "Result":
        start = time.perf_counter()
        try:
            verdict = self.verdict()
            error = None
        except Exception as exc:  # a crash is reported, never turned into a verdict
            verdict, error = None, f"{type(exc).__name__}: {exc}"
        return Result(self, verdict, time.perf_counter() - start, error)


#: how a check's certificate is looked up: key → the certify tier's record of it, or None. The
#: kernel reads no record itself (it imports nothing above it); :mod:`symuat.render.report` installs the
#: certify tier's reader (:func:`install_certification`) when it is imported.
_CERTIFICATION: list[Callable[[str], dict | None]] = [lambda key: None]


def install_certification(lookup: Callable[[str], dict | None]) -> None:
    """Make :meth:`Result.as_dict` report ``certified`` / ``coq_compiled`` from ``lookup(key)``."""
    _CERTIFICATION[0] = lookup


@dataclass
class Result:
    check: Check
    verdict: Verdict | None
    seconds: float
    error: str | None = None

    def as_dict(self) -> dict:
        out = {
            "id": self.check.id,
            "reading": ",".join(self.check.reading) if self.check.reading else None,
            "key": self.check.key,
            "statement": self.check.statement,
            "status": str(self.verdict.status) if self.verdict else str(Status.ERROR),
            "seconds": round(self.seconds, 4),
        }
        if self.error:
            out["error"] = self.error
        if self.verdict is not None:
            details = self.verdict.as_dict()
            details.pop("status")
            out.update(details)
        if self.check.note:
            out["note"] = self.check.note
        from symuat.kernel.why import why_line  # hand-written, else derived from the counterexample

        why = why_line(self.check, self.verdict)
        if why:
            out["why"] = why
        cert = _CERTIFICATION[0](self.check.key)  # installed from above (the certify tier's record)
        if cert is not None and self.check.coq_states:  # the theorems state less than the check
            out["coq_compiled"] = {**cert, "states": self.check.coq_states}
        elif cert is not None:
            out["certified"] = cert
        return out


@dataclass
class Claim:
    """One claim of the spec, with where the papers print it and its checks."""

    id: str
    title: str
    where: str
    statement: str  # LaTeX as the paper prints it
    group: str
    checks: list[Check] = field(default_factory=list)
    remarks: str = ""
    #: pictures of the claim: (file stem, caption, function(path) that draws it)
    figures: list[tuple[str, str, Callable]] = field(default_factory=list)

    def check(self, step: str | None, reading, statement: str, procedure, note: str = "", *,
              polarity: str | None = "asserts", admitted: bool = True, role: str = "claim",
              paper_says: str | None = None, why: str = "", coq_states: str | None = None) -> Check:
        cid = self.id if not step else f"{self.id}.{step}"
        reading = tuple(reading) if reading else None
        if polarity not in ("asserts", "denies", None):
            raise ValueError(f"{cid}: polarity must be 'asserts', 'denies' or None, not {polarity!r}")
        if role not in ROLES:
            raise ValueError(f"{cid}: unknown role {role!r}")
        c = Check(cid, reading, statement, procedure, note, polarity=polarity, admitted=admitted,
                  role=role, paper_says=paper_says, why=why, coq_states=coq_states)
        if any(existing.key == c.key for existing in self.checks):
            raise ValueError(f"duplicate check {c.key}")
        self.checks.append(c)
        return c


class Registry:
    def __init__(self):
        self.claims: dict[str, Claim] = {}
        #: dependency edges recorded while checks run: key of the calling check → keys of the
        #: checks whose verdicts its procedure asked for with :meth:`verdict`
        self.edges: dict[str, set[str]] = {}

    def claim(self, id: str, title: str, *, where: str, statement: str, group: str,
              remarks: str = "") -> Claim:
        if id in self.claims:
            raise ValueError(f"claim {id} registered twice")
        c = Claim(id, title, where, statement, group, remarks=remarks)
        self.claims[id] = c
        return c

    def verdict(self, key: str) -> Verdict:
        """The verdict of the check with this exact key (computed once per process), for claims
        that rest on another claim's check, e.g. D3 on M1.

        When called from a running check's procedure, the edge (that check → ``key``) is recorded
        in :attr:`edges`: the dependency graph of the docs is these edges, nothing typed in.
        """
        (check,) = self._by_key().get(key, [])
        caller = _RUNNING.get()
        if caller is not None:
            self.edges.setdefault(caller.key, set()).add(key)
        return check.verdict()

    def _by_key(self) -> dict[str, list[Check]]:
        """Key → the checks with that key (one, in a sound catalogue), rebuilt when a claim or a
        check was added or removed since: :meth:`verdict` is asked hundreds of times in a run."""
        count = tuple((id(claim), len(claim.checks)) for claim in self.claims.values())
        if getattr(self, "_index", (None, None))[1] != count:
            index: dict[str, list[Check]] = {}
            for c in self.all_checks():
                index.setdefault(c.key, []).append(c)
            self._index = (index, count)
        return self._index[0]

    def claim_edges(self) -> dict[str, set[str]]:
        """The recorded edges between claims: claim ID → IDs of the claims it rests on."""
        of = {c.key: claim.id for claim in self.claims.values() for c in claim.checks}
        out: dict[str, set[str]] = {}
        for src, dsts in self.edges.items():
            for dst in dsts:
                a, b = of.get(src), of.get(dst)
                if a and b and a != b:
                    out.setdefault(a, set()).add(b)
        return out

    def ordered_claims(self) -> list[Claim]:
        """Claims in the order of the spec: D, P, M, H, L, T, then symuat's own lemmas."""
        sections = {"D": 0, "P": 1, "lemma": 2, "M": 3, "H": 4, "L": 5, "T": 6, "A": 7, "X": 8}

        def key(claim: Claim):
            m = re.fullmatch(r"([A-Za-z]+?)(\d*)", claim.id)
            prefix, number = (m.group(1), int(m.group(2) or 0)) if m else (claim.id, 0)
            return sections.get(prefix, 9), number

        return sorted(self.claims.values(), key=key)

    def all_checks(self) -> list[Check]:
        return [c for claim in self.ordered_claims() for c in claim.checks]

    def select(self, patterns: Iterable[str]) -> list[Check]:
        """Checks matching IDs: ``P5`` (the claim), ``P5.f`` (a step), or a full key."""
        out: list[Check] = []
        every = self.all_checks()
        for pattern in patterns:
            pattern = pattern.strip()
            hits = [
                c for c in every
                if c.key == pattern
                or c.id == pattern
                or c.id.startswith(pattern + ".")
                or (re.fullmatch(r"[^\[]+\[.*\]", pattern) is None and c.key.startswith(pattern + "["))
            ]
            if not hits:
                known = sorted({c.id for c in every} | set(self.claims))
                close = difflib.get_close_matches(pattern, known, n=4)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise UnknownClaimError(f"unknown claim ID {pattern!r}{hint}")
            out += [c for c in hits if c not in out]
        return out


REGISTRY = Registry()
