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

The hypotheses a user states about one leaf (issue 31) follow the same three rules:
:class:`Symmetric` (its entries read in a canonical order), :class:`SkewSymmetric` (no rule),
:class:`Diagonal` (:math:`A_{ij}=\delta_{ij}A_{ii}`) and :func:`RowStochastic` (a
:class:`LineSums`) are linear and drawn by one linear system with the others on the leaf;
:class:`Invertible` (the axioms :math:`AA^{-1}=A^{-1}A=I`, implied by an inverse in the
statement), :class:`Orthogonal` (:math:`A^TA=AA^T=I`) and :class:`Idempotent` (:math:`A^2=A`) are
drawn by exact constructions (a shift off the determinant's roots, the Cayley transform of a
skew matrix, :math:`SDS^{-1}` with :math:`S` unimodular), and every instance is re-checked
against all of the leaf's hypotheses (a combination nothing draws is a clear error).

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
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import sympy as sp

from symuat.kernel.assumptions import active
from symuat.errors import KernelInputError, UnsatisfiableHypothesesError
from symuat.kernel.index_calculus import _delta, _free_vars


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


# --------------------------------------------------------------------------------------------
# structural hypotheses a user states: symmetric, skew-symmetric, diagonal (linear: drawn by the
# same joint linear system as line sums), invertible, orthogonal, idempotent (not linear: drawn by
# a construction that satisfies them, exactly)
# --------------------------------------------------------------------------------------------


def _square_or_refuse(hyp, rows: int, cols: int) -> None:
    if rows != cols:
        raise UnsatisfiableHypothesesError(
            f"hypothesis {hyp.latex()} needs a square matrix; {hyp.name} is {rows}×{cols}")


class _Linear:
    """A hypothesis that is a set of linear equations over the leaf's entries."""

    linear = True
    value = 1

    if TYPE_CHECKING:  # each subclass supplies these
        name: str

        def latex(self) -> str: ...

    def __str__(self) -> str:
        return self.latex()

    def rewrite(self, factors: list, bound: list):
        return None

    def impose(self, array: np.ndarray, mode: str) -> np.ndarray:
        return _impose_jointly((self,), array, mode)

    def holds(self, array) -> bool:
        # the same test: every equation, exactly (LineSums.holds needs only .equations, which
        # every subclass has)
        return LineSums.holds(self, array)  # type: ignore[arg-type]


def _sorted_pair(factor: tuple) -> tuple:
    _, name, I, J = factor
    if len(I) == 1 and len(J) == 1 and J[0] < I[0]:
        return ("E", name, J, I)
    return factor


@dataclass(frozen=True)
class Symmetric(_Linear):
    r""":math:`A=A^T`. The normal form reads :math:`A_{ij}` and :math:`A_{ji}` as one entry (the
    indices of every entry of ``A`` in a canonical order), an identity for symmetric :math:`A`.

    >>> Symmetric("S").latex()
    'S=S^{T}'
    """

    name: str

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}={sp.latex(sp.Symbol(self.name))}^{{T}}"

    def canonical(self, factor: tuple) -> tuple:
        return _sorted_pair(factor) if factor[1] == self.name else factor

    def equations(self, rows: int, cols: int):
        _square_or_refuse(self, rows, cols)
        return [({(i, j): 1, (j, i): -1}, sp.Integer(0)) for i in range(rows) for j in range(i + 1, rows)]


@dataclass(frozen=True)
class SkewSymmetric(_Linear):
    r""":math:`A^T=-A` (no rewrite rule: decided by instances, refuted or numeric-only unless the
    statement is proved without it)."""

    name: str

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}^{{T}}=-{sp.latex(sp.Symbol(self.name))}"

    def equations(self, rows: int, cols: int):
        _square_or_refuse(self, rows, cols)
        return [({(i, j): 1, (j, i): 1} if i != j else {(i, i): 1}, sp.Integer(0))
                for i in range(rows) for j in range(i, rows)]


