"""Counterexamples a reader can check by hand: smallest sizes first, then smallest integer entries.

:func:`symuat.kernel.decide.find_counterexample` looks where a refutation is most telling for
the *procedure* (every dimension ≥ 2 and all distinct, entries in −3..3). A reader wants the
opposite: the smallest instance that still fails. :func:`minimal_counterexample` searches the
sizes in order of their sum (then lexicographically), and at each size entries drawn from
{0, 1}, then {−1, 0, 1}, then −2..2, … up to ``max_entry`` (10 by default), and returns the first
failing instance, re-checked exactly and in float64 by the same re-check as every other
counterexample (:func:`symuat.kernel.decide.recheck`). :func:`minimised` puts it in place of a
verdict's counterexample when it is smaller (:func:`~symuat.kernel.decide.check_identity` calls it
on every refutation).

The search is sound in the only direction that matters: it never turns a proof into a
refutation (it runs only on verdicts already refuted, and its result is re-checked exactly), and
when it finds nothing the original counterexample stays.

>>> from sympy import MatrixSymbol, symbols
>>> from symuat.expr.algebra import T
>>> n = symbols("n", integer=True, positive=True)
>>> A = MatrixSymbol("A", n, n)
>>> cex = minimal_counterexample(A, T(A))
>>> cex.sizes, cex.values["A"].tolist()
({'n': 2}, [[0, 0], [1, 0]])
"""

from __future__ import annotations

import itertools

import numpy as np

from symuat.kernel.evaluate import values_equal
from symuat.kernel.status import Counterexample, Status, Verdict

#: the entry bounds tried at each size, in order: {0, 1}, then −k..k
ENTRY_LEVELS = (1, 1, 2, 3, 5, 10)
#: random draws per size and entry level (the first level also tries every 0/1 pattern when few)
DRAWS = 24
#: at most this many 0/1 patterns are enumerated exhaustively at one size
EXHAUSTIVE = 256
#: at most this many evaluations per search (a deterministic budget: the outcome never depends
#: on the machine's speed); when it runs out, the counterexample found so far stays
BUDGET = 1200
#: random draws (entries −3..3) that decide whether a size fails, in the first pass
PROBES = 6
#: the exact re-checks of a counterexample this module can improve on: a differing entry, a side
#: undefined where the other is defined, two shapes
MINIMISABLE = ("exact: entry", "exact: right side undefined", "exact: left side undefined", "exact: shapes")


def size_order(dims: list, largest: dict | None = None, top: int = 4) -> list[dict]:
    """Sizes for ``dims`` by total, then lexicographically; each at most ``largest[d]`` (the
    counterexample already known) or ``top``.

    >>> from sympy import symbols
    >>> a, b = symbols("a b")
    >>> [tuple(s.values()) for s in size_order([a, b], {a: 2, b: 2})]
    [(1, 1), (1, 2), (2, 1), (2, 2)]
    """
    ranges = [range(1, (largest or {}).get(d, top) + 1) for d in dims]
    grid = [dict(zip(dims, combo)) for combo in itertools.product(*ranges)]
    grid.sort(key=lambda s: (sum(s.values()), tuple(s.values())))
    return grid


def _draws(shapes: dict, level: int, rng, first: bool):
    """Value assignments for the leaves: at the first level every 0/1 pattern when there are few,
    else random draws; entries in {0, 1} (``first``) or −level..level."""
    total = sum(int(np.prod(s)) for s in shapes.values())
    if first and 2 ** total <= EXHAUSTIVE:
        for bits in itertools.product((0, 1), repeat=total):
            out, k = {}, 0
            for name, shape in shapes.items():
                size = int(np.prod(shape))
                out[name] = np.array(bits[k:k + size], dtype=object).reshape(shape)
                k += size
            yield out
        return
    lo, hi = (0, 1) if first else (-level, level)
    for _ in range(DRAWS):
        yield {name: rng.integers(lo, hi + 1, size=shape).astype(object) for name, shape in shapes.items()}


