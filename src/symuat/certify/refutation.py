r"""Refutations → Coq: a refuted identity stated as ``~ (forall …, lhs = rhs)``, proved at symuat's
counterexample.

A check that :func:`~symuat.kernel.decide.check_identity` refutes carries an exact counterexample
(sizes, integer matrices, the exact values of both sides). The identity it refutes is the pair
the normal form compared unequal while the check ran (captured by
:func:`symuat.certify.run.capture`); :func:`refutation_data` picks the pair whose exact
evaluation at the counterexample is the recorded one (so the theorem states the statement the
counterexample refutes, never another comparison the check made), and :func:`export_refutation`
states what symuat concluded:

* the sides differ in value (``values differ``): the witness theorem of
  :mod:`symuat.certify.witness` — ``~ (forall sizes matrices, lhs =m rhs)`` over ℤ, proved by
  instantiating the counterexample and computing one entry where the sides differ;
* the sides differ in shape (``shapes differ``): the statement has no instance at the
  counterexample's sizes; the theorem says the flattened shapes of the two sides (the products
  of their index spaces) are not equal for all sizes, proved by computing them at those sizes.

A "counterexample" at which the sides agree leaves Coq a goal it cannot close: the theorem is
rejected (``tests/test_certify_refutation.py``). A refutation this module does not state (a side
undefined at the counterexample, a count, an explicit expansion of scalar entries) raises
:class:`~symuat.certify.coq_terms.Unsupported` with the reason.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> n = sp.Symbol("n", positive=True, integer=True)
>>> A, v = MatrixSymbol("A", n, n), MatrixSymbol("v", n, 1)
>>> print(export_shape_refutation("s", {"lhs": A * v, "rhs": v.T * A, "sizes": {"n": 2}})[0].statement)
Theorem s :
  ~ (forall (n : nat), (foldr muln 1%N [:: n], foldr muln 1%N [::]) = (foldr muln 1%N [::], foldr muln 1%N [:: n])).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, strip, term
from symuat.certify.export import Exported
from symuat.certify.witness import _evaluates_to, export_witness, sigma_of
from symuat.kernel.index_calculus import col_space, row_space

#: the counterexample reasons this module states (``Counterexample.reason`` starts with one)
VALUES, SHAPES = "values differ", "shapes differ"



def _clip(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary to ``width`` characters with " …" (never mid-word)."""
    import textwrap

    return textwrap.shorten(" ".join(str(text).split()), width, placeholder=" …")