@dataclass(frozen=True)
class Diagonal(_Linear):
    r""":math:`A_{ij}=0` for :math:`i\ne j`. Rule: :math:`A_{ij}=\delta_{ij}A_{ii}` (and the
    entries read symmetrically), an identity for diagonal :math:`A`."""

    name: str

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}\ \text{{diagonal}}"

    def canonical(self, factor: tuple) -> tuple:
        return _sorted_pair(factor) if factor[1] == self.name else factor

    def rewrite(self, factors: list, bound: list):
        for pos, f in enumerate(factors):
            if f[0] == "E" and f[1] == self.name and len(f[2]) == 1 and len(f[3]) == 1 and f[2] != f[3]:
                i, j = f[2][0], f[3][0]
                return factors[:pos] + [("E", self.name, (i,), (i,)), _delta(i, j)] + factors[pos + 1:], bound
        return None

    def equations(self, rows: int, cols: int):
        _square_or_refuse(self, rows, cols)
        return [({(i, j): 1}, sp.Integer(0)) for i in range(rows) for j in range(cols) if i != j]


def RowStochastic(name: str) -> LineSums:
    """Every row of ``name`` sums to 1 (:class:`LineSums`; entries of either sign: the statements
    are polynomial in the entries, see the module docstring)."""
    return LineSums(name, "rows")


def _contract(factors: list, bound: list, left: str, lslot: int, right: str, rslot: int, make):
    r"""One application of :math:`\sum_k L[\dots k\dots]\,R[\dots k\dots]\to` ``make(x, y)``:
    ``k`` summed, in slot ``lslot`` of an entry of ``left`` and slot ``rslot`` of another entry of
    ``right`` (0: row, 1: column), mentioned by no other factor; ``x``, ``y`` the other indices."""
    for p, f in enumerate(factors):
        if f[0] != "E" or f[1] != left or len(f[2]) != 1 or len(f[3]) != 1:
            continue
        k, x = (f[2][0], f[3][0]) if lslot == 0 else (f[3][0], f[2][0])
        if k not in bound or k == x:
            continue
        for q, g in enumerate(factors):
            if q == p or g[0] != "E" or g[1] != right or len(g[2]) != 1 or len(g[3]) != 1:
                continue
            k2, y = (g[2][0], g[3][0]) if rslot == 0 else (g[3][0], g[2][0])
            if k2 != k or y == k:
                continue
            others = [h for r, h in enumerate(factors) if r not in (p, q)]
            if any(k in _free_vars(h) for h in others):
                continue
            return others + make(x, y), [b for b in bound if b != k]
    return None


def _scalar_pair(factors: list, left: str, right: str):
    """A 1×1 leaf next to its inverse: both factors dropped (:math:`aa^{-1}=1`)."""
    for p, f in enumerate(factors):
        if f[0] == "E" and f[1] == left and not f[2] and not f[3]:
            for q, g in enumerate(factors):
                if q != p and g[0] == "E" and g[1] == right and not g[2] and not g[3]:
                    return [h for r, h in enumerate(factors) if r not in (p, q)]
    return None


