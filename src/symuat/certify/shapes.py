r"""Shapes → Coq: refutations by shape, and the shape a refuted shape claim should have stated.

* Two sides of different index spaces (``shapes differ``, P5.pre: n×1 against n×n): ``lhs = rhs``
  is no Coq statement; :func:`export_shape_refutation` says the flattened shapes (the products of
  the index spaces) are not equal for all sizes, proved by computing them where they differ.
* A claimed shape (D4: ``W ⋄ x ∈ ℝ^(m,1)``; :func:`~symuat.kernel.decide.identity.check_shape`
  records a :data:`SHAPE_CLAIM`): :func:`export_shape_claim_refutation` states ``~ (forall sizes,
  (Π rows, Π columns) = claimed)``; its correction, :func:`export_shape_correction`, the shape
  the expression has, as its type.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> n = sp.Symbol("n", positive=True, integer=True)
>>> A, v = MatrixSymbol("A", n, n), MatrixSymbol("v", n, 1)
>>> print(export_shape_refutation("s", {"lhs": A * v, "rhs": v.T * A, "sizes": {"n": 2}})[0].statement)
Theorem s :
  ~ (forall (n : nat), (foldr muln 1%N [:: n], foldr muln 1%N [::]) = (foldr muln 1%N [::], foldr muln 1%N [:: n])).
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, strip, term
from symuat.certify.export import Exported
from symuat.kernel.index_calculus import col_space, row_space


def flat_size(space, sizes: dict):
    """The product of the index space ``space`` at ``sizes`` (size name → value; a size without a
    value stays a symbol)."""
    out = sp.Integer(1)
    for d in space:
        out *= sp.sympify(d)
    return out.subs({s: sizes.get(s.name, s) for s in out.free_symbols})


def _flat_shape(expr, sizes: dict) -> tuple[int, int]:
    return flat_size(row_space(expr), sizes), flat_size(col_space(expr), sizes)


def refuted_at_sizes(name: str, ctx: Ctx, body: str, sizes: dict, comment: str = "") -> Exported:
    """``~ (forall sizes, body)`` — ``body`` a statement about the sizes ``ctx`` declared — proved at
    the counterexample's ``sizes`` by computation (``vm_compute; by case``: a ``body`` true there
    leaves a goal Coq cannot close). ``comment`` (Coq text) goes before the negation."""
    if not ctx.dims:
        raise Unsupported("the shapes involve no size: nothing to instantiate")
    missing = [s.name for s in ctx.dims.values() if s.name not in sizes]
    if missing:
        raise Unsupported(f"the counterexample gives no value for the size {missing[0]}")
    binders = "(" + " ".join(sorted(ctx.dims)) + " : nat)"
    note = f"(* {comment} *)\n  " if comment else ""
    statement = f"Theorem {name} :\n  {note}~ (forall {binders}, {body})."
    args = " ".join(f"{int(sizes[ctx.dims[d].name])}%N" for d in sorted(ctx.dims))
    return Exported(name, statement, f"move=> H; move: (H {args}); vm_compute; by case.")


def _differing_sizes(lhs, rhs, sizes: dict) -> dict:
    """The counterexample's sizes if the sides' flattened shapes differ there, else the first of
    every size 2, every size 3 where they do (:class:`Unsupported` if neither)."""
    from symuat.kernel.decide.instances import dimension_symbols

    names = [d.name for d in dimension_symbols(lhs, rhs)]
    for cand in (dict(sizes), {n: 2 for n in names}, {n: 3 for n in names}):
        if _flat_shape(lhs, cand) != _flat_shape(rhs, cand):
            return cand
    raise Unsupported("the sides' index spaces differ, but not their shapes at the sizes tried")


def export_shape_refutation(name: str, data: dict) -> list[Exported]:
    """``~ (forall sizes, shape lhs = shape rhs)``: the flattened shapes (rows, columns) — the
    products of the index spaces — of the two sides, proved unequal at the counterexample's sizes."""
    lhs, rhs, sizes = data["lhs"], data["rhs"], data["sizes"]
    ctx = Ctx()
    shape = [f"foldr muln 1%N {ctx.space(s)}" for s in (row_space(lhs), col_space(lhs), row_space(rhs), col_space(rhs))]
    return [refuted_at_sizes(name, ctx, f"({shape[0]}, {shape[1]}) = ({shape[2]}, {shape[3]})", sizes)]


#: the certificate of a refuted shape claim (:func:`~symuat.kernel.decide.identity.check_shape`:
#: the expression, the claimed shape, the sizes where they differ)
SHAPE_CLAIM = "shape_claim"