def refutation_data(verdict, unequal: list) -> tuple[str, dict]:
    """(kind, data) for the refuted ``verdict``: the exporter's kind and what it states, from the
    pairs the normal form compared unequal (``unequal``: ``[(lhs, rhs, …)]``) and the verdict's
    counterexample. :class:`Unsupported` names what is missing."""
    cex = verdict.counterexample
    if cex is None:
        raise Unsupported("refuted without a counterexample: " + _clip(verdict.method, 120))
    reason = cex.reason or ""
    if not cex.values:
        raise Unsupported(f"the counterexample has no matrix values ({_clip(reason, 100)})")
    if cex.lhs is None or cex.rhs is None:
        found = _undefined_pair(unequal, cex)
        if found is None:
            raise Unsupported("a side is undefined at the counterexample (a shape the definition does not admit; "
                              f"no Coq statement types it): {_clip(reason, 120)}")
        return "undefined_refutation", found
    if not any(isinstance(v, np.ndarray) and v.ndim == 2 for v in cex.values.values()):
        raise Unsupported(f"the counterexample gives scalar entries, not matrices ({_clip(reason, 100)})")
    match = _evaluated_pair(unequal, cex)
    if match is None:
        raise Unsupported("no comparison of the check evaluates to its counterexample's sides")
    lhs, rhs, sigma = match
    data = {"lhs": lhs, "rhs": rhs, "sizes": dict(cex.sizes), "values": dict(cex.values),
            "lhs_value": cex.lhs, "rhs_value": cex.rhs, "sigma": sigma}
    from symuat.kernel.index_calculus import _compare_entries

    typed = _compare_entries(lhs, rhs).reason or ""
    if typed.startswith("ill-typed"):
        # not a statement for independent sizes (L2.5's sides add D- and F-vectors): stated where
        # it is one — the sizes the counterexample gives equal values made one size (F := D)
        merged = _merged_sizes(lhs, rhs, cex.sizes)
        fixed = {"lhs": lhs.subs(merged), "rhs": rhs.subs(merged)}
        if (_compare_entries(fixed["lhs"], fixed["rhs"]).reason or "").startswith("ill-typed"):
            raise Unsupported("the refuted statement is ill-typed for symbolic sizes, even with the sizes the "
                              f"counterexample makes equal identified: {_clip(typed, 120)}")
        if not reason.startswith(VALUES):
            raise Unsupported(f"a counterexample of another kind: {_clip(reason, 120)}")
        same = ", ".join(f"{k} = {v}" for k, v in merged.items())
        return "refutation", dict(data, **fixed, comment=f"with {same}: the sizes the counterexample makes equal")
    if (row_space(lhs), col_space(lhs)) != (row_space(rhs), col_space(rhs)):
        # the sides are of different index spaces (P5.pre[…,W12]: n×1 against n×n), so
        # ``lhs = rhs`` is not even a Coq statement; the identity fails for all sizes at
        # every size where the shapes differ — the counterexample's, else the first of
        # 2, 3 for every size (at n = 1 both are 1×1 and the values differ instead)
        return "shape_refutation", dict(data, sizes=_differing_sizes(lhs, rhs, cex.sizes))
    if reason.startswith(VALUES):
        return "refutation", data
    if reason.startswith(SHAPES):
        return "shape_refutation", data
    raise Unsupported(f"a counterexample of another kind: {_clip(reason, 120)}")


def _merged_sizes(lhs, rhs, sizes: dict) -> dict:
    """Each size symbol of the sides that the counterexample gives the same value as an earlier
    one (by name) → that earlier symbol: the identity for those sizes equal."""
    from symuat.kernel.decide.instances import dimension_symbols

    first: dict = {}
    out = {}
    for d in sorted(dimension_symbols(lhs, rhs), key=lambda s: s.name):
        if d.name not in sizes:
            raise Unsupported(f"the counterexample gives no value for the size {d.name}")
        keep = first.setdefault(int(sizes[d.name]), d)
        if keep != d:
            out[d] = keep
    return out


def _evaluated_pair(unequal: list, cex):
    """The first pair ``(lhs, rhs, σ)`` of ``unequal`` whose sides evaluate exactly at the
    counterexample to its recorded values — with the elementwise functions as the σ symuat
    evaluated them (its first, else its second concrete σ) — or None."""
    from symuat.expr.elementwise import sigma_alternative, sigma_exact
    from symuat.kernel.decide.instances import _has_sigma

    for lhs, rhs, *_ in unequal:
        for sigma in (sigma_exact, sigma_alternative) if _has_sigma(lhs, rhs) else (None,):
            if (_evaluates_to(lhs, cex.sizes, cex.values, cex.lhs, sigma)
                    and _evaluates_to(rhs, cex.sizes, cex.values, cex.rhs, sigma)):
                return lhs, rhs, sigma
    return None


def _undefined_pair(unequal: list, cex) -> dict | None:
    """For a counterexample at which one side is undefined: the first pair of ``unequal`` whose
    defined side evaluates to the recorded value and whose other side has an operation the sizes
    break (:func:`broken_operation`), as the data of :func:`export_undefined_refutation`."""
    defined, value = ("lhs", cex.lhs) if cex.lhs is not None else ("rhs", cex.rhs)
    if value is None:
        return None
    for lhs, rhs, *_ in unequal:
        sides = {"lhs": lhs, "rhs": rhs}
        other = sides["rhs" if defined == "lhs" else "lhs"]
        if not _evaluates_to(sides[defined], cex.sizes, cex.values, value):
            continue
        broken = broken_operation(other, cex.sizes, cex.values)
        if broken is not None:
            return {"side": "right" if defined == "lhs" else "left", "expr": other, "sizes": dict(cex.sizes),
                    **broken}
    return None


