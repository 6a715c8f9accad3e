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

    # -- what a person reads (a terminal, IPython, a notebook) -------------------------------
    def __str__(self) -> str:
        """The status and method, then what the reader checks: hypotheses, the counterexample
        (sizes, values, both sides, the exact and float64 re-checks), the corrected statement.

        >>> print(Verdict(Status.PROVED, "index-level normal form", detail="entry: A_{i_{0}j_{0}}"))
        proved — index-level normal form
          entry: A_{i_{0}j_{0}}
        """
        lines = [f"{self.status} — {self.method}"]
        if self.hypotheses:
            lines.append("  under: " + "; ".join(self.hypotheses))
        if self.detail:
            lines.append(f"  {self.detail}")
        if self.sizes and self.status is not Status.REFUTED:
            lines.append("  sizes: " + "; ".join(_sizes_text(s) for s in self.sizes[:6])
                         + (" …" if len(self.sizes) > 6 else ""))
        cex = self.counterexample
        if cex is not None:
            lines.append(f"  counterexample at {_sizes_text(cex.sizes)}:")
            for name, value in cex.values.items():
                lines.append(f"    {name} = {_value_text(value)}")
            if cex.lhs is not None:
                lines.append(f"    lhs = {_value_text(cex.lhs)}")
            if cex.rhs is not None:
                lines.append(f"    rhs = {_value_text(cex.rhs)}")
            lines += [f"    {x}" for x in (cex.reason, cex.exact_recheck, cex.numeric_recheck) if x]
        if self.corrected is not None:
            status = self.corrected.verdict.status if self.corrected.verdict else "none found"
            lines.append(f"  corrected: {self.corrected.statement} ({status})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Verdict {self.status}: {self.method[:80]}{'…' if len(self.method) > 80 else ''}>"

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython
        printer.text(repr(self) if cycle else str(self))

    def _repr_latex_(self) -> str:  # Jupyter
        """The status, hypotheses and counterexample values in LaTeX (entries exact)."""
        import sympy as sp

        parts = [rf"\text{{{self.status}}}"]
        if self.hypotheses:
            parts.append(r"\text{ under }" + r",\ ".join(self.hypotheses))
        cex = self.counterexample
        if cex is not None:
            parts.append(r"\text{ at }" + r",\ ".join(f"{k}={v}" for k, v in cex.sizes.items()) + r":\ ")
            for name, value in list(cex.values.items()) + [("lhs", cex.lhs), ("rhs", cex.rhs)]:
                if value is None:
                    continue
                try:
                    shown = sp.latex(sp.Matrix(to_jsonable(value)).applyfunc(sp.Rational)) \
                        if getattr(value, "ndim", 0) == 2 else sp.latex(sp.sympify(to_jsonable(value)))
                except (TypeError, ValueError, sp.SympifyError):
                    shown = rf"\text{{{_value_text(value)}}}"
                parts.append(rf"{sp.latex(sp.Symbol(name))}={shown}\ ")
        return "$" + "".join(parts) + "$"

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


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sizes.items()) or "the explicit sizes written (no dimension)"


def _value_text(value: Any) -> str:
    """A value as nested lists of exact numbers (no ``array(..., dtype=object)``)."""
    import json

    return json.dumps(to_jsonable(value), ensure_ascii=False).replace('"', "")


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
