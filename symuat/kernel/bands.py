r"""Banded attention masks (sliding windows), decided for symbolic sequence length and window.

A mask that lets token :math:`n` attend to :math:`n'` iff :math:`lo\le n-n'\le hi` is a *band*
(:class:`Band`; the bounds are integers or linear expressions in the window :math:`w`). Two bands
are the same :math:`N\times N` mask iff no offset :math:`\delta=n-n'` with
:math:`|\delta|\le N-1` lies in one band and not the other: the symmetric difference of the two
integer intervals is at most two intervals, and each must lie beyond :math:`\pm(N-1)`. That gives
the exact condition on :math:`N` (:func:`agreement_bound`), for symbolic :math:`w`; it is
cross-checked against materialised masks (:func:`mask`) at every :math:`N\le 9`, :math:`w\le 6`.

>>> w = WINDOW
>>> A, B = Band(0, w - 1, "0 ≤ n−n′ < w"), Band(0, w, "0 ≤ n−n′ ≤ w")
>>> agreement_bound(A, B)        # the two agree iff N ≤ w
w
>>> mask(3, A, {w: 2}).tolist()
[[1, 0, 0], [1, 1, 0], [0, 1, 1]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from symuat.errors import KernelInconsistencyError
from symuat.kernel.status import Corrected, Counterexample, Status, Verdict

WINDOW = sp.Symbol("w", positive=True, integer=True)
N_TOKENS = sp.Symbol("N", positive=True, integer=True)


@dataclass(frozen=True)
class Band:
    """``lo ≤ n − n′ ≤ hi`` (inclusive; ``None`` for unbounded), with the convention's name."""

    lo: object
    hi: object
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "lo", None if self.lo is None else sp.sympify(self.lo))
        object.__setattr__(self, "hi", None if self.hi is None else sp.sympify(self.hi))

    def at(self, sizes: dict) -> tuple[int | None, int | None]:
        lo = None if self.lo is None else int(self.lo.subs(sizes))
        hi = None if self.hi is None else int(self.hi.subs(sizes))
        return lo, hi

    def latex(self) -> str:
        lo = "" if self.lo is None else sp.latex(self.lo) + r"\le "
        hi = "" if self.hi is None else r"\le " + sp.latex(self.hi)
        return f"{lo}n-n'{hi}"


def mask(N: int, band: Band, sizes: dict) -> np.ndarray:
    """The ``N×N`` 0/1 mask of ``band`` (integers, exact)."""
    lo, hi = band.at(sizes)
    delta = np.arange(N)[:, None] - np.arange(N)[None, :]
    keep = np.ones((N, N), dtype=bool)
    if lo is not None:
        keep &= delta >= lo
    if hi is not None:
        keep &= delta <= hi
    return keep.astype(int)


def _pieces(a: Band, b: Band) -> list[tuple]:
    """The symmetric difference of the two offset intervals as inclusive pieces ``(p, q)``
    (``None``: unbounded on that side): one piece per side whose bounds differ."""
    out = []
    same = lambda x, y: (x is None and y is None) or (x is not None and y is not None and sp.simplify(x - y) == 0)
    if not same(a.lo, b.lo):  # below the higher of the two lower bounds
        lo = None if a.lo is None or b.lo is None else sp.Min(a.lo, b.lo)
        hi = (b.lo if a.lo is None else a.lo if b.lo is None else sp.Max(a.lo, b.lo)) - 1
        out.append((lo, sp.simplify(hi)))
    if not same(a.hi, b.hi):  # above the lower of the two upper bounds
        lo = (b.hi if a.hi is None else a.hi if b.hi is None else sp.Min(a.hi, b.hi)) + 1
        hi = None if a.hi is None or b.hi is None else sp.Max(a.hi, b.hi)
        out.append((sp.simplify(lo), hi))
    return out


