r"""Structural zero patterns, derived from index-level normal forms.

For an expression whose generic entry normalises to a *single monomial* with no summation —
``c · Π E-factors · Π deltas`` — the entry is nonzero exactly when every delta is satisfied,
provided every matrix-symbol entry is nonzero (the "generic parameters" hypothesis of the spec)
and ``c ≠ 0``: a product of nonzero reals is nonzero. The number of index tuples satisfying the
deltas is the product, over the classes of indices the deltas tie together, of the class's
range, so the density is that count over the product of all ranges. This is exact for every
value of the dimensions; :func:`symuat.kernel.decide.check_quantity` also cross-checks it by
counting nonzeros of materialised instances.

>>> from sympy import MatrixSymbol, Identity, symbols
>>> from symuat.algebra import kron
>>> N, M = symbols("N M", positive=True, integer=True)
>>> generic_density(kron(MatrixSymbol("W", N, N), Identity(M)))
1/M
"""

from __future__ import annotations

import sympy as sp

from symuat.kernel.index_calculus import IndexContext, col_space, normal_form, row_space


class NotAMonomial(ValueError):
    """The entry is a sum; its zero pattern may depend on cancellations."""


def generic_density(expr) -> sp.Expr:
    """Fraction of nonzero entries of ``expr`` for generic (all-nonzero) matrix symbols."""
    ctx = IndexContext()
    I = ctx.fresh_multi(row_space(expr), "i")
    J = ctx.fresh_multi(col_space(expr), "j")
    form = normal_form(ctx.entry(expr, I, J), ctx.dims)
    if len(form.key) != 1:
        raise NotAMonomial(f"the entry of {expr} has {len(form.key)} terms")
    coeff, factors, bound = form.key[0]
    if bound:
        raise NotAMonomial(f"the entry of {expr} is a sum over {bound}")
    free = list(I) + list(J)
    parent = {v: v for v in free}

    def find(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for f in factors:
        if f[0] == "D":
            a, b = find(f[1]), find(f[2])
            if a != b:
                parent[a] = b
            continue
        if f[0] != "E":
            raise NotAMonomial(f"factor {f[0]} has no generic zero pattern")
    classes: dict = {}
    for v in free:
        classes.setdefault(find(v), []).append(v)
    count = sp.Integer(1)
    for members in classes.values():
        dims = {sp.sympify(ctx.dims[v]) for v in members}
        if len(dims) != 1:
            raise NotAMonomial(f"delta between indices of different ranges {dims}")
        count *= dims.pop()
    total = sp.Integer(1)
    for v in free:
        total *= ctx.dims[v]
    return sp.cancel(count / total)