def _random_unimodular(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``S = LU`` with unit triangular integer factors taken from ``array``'s off-diagonal
    entries, and its integer inverse ``U⁻¹L⁻¹``."""
    from symuat.kernel.language import _exact_inverse

    n = array.shape[0]
    L = np.zeros((n, n), dtype=object)
    U = np.zeros((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            L[i, j] = 1 if i == j else (int(array[i, j]) if i > j else 0)
            U[i, j] = 1 if i == j else (int(array[i, j]) if i < j else 0)
    S = L.dot(U)
    return S, _exact_inverse(S)


def _as_mode(exact: np.ndarray, mode: str) -> np.ndarray:
    return exact.astype(float) if mode == "float" else exact


def _exact_draw(array: np.ndarray) -> np.ndarray:
    """Small integers from a drawn array (float draws rounded), for the exact constructions."""
    return np.vectorize(lambda x: int(round(float(x) * 1.5)) if not isinstance(x, sp.Basic) else 0,
                        otypes=[object])(array)


class _Structural:
    """A hypothesis drawn by construction (not a linear system); its normal-form rule is an
    axiom of the structure."""

    linear = False
    value = 1
    order = 0  # imposed in this order on one leaf (invertible last: it keeps what it finds)

    if TYPE_CHECKING:  # each subclass supplies these
        name: str

        def latex(self) -> str: ...

        def _one(self, m: np.ndarray, mode: str) -> np.ndarray: ...

        def _holds(self, m: np.ndarray) -> bool: ...

    def __str__(self) -> str:
        return self.latex()

    def _symbolic(self):
        from symuat.errors import UnsupportedExpressionError

        raise UnsupportedExpressionError(
            f"hypothesis {self.latex()} has no instance with symbolic entries: state the statement "
            "for symbolic sizes instead of explicit ones")

    def impose(self, array: np.ndarray, mode: str) -> np.ndarray:
        out = array.copy()
        for lead in np.ndindex(*out.shape[:-2]):
            _square_or_refuse(self, *out[lead].shape)
            out[lead] = self._one(out[lead], mode)
        return out

    def holds(self, array) -> bool:
        array = np.asarray(array, dtype=object)
        return all(self._holds(array[lead]) for lead in np.ndindex(*array.shape[:-2]))


@dataclass(frozen=True)
class Invertible(_Structural):
    r""":math:`A` is invertible. Rule: the axioms :math:`\sum_kA_{xk}A^{-1}_{ky}=\delta_{xy}` and
    :math:`\sum_kA^{-1}_{xk}A_{ky}=\delta_{xy}` (``A^{-1}`` the leaf
    :class:`~symuat.kernel.language.InverseOf` stands for). Instances: the drawn matrix shifted by
    the first :math:`t\in 0,1,-1,2,\dots` with :math:`\det(A+tI)\ne0` (exact; :math:`\det` is a
    polynomial of degree :math:`n` in :math:`t`, so at most :math:`n` shifts fail); in float64,
    shifted to strict diagonal dominance (well conditioned).

    >>> Invertible("A").latex()
    'A\\ \\text{invertible}'
    """

    name: str
    order = 9

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}\ \text{{invertible}}"

    def rewrite(self, factors: list, bound: list):
        from symuat.kernel.language import inverse_name

        inv = inverse_name(self.name)
        pair = _scalar_pair(factors, self.name, inv)
        if pair is not None:
            return pair, bound
        return (_contract(factors, bound, self.name, 1, inv, 0, lambda x, y: [_delta(x, y)])
                or _contract(factors, bound, inv, 1, self.name, 0, lambda x, y: [_delta(x, y)]))

    def _one(self, m, mode):
        from symuat.kernel.language import exact_det

        n = m.shape[0]
        if mode == "symbolic":
            return m  # a generic matrix (symbolic entries) is invertible
        if mode == "float":
            shift = float(np.max(np.sum(np.abs(m), axis=1), initial=0.0)) + 1.0
            return m + shift * np.eye(n)
        for t in [0] + [s * k for k in range(1, n + 2) for s in (1, -1)]:
            shifted = m.copy()
            for k in range(n):
                shifted[k, k] = shifted[k, k] + t
            if exact_det(shifted) != 0:
                return shifted
        raise AssertionError("unreachable: det(A + tI) has at most n roots")

    def _holds(self, m) -> bool:
        from symuat.kernel.language import exact_det

        return exact_det(m) != 0


@dataclass(frozen=True)
class Orthogonal(_Structural):
    r""":math:`A^TA=AA^T=I`. Rule: :math:`\sum_kA_{kx}A_{ky}=\delta_{xy}` and
    :math:`\sum_kA_{xk}A_{yk}=\delta_{xy}`. Instances: the Cayley transform
    :math:`(I-K)(I+K)^{-1}` of an integer skew-symmetric :math:`K` (exact, rational)."""

    name: str

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}^{{T}}{sp.latex(sp.Symbol(self.name))}=I"

    def rewrite(self, factors: list, bound: list):
        return (_contract(factors, bound, self.name, 0, self.name, 0, lambda x, y: [_delta(x, y)])
                or _contract(factors, bound, self.name, 1, self.name, 1, lambda x, y: [_delta(x, y)]))

    def _one(self, m, mode):
        from symuat.kernel.language import _exact_inverse

        if mode == "symbolic":
            self._symbolic()
        d = _exact_draw(m) if mode == "float" else m
        n = d.shape[0]
        K = np.zeros((n, n), dtype=object)
        for i in range(n):
            for j in range(i + 1, n):
                K[i, j], K[j, i] = d[i, j], -d[i, j]
        eye = np.eye(n, dtype=int).astype(object)
        return _as_mode((eye - K).dot(_exact_inverse(eye + K)), mode)

    def _holds(self, m) -> bool:
        n = m.shape[0]
        prod = m.T.dot(m)
        return all(prod[i, j] == int(i == j) for i in range(n) for j in range(n))


@dataclass(frozen=True)
class Idempotent(_Structural):
    r""":math:`A^2=A`. Rule: :math:`\sum_kA_{xk}A_{ky}=A_{xy}`. Instances: :math:`SDS^{-1}` with
    :math:`S` unimodular (integer, from the draw) and :math:`D` a 0/1 diagonal of a drawn rank."""

    name: str

    def latex(self) -> str:
        return rf"{sp.latex(sp.Symbol(self.name))}^{{2}}={sp.latex(sp.Symbol(self.name))}"

    def rewrite(self, factors: list, bound: list):
        return _contract(factors, bound, self.name, 1, self.name, 0,
                         lambda x, y: [("E", self.name, (x,), (y,))])

    def _one(self, m, mode):
        if mode == "symbolic":
            self._symbolic()
        d = _exact_draw(m) if mode == "float" else m
        n = d.shape[0]
        S, S_inv = _random_unimodular(d)
        rank = sum(1 for k in range(n) if d[k, k] >= 0)
        D = np.zeros((n, n), dtype=object)
        for k in range(rank):
            D[k, k] = 1
        return _as_mode(S.dot(D).dot(S_inv), mode)

    def _holds(self, m) -> bool:
        return bool(np.all(m.dot(m) == m))


def impose_all(values: dict, mode: str) -> dict:
    """Values with every active hypothesis imposed on its leaf — all of a leaf's linear hypotheses
    at once (one linear system), then its structural ones (invertible last), so every one holds on
    the instance (checked exactly), or :class:`~symuat.errors.UnsatisfiableHypothesesError` naming
    them."""
    by_leaf: dict[str, list] = {}
    for hyp in active():
        if hyp not in by_leaf.setdefault(hyp.name, []):
            by_leaf[hyp.name].append(hyp)
    for name, hyps in by_leaf.items():
        if name not in values:
            continue
        linear = [h for h in hyps if getattr(h, "linear", True)]
        structural = sorted((h for h in hyps if not getattr(h, "linear", True)), key=lambda h: h.order)
        if len(linear) == 1:
            values[name] = linear[0].impose(values[name], mode)
        elif linear:
            values[name] = _impose_jointly(tuple(linear), values[name], mode)
        for h in structural:
            values[name] = h.impose(values[name], mode)
        if structural and len(hyps) > 1 and mode == "exact":
            broken = [h.latex() for h in hyps if not h.holds(values[name])]
            if broken:
                raise UnsatisfiableHypothesesError(
                    f"symuat draws no instance of {name} with " + "; ".join(h.latex() for h in hyps)
                    + f" together (the construction breaks {'; '.join(broken)})")
    return values


def violated(values: dict) -> list[str]:
    """The active hypotheses that the exact ``values`` do not satisfy (LaTeX)."""
    return [h.latex() for h in active() if h.name in values and not h.holds(values[h.name])]


def check_satisfiable(hypotheses, shapes: Callable[[str, Any], Any], sizes_list) -> None:
    """Raise :class:`~symuat.errors.UnsatisfiableHypothesesError` when the hypotheses cannot hold
    together on their leaves (``shapes(name, sizes)``: the leaf's shape at the sizes, or None) at a
    size listed."""
    by_leaf: dict[str, list] = {}
    for hyp in hypotheses:
        if hyp not in by_leaf.setdefault(hyp.name, []):
            by_leaf[hyp.name].append(hyp)
    for name, hyps in by_leaf.items():
        hyps = [h for h in hyps if getattr(h, "linear", True)]  # structural ones: by construction
        if not hyps:
            continue
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


def implied_hypotheses(lhs, rhs, given) -> tuple:
    """:class:`Invertible` for every matrix the statement inverts (not already given)."""
    from symuat.kernel.language import InverseOf

    names = sorted({node.arg.name for e in (lhs, rhs) for node in sp.preorder_traversal(e)
                    if isinstance(node, InverseOf)})
    return tuple(Invertible(x) for x in names if Invertible(x) not in tuple(given))
