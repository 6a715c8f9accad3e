r"""A printed sum with an ellipsis, ``t_1 + t_2 + ⋯ + t_m``, against a definition, for symbolic ``m``.

A paper prints an entry as a few explicit terms and an ellipsis. Its content, for every size, is:
(1) the explicit terms are the general term :math:`f(k)` at their positions (checked symbolically:
``t − f(k)`` expands to 0 with the sizes symbolic), (2) the positions are distinct and in range for
every admitted size (decided by SymPy on the symbolic positions), so the printed row is
:math:`\sum_{k=lo}^{hi}f(k)` with the ellipsis as the remaining terms of the pattern, and (3) that
sum is the definition's entry — an identity of matrix expressions decided by the index calculus
(:func:`~symuat.kernel.decide.check_identity`), passed in as ``definition``.

``proved`` needs all three; a printed term that is not the general term at its position is
``refuted`` by the explicit expansion at the listed sizes (exact, with a counterexample), through
``refute`` (a :func:`~symuat.kernel.decide.check_explicit` of the printed row); an undecided step
leaves ``proved-at-sizes`` from that expansion.

>>> import sympy as sp
>>> k, m = sp.symbols("k m", integer=True, positive=True)
>>> w = sp.IndexedBase("w")
>>> f = sp.Lambda(k, w[k, 2])
>>> check_printed_terms([(1, w[1, 2]), (2, w[2, 2]), (m, w[m, 2])], f, (1, m), {m: 3}).status.value
'proved'
>>> check_printed_terms([(1, w[1, 1]), (2, w[3, 1]), (m, w[m, 1])], sp.Lambda(k, w[k, 1]), (1, m), {m: 3}).status.value
'refuted'
"""

from __future__ import annotations

import sympy as sp

from symuat.kernel import certificates
from symuat.kernel.status import Status, Verdict


def check_printed_terms(explicit, general, k_range, least: dict) -> Verdict:
    """Are the printed explicit terms ``[(position, term), …]`` the general term ``general(position)``, at
    distinct positions inside ``k_range`` for every size ≥ ``least`` (e.g. ``{m: 3}``: a row printed with
    three explicit terms needs m ≥ 3)? ``refuted`` (no counterexample here: the caller's explicit
    expansion gives it) when a term differs from the general term as a polynomial; ``proved`` otherwise."""
    shift = {s: s + v - 1 for s, v in least.items()}  # sizes ≥ least: s = (least − 1) + s', s' ≥ 1
    lo, hi = (sp.sympify(b).subs(shift) for b in k_range)
    positions = []
    for pos, term in explicit:
        want = general(pos)
        if sp.expand(sp.sympify(term) - want) != 0:
            return Verdict(Status.REFUTED, f"the printed term {term} is not the general term {want} at k = {pos}")
        positions.append(sp.sympify(pos).subs(shift))
    for a in positions:
        if not (sp.simplify(a - lo).is_nonnegative and sp.simplify(hi - a).is_nonnegative):
            return Verdict(Status.NUMERIC_ONLY, f"position {a} not provably in [{lo}, {hi}]")
    for i, a in enumerate(positions):
        for b in positions[i + 1:]:
            d = sp.simplify(a - b)
            if not (d.is_positive or d.is_negative):
                return Verdict(Status.NUMERIC_ONLY, f"positions {a} and {b} not provably distinct")
    return Verdict(Status.PROVED, "every printed term is the general term "
                   f"{general.expr} at its position, the positions distinct and in range for every size "
                   + ", ".join(f"{s} ≥ {v}" for s, v in least.items()))


def printed_row(explicit, general, k_range, sizes: dict):
    """The printed row at explicit sizes: the explicit terms at their positions, the ellipsis as the general
    term at every other position of the range."""
    lo, hi = (int(sp.sympify(b).subs(sizes)) for b in k_range)
    at = {int(sp.sympify(p).subs(sizes)): sp.sympify(t).subs(sizes) for p, t in explicit}
    return sum((at[k] if k in at else general(k).subs(sizes)) for k in range(lo, hi + 1))


def check_printed_sum(explicit, general, k_range, least: dict, *, definition: Verdict, entry, sizes_list,
                      certificate: dict | None = None) -> Verdict:
    """The printed row is the definition's entry for every size ≥ ``least``: the terms
    (:func:`check_printed_terms`) and the general term summed (``definition``, a verdict of the index
    calculus). ``entry(sizes)`` is the definition's entry at explicit sizes (symbolic entries): the printed
    row (:func:`printed_row`) is expanded against it at ``sizes_list`` — the counterexample when a term is
    wrong, the fallback (``proved-at-sizes``) when a step is undecided.

    ``certificate`` (the caller's description of the entry, e.g. ``{"entry": W ⋄ x, "row": 2,
    "bases": {"w": W, "x": x}, "before": 2}``: the matrix expression, the 1-based row, which matrix
    each indexed base names, how many explicit terms are printed before the ellipsis) is recorded
    with the terms on a ``proved`` (kind ``"printed_sum"``, :mod:`symuat.certify.printed`)."""
    import numpy as np

    from symuat.kernel.decide.identity import check_explicit

    def plain(e):  # w[1, 2] as one symbol "w[1,2]" (a counterexample names entries, not the base w)
        return sp.sympify(e).replace(lambda a: isinstance(a, sp.Indexed),
                                     lambda a: sp.Symbol(f"{a.base}[{','.join(map(str, a.indices))}]"))

    def build(sizes):
        return (np.array([[plain(printed_row(explicit, general, k_range, sizes))]], dtype=object),
                np.array([[plain(entry(sizes))]], dtype=object))

    terms = check_printed_terms(explicit, general, k_range, least)
    if terms.status is Status.PROVED and definition.status is Status.PROVED:
        if certificate is not None:
            certificates.record("printed_sum", explicit=list(explicit), general=general, k_range=tuple(k_range),
                                least=dict(least), **certificate)
        return Verdict(Status.PROVED, f"{terms.method}; the sum of the general term is the definition's entry "
                       f"({definition.method})")
    out = check_explicit(build, sizes_list)
    if terms.status is Status.REFUTED and out.status is not Status.REFUTED:  # the kernel's two methods disagree
        from symuat.errors import KernelInconsistencyError

        raise KernelInconsistencyError(f"{terms.method}, but the explicit expansion gives {out.status}")
    return out