def broken_operation(expr, sizes: dict, values: dict) -> dict | None:
    """The innermost operation of ``expr`` that is undefined at ``sizes`` while its operands are
    defined, with the two index spaces whose sizes it needs equal: ``{"node", "need", "spaces"}``
    (a product: the left factor's columns and the right's rows; a sum: both operands' rows, or
    columns; a diamond: the rows its definition pairs), or None.

    >>> import sympy as sp
    >>> from sympy import MatrixSymbol
    >>> n, m = (sp.Symbol(s, positive=True, integer=True) for s in "nm")
    >>> A, B = MatrixSymbol("A", n, m), MatrixSymbol("B", n, m)
    >>> import numpy as np
    >>> broken_operation(A * B, {"n": 1, "m": 2}, {"A": np.ones((1, 2)), "B": np.ones((1, 2))})["spaces"]
    ((m,), (n,))
    """
    from sympy import MatAdd, MatMul
    from sympy.matrices.expressions import MatrixExpr

    from symuat.expr.diamond import Diamond
    from symuat.expr.heads import HeadSum
    from symuat.kernel.decide.instances import _UNDEFINED, dimension_symbols
    from symuat.kernel.evaluate import Evaluator

    syms = {d.name: d for d in dimension_symbols(expr)}
    at = {syms[k]: v for k, v in sizes.items() if k in syms}
    flat = lambda space: _flat_shape_of(space, sizes)
    leaves = {k: v for k, v in values.items() if np.ndim(v) > 0}
    scalars = {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in values.items() if np.ndim(v) == 0}

    def defined(e, env: dict) -> bool:
        ev = Evaluator(at, leaves, "exact", scalars=scalars)
        ev.env.update(env)  # inside a head sum: its head at member 0 (the shapes are every member's)
        try:
            ev(e)
        except _UNDEFINED:
            return False
        return True

    def visit(e, env: dict):
        if not isinstance(e, MatrixExpr):
            return None
        inner = {**env, e.args[0]: 0} if isinstance(e, HeadSum) else env
        for a in e.args:
            found = visit(a, inner)
            if found is not None:
                return found
        if defined(e, env):
            return None
        ops = [a for a in e.args if isinstance(a, MatrixExpr)]
        if not all(defined(a, inner) for a in ops):
            return None
        pairs = []
        if isinstance(e, MatMul):
            pairs = [("columns of the left factor = rows of the right", col_space(a), row_space(b))
                     for a, b in zip(ops, ops[1:])]
        elif isinstance(e, MatAdd):
            pairs = [(f"{what} of the terms", space(ops[0]), space(b)) for b in ops[1:]
                     for what, space in (("rows", row_space), ("columns", col_space))]
        elif isinstance(e, Diamond):
            kind = e.kind
            if kind == "vm":
                pairs = [("rows of W = rows of x in x ⋄ W", row_space(e.right), row_space(e.left))]
            elif kind == "mm" and e.mm == "C-prod":
                pairs = [("columns of A = rows of B in A ⋄ B (C-prod)", col_space(e.left), row_space(e.right))]
            else:
                pairs = [("rows of the two operands of ⋄", row_space(e.left), row_space(e.right))]
        for need, s1, s2 in pairs:
            if flat(s1) != flat(s2):
                return {"node": e, "need": need, "spaces": (tuple(s1), tuple(s2))}
        return None

    return visit(expr, {})


def _flat_shape_of(space, sizes: dict) -> int:
    out = sp.Integer(1)
    for d in space:
        out *= sp.sympify(d)
    return out.subs({s: sizes.get(s.name, s) for s in out.free_symbols})


