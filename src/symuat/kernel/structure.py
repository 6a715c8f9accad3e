r"""Structural zero patterns, derived from index-level normal forms.

For an expression whose generic entry normalises to terms ``c · Σ_bound Π E-factors`` times
constraints on the free indices (Kronecker deltas, causal indicators :math:`[a\ge b]`), all terms
sharing one constraint pattern, the entry is nonzero exactly where the constraints hold, for
generic parameters (the spec's hypothesis): a sum of products of distinct independent entries is
a nonzero polynomial, so it vanishes only on a null set. The number of index tuples satisfying the
deltas is the product, over the classes of indices the deltas tie together, of the class's
range, so the density is that count over the product of all ranges. This is exact for every
value of the dimensions; :func:`symuat.kernel.decide.check_quantity` also cross-checks it by
counting nonzeros of materialised instances.

>>> from sympy import MatrixSymbol, Identity, symbols
>>> from symuat.expr.algebra import kron
>>> N, M = symbols("N M", positive=True, integer=True)
>>> generic_density(kron(MatrixSymbol("W", N, N), Identity(M)))
1/M
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symuat.kernel.index_calculus import IndexContext, col_space, normal_form, row_space


class NotAMonomial(ValueError):
    """The entry is a sum; its zero pattern may depend on cancellations."""


@dataclass(frozen=True)
class DensityPattern:
    """What :func:`generic_density` reads off the normal form of ``expr[I, J]``.

    ``rows``/``cols``: the free indices ``(name, range)``; ``constraints``: the shared pattern
    (``("D", a, b)`` a Kronecker delta :math:`\\delta_{ab}`, ``("T", a, b)`` the causal indicator
    :math:`[a\\ge b]`); ``classes``: the free indices the deltas tie together, with their range;
    ``pairs``: the causal pairs of classes (``(a, b, n)``, counted :math:`n(n+1)/2`);
    ``witness``: the entry inside the pattern when every leaf is all ones
    (:math:`\\sum_{\\text{terms}} c\\prod_{\\text{summed}}\\text{range}`), ``coefficients`` the
    terms' coefficients; ``count``/``total``: the pattern's size and the number of entries.
    """

    rows: tuple
    cols: tuple
    constraints: tuple
    classes: tuple
    pairs: tuple
    witness: sp.Expr
    coefficients: tuple
    count: sp.Expr
    total: sp.Expr

    @property
    def density(self) -> sp.Expr:
        return sp.factor(sp.cancel(self.count / self.total)) if self.total != 0 else sp.Integer(0)


def generic_density(expr) -> sp.Expr:
    """Fraction of nonzero entries of ``expr`` for generic (all-nonzero) matrix symbols."""
    pattern = density_pattern(expr)
    if pattern is None:
        return sp.Integer(0)
    return pattern.density


def density_pattern(expr) -> DensityPattern | None:
    """The constraint pattern of ``expr``'s generic entry and its count (``None``: the entry is
    0); :class:`NotAMonomial` when the terms do not share one pattern this counter handles."""
    ctx = IndexContext()
    I = ctx.fresh_multi(row_space(expr), "i")
    J = ctx.fresh_multi(col_space(expr), "j")
    form = normal_form(ctx.entry(expr, I, J), ctx.dims)
    if not form.key:
        return None
    # every term is generically nonzero exactly where its constraints on free indices hold
    # (a sum over bound indices of products of distinct generic entries is a nonzero
    # polynomial); the support of the sum is the union, computed here when all terms share one
    # constraint pattern
    patterns = {tuple(sorted(f for f in factors if f[0] in ("D", "T"))) for _, factors, _ in form.key}
    if len(patterns) != 1:
        raise NotAMonomial(f"the terms of {expr} have different zero patterns")
    for coeff, factors, bound in form.key:
        for f in factors:
            if f[0] in ("F", "S", "B"):
                raise NotAMonomial(f"factor {f[0]} has no generic zero pattern here")
            if f[0] in ("D", "T") and (f[1] in bound_names(bound) or f[2] in bound_names(bound)):
                raise NotAMonomial("a constraint on a summed index")
    constraints = patterns.pop()
    free = list(I) + list(J)
    parent = {v: v for v in free}

    def find(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for f in constraints:
        if f[0] == "D":
            a, b = find(f[1]), find(f[2])
            if a != b:
                parent[a] = b
    classes: dict = {}
    for v in free:
        classes.setdefault(find(v), []).append(v)
    size = {}
    for root, members in classes.items():
        dims = {sp.sympify(ctx.dims[v]) for v in members}
        if len(dims) != 1:
            raise NotAMonomial(f"delta between indices of different ranges {dims}")
        size[root] = dims.pop()
    count = sp.Integer(1)
    paired: set = set()
    pairs = []
    for f in constraints:
        if f[0] != "T":
            continue
        a, b = find(f[1]), find(f[2])
        if a == b or a in paired or b in paired or size[a] != size[b]:
            raise NotAMonomial("a mask constraint this counter does not handle")
        paired |= {a, b}
        pairs.append((a, b, size[a]))
        count *= size[a] * (size[a] + 1) / 2  # pairs (a, b) with a >= b
    for root in classes:
        if root not in paired:
            count *= size[root]
    total = sp.Integer(1)
    for v in free:
        total *= ctx.dims[v]
    witness = sp.Integer(0)
    for coeff, factors, bound in form.key:
        term = sp.sympify(coeff)
        for _, rng in bound:
            term *= sp.sympify(rng)
        witness += term
    return DensityPattern(
        rows=tuple((v, sp.sympify(ctx.dims[v])) for v in I),
        cols=tuple((v, sp.sympify(ctx.dims[v])) for v in J),
        constraints=tuple(constraints),
        classes=tuple((root, tuple(members), size[root]) for root, members in classes.items()),
        pairs=tuple(pairs),
        witness=sp.expand(witness),
        coefficients=tuple(sp.sympify(c) for c, _, _ in form.key),
        count=count, total=total)


def bound_names(bound) -> set:
    return {b for b, _ in bound}


def generic_support(expr, sizes: dict, draws: int = 2):
    """The nonzero pattern of ``expr`` at explicit sizes for generic parameters.

    Materialises ``expr`` exactly with random nonzero integers (``draws`` independent draws, the
    union of their supports): a structural zero is zero in every draw; a generic nonzero entry
    vanishes only on a null set. ``sizes`` maps dimension names to integers.
    """
    import numpy as np

    from symuat.kernel.decide import dimension_symbols, leaf_shapes
    from symuat.kernel.evaluate import Evaluator

    env = {s: sizes[s.name] for s in dimension_symbols(expr) if s.name in sizes}
    support = None
    for seed in range(draws):
        rng = np.random.default_rng(seed)
        values = {}
        for name, shape in leaf_shapes(expr).items():
            shp = tuple(int(sp.sympify(x).subs(env)) for x in shape)
            values[name] = (rng.integers(1, 10**6, size=shp) * rng.choice([-1, 1], size=shp)).astype(object)
        dense = Evaluator(env, values, "exact")(expr)
        nz = np.vectorize(lambda v: v != 0, otypes=[bool])(dense)
        support = nz if support is None else support | nz
    return support
