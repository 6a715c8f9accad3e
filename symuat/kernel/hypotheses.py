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
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp

from symuat.kernel.assumptions import _ACTIVE, active, assuming  # noqa: F401  (re-exported)
from symuat.errors import KernelInputError, UnsatisfiableHypothesesError
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
            raise KernelInputError(f"LineSums({self.name!r}): lines must be 'rows' or 'columns', not {self.lines!r}")
        try:
            rational = sp.sympify(self.value).is_Rational
        except (sp.SympifyError, TypeError):
            rational = False
        if not rational or isinstance(self.value, bool):
            raise KernelInputError(
                f"LineSums({self.name!r}): the line sum must be a rational number, not {self.value!r} "
                "(exact instances are drawn on it)")

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
    def allowed(self, n_lines: int, n_len: int, line: int) -> list[int]:
        """The positions along ``line`` that the hypothesis sums (the others are zero when
        causal): rows ``a`` keep ``b ≤ a``; columns ``b`` keep ``a ≥ b`` — the lower triangle
        :math:`[a\\ge b]` either way, as the rule and the printed hypothesis say."""
        if not self.causal:
            return list(range(n_len))
        if self.lines == "rows":
            return list(range(min(line, n_len - 1) + 1))
        return list(range(line, n_len))

    def _lines(self, m):
        """``m`` (rows × cols) seen line by line: ``(view, n_lines, n_len)``."""
        rows, cols = m.shape
        return (m.T, cols, rows) if self.lines == "columns" else (m, rows, cols)

    def impose(self, array: np.ndarray, mode: str) -> np.ndarray:
        """``array`` (a leaf's value, ``(..., rows, cols)``) with every line summing to ``value``
        (the last allowed entry of each line is ``value − Σ others``; causal: the entries
        outside the lower triangle are 0)."""
        out = array.copy()
        for lead in np.ndindex(*out.shape[:-2]):
            m, n_lines, n_len = self._lines(out[lead])
            for a in range(n_lines):
                keep = self.allowed(n_lines, n_len, a)
                for b in range(n_len):
                    if b not in keep:
                        m[a, b] = 0
                if not keep:
                    if self.value != 0:
                        raise UnsatisfiableHypothesesError(
                            f"hypothesis {self.latex()} cannot hold on {self.name} of shape "
                            f"{out.shape[-2:]}: line {a} has no entry to sum")
                    continue
                rest = sum((m[a, b] for b in keep[:-1]), 0 if mode != "float" else 0.0)
                m[a, keep[-1]] = self._value(mode) - rest
        return out

    def _value(self, mode):
        v = sp.Rational(self.value)
        if mode == "float":
            return float(v)
        if mode == "symbolic":
            return v
        return Fraction(int(v.p), int(v.q)) if v.q != 1 else int(v.p)

    def equations(self, rows: int, cols: int) -> list[tuple[dict, sp.Rational]]:
        """The hypothesis on one ``rows × cols`` matrix as linear equations over its entries
        (``{(i, j): coefficient}``, right-hand side)."""
        out = []
        n_lines, n_len = (cols, rows) if self.lines == "columns" else (rows, cols)
        for a in range(n_lines):
            keep = self.allowed(n_lines, n_len, a)
            pos = (lambda b: (b, a)) if self.lines == "columns" else (lambda b: (a, b))
            out.append(({pos(b): 1 for b in keep}, sp.Rational(self.value)))
            out += [({pos(b): 1}, sp.Integer(0)) for b in range(n_len) if b not in keep]
        return out

    def holds(self, array) -> bool:
        """Whether the exact value ``array`` (``(..., rows, cols)``) satisfies the hypothesis."""
        array = np.asarray(array, dtype=object)
        rows, cols = array.shape[-2:]
        eqs = self.equations(rows, cols)
        for lead in np.ndindex(*array.shape[:-2]):
            m = array[lead]
            for coeffs, rhs in eqs:
                if sp.nsimplify(sum((m[i, j] * c for (i, j), c in coeffs.items()), 0)) != rhs:
                    return False
        return True


