r"""A statement decided as named steps, each with the status it must reach: the conjunction.

Some statements are proved in parts by different procedures: the index engine for a block
structure with symbolic sizes, SymPy for one 2×2 block at symbolic angles, a cross-check at listed
sizes. :func:`check_steps` takes every part's verdict and the status each must reach
(``want``), and concludes ``proved`` only when each part reached exactly its required status.

Soundness: the procedure produces ``proved`` only from verdicts that other procedures produced, and
only when every one is what the caller's argument needs (the argument — why these parts together
give the statement for every size, e.g. “the one-pair lemma's only size is the pair itself” — is
the ``method`` text, shown with the verdict). A part that falls short makes the whole fall short:
the first such part's own verdict is returned under its name (its status, counterexample, numeric
witness and sizes unchanged), or the caller's ``otherwise`` verdict (itself produced by a
procedure) when the caller has a weaker conclusion to fall back on. Nothing is ever raised: a
refuted part gives a refuted statement.

>>> from symuat.kernel.status import Status, Verdict
>>> parts = {"a": Verdict(Status.PROVED, "x"), "b": Verdict(Status.PROVED_AT_SIZES, "y")}
>>> check_steps(parts, {"a": Status.PROVED, "b": Status.PROVED_AT_SIZES}, "a and b").status
<Status.PROVED: 'proved'>
>>> v = check_steps(parts, {"a": Status.PROVED, "b": Status.PROVED}, "a and b")
>>> v.status, v.method
(<Status.PROVED_AT_SIZES: 'proved-at-sizes'>, 'b: y')
"""

from __future__ import annotations

from symuat.kernel.status import NumericWitness, Status, Verdict


def check_steps(steps: dict[str, Verdict], want: dict[str, Status], method: str, *,
                quantities: dict | None = None, numeric: NumericWitness | None = None,
                otherwise: Verdict | None = None) -> Verdict:
    """``proved`` (with ``method``, ``quantities``, ``numeric``) iff every step's status is
    ``want[step]``; else ``otherwise`` when given, else the first failing step's verdict, its method
    prefixed by the step's name."""
    if set(steps) != set(want) or not steps:
        raise ValueError("one required status per step, at least one step")
    failed = [(k, v) for k, v in steps.items() if v.status is not want[k]]
    if failed:
        if otherwise is not None:
            return otherwise
        k, v = failed[0]
        return Verdict(v.status, f"{k}: {v.method}", counterexample=v.counterexample, numeric=v.numeric,
                       sizes=v.sizes)
    return Verdict(Status.PROVED, method, quantities=dict(quantities or {}), numeric=numeric)
