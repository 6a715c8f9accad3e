r"""Banded attention masks (sliding windows), decided for symbolic sequence length and window.

A mask that lets token :math:`n` attend to :math:`n'` iff :math:`lo\le n-n'\le hi` is a *band*
(:class:`Band`; the bounds are integers or linear expressions in the window :math:`w`). Two bands
are the same :math:`N\times N` mask iff no offset :math:`\delta=n-n'` with
:math:`|\delta|\le N-1` lies in one band and not the other: the symmetric difference of the two
integer intervals is at most four intervals (:func:`_differences`; empty, disjoint and nested
intervals alike), and each must lie beyond :math:`\pm(N-1)`. That gives the exact condition on
:math:`N` (:func:`agreement_bound`), for symbolic :math:`w`; it is cross-checked against
materialised masks (:func:`mask`) at every :math:`N\le 9`, :math:`w\le 6`, and a difference that
shows only past those sizes gets its witness from the bound (:func:`_witness_beyond`). A bound is
an integer or :math:`a w+b` (:func:`_bound`): one in :math:`N` is a clear error, not a crash.

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
from symuat.kernel import certificates
from symuat.kernel.status import Corrected, Counterexample, Status, Verdict

WINDOW = sp.Symbol("w", positive=True, integer=True)
N_TOKENS = sp.Symbol("N", positive=True, integer=True)


def _bound(value, name: str, side: str):
    """A band's bound as ``a·w + b`` with integers ``a, b`` (a symbol spelled ``w`` is the window), or
    a :class:`~symuat.errors.KernelInputError` naming the bound: a bound in the sequence length ``N``
    or any other symbol is not a band this module decides (the visible offsets of an ``N×N`` mask are
    already ``|n − n′| ≤ N − 1``: write such a side unbounded, ``None``)."""
    from symuat.errors import KernelInputError

    what = f"the {side} bound {value!r} of band {name or '(unnamed)'}"
    try:
        e = sp.sympify(value)
    except (sp.SympifyError, TypeError) as exc:
        raise KernelInputError(f"{what} is not an expression") from exc
    e = e.subs({x: WINDOW for x in e.free_symbols if x.name == WINDOW.name and x != WINDOW})
    other = sorted(str(x) for x in e.free_symbols if x != WINDOW)
    if other:
        raise KernelInputError(f"{what} is written in {', '.join(other)}: a band's bounds are integers or "
                               "a·w + b in the window w (a side bounded by the sequence length N bounds "
                               "nothing an N×N mask shows: write it as None)")
    try:
        poly = sp.Poly(e, WINDOW)
    except sp.polys.polyerrors.PolynomialError as exc:
        raise KernelInputError(f"{what} is not of the form a·w + b") from exc
    if poly.degree() > 1 or not all(c.is_Integer for c in poly.all_coeffs()):
        raise KernelInputError(f"{what} is not of the form a·w + b with integers a, b")
    return e


@dataclass(frozen=True)
class Band:
    """``lo ≤ n − n′ ≤ hi`` (inclusive; ``None`` for unbounded), with the convention's name."""

    lo: object
    hi: object
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "lo", None if self.lo is None else _bound(self.lo, self.name, "lower"))
        object.__setattr__(self, "hi", None if self.hi is None else _bound(self.hi, self.name, "upper"))

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


def _visible(p, q):
    """The least :math:`|\\delta|` over the integer interval ``[p, q]`` (``oo`` when it is empty): the
    interval shows in an :math:`N\\times N` mask iff :math:`N >` this."""
    return sp.Piecewise((sp.oo, sp.Gt(p, q)), (p, sp.Gt(p, 0)), (-q, sp.Lt(q, 0)), (sp.Integer(0), True))


def _differences(a: Band, b: Band) -> list[tuple]:
    """The symmetric difference of the two offset intervals, exactly, as four integer intervals
    ``(p, q)`` (each possibly empty; ``∓oo`` for an unbounded side): ``A∖B = [a₁, min(b₁, a₂−1)] ∪
    [max(a₁, b₂+1), b₁]`` and ``B∖A`` likewise — right for empty, disjoint and nested intervals alike."""
    def ends(band):
        return (-sp.oo if band.lo is None else band.lo), (sp.oo if band.hi is None else band.hi)

    out = []
    for (a1, b1), (a2, b2) in ((ends(a), ends(b)), (ends(b), ends(a))):
        out.append((a1, sp.Min(b1, a2 - 1)))
        out.append((sp.Max(a1, b2 + 1), b1))
    return out


def agreement_bound(a: Band, b: Band):
    """The largest :math:`N` (an expression in :math:`w`; ``oo``: every :math:`N`) for which the
    two bands give the same :math:`N\\times N` mask: they agree iff :math:`N\\le` the bound.

    An :math:`N\\times N` mask shows the offsets :math:`|\\delta|\\le N-1`, so the masks agree iff
    every offset in the symmetric difference (:func:`_differences`, exact) has
    :math:`|\\delta|\\ge N`: the bound is the least :math:`|\\delta|` there (:func:`_visible`;
    piecewise in :math:`w` where a piece is empty for some :math:`w`).
    """
    return sp.simplify(sp.Min(*(_visible(p, q) for p, q in _differences(a, b))))


def _first_difference(a: Band, b: Band, limit_N: int = 9, limit_w: int = 6):
    for w in range(1, limit_w + 1):
        for N in range(1, limit_N + 1):
            ma, mb = mask(N, a, {WINDOW: w}), mask(N, b, {WINDOW: w})
            if not np.array_equal(ma, mb):
                n, n2 = (int(i) for i in np.argwhere(ma != mb)[0])
                return w, N, n, n2, ma, mb
    return None


