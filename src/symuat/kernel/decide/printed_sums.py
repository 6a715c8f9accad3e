r"""A printed sum with an ellipsis, ``t_1 + t_2 + ⋯ + t_m``, against a definition, for symbolic ``m``.

A paper prints an entry as a few explicit terms and an ellipsis. Its content, for every size, is:
(1) the explicit terms are the general term :math:`f(k)` at their positions (:func:`term_equality`:
proved when valid rewrites — ``binomial``, factorials and gamma quotients expanded — reduce
``t − f(k)`` to 0 with the sizes symbolic; refuted when, at a size, the two differ exactly, the
comparison decided by :func:`~symuat.kernel.constants.polynomial_is_zero`; otherwise undecided, never
refuted), (2) the positions are distinct and in range for every admitted size (decided by SymPy on
the symbolic positions; a position outside the range at every size is refuted: the printed row then
has a term the sum does not), so the printed row is :math:`\sum_{k=lo}^{hi}f(k)` with the ellipsis as
the remaining terms of the pattern, and (3) that sum is the definition's entry — an identity of
matrix expressions decided by the index calculus (:func:`~symuat.kernel.decide.check_identity`),
passed in as ``definition``.

``proved`` needs all three. Otherwise the printed row — *every* printed term, one outside the range
included (:func:`printed_row`) — is expanded against the definition's entry at the listed sizes
(:func:`~symuat.kernel.decide.check_explicit`): a ``refuted`` always carries its exact
counterexample (a term that differs only at a size not listed is expanded at that size too); an
undecided step leaves ``proved-at-sizes`` from that expansion; a refuted step the expansion does
not confirm is a :class:`~symuat.errors.KernelInconsistencyError`.

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


#: how many sizes past ``least`` a printed term is compared at when SymPy cannot rewrite it to the
#: general term (each comparison exact, by :func:`~symuat.kernel.constants.polynomial_is_zero`)
TERM_SIZES = 6


def _canonical(e):
    """``e`` rewritten by valid identities only (``binomial``/``factorial`` expanded into products and
    gamma quotients simplified, then expanded), inside the indices of indexed entries too: ``m(m−1)/2``
    and ``binomial(m, 2)``, ``m!/(m−1)!`` and ``m`` meet here."""
    def canon(x):
        return sp.expand(sp.gammasimp(sp.expand_func(sp.combsimp(x))))

    e = sp.sympify(e)
    e = e.replace(lambda a: isinstance(a, sp.Indexed),
                  lambda a: a.base[tuple(canon(i) for i in a.indices)])
    return canon(e)


def _plain(e):
    """``w[1, 2]`` as one symbol ``"w[1,2]"``: a term at explicit sizes is a polynomial in named entries.
    Each index is evaluated first (``Σ_{j≤3} 1`` is entry 3, ``3!/2!`` too): an index without symbols
    that does not evaluate to an integer is a :class:`~symuat.errors.KernelInputError`, never a name of
    its own (two names for one entry would be a false counterexample)."""
    def index(i):
        i = sp.sympify(i)
        if i.free_symbols:
            return i
        value = sp.simplify(i.doit())
        if not value.is_Integer:
            from symuat.errors import KernelInputError

            raise KernelInputError(f"the index {i} of a printed term does not evaluate to an integer")
        return value

    def name(a):
        return sp.Symbol(f"{a.base}[{','.join(str(index(i)) for i in a.indices)}]")

    return sp.sympify(e).replace(lambda a: isinstance(a, sp.Indexed), name)


def term_equality(term, want, least: dict) -> tuple[bool | None, dict | None, str]:
    """Is the printed ``term`` the general term ``want`` for every size ≥ ``least``? ``(True, None, how)``:
    SymPy rewrites the difference to 0 (:func:`_canonical`); ``(False, sizes, how)``: at ``sizes`` the
    two differ, decided exactly (the difference, entries named, is a nonzero polynomial — its
    coefficients decided by :func:`~symuat.kernel.constants.polynomial_is_zero`); ``(None, None, how)``:
    neither (equal at every size tried, not rewritten): never a refutation."""
    from symuat.errors import KernelInputError
    from symuat.kernel.constants import collect_undecided, polynomial_is_zero

    if _canonical(sp.sympify(term) - want) == 0:
        return True, None, "rewritten to the general term"
    for j in range(TERM_SIZES):
        sizes = {s: int(v) + j for s, v in least.items()}
        with collect_undecided() as undecided:
            try:
                d = _plain(sp.sympify(term).subs(sizes)) - _plain(sp.sympify(want).subs(sizes))
                same = polynomial_is_zero(d)
            except KernelInputError:
                raise
            except (TypeError, ValueError) as exc:  # an index with no value at these sizes
                raise KernelInputError(f"printed term {term}: no value at {sizes} ({exc})") from exc
        if not same:
            return False, sizes, f"differs from the general term {want} at {sizes} (exact)"
        if undecided:
            return None, None, f"undecided at {sizes}: " + "; ".join(undecided)
    tried = ", ".join(f"{s} = {v}…{v + TERM_SIZES - 1}" for s, v in least.items())
    return None, None, (f"not rewritten to the general term {want}, equal to it at every size tried "
                        f"({tried}): not decided for every size")


def check_printed_terms(explicit, general, k_range, least: dict) -> Verdict:
    """Are the printed explicit terms ``[(position, term), …]`` the general term ``general(position)``, at
    distinct positions inside ``k_range`` for every size ≥ ``least`` (e.g. ``{m: 3}``: a row printed with
    three explicit terms needs m ≥ 3)?

    ``refuted`` when a term differs from the general term at a size (exact; the size in ``sizes``) or a
    position lies outside the range at every admitted size (then the printed row has a term the sum
    does not: the caller's explicit expansion gives the counterexample); ``numeric-only`` when a step is
    not decided for every size (a term equal at every size tried but not rewritten, a position not
    provably in range or distinct); ``proved`` otherwise."""
    shift = {s: s + v - 1 for s, v in least.items()}  # sizes ≥ least: s = (least − 1) + s', s' ≥ 1
    lo, hi = (sp.sympify(b).subs(shift) for b in k_range)
    positions = []
    open_steps = []
    for pos, term in explicit:
        want = general(pos)
        equal, sizes, how = term_equality(term, want, least)
        if equal is False:
            return Verdict(Status.REFUTED, f"the printed term {term} is not the general term {want} at "
                           f"k = {pos}: it {how}", sizes=[{str(s): v for s, v in sizes.items()}])
        if equal is None:
            open_steps.append(f"the printed term {term} at k = {pos}: {how}")
        positions.append(sp.sympify(pos).subs(shift))
    for a, (pos, term) in zip(positions, explicit):
        below, above = sp.simplify(a - lo), sp.simplify(hi - a)
        if below.is_negative or above.is_negative:
            where = "below" if below.is_negative else "above"
            return Verdict(Status.REFUTED, f"the printed term {term} at k = {pos} lies {where} the summation "
                           f"range [{k_range[0]}, {k_range[1]}] at every size "
                           + ", ".join(f"{s} ≥ {v}" for s, v in least.items())
                           + ": the printed row has a term the sum does not")
        if not (below.is_nonnegative and above.is_nonnegative):
            open_steps.append(f"position {pos} not provably in [{k_range[0]}, {k_range[1]}]")
    for i, a in enumerate(positions):
        for b in positions[i + 1:]:
            d = sp.simplify(a - b)
            if not (d.is_positive or d.is_negative):
                open_steps.append(f"positions {a} and {b} not provably distinct")
    if open_steps:
        return Verdict(Status.NUMERIC_ONLY, "; ".join(open_steps))
    return Verdict(Status.PROVED, "every printed term is the general term "
                   f"{general.expr} at its position, the positions distinct and in range for every size "
                   + ", ".join(f"{s} ≥ {v}" for s, v in least.items()))


def printed_row(explicit, general, k_range, sizes: dict):
    """The printed row at explicit sizes: every explicit term (one at a position outside the range is
    still printed, so still summed), and the ellipsis as the general term at every position of the range
    that no explicit term occupies."""
    lo, hi = (int(sp.sympify(b).subs(sizes).doit()) for b in k_range)
    at = [(int(sp.sympify(p).subs(sizes).doit()), sp.sympify(t).subs(sizes)) for p, t in explicit]
    taken = {p for p, _ in at}
    return sum(t for _, t in at) + sum(general(k).subs(sizes) for k in range(lo, hi + 1) if k not in taken)


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

    plain = _plain  # a counterexample names entries, not the base w

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
    if terms.status is Status.REFUTED and out.status is not Status.REFUTED and terms.sizes:
        # the term differs at a size the caller did not list: the expansion there gives the witness
        at = [{s: terms.sizes[0][str(s)] for s in least}]
        extra = {s: v for s, v in (sizes_list[0] if sizes_list else {}).items() if s not in least}
        out = check_explicit(build, [dict(extra, **at[0])])
    if terms.status is Status.REFUTED and out.status is not Status.REFUTED:  # the kernel's two methods disagree
        from symuat.errors import KernelInconsistencyError

        raise KernelInconsistencyError(f"{terms.method}, but the explicit expansion gives {out.status}")
    if out.status is Status.PROVED_AT_SIZES and terms.status is Status.NUMERIC_ONLY:
        out.method += f"; for every size not decided: {terms.method}"
    return out
