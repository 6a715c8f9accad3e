r"""Density certificates → Coq: "the generic density of ``E`` is ``P/Q``", for symbolic sizes.

:func:`symuat.kernel.decide.check_quantity` records a ``density`` certificate when it proves a
claimed density equal to :func:`~symuat.kernel.structure.generic_density` of an expression
``E``. That conclusion rests on the constraint pattern ``pat`` read off the normal form of
``E[I, J]`` (a product of Kronecker deltas ``delta a b`` and causal indicators
``(b <= a)%N%:R`` on free indices, shared by every term) and is exported as three theorems
(``coq/SymuatCount.v`` holds their tactics):

``…_support``
    for every value of the leaves, over any commutative ring: ``E I J = pat * E I J`` (an entry
    off the pattern is zero);
``…_witness``
    for positive sizes, ``0 < c`` and, at the all-ones leaves (each leaf hypothesised equal to
    ``1`` everywhere), ``E I J = pat * c%:R``: every entry in the pattern is a polynomial in the
    leaves' entries that is nonzero at one point, hence nonzero for generic leaves;
``…_count``
    ``(Σ_I Σ_J pat) * Q = P * (product of the ranges)`` with ``P/Q`` the claimed density in lowest
    terms: the pattern holds on exactly the claimed fraction of the entries.

Together: the generic support of ``E`` is the pattern, of density ``P/Q`` — what the procedure
concluded. An empty pattern (every entry generically nonzero, density 1) has no ``…_support``
theorem: it would state ``E I J = 1 * E I J``, a tautology.

Each proof is a generic tactic (``symuat_support``, ``symuat_ones_witness``/``symuat_pos``,
``symuat_count`` with the counting lemma ``tri_2``); the exporter supplies only the closed form
of the count (from the pattern's classes) that the count proof rewrites with.

>>> import sympy as sp
>>> from sympy import MatrixSymbol, Identity
>>> from symuat.expr.algebra import kron
>>> N, M = sp.symbols("N M", positive=True, integer=True)
>>> E = kron(MatrixSymbol("W", N, N), Identity(M))
>>> ths = export_density("d", {"expr": E, "claimed": 1 / M, "derived": 1 / M})
>>> print(ths[2].statement)
Theorem d_count (M N : nat) :
  (\sum_(i0 < N) \sum_(i1 < M) \sum_(j0 < N) \sum_(j1 < M) (delta i1 j1 : R)) * (M)%:R = (1)%:R * (N * M * N * M)%:R.
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, nat_expr, strip, term
from symuat.certify.export import Exported


def _poly_nat(e, what: str) -> str:
    """A polynomial with natural coefficients in the sizes, as a Coq ``nat`` expression."""
    e = sp.expand(sp.sympify(e))
    syms = sorted(e.free_symbols, key=str)
    if syms:
        poly = sp.Poly(e, *syms)
        if any(not (c.is_Integer and c >= 0) for c in poly.coeffs()):
            raise Unsupported(f"{what} {e} is not a polynomial with natural coefficients")
    elif not (e.is_Integer and e >= 0):
        raise Unsupported(f"{what} {e} is not a natural number")
    try:
        return _nat(sp.factor(e))
    except Unsupported:  # a factor with a negative coefficient: the expanded form
        return _nat(e)


def _nat(e) -> str:
    """``e`` (natural coefficients) as Coq ``nat`` text, parenthesised only around sums."""
    if e.is_Symbol or e.is_Integer:
        return nat_expr(e)
    if e.is_Add:
        return " + ".join(_nat(a) for a in sorted(e.args, key=lambda a: (a.is_number, sp.default_sort_key(a))))
    if e.is_Mul or (e.is_Pow and e.exp.is_Integer and e.exp > 0):
        factors = []
        for a in (e.args if e.is_Mul else [e]):
            base, n = (a.base, int(a.exp)) if a.is_Pow and a.exp.is_Integer and a.exp > 0 else (a, 1)
            text = _nat(base)
            factors += [f"({text})" if base.is_Add else text] * n
        return " * ".join(factors)
    return nat_expr(e)


def _tuple(names: list[str]) -> str:
    out = "tt"
    for n in reversed(names):
        out = f"({n}, {out})"
    return out


def _atom(f) -> str:
    kind, a, b = f[0], f[1], f[2]
    if kind == "D":
        return f"delta {a} {b}"
    if kind == "T":  # [a ≥ b]
        return f"({b} <= {a})%N%:R"
    raise Unsupported(f"constraint {kind} has no Coq form")


def _leaf_arity(typ: str) -> int:
    return typ.split(" mx R ")[0].count("->") if " -> " in typ else 0


def _generic_pattern(expr, derived):
    """The constraint pattern of ``expr``'s entry, whose generic density must be the recorded ``derived``."""
    from symuat.kernel.structure import NotAMonomial, density_pattern

    try:
        pat = density_pattern(expr)
    except NotAMonomial as exc:
        raise Unsupported(f"no shared constraint pattern to state: {exc}") from None
    if pat is None:
        raise Unsupported("the entry is zero (density 0): no pattern to state")
    if sp.cancel(pat.density - derived) != 0:
        raise Unsupported(f"the recorded formula {derived} is not the expression's generic density {pat.density}")
    return pat