def minimal_counterexample(lhs, rhs, *, largest: dict | None = None, max_entry: int = 10,
                           sigma=None) -> Counterexample | None:
    """The first failing instance of ``lhs = rhs`` in the order smallest sizes, then smallest
    entries (|entry| ≤ ``max_entry``); re-checked exactly and in float64. None if none found.

    Two passes: the smallest sizes at which some of a few random draws (entries −3..3) fails,
    then, at those sizes, the smallest entries ({0, 1} exhaustively when there are few patterns,
    then −k..k for growing k)."""
    # inside the function: importing symuat.kernel.decide runs its package, which imports identity, which
    # imports this module
    from symuat.kernel.decide import instances
    from symuat.kernel.decide.recheck import exact_relative, recheck

    shapes_sym = instances.leaf_shapes(lhs, rhs)
    dims = instances.dimension_symbols(lhs, rhs)
    scalars = instances.scalar_symbols(lhs, rhs)
    levels = [lv for lv in ENTRY_LEVELS if lv <= max_entry]
    budget = [BUDGET]

    def fails(sizes, values):
        """``(True, lhs, rhs, reason)``: a counterexample; ``(False, …)``: equal; ``None``:
        undefined on both sides at these sizes. One side undefined where the other is defined,
        or two shapes, is a counterexample of the sizes alone (the entries play no part)."""
        budget[0] -= 1
        for sym in scalars:  # a nonzero scalar, smallest first
            values[sym.name] = 1
        left, err_l = instances.evaluate_at(lhs, sizes, values, "exact", sigma)
        right, err_r = instances.evaluate_at(rhs, sizes, values, "exact", sigma)
        if err_l and err_r:
            return None
        if err_l or err_r:
            side = "right" if err_r else "left"
            return True, left, right, f"the {side} side is undefined where the other is defined: {err_l or err_r}"
        if left.shape != right.shape:
            return True, left, right, f"shapes differ: {left.shape} against {right.shape}"
        return (not values_equal(left, right, "exact")
                and exact_relative(left, right) > instances.TOLERANCE), left, right, "values differ"

    def shapes_at(sizes):
        try:
            return {name: instances.shape_at(shape, sizes) for name, shape in shapes_sym.items()}
        except TypeError:
            return None

    for sizes in size_order(dims, largest):  # pass 1: the smallest failing sizes
        shapes = shapes_at(sizes)
        if shapes is None:
            continue
        rng = np.random.default_rng(1)
        found = False
        for _ in range(PROBES):
            if budget[0] < 0:
                return None
            values = {n: rng.integers(-3, 4, size=sh).astype(object) for n, sh in shapes.items()}
            out = fails(sizes, values)
            if out is None:
                break
            if out[0]:
                found = True
                break
        if not found:
            continue
        if out[3] != "values differ":  # a failure of the sizes: the plainest entries (all ones) if they show it
            ones = {n: np.ones(sh, dtype=int).astype(object) for n, sh in shapes.items()}
            again = fails(sizes, ones)
            if again and again[0] and again[3] != "values differ":
                values, out = ones, again
            cex = Counterexample(instances.named_sizes(sizes), values, out[1], out[2], reason=out[3])
            return recheck(cex, lhs, rhs, sizes, sigma)
        rng = np.random.default_rng(0)  # pass 2: the smallest entries at these sizes
        for i, level in enumerate(levels):
            best = None
            for values in _draws(shapes, level, rng, first=(i == 0)):
                if budget[0] < 0:
                    return None
                out = fails(sizes, values)
                if out and out[0]:
                    if i > 0:
                        best = (values, out)
                        break
                    # every 0/1 pattern tried (or drawn): the one whose sides are smallest, then the sparsest
                    key = (_biggest(out[1], out[2]), sum(int(np.count_nonzero(np.asarray(v, dtype=float)))
                                                         for v in values.values() if np.ndim(v) > 0))
                    if best is None or key < best[2]:
                        best = ({k: (v.copy() if hasattr(v, "copy") else v) for k, v in values.items()}, out, key)
            if best is not None:
                values, out = best[0], best[1]
                cex = Counterexample(instances.named_sizes(sizes), values, out[1], out[2], reason=out[3])
                return recheck(cex, lhs, rhs, sizes, sigma)
        return None
    return None