def _nat(e, ctx: Ctx) -> str:
    """A size expression (sizes, natural numbers, sums and products of them) as a ``nat`` term."""
    e = sp.sympify(e)
    if e.is_Integer and e >= 0:
        return f"{int(e)}%N"
    if e.is_Symbol:
        return ctx.dim(e)
    if isinstance(e, (sp.Add, sp.Mul)) and all(not (a.is_Number and a < 0) for a in e.args):
        op = " + " if isinstance(e, sp.Add) else " * "
        return "(" + op.join(_nat(a, ctx) for a in e.args) + ")%N"
    raise Unsupported(f"the size {e} is not a sum or product of sizes and natural numbers")


def export_shape_claim_refutation(name: str, data: dict) -> list[Exported]:
    """"``expr`` has shape ``claimed``" refuted: ``~ (forall sizes, (Π rows, Π columns) of expr =
    claimed)`` (the products of its index spaces, as for a shape refutation), proved at the sizes
    where they differ by computation."""
    expr, claimed, sizes = data["expr"], data["claimed"], data["sizes"]
    ctx = Ctx()
    spaces = [ctx.space(row_space(expr)), ctx.space(col_space(expr))]
    want = [_nat(c, ctx) for c in claimed]
    body = f"(foldr muln 1%N {spaces[0]}, foldr muln 1%N {spaces[1]}) = ({want[0]}, {want[1]})"
    return [refuted_at_sizes(name, ctx, body, sizes)]


def export_shape_correction(name: str, data: dict) -> list[Exported]:
    """The correction of a refuted shape claim: the expression has the shape its index spaces
    give, for all sizes — stated as its type (``(lhs : mx R rows cols) = lhs``, which typechecks
    only at that shape), proved by ``reflexivity``."""
    from symuat.certify.export import binders_of

    expr = data["expr"]
    ctx = Ctx()
    text = term(expr, ctx)
    rows, cols = ctx.space(row_space(expr)), ctx.space(col_space(expr))
    statement = (f"Theorem {name} {' '.join(binders_of(ctx))} :\n  ({strip(text)} : mx R {rows} {cols}) = {strip(text)}.")
    return [Exported(name, statement, "reflexivity.")]


def typed_instance(lhs, rhs, sizes: dict) -> tuple[dict, str] | None:
    """Where ``lhs = rhs`` is a statement, at a counterexample (``sizes``) at which it is typed but
    which is not for independent symbolic sizes: the fewest sizes to identify with another of the
    same value there, or to fix at their value, for both sides to be typed with the same index
    spaces — ``(substitution, description)``, tried one change first (identifications before
    fixed values), then two, …; None if even every size fixed does not type it.

    >>> import sympy as sp
    >>> from sympy import MatrixSymbol
    >>> n, m = (sp.Symbol(s, positive=True, integer=True) for s in "nm")
    >>> A, v = MatrixSymbol("A", n, m), MatrixSymbol("v", n, 1)
    >>> typed_instance(A.T * v, A * v, {"n": 2, "m": 2})[1]
    'n identified with m (equal at the counterexample)'
    """
    import itertools

    from symuat.kernel.decide.instances import dimension_symbols
    from symuat.kernel.index_calculus import _compare_entries

    syms = sorted(dimension_symbols(lhs, rhs), key=lambda s: s.name)
    if any(s.name not in sizes for s in syms):
        return None
    value = {s: int(sizes[s.name]) for s in syms}
    moves = [(b, a, f"{b.name} identified with {a.name}") for a, b in itertools.combinations(syms, 2)
             if value[a] == value[b]]
    moves += [(s, sp.Integer(value[s]), f"{s.name} = {value[s]}") for s in syms]

    def typed(sub: dict) -> bool:
        try:
            left, right = lhs.subs(sub), rhs.subs(sub)
            if (_compare_entries(left, right).reason or "").startswith("ill-typed"):
                return False
            return (row_space(left), col_space(left)) == (row_space(right), col_space(right))
        except Exception:  # a substitution SymPy cannot build is not a typed instance
            return False

    for k in range(1, len(syms) + 1):
        for chosen in itertools.combinations(moves, k):
            targets = [m[0] for m in chosen]
            if len(set(targets)) != k:
                continue
            sub = {b: a for b, a, _ in chosen}
            # an identification onto a size that is itself replaced: resolve it
            sub = {b: (a.subs(sub) if isinstance(a, sp.Basic) else a) for b, a in sub.items()}
            if typed(sub):
                identified = [t for b, a, t in chosen if not a.is_Integer]
                fixed = [t for b, a, t in chosen if a.is_Integer]
                parts = [", ".join(identified) + " (equal at the counterexample)"] if identified else []
                parts += [", ".join(fixed) + " (the counterexample's value" + ("s)" if len(fixed) > 1 else ")")] if fixed else []
                return sub, "; ".join(parts)
    return None