def export_undefined_refutation(name: str, data: dict) -> list[Exported]:
    """A side undefined where the other is defined: the operation it breaks needs two index
    spaces of equal size, and they are not for all sizes — ``~ (forall sizes, Π space₁ = Π
    space₂)``, proved at the counterexample's sizes (where they differ) by computation."""
    s1, s2 = data["spaces"]
    sizes = data["sizes"]
    ctx = Ctx()
    texts = [ctx.space(s) for s in (s1, s2)]
    if not ctx.dims:
        raise Unsupported("the broken operation's index spaces involve no size")
    missing = [s.name for s in ctx.dims.values() if s.name not in sizes]
    if missing:
        raise Unsupported(f"the counterexample gives no value for the size {missing[0]}")
    if _flat_shape_of(s1, sizes) == _flat_shape_of(s2, sizes):
        raise Unsupported("the operation's index spaces agree at the counterexample's sizes")
    binders = "(" + " ".join(sorted(ctx.dims)) + " : nat)"
    why = f"(* the {data.get('side', 'one')} side is undefined: {data.get('need', 'its operation')} *)"
    statement = (f"Theorem {name} :\n  {why}\n  ~ (forall {binders}, foldr muln 1%N {texts[0]} = "
                 f"foldr muln 1%N {texts[1]}).")
    args = " ".join(f"{int(sizes[ctx.dims[d].name])}%N" for d in sorted(ctx.dims))
    return [Exported(name, statement, f"move=> H; move: (H {args}); vm_compute; by case.")]


def _flat_shape(expr, sizes: dict) -> tuple[int, int]:
    def prod(space):
        out = sp.Integer(1)
        for d in space:
            out *= sp.sympify(d)
        return out.subs({s: sizes.get(s.name, s) for s in out.free_symbols})

    return prod(row_space(expr)), prod(col_space(expr))


def _differing_sizes(lhs, rhs, sizes: dict) -> dict:
    """The counterexample's sizes if the sides' flattened shapes differ there, else the first of
    every size 2, every size 3 where they do (:class:`Unsupported` if neither)."""
    from symuat.kernel.decide.instances import dimension_symbols

    names = [d.name for d in dimension_symbols(lhs, rhs)]
    for cand in (dict(sizes), {n: 2 for n in names}, {n: 3 for n in names}):
        if _flat_shape(lhs, cand) != _flat_shape(rhs, cand):
            return cand
    raise Unsupported("the sides' index spaces differ, but not their shapes at the sizes tried")


def export_refutation(name: str, data: dict) -> list[Exported]:
    """``~ (forall sizes matrices, lhs =m rhs)``, proved at the counterexample (the witness
    theorem, :func:`~symuat.certify.witness.export_witness`, by computation: :coq:`symuat_refute`)."""
    return export_witness(name, data, tactic="symuat_refute")


def export_shape_refutation(name: str, data: dict) -> list[Exported]:
    """``~ (forall sizes, shape lhs = shape rhs)``: the flattened shapes (rows, columns) — the
    products of the index spaces — of the two sides, proved unequal at the counterexample's sizes."""
    lhs, rhs, sizes = data["lhs"], data["rhs"], data["sizes"]
    ctx = Ctx()
    spaces = [ctx.space(s) for s in (row_space(lhs), col_space(lhs), row_space(rhs), col_space(rhs))]
    if not ctx.dims:
        raise Unsupported("the shapes of the sides involve no size: nothing to instantiate")
    missing = [s.name for s in ctx.dims.values() if s.name not in sizes]
    if missing:
        raise Unsupported(f"the counterexample gives no value for the size {missing[0]}")
    shape = [f"foldr muln 1%N {s}" for s in spaces]
    binders = "(" + " ".join(sorted(ctx.dims)) + " : nat)"
    statement = (f"Theorem {name} :\n  ~ (forall {binders}, ({shape[0]}, {shape[1]}) = ({shape[2]}, {shape[3]})).")
    args = " ".join(f"{int(sizes[ctx.dims[d].name])}%N" for d in sorted(ctx.dims))
    proof = f"move=> H; move: (H {args}); vm_compute; by case."
    return [Exported(name, statement, proof)]


#: kind → exporter(name, data) for the kinds :func:`refutation_data` returns
EXPORTERS = {"refutation": export_refutation, "shape_refutation": export_shape_refutation,
             "undefined_refutation": export_undefined_refutation}


#: a refuted negation ("``lhs = rhs`` fails in general", P4): refuted by a proof of the identity
DENIED_HOLDS = "the identity the claim denies holds"


#: the certificate a refuted density claim records (the expression, the claim, the derived
#: density and the counterexample's sizes): :func:`symuat.certify.density.export_density_refutation`
DENSITY_REFUTATION = "density_refutation"