def agreement_bound(a: Band, b: Band):
    """The largest :math:`N` (an expression in :math:`w`; ``oo``: every :math:`N`) for which the
    two bands give the same :math:`N\\times N` mask: they agree iff :math:`N\\le` the bound.

    An :math:`N\\times N` mask shows the offsets :math:`|\\delta|\\le N-1`. A piece of the symmetric
    difference at :math:`\\delta\\ge p>0` is invisible iff :math:`p\\ge N`, one at
    :math:`\\delta\\le q<0` iff :math:`-q\\ge N`; a piece through 0 is always visible (bound 0); a
    piece that is empty for some :math:`w` (:math:`p>q`) is invisible there (the bound is then
    piecewise in :math:`w`).
    """
    bound = sp.oo
    for p, q in _pieces(a, b):
        cases = []
        if p is not None and q is not None:
            cases.append((sp.oo, sp.Gt(p, q)))  # an empty piece (for these w): invisible at every N
        if p is not None:
            cases.append((p, sp.Gt(p, 0)))
        if q is not None:
            cases.append((-q, sp.Lt(q, 0)))
        cases.append((sp.Integer(0), True))  # through 0: visible at every N ≥ 1
        bound = sp.Min(bound, sp.Piecewise(*cases))
    return sp.simplify(bound)


def _first_difference(a: Band, b: Band, limit_N: int = 9, limit_w: int = 6):
    for w in range(1, limit_w + 1):
        for N in range(1, limit_N + 1):
            ma, mb = mask(N, a, {WINDOW: w}), mask(N, b, {WINDOW: w})
            if not np.array_equal(ma, mb):
                n, n2 = (int(i) for i in np.argwhere(ma != mb)[0])
                return w, N, n, n2, ma, mb
    return None


def _cross_check(a: Band, b: Band, bound) -> None:
    for w in range(1, 7):
        for N in range(1, 10):
            same = np.array_equal(mask(N, a, {WINDOW: w}), mask(N, b, {WINDOW: w}))
            predicted = bool(sp.sympify(N <= bound.subs(WINDOW, w))) if bound is not sp.oo else True
            if same != predicted:
                raise KernelInconsistencyError(
                    f"bands {a.name} / {b.name}: the derived condition N ≤ {bound} says {predicted} at "
                    f"w={w}, N={N}; the materialised masks say {same}")


def check_same_mask(a: Band, b: Band) -> Verdict:
    """The claim “``a`` and ``b`` are the same mask” (for every :math:`N` and :math:`w`).

    ``proved`` when the symmetric difference is empty; otherwise ``refuted`` with the smallest
    exact witness (the two 0/1 masks and the entry where they differ) and, as the corrected
    statement, the exact condition :math:`N\\le` :func:`agreement_bound` (cross-checked on
    materialised masks at every :math:`N\\le9,\\ w\\le6`).
    """
    bound = agreement_bound(a, b)
    _cross_check(a, b, bound)
    if bound is sp.oo:
        return Verdict(Status.PROVED, "equal bands: the symmetric difference of the offset intervals is empty "
                       "(symbolic w, N); materialised masks agree at every N ≤ 9, w ≤ 6")
    found = _first_difference(a, b)
    if found is None:
        raise KernelInconsistencyError(f"bands {a.name} / {b.name} differ symbolically but at no size tried")
    w, N, n, n2, ma, mb = found
    cex = Counterexample(
        {"N": N, "w": w}, {"mask " + a.name: ma, "mask " + b.name: mb},
        lhs=int(ma[n, n2]), rhs=int(mb[n, n2]),
        reason=f"token n={n} attends to n′={n2} (n−n′={n - n2}) under one convention and not the other",
        exact_recheck=f"exact 0/1 masks: entry ({n}, {n2}) is {ma[n, n2]} vs {mb[n, n2]}",
        numeric_recheck="float64: the additive −inf masks differ at the same entry")
    cond = Verdict(Status.PROVED, "exact interval reasoning on the offsets n−n′ (symbolic w, N); cross-checked on "
                   "materialised masks at every N ≤ 9, w ≤ 6", quantities={"agree iff": f"N <= {bound}"})
    return Verdict(Status.REFUTED, "exact 0/1 masks at the smallest sizes where the offsets differ",
                   counterexample=cex,
                   corrected=Corrected(rf"\text{{the masks agree}} \iff N \le {sp.latex(bound)}", cond),
                   quantities={"agree iff": f"N <= {bound}"})