def export_density(base: str, data: dict) -> list[Exported]:
    expr, claimed, derived = data["expr"], sp.sympify(data["claimed"]), sp.sympify(data["derived"])
    pat = _generic_pattern(expr, derived)
    if sp.cancel(claimed - derived) != 0:
        raise Unsupported(f"the claim {claimed} is not the derived density {derived}")
    if any(not (c.is_Integer and c > 0) for c in pat.coefficients):
        raise Unsupported("a term of the normal form has a coefficient that is not a positive integer: the "
                          "all-ones witness could vanish")
    return density_theorems(base, expr, claimed, pat)


def density_theorems(base: str, expr, claimed, pat) -> list[Exported]:
    """The theorems (three; two for an empty pattern) for "the generic density of ``expr`` is
    ``claimed``" with the pattern ``pat`` (a :class:`~symuat.kernel.structure.DensityPattern`), unchecked: :func:`export_density`
    checks them against symuat's derivation first; the tests feed wrong ones for Coq to reject."""
    claimed = sp.sympify(claimed)
    ctx = Ctx()
    E = term(expr, ctx)
    E = E if E.startswith("(") else f"({E})"
    rows = [n for n, _ in pat.rows]
    cols = [n for n, _ in pat.cols]
    binders_idx = " ".join(f"({n} : 'I_{ctx.dim(d)})" for n, d in pat.rows + pat.cols)
    taken = set(ctx.dims) | set(ctx.leaves) | {"R"}
    if taken & set(rows + cols):
        raise Unsupported(f"index names {sorted(taken & set(rows + cols))} clash with sizes or leaves")
    entry = f"{E} {_tuple(rows)} {_tuple(cols)}"
    atoms = [_atom(f) for f in pat.constraints]
    pattern = " * ".join(atoms) if atoms else "1"
    for v in (pat.witness, pat.count, pat.total, claimed):  # register every size (binders)
        for s in sp.sympify(v).free_symbols:
            ctx.dim(s)
    dims = sorted(ctx.dims)
    dim_binder = f"({' '.join(dims)} : nat)" if dims else ""
    leaf_binders = " ".join(f"({leaf} : {t})" for leaf, t in ctx.leaves.items())
    if ctx.funcs:
        raise Unsupported("elementwise functions have no generic zero pattern")
    if ctx.inverses:
        raise Unsupported("a coefficient 1/size in a density statement (its theorems bind no inverse)")

    support = Exported(
        f"{base}_support",
        f"Theorem {base}_support {dim_binder} {leaf_binders} :\n"
        f"  forall {binders_idx},\n  {entry} = {pattern} * {entry}.",
        "symuat_support.")

    c = _poly_nat(pat.witness, "the witness value")
    positive = " ".join(f"(H{d} : (0 < {d})%N)" for d in dims)
    ones = " -> ".join(
        f"(forall{''.join(f' k{n}' for n in range(_leaf_arity(t)))} I J, {leaf}{''.join(f' k{n}' for n in range(_leaf_arity(t)))} I J = 1)"
        for leaf, t in ctx.leaves.items())
    witness = Exported(
        f"{base}_witness",
        f"Theorem {base}_witness {dim_binder} {positive} :\n"
        f"  (0 < {c})%N /\\\n  forall {leaf_binders},\n  {ones} ->\n"
        f"  forall {binders_idx},\n  {entry} = {pattern} * ({c})%:R.",
        "split; [symuat_pos | symuat_ones_witness].")

    P, Q = sp.fraction(sp.cancel(claimed))
    Pn, Qn = _poly_nat(P, "the claim's numerator"), _poly_nat(Q, "the claim's denominator")
    Tn = " * ".join(ctx.dim(d) for _, d in pat.rows + pat.cols) or "1"
    sums = " ".join(f"\\sum_({n} < {ctx.dim(d)})" for n, d in pat.rows + pat.cols)
    count = f"(({sums} ({pattern} : R)))"
    statement = (f"Theorem {base}_count {dim_binder} :\n"
                 f"  {strip(count)} * ({Qn})%:R = ({Pn})%:R * ({Tn})%:R.")
    # the closed form of the count the proof rewrites with: the product of the ranges of the
    # classes the deltas tie together, times the causal count tri n of each causal pair
    paired = {r for a, b, _ in pat.pairs for r in (a, b)}
    C = sp.Integer(1)
    for root, _, size in pat.classes:
        if root not in paired:
            C *= size
    Cn = _poly_nat(C, "the count's factor")
    tris = [f"tri R {ctx.dim(n)}" for _, _, n in pat.pairs]
    closed = f"({Cn})%:R" + "".join(f" * {t}" for t in tris)
    close = "by symuat_natr; first [ reflexivity | symuat_ring1 ]"
    if tris:
        k = len(tris)
        Q2n = _poly_nat(sp.expand(Q / 2 ** k), f"the denominator / 2^{k} (one 2 per causal pair)")
        doubled = " * ".join(f"(2%:R * {t})" for t in tris)
        rest = (f"transitivity (({Cn})%:R * ({Q2n})%:R * ({doubled})); "
                f"[ {close} | rewrite !tri_2; idtac \"symuat-lemma tri_2\"; {close} ]")
    else:
        rest = close
    proof = f"rewrite (_ : {count} = {closed}); [ {rest} | by symuat_count ]."
    counted = Exported(f"{base}_count", statement, proof)
    # an empty pattern (every entry generically nonzero): the support would read ``E = 1 * E``,
    # true of every matrix and saying nothing; the witness and the count state the whole conclusion
    return [support, witness, counted] if atoms else [witness, counted]


