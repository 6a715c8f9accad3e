r"""A shipped mistake, decided: the wrong rewrite must come back ``refuted`` with an exact witness.

Spec §9 cites, for each weight-processing identity, the mistakes that shipped in public projects
(a gate left unfolded, tiling instead of ``repeat_interleave``, …). Each is checked as the
identity it would need — with the same procedure as the correct rewrite — and the bottom line of
an entry rests on :func:`mistakes_refuted`: ``proved`` when every mistake was refuted with a
counterexample re-checked exactly (integers, rationals, or an exact algebraic/transcendental
argument the verdict states), ``refuted`` (naming the mistake) when any one of them was not.

>>> from symuat.kernel.status import Counterexample, Status, Verdict
>>> cex = Counterexample({"n": 2}, {}, reason="entry (0, 1) differs", exact_recheck="exact: 1 ≠ 0")
>>> mistakes_refuted([Verdict(Status.REFUTED, "exact", counterexample=cex)], ["gate left unfolded"]).status
<Status.PROVED: 'proved'>
>>> mistakes_refuted([Verdict(Status.PROVED, "index-level normal form")], ["a true rewrite"]).status
<Status.REFUTED: 'refuted'>
"""

from __future__ import annotations

from symuat.kernel.status import Counterexample, Status, Verdict


def _exact(cex: Counterexample | None) -> bool:
    return cex is not None and bool(cex.exact_recheck)


def mistakes_refuted(verdicts: list[Verdict], labels: list[str]) -> Verdict:
    """``proved`` iff every verdict is ``refuted`` with an exactly re-checked counterexample."""
    if len(verdicts) != len(labels) or not verdicts:
        raise ValueError("one label per mistake, at least one mistake")
    witnesses = {}
    for verdict, label in zip(verdicts, labels):
        if verdict.status is not Status.REFUTED or not _exact(verdict.counterexample):
            what = ("holds" if verdict.status is not Status.REFUTED else "is refuted without an exact witness")
            return Verdict(
                Status.REFUTED,
                f"the mistake “{label}” {what} ({verdict.status}: {verdict.method})",
                counterexample=Counterexample({}, {}, reason=f"“{label}” was not refuted exactly",
                                              exact_recheck="", numeric_recheck=""),
                detail=verdict.detail,
            )
        witnesses[label] = verdict.counterexample.as_dict()
    return Verdict(
        Status.PROVED,
        f"every cited mistake ({len(verdicts)}) refuted by an exact counterexample, re-checked exactly and in float64",
        quantities={"witnesses": witnesses},
    )
