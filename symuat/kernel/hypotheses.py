r"""Hypotheses: assumptions attached to a statement, used by every part of its decision.

A statement may hold only under a side condition on its leaves — the rows of each attention
pattern :math:`H_i` sum to 1 (softmax, with or without a causal mask). A hypothesis is attached
to the statement (``check_identity(lhs, rhs, hypotheses=[...])``) and then

* **rewrites the normal form**: :class:`LineSums` is the rule
  :math:`\sum_{b}H_{ab}=1` (a sum over the summed index of the leaf's column, nothing else
  mentioning it) — an identity of finite sums valid for all dimensions *under the hypothesis*;
* **constrains the instances**: every exact, symbolic and float64 instance is drawn on the
  hypothesis (the last allowed entry of each line is ``value − Σ others``: exact integers, or
  a SymPy expression in the other entries), so a counterexample is one that satisfies it. The
  instances need not be nonnegative: the statements are polynomial in the entries, so one that
  holds (or fails) on the affine set of the hypothesis does so on its open part of positive,
  softmax-like patterns too;
* **is printed** with every verdict decided under it (``Verdict.hypotheses``).

Soundness: the rule fires only on the exact pattern the hypothesis states (a wrong hypothesis —
columns instead of rows — does not rewrite a row sum), and a refutation is searched for only
among instances satisfying the hypothesis, so a false identity with an irrelevant hypothesis
stays refuted.

>>> h = LineSums("H")
>>> h.latex()
'\\sum_{b}H_{ab}=1\\ \\text{for every row }a'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from symuat.kernel.assumptions import _ACTIVE, active, assuming  # noqa: F401  (re-exported)
from symuat.kernel.index_calculus import _free_vars


@dataclass(frozen=True)
class LineSums:
    """Every line of the leaf ``name`` sums to ``value``.

    ``lines="rows"``: :math:`\\sum_bA_{ab}=` value for every row :math:`a` (a row-stochastic
    attention pattern); ``"columns"``: :math:`\\sum_aA_{ab}=` value. ``causal``: only the entries
    :math:`b\\le a` are summed (the leaf is masked causally, its other entries are zero). For a
    head family (``HeadMatrix``) the statement holds for every member.
    """

    name: str
    lines: str = "rows"
    causal: bool = False
    value: int = 1

    def __post_init__(self):
        if self.lines not in ("rows", "columns"):
            raise ValueError(f"lines must be 'rows' or 'columns', not {self.lines!r}")

    def latex(self) -> str:
        name = sp.latex(sp.Symbol(self.name))
        mask = r"[a\ge b]" if self.causal else ""
        if self.lines == "rows":
            return rf"\sum_{{b}}{mask}{name}_{{ab}}={self.value}\ \text{{for every row }}a"
        return rf"\sum_{{a}}{mask}{name}_{{ab}}={self.value}\ \text{{for every column }}b"

    def __str__(self) -> str:
        return self.latex()

    # -- the rewrite rule of the normal form -----------------------------------------------
    def rewrite(self, factors: list, bound: list):
        """One application of the rule to a term, or ``None``: ``(factors, bound)`` without the
        summed line (the coefficient is multiplied by ``value``)."""
        for pos, f in enumerate(factors):
            if f[0] != "E" or f[1] != self.name or not f[2] or len(f[3]) != 1:
                continue  # a line must be summed over its one whole index (not a multi-index part)
            if self.lines == "columns" and len(f[2]) != 1:
                continue  # the row index is a multi-index (or a family's): not one whole column
            a, s = (f[2][-1], f[3][-1]) if self.lines == "rows" else (f[3][-1], f[2][-1])
            rest = list(f[2] + f[3])
            rest.remove(s)
            if s not in bound or s in rest:
                continue
            mask = ("T", a, s) if self.lines == "rows" else ("T", s, a)
            others = [g for k, g in enumerate(factors) if k != pos]
            mentions = [g for g in others if s in _mentions(g)]
            if self.causal:
                if mentions != [mask]:
                    continue
                others = [g for g in others if g != mask]
            elif mentions:
                continue
            return others, [b for b in bound if b != s]
        return None

    # -- instances on the hypothesis -------------------------------------------------------
    def impose(self, array: np.ndarray, mode: str) -> np.ndarray:
        """``array`` (a leaf's value, ``(..., rows, cols)``) with every line summing to ``value``."""
        out = array.copy()
        rows, cols = out.shape[-2:]
        for lead in np.ndindex(*out.shape[:-2]):
            m = out[lead]
            if self.lines == "columns":
                m = m.T
                n_lines, n_len = cols, rows
            else:
                n_lines, n_len = rows, cols
            for a in range(n_lines):
                last = min(a, n_len - 1) if self.causal else n_len - 1
                if self.causal:
                    for b in range(last + 1, n_len):
                        m[a, b] = 0
                rest = sum((m[a, b] for b in range(last)), 0 if mode != "float" else 0.0)
                m[a, last] = self.value - rest
        return out


def _mentions(factor: tuple) -> set:
    return _free_vars(factor)


def impose_all(values: dict, mode: str) -> dict:
    """Values with every active hypothesis imposed on its leaf."""
    for hyp in active():
        if hyp.name in values:
            values[hyp.name] = hyp.impose(values[hyp.name], mode)
    return values


def latex_list(hypotheses) -> list[str]:
    return [h.latex() for h in hypotheses]