def export_density_refutation(base: str, data: dict) -> list[Exported]:
    r"""A refuted density claim: "the generic density of ``expr`` is ``claimed``" (``complement``:
    the claim is the fraction of *zero* entries) fails, at symuat's counterexample ``sizes``.

    Four theorems: ``…_support`` and ``…_witness`` as for a proved density (the pattern ``pat``
    of ``expr`` is its generic support, for symbolic sizes), ``…_count`` (the pattern's count is
    the derived density: the correction), and ``…_refute`` over ``int``:
    ``~ (forall sizes, (Σ pat) * Q = P * T)`` for the claimed ``P/Q`` (complement:
    ``(T - Σ pat) * Q = P * T``), proved by computing the count at ``sizes``
    (:coq:`symuat_refute`). A claim the pattern's count meets at ``sizes`` leaves Coq a goal it
    cannot close (``tests/test_certify_density.py``). ``data`` (the ``density_refutation``
    certificate): ``expr``, ``claimed`` and ``derived`` (the quantity as the check states it: the
    zero fraction if ``complement``, default False), ``sizes`` (size name → value).

    >>> from sympy import MatrixSymbol, Symbol
    >>> from symuat.expr.linear import lift_left
    >>> N, M = (Symbol(s, positive=True, integer=True) for s in "NM")
    >>> E = lift_left(MatrixSymbol("W", N, N), M, "row")
    >>> t = export_density_refutation("z", {"expr": E, "claimed": sp.Rational(1, 3), "derived": 1 - 1 / M,
    ...                                     "sizes": {"N": 2, "M": 3}, "complement": True})
    >>> print(t[-1].statement)
    Theorem z_refute :
      ~ (forall (M N : nat), ((N * M * N * M)%:R - (\sum_(i0 < N) \sum_(i1 < M) \sum_(j0 < N) \sum_(j1 < M) (delta i1 j1 : int))) * (3)%:R = (1)%:R * (N * M * N * M)%:R).
    """
    expr, claimed, derived = data["expr"], sp.sympify(data["claimed"]), sp.sympify(data["derived"])
    complement, sizes = bool(data.get("complement")), dict(data["sizes"])
    if complement:  # a zero fraction: the density is its complement
        derived = sp.cancel(1 - derived)
    pat = _generic_pattern(expr, derived)
    at = {s: sizes[s.name] for s in sp.sympify(derived).free_symbols | claimed.free_symbols if s.name in sizes}
    claimed_density = (1 - claimed) if complement else claimed
    if sp.sympify(derived).subs(at) == claimed_density.subs(at):
        raise Unsupported(f"the claim {claimed} holds at the sizes {sizes}: nothing refuted there")
    if any(not (c.is_Integer and c > 0) for c in pat.coefficients):
        raise Unsupported("a term of the normal form has a coefficient that is not a positive integer: the "
                          "all-ones witness could vanish")
    proved = density_theorems(base, expr, derived, pat)
    ctx = Ctx()
    term(expr, ctx)
    for v in (pat.total, claimed):
        for s in sp.sympify(v).free_symbols:
            ctx.dim(s)
    missing = [s.name for s in ctx.dims.values() if s.name not in sizes]
    if missing:
        raise Unsupported(f"the counterexample gives no value for the size {missing[0]}")
    dims = sorted(ctx.dims)
    P, Q = sp.fraction(sp.cancel(claimed))
    Pn, Qn = _poly_nat(P, "the claim's numerator"), _poly_nat(Q, "the claim's denominator")
    Tn = " * ".join(ctx.dim(d) for _, d in pat.rows + pat.cols) or "1"
    sums = " ".join(f"\\sum_({n} < {ctx.dim(d)})" for n, d in pat.rows + pat.cols)
    pattern = " * ".join(_atom(f) for f in pat.constraints) or "1"
    count = f"({sums} ({pattern} : int))"
    counted = f"(({Tn})%:R - {count})" if complement else f"{count}"
    statement = (f"Theorem {base}_refute :\n  ~ (forall ({' '.join(dims)} : nat), "
                 f"{counted} * ({Qn})%:R = ({Pn})%:R * ({Tn})%:R).")
    args = " ".join(f"{int(sizes[ctx.dims[d].name])}%N" for d in dims)
    refute = Exported(f"{base}_refute", statement, f"move=> H; move: (H {args}); symuat_refute.")
    return proved + [refute]