#: the certificate of a witness a claim's own search found
#: (:func:`~symuat.kernel.decide.witness.refute_with_exact_witness` with its ``statement``: the
#: sides as expressions, the leaves' values, the concrete σ, the exact values of both sides)
WITNESS_REFUTATION = "refutation_witness"


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
    if not ctx.dims:
        raise Unsupported("the shapes involve no size: nothing to instantiate")
    missing = [s.name for s in ctx.dims.values() if s.name not in sizes]
    if missing:
        raise Unsupported(f"the counterexample gives no value for the size {missing[0]}")
    binders = "(" + " ".join(sorted(ctx.dims)) + " : nat)"
    statement = (f"Theorem {name} :\n  ~ (forall {binders}, (foldr muln 1%N {spaces[0]}, foldr muln 1%N {spaces[1]}) "
                 f"= ({want[0]}, {want[1]})).")
    args = " ".join(f"{int(sizes[ctx.dims[d].name])}%N" for d in sorted(ctx.dims))
    return [Exported(name, statement, f"move=> H; move: (H {args}); vm_compute; by case.")]


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


def export_recorded_refutation(name: str, data: dict) -> list[Exported]:
    """``~ (forall sizes functions matrices, lhs =m rhs)`` at a witness the claim's search recorded
    (:data:`WITNESS_REFUTATION`), once its sides are checked to evaluate, at the recorded values
    and σ, to the recorded exact values (so the theorem states the comparison that was refuted)."""
    sizes = {k: v for k, v in data["sizes"].items()}
    for side in ("lhs", "rhs"):
        if not _evaluates_to(data[side], sizes, data["values"], np.asarray(data[f"{side}_value"], dtype=object),
                             data.get("sigma")):
            raise Unsupported(f"the recorded {side} does not evaluate to the witness's value")
    return export_refutation(name, data)


def export_check_refutation(name: str, verdict, unequal: list, equal: list, certificates=()) -> list[Exported]:
    """The theorems that certify the refuted ``verdict`` of one check: the negated identity at its
    counterexample (:func:`refutation_data`), or — for a refuted negation — the identity it denies
    (each pair ``equal`` the normal form proved, exported as every proved identity is, with the
    theorem ``name``, ``name`` suffixed by its position after the first), or — a density claim
    refuted by an exact count, with its :data:`DENSITY_REFUTATION` certificate among
    ``certificates`` (``[(kind, data)]``) — the claimed count failing at the counterexample."""
    from symuat.certify.density import export_density_refutation
    from symuat.certify.export import export_identity

    found = [data for kind, data in certificates if kind == DENSITY_REFUTATION]
    if found:
        return export_density_refutation(name, found[0])
    found = [data for kind, data in certificates if kind == "printed_refutation"]
    if found:
        from symuat.certify.printed import export_printed_refutation

        return export_printed_refutation(name, found[-1])
    found = [data for kind, data in certificates if kind == "dependence"]
    if found and verdict.method.startswith("the expression depends on"):
        # "does not depend on var", refuted by two values of var: the same witness theorem
        return export_refutation(name, dict(found[-1], sigma=sigma_of(found[-1])))
    found = [data for kind, data in certificates if kind == SHAPE_CLAIM]
    if found:
        return export_shape_claim_refutation(name, found[-1])
    found = [data for kind, data in certificates if kind == WITNESS_REFUTATION]
    if found:
        return export_recorded_refutation(name, found[-1])

    if verdict.method.startswith(DENIED_HOLDS):
        if not equal:
            raise Unsupported("the identity the claim denies was not captured")
        # by the direct tactic: the normal-form replay does not close P4[left,mv]'s side
        # ``diamond (add W V) v`` (its sums in the other order), the direct tactic closes all six
        return [export_identity(f"{name}_{n}" if n else name, lhs, rhs, proof="symuat_entry.",
                                hypotheses=hyps or ()) for n, (lhs, rhs, hyps) in enumerate(equal)]
    kind, data = refutation_data(verdict, unequal)
    return EXPORTERS[kind](name, data)