@lru_cache(maxsize=256)
def _joint_solution(hyps: tuple, rows: int, cols: int):
    """The hypotheses on one ``rows × cols`` matrix as a reduced row-echelon system over ℚ:
    ``[(pivot, rhs, {free: coefficient})]``; :class:`UnsatisfiableHypothesesError` when they
    cannot hold together."""
    eqs = [e for h in hyps for e in h.equations(rows, cols)]
    cells = [(i, j) for i in range(rows) for j in range(cols)]
    index = {c: k for k, c in enumerate(cells)}
    aug = sp.zeros(len(eqs), len(cells) + 1)
    for r, (coeffs, rhs) in enumerate(eqs):
        for c, v in coeffs.items():
            aug[r, index[c]] += v
        aug[r, len(cells)] = rhs
    rref, pivots = aug.rref()
    if len(cells) in pivots:
        raise UnsatisfiableHypothesesError(
            "hypotheses cannot hold together on " + hyps[0].name + f" ({rows}×{cols}): "
            + "; ".join(h.latex() for h in hyps))
    out = []
    for r, p in enumerate(pivots):
        free = {cells[k]: -rref[r, k] for k in range(len(cells)) if k != p and rref[r, k] != 0}
        out.append((cells[p], rref[r, len(cells)], free))
    return out


def _impose_jointly(hyps: tuple, array: np.ndarray, mode: str) -> np.ndarray:
    """Every hypothesis of ``hyps`` (one leaf) at once: the entries that are free in the reduced
    system keep their drawn values, the pivot entries are solved for (exactly)."""
    out = array.copy()
    rows, cols = out.shape[-2:]
    system = _joint_solution(hyps, rows, cols)

    def num(q):
        q = sp.Rational(q)
        if mode == "float":
            return float(q)
        if mode == "symbolic":
            return q
        return Fraction(int(q.p), int(q.q)) if q.q != 1 else int(q.p)

    for lead in np.ndindex(*out.shape[:-2]):
        m = out[lead]
        for cell, rhs, free in system:
            m[cell] = num(rhs) + sum((num(c) * m[f] for f, c in free.items()), 0 if mode != "float" else 0.0)
    return out


def _mentions(factor: tuple) -> set:
    return _free_vars(factor)


def impose_all(values: dict, mode: str) -> dict:
    """Values with every active hypothesis imposed on its leaf — all of a leaf's hypotheses at
    once (one linear system), so every one holds on the instance, or
    :class:`~symuat.errors.UnsatisfiableHypothesesError` naming them."""
    by_leaf: dict[str, list] = {}
    for hyp in active():
        if hyp not in by_leaf.setdefault(hyp.name, []):
            by_leaf[hyp.name].append(hyp)
    for name, hyps in by_leaf.items():
        if name not in values:
            continue
        if len(hyps) == 1:
            values[name] = hyps[0].impose(values[name], mode)
        else:
            values[name] = _impose_jointly(tuple(hyps), values[name], mode)
    return values


def violated(values: dict) -> list[str]:
    """The active hypotheses that the exact ``values`` do not satisfy (LaTeX)."""
    return [h.latex() for h in active() if h.name in values and not h.holds(values[h.name])]


def check_satisfiable(hypotheses, shapes: dict, sizes_list) -> None:
    """Raise :class:`~symuat.errors.UnsatisfiableHypothesesError` when the hypotheses cannot hold
    together on their leaves (``shapes``: leaf name → shape at the sizes) at a size listed."""
    by_leaf: dict[str, list] = {}
    for hyp in hypotheses:
        if hyp not in by_leaf.setdefault(hyp.name, []):
            by_leaf[hyp.name].append(hyp)
    for name, hyps in by_leaf.items():
        for sizes in sizes_list:
            shape = shapes(name, sizes)
            if shape is None:
                continue
            rows, cols = shape[-2:]
            try:
                _joint_solution(tuple(hyps), rows, cols)
            except UnsatisfiableHypothesesError as exc:
                raise UnsatisfiableHypothesesError(
                    f"{exc} at {', '.join(f'{k}={v}' for k, v in sizes.items())}: the statement is "
                    "vacuous there, not decided") from None


def latex_list(hypotheses) -> list[str]:
    return [h.latex() for h in hypotheses]