def _biggest(*arrays):
    """The largest |entry| of exact arrays (numerator and denominator of a rational), for ordering."""
    from fractions import Fraction

    top = 0
    for a in arrays:
        for x in np.asarray(a, dtype=object).flat:
            try:
                q = Fraction(x)
                top = max(top, abs(q.numerator), q.denominator)
            except (TypeError, ValueError):
                return float("inf")
    return top


def small_instances(lhs, rhs, *, largest: dict | None = None, top: int = 2, max_entry: int = 3):
    """Instances of ``lhs = rhs`` in the order a reader wants them: sizes by total (each at most
    ``largest[d]`` or ``top``), then entries {0, 1} (every pattern when few), then −k..k; yields
    ``(sizes, values)`` for a caller that judges them with its own σ (:func:`symuat.claims.decoder`'s
    X4.uat with σ the logistic sigmoid, whose values are rational functions of e)."""
    from symuat.kernel.decide import instances

    shapes_sym = instances.leaf_shapes(lhs, rhs)
    for sizes in size_order(instances.dimension_symbols(lhs, rhs), largest, top):
        try:
            shapes = {name: instances.shape_at(shape, sizes) for name, shape in shapes_sym.items()}
        except TypeError:
            continue
        rng = np.random.default_rng(0)
        for i, level in enumerate(lv for lv in ENTRY_LEVELS if lv <= max_entry):
            yield from ((sizes, values) for values in _draws(shapes, level, rng, first=(i == 0)))


#: 0/1 patterns :func:`small_assignments` yields at most
SMALL_PATTERNS = 128


def small_assignments(symbols, active, limit: int = SMALL_PATTERNS):
    """0/1 values of scalar ``symbols``, fewest ones first, the ones placed on ``active`` (the
    symbols of a difference; the others 0): the witnesses a reader checks by hand, in the order
    :func:`minimal_counterexample` tries entries (:func:`symuat.kernel.decide.check_explicit`'s
    witness search starts here).

    >>> import sympy as sp
    >>> a, b = sp.symbols("a b")
    >>> [tuple(v.values()) for v in small_assignments([a, b], [a, b])]
    [(0, 0), (1, 0), (0, 1), (1, 1)]
    """
    tried = 0
    for k in range(len(active) + 1):
        for ones in itertools.combinations(active, k):
            if tried >= limit:
                return
            tried += 1
            yield {s: int(s in ones) for s in symbols}


def _sides(cex: Counterexample):
    return _biggest(cex.lhs, cex.rhs) if cex.lhs is not None and cex.rhs is not None else 0


def _weight(cex: Counterexample) -> tuple:
    def biggest(v):
        try:
            return max((abs(x) for x in np.asarray(v, dtype=object).flat), default=0)
        except TypeError:
            return 0

    return sum(cex.sizes.values()), max((biggest(v) for v in cex.values.values()), default=0)


def minimised(verdict: Verdict, lhs, rhs, *, sigma=None) -> Verdict:
    """``verdict`` with its exact counterexample replaced by a smaller one, when one exists
    (smaller: a smaller sum of sizes, or the same sizes and smaller entries)."""
    cex = verdict.counterexample
    if verdict.status is not Status.REFUTED or cex is None or not cex.exact_recheck.startswith(MINIMISABLE) \
            or verdict.hypotheses:
        return verdict
    from symuat.kernel.decide import instances

    largest = {d: cex.sizes.get(d.name, 4) for d in instances.dimension_symbols(lhs, rhs)}
    if _weight(cex) <= (len(largest), 1) and (cex.lhs is None or cex.rhs is None or _biggest(cex.lhs, cex.rhs) <= 10):
        return verdict  # every size 1, entries 0/1, small sides: nothing smaller exists
    better = minimal_counterexample(lhs, rhs, largest=largest, sigma=sigma)
    if better is not None and (_weight(better), _sides(better)) < (_weight(cex), _sides(cex)):
        better.reason += " (minimised: smallest sizes first, then smallest integer entries)"
        verdict.counterexample = better
    return verdict