#: the windows tried for a witness past the materialised sizes; masks up to this side are materialised
WITNESS_WINDOWS, MATERIALISE = 64, 64


def _inside(band: Band, delta: int, w: int) -> bool:
    lo, hi = band.at({WINDOW: w})
    return (lo is None or delta >= lo) and (hi is None or delta <= hi)


def _witness_beyond(a: Band, b: Band, bound) -> Counterexample:
    """The smallest sizes at which the masks differ, for bands that agree at every ``N ≤ 9, w ≤ 6``:
    at the first window ``w`` where the bound is finite, ``N = bound + 1`` and an offset ``δ`` with
    ``|δ| = bound`` in one band only (checked on the bands' inequalities, exactly; the two masks are
    materialised too when ``N`` ≤ :data:`MATERIALISE`). A bound finite at no window tried is an error."""
    from symuat.errors import KernelInputError

    for w in range(1, WITNESS_WINDOWS + 1):
        at = bound.subs(WINDOW, w)
        if at is sp.oo or not at.is_Integer:
            continue
        N, delta = int(at) + 1, next(d for d in (int(at), -int(at)) if _inside(a, d, w) != _inside(b, d, w))
        n, n2 = (delta, 0) if delta >= 0 else (0, -delta)
        ina, inb = int(_inside(a, delta, w)), int(_inside(b, delta, w))
        values = {"offset n−n′": delta}
        recheck = f"exact: offset {delta} is {'in' if ina else 'outside'} {a.name or 'the first band'} and " \
                  f"{'in' if inb else 'outside'} {b.name or 'the second'} at w = {w}"
        if N <= MATERIALISE:
            ma, mb = mask(N, a, {WINDOW: w}), mask(N, b, {WINDOW: w})
            if (ma[n, n2], mb[n, n2]) != (ina, inb):
                raise KernelInconsistencyError(f"bands {a.name} / {b.name}: the offset witness and the "
                                               "materialised masks disagree")
            values.update({"mask " + a.name: ma, "mask " + b.name: mb})
            recheck += f"; exact 0/1 masks: entry ({n}, {n2}) is {ma[n, n2]} vs {mb[n, n2]}"
        return Counterexample(
            {"N": N, "w": w}, values, lhs=ina, rhs=inb,
            reason=f"token n={n} attends to n′={n2} (n−n′={delta}) under one convention and not the other; "
                   f"the masks agree at every smaller N (N ≤ {N - 1})",
            exact_recheck=recheck, numeric_recheck="float64: the additive −inf masks differ at the same entry")
    raise KernelInputError(f"bands {a.name} / {b.name}: the masks differ only for N > {bound}, finite at no "
                           f"window w ≤ {WITNESS_WINDOWS}: no witness at a size this check materialises")


def _cross_check(a: Band, b: Band, bound) -> None:
    for w in range(1, 7):
        for N in range(1, 10):
            same = np.array_equal(mask(N, a, {WINDOW: w}), mask(N, b, {WINDOW: w}))
            predicted = bool(sp.sympify(N <= bound.subs(WINDOW, w))) if bound is not sp.oo else True
            if same != predicted:
                raise KernelInconsistencyError(
                    f"bands {a.name} / {b.name}: the derived condition N ≤ {bound} says {predicted} at "
                    f"w={w}, N={N}; the materialised masks say {same}")


#: the certificate :func:`check_same_mask` records: the two bands, whether they are the same mask and,
#: if not, the sizes and the entry ``(n, n′)`` where the masks differ
BAND_MASKS = "band_masks"


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
        # the certify tier states "the same mask for every N, w" (symuat.certify.bands)
        certificates.record(BAND_MASKS, a=a, b=b, same=True)
        return Verdict(Status.PROVED, "equal bands: the symmetric difference of the offset intervals is empty "
                       "(symbolic w, N); materialised masks agree at every N ≤ 9, w ≤ 6")
    found = _first_difference(a, b)
    if found is not None:
        w, N, n, n2, ma, mb = found
        cex = Counterexample(
            {"N": N, "w": w}, {"mask " + a.name: ma, "mask " + b.name: mb},
            lhs=int(ma[n, n2]), rhs=int(mb[n, n2]),
            reason=f"token n={n} attends to n′={n2} (n−n′={n - n2}) under one convention and not the other",
            exact_recheck=f"exact 0/1 masks: entry ({n}, {n2}) is {ma[n, n2]} vs {mb[n, n2]}",
            numeric_recheck="float64: the additive −inf masks differ at the same entry")
    else:  # the masks differ only past N = 9 (or w = 6): the witness from the bound, checked entrywise
        cex = _witness_beyond(a, b, bound)
        delta = cex.values["offset n−n′"]
        n, n2 = (delta, 0) if delta >= 0 else (0, -delta)
    # the certify tier states "not the same mask for every N, w", proved at this entry
    certificates.record(BAND_MASKS, a=a, b=b, same=False, sizes=dict(cex.sizes), entry=(int(n), int(n2)))
    cond = Verdict(Status.PROVED, "exact interval reasoning on the offsets n−n′ (symbolic w, N); cross-checked on "
                   "materialised masks at every N ≤ 9, w ≤ 6", quantities={"agree iff": f"N <= {bound}"})
    return Verdict(Status.REFUTED, "exact 0/1 masks at the smallest sizes where the offsets differ",
                   counterexample=cex,
                   corrected=Corrected(rf"\text{{the masks agree}} \iff N \le {sp.latex(bound)}", cond),
                   quantities={"agree iff": f"N <= {bound}"})
