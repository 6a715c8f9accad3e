"""Statuses and verdicts.

A :class:`Verdict` is what running a check produces. Its status is one of the six of the spec
(``claims.md``, "What symuat reports"). A seventh, :attr:`Status.ERROR`, is never a verdict's:
it is the status of a check whose procedure *crashed* (no verdict exists), reported as such and
never rolled into a claim's bottom line as anything else. Verdicts are built only by the procedures in
:mod:`symuat.kernel.decide`, which derive the status from the outcome of a proof, an exact
counterexample search, or a numeric confirmation; nothing in symuat types a status in.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any


class Status(str, enum.Enum):
    PROVED = "proved"
    PROVED_AT_SIZES = "proved-at-sizes"
    NUMERIC_ONLY = "numeric-only"
    REFUTED = "refuted"
    INFORMAL = "informal"
    DEFINITION = "definition"
    #: the check crashed: there is no verdict (never produced by a procedure)
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


def to_jsonable(value: Any) -> Any:
    """Exact values to JSON: integers stay integers, rationals become ``"p/q"`` strings."""
    import numpy as np
    import sympy as sp

    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Fraction):
        return str(value) if value.denominator != 1 else value.numerator
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, sp.Basic):
        if value.is_Integer:
            return int(value)
        if value.is_Rational:
            return str(value)
        return str(value)
    return str(value)


@dataclass
class NumericWitness:
    """A float64 confirmation on random instances: what was measured — every instance's
    residual (``instances``: sizes, seed, residual), their maximum, the sizes and seeds."""

    sizes: list[dict[str, int]]
    seeds: list[int]
    max_residual: float
    tolerance: float
    tolerance_reason: str
    instances: list[dict] | None = None

    def as_dict(self) -> dict:
        out = {
            "sizes": self.sizes,
            "seeds": self.seeds,
            "max_residual": self.max_residual,
            "tolerance": self.tolerance,
            "tolerance_reason": self.tolerance_reason,
        }
        if self.instances is not None:
            out["instances"] = self.instances
        return out


@dataclass
class Counterexample:
    """Concrete values at which a statement fails, re-checked exactly and in float64."""

    sizes: dict[str, int]
    values: dict[str, Any]
    lhs: Any = None
    rhs: Any = None
    reason: str = ""
    exact_recheck: str = ""
    numeric_recheck: str = ""

    def as_dict(self) -> dict:
        return {
            "sizes": self.sizes,
            "values": to_jsonable(self.values),
            "lhs": to_jsonable(self.lhs),
            "rhs": to_jsonable(self.rhs),
            "reason": self.reason,
            "exact_recheck": self.exact_recheck,
            "numeric_recheck": self.numeric_recheck,
        }


@dataclass
class Verdict:
    """The outcome of one check."""

    status: Status
    method: str
    sizes: list[dict[str, int]] | None = None
    counterexample: Counterexample | None = None
    numeric: NumericWitness | None = None
    quantities: dict[str, Any] = field(default_factory=dict)
    corrected: "Corrected | None" = None
    detail: str = ""
    construction: str | None = None
    #: LaTeX of the hypotheses the statement was decided under (kernel.hypotheses)
    hypotheses: list[str] | None = None
    #: LaTeX of the two sides as written and with the reading's definitions applied (``⋄``
    #: rewritten into transposes and products): ``(lhs, lhs applied, rhs, rhs applied)``, on a
    #: refutation whose statement uses such a definition; the derived why line
    #: (:mod:`symuat.kernel.why`) shows them
    sides: tuple[str, str, str, str] | None = None

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"status": str(self.status), "method": self.method}
        if self.hypotheses:
            out["hypotheses"] = list(self.hypotheses)
        if self.sizes is not None:
            out["sizes"] = self.sizes
        if self.counterexample is not None:
            out["counterexample"] = self.counterexample.as_dict()
        if self.numeric is not None:
            out["numeric"] = self.numeric.as_dict()
        if self.quantities:
            out["quantities"] = to_jsonable(self.quantities)
        if self.construction is not None:
            out["construction"] = self.construction
        if self.corrected is not None:
            out["corrected"] = self.corrected.as_dict()
        if self.detail:
            out["detail"] = self.detail
        if self.sides:
            out["sides"] = list(self.sides)
        return out


@dataclass
class Corrected:
    """A corrected statement that symuat checks with the same procedures."""

    statement: str  # LaTeX
    verdict: Verdict | None  # None: "none found"
    note: str = ""

    def as_dict(self) -> dict:
        return {
            "statement": self.statement,
            "status": str(self.verdict.status) if self.verdict else None,
            "verdict": self.verdict.as_dict() if self.verdict else None,
            "note": self.note,
        }
