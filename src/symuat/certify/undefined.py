r"""A side undefined at the counterexample → Coq: the sizes its broken operation needs.

Some refuted identities fail because one side is not even defined where the other is (H1.uat:
a product whose left factor has d·N columns and whose right factor has d_v·N rows, at d = 1,
d_v = 2). No Coq statement ``lhs = rhs`` types such a side, so the theorem states what the
counterexample shows: the innermost operation that is undefined while its operands are defined
(:func:`broken_operation`) needs two index spaces of equal size, and they are not equal for all
sizes — ``~ (forall sizes, Π space₁ = Π space₂)``, proved at the counterexample's sizes by
computation, the operation named in a comment. Sizes at which they agree are rejected by Coq
(``tests/test_certify_refutation.py``).
"""

from __future__ import annotations

import re

import numpy as np

from symuat.certify.coq_terms import Ctx, Unsupported, strip, term
from symuat.certify.export import Exported
from symuat.certify.shapes import flat_size, refuted_at_sizes
from symuat.certify.witness import _evaluates_to
from symuat.kernel.index_calculus import col_space, row_space


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
    flat = lambda space: flat_size(space, sizes)
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


def export_undefined_refutation(name: str, data: dict) -> list[Exported]:
    """A side undefined where the other is defined: the operation it breaks needs two index
    spaces of equal size, and they are not for all sizes — ``~ (forall sizes, Π space₁ = Π
    space₂)``, proved at the counterexample's sizes (where they differ) by computation."""
    s1, s2 = data["spaces"]
    sizes = data["sizes"]
    ctx = Ctx()
    texts = [ctx.space(s) for s in (s1, s2)]
    if flat_size(s1, sizes) == flat_size(s2, sizes):
        raise Unsupported("the operation's index spaces agree at the counterexample's sizes")
    why = f"the {data.get('side', 'one')} side is undefined: {data.get('need', 'its operation')}"
    return [refuted_at_sizes(name, ctx, f"foldr muln 1%N {texts[0]} = foldr muln 1%N {texts[1]}", sizes, why)]


#: the certificates of a formula found ill-typed on an instance
#: (:func:`~symuat.kernel.decide.check_matches_reference`: the operation and its operands' shapes
#: there, ``ill_typed``) and of its operands' types as the claim defines them (``operand_types``:
#: the two operands as expressions, the operation, what it needs)
ILL_TYPED, OPERAND_TYPES = "ill_typed", "operand_types"


def _as_matrix_shape(shape) -> tuple[int, int]:
    """A NumPy shape as (rows, columns): a vector ``(n,)`` is a column ``(n, 1)``."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        return shape[0], 1
    if len(shape) != 2:
        raise Unsupported(f"an operand of shape {shape}, not a matrix or a vector")
    return shape


def _inhabitant(typ: str) -> str:
    """A value of a binder's Coq type (the theorem's hypothesis is instantiated at it): the zero
    matrix (of a family: every member), the zero function."""
    if typ == "R -> R":
        return "(fun _ => 0)"
    m = re.fullmatch(r"((?:'I_\S+ -> )*)mx R .*", typ)
    if m is None:
        raise Unsupported(f"a binder of type {typ}: no value to instantiate it at")
    return "(fun " + "_ " * (m.group(1).count("->") + 2) + "=> 0)"


def operand_shapes_theorem(name: str, left, right, product: bool, sizes: dict, comment: str) -> Exported:
    """``~ (forall sizes leaves, shape left = shape right)`` (a sum's operands), or for a product
    ``(shape left).2 = (shape right).1`` (the left factor's columns, the right's rows): Coq types both
    operands from the leaves' declared types and ``shape`` reads (rows, columns) — the products of
    the index spaces — off each operand's type. Proved at ``sizes`` by computation (the hypothesis
    instantiated there, every leaf at zero); operands of one shape there leave a goal Coq cannot
    close. ``comment`` goes before the negation."""
    ctx = Ctx()
    texts = [strip(term(e, ctx)) for e in (left, right)]
    if ctx.ranges or ctx.inverses:
        raise Unsupported("the operands bind a range hypothesis or a size's inverse")
    missing = [d for d in ctx.dims.values() if d.name not in sizes]
    if missing:
        raise Unsupported(f"no value for the size {missing[0].name}")
    groups = ([(sorted(ctx.dims), "nat")] + [([f], t) for f, t in sorted(ctx.funcs.items())]
              + [([leaf], t) for leaf, t in ctx.leaves.items()])
    binders = " ".join(f"({' '.join(names)} : {t})" for names, t in groups if names)
    args = " ".join(f"{int(sizes[ctx.dims[n].name])}%N" if t == "nat" else _inhabitant(t)
                    for names, t in groups for n in names)
    sides = ((f"(shape _ _ ({texts[0]})).2", f"(shape _ _ ({texts[1]})).1") if product
             else (f"shape _ _ ({texts[0]})", f"shape _ _ ({texts[1]})"))
    statement = (f"Theorem {name} :\n  (* {comment} *)\n  ~ (forall {binders},\n"
                 f"     let shape := fun (rs cs : seq nat) (_ : mx R rs cs) => (prodn rs, prodn cs) in\n"
                 f"     {sides[0]} = {sides[1]}).")
    return Exported(name, statement, f"move=> H; move: (H {args}); vm_compute; by case.")


def _at(sizes: dict, names) -> str:
    return ", ".join(f"{n} = {int(sizes[n])}" for n in sorted(names))


def export_ill_typed_operation(name: str, ill_typed: dict, types: dict) -> list[Exported]:
    """A formula ill-typed on an instance (``ill_typed``: the operation, its operands' shapes there,
    the instance's sizes), its operands typed as the claim defines them (``types``: ``left``,
    ``right`` expressions of symbolic sizes, ``text``, ``need``): :func:`operand_shapes_theorem` for
    the sum at the instance's sizes. The operands' shapes there must be the ones the check met
    (else :class:`Unsupported`)."""
    left, right, sizes = types["left"], types["right"], ill_typed["sizes"]
    met = [_as_matrix_shape(shape) for _, shape in ill_typed["operands"]]
    typed = [(int(flat_size(row_space(e), sizes)), int(flat_size(col_space(e), sizes))) for e in (left, right)]
    if typed != met:
        raise Unsupported(f"the operands' types give the shapes {typed} at the instance's sizes, the check met {met}")
    if typed[0] == typed[1]:
        raise Unsupported("the operands' shapes agree at the instance's sizes")
    from symuat.kernel.decide.instances import dimension_symbols

    (ln, lc), (rn, rc) = typed
    at = _at(sizes, [d.name for d in dimension_symbols(left, right)])
    comment = (f"{ill_typed['operation']}: {types.get('text', 'the operation')}: {types.get('need', 'one shape')}. "
               f"Coq types both operands from the leaves' declared types; shape reads (rows, columns), the products of "
               f"the index spaces, off each operand's type. They are not one shape for all sizes: at {at} (the "
               f"instance the check found ill-typed) {ln}×{lc} against {rn}×{rc}")
    return [operand_shapes_theorem(name, left, right, False, sizes, comment)]


def ill_typed_operands(expr) -> dict | None:
    """The innermost operation of ``expr`` whose operands' index spaces differ for symbolic sizes (a
    product: the left factor's columns and the right's rows; a sum: the terms' rows, or columns),
    its operands closed (no free head): ``{"node", "left", "right", "product"}``, or None."""
    from sympy import MatAdd, MatMul
    from sympy.matrices.expressions import MatrixExpr

    from symuat.expr.heads import HeadSum

    def visit(e, bound: frozenset):
        if not isinstance(e, MatrixExpr):
            return None
        inner = bound | {e.args[0]} if isinstance(e, HeadSum) else bound
        for a in e.args:
            found = visit(a, inner)
            if found is not None:
                return found
        ops = [a for a in e.args if isinstance(a, MatrixExpr)]
        if bound or any(a.free_symbols & inner for a in ops if inner):
            return None
        if isinstance(e, MatMul):
            for a, b in zip(ops, ops[1:]):
                if tuple(col_space(a)) != tuple(row_space(b)):
                    return {"node": e, "left": a, "right": b, "product": True}
        if isinstance(e, MatAdd):
            for b in ops[1:]:
                if (row_space(ops[0]), col_space(ops[0])) != (row_space(b), col_space(b)):
                    return {"node": e, "left": ops[0], "right": b, "product": False}
        return None

    try:
        return visit(expr, frozenset())
    except Exception:  # an ill-typed subterm whose spaces cannot be read: none found
        return None


def ill_typed_refutation_data(lhs, rhs, sizes: dict) -> dict | None:
    """For a refuted ``lhs = rhs`` that is ill-typed for symbolic sizes although typed at the
    counterexample (``sizes``): the broken operation of a side (:func:`ill_typed_operands`) and the
    sizes where its operands' shapes differ — the counterexample's, else every size 2, else 3 — or None."""
    from symuat.kernel.decide.instances import dimension_symbols

    for side, expr in (("left", lhs), ("right", rhs)):
        found = ill_typed_operands(expr)
        if found is None:
            continue
        a, b = found["left"], found["right"]
        names = [d.name for d in dimension_symbols(a, b)]
        for cand in (dict(sizes), {n: 2 for n in names}, {n: 3 for n in names}):
            if any(n not in cand for n in names):
                continue
            shapes = [(flat_size(row_space(e), cand), flat_size(col_space(e), cand)) for e in (a, b)]
            differ = shapes[0][1] != shapes[1][0] if found["product"] else shapes[0] != shapes[1]
            if differ:
                return dict(found, side=side, sizes={n: int(cand[n]) for n in names}, at_counterexample=cand == dict(sizes),
                            shapes=[tuple(int(x) for x in s) for s in shapes])
    return None


def export_ill_typed_refutation(name: str, data: dict) -> list[Exported]:
    """A refuted identity that is no statement for symbolic sizes: a side's operation whose operands'
    index spaces differ (``data``: :func:`ill_typed_refutation_data`), :func:`operand_shapes_theorem`
    at the sizes where their shapes differ; the comment says what the counterexample was."""
    (ar, ac), (br, bc) = data["shapes"]
    what = (f"the {data['side']} side's product needs the columns of its left factor to be the rows of its right"
            if data["product"] else f"the {data['side']} side's sum needs its terms of one shape")
    differ = f"{ac} columns against {br} rows" if data["product"] else f"{ar}×{ac} against {br}×{bc}"
    comment = (f"the refuted statement is ill-typed for symbolic sizes: {what}. Coq types both operands from the "
               f"leaves' declared types; shape reads (rows, columns), the products of the index spaces, off each "
               f"operand's type. Not equal for all sizes: at {_at(data['sizes'], data['sizes'])}: {differ}"
               + ("" if data.get("at_counterexample") else
                  f". (The counterexample, at {data.get('counterexample', 'other sizes')}, is where the statement is "
                  "typed and its values differ: not stated here)"))
    return [operand_shapes_theorem(name, data["left"], data["right"], data["product"], data["sizes"], comment)]


def ill_typed_certificates(certificates) -> tuple[dict, dict] | None:
    """The last ``ill_typed`` certificate and the last ``operand_types`` one of a check, or None."""
    bad = [d for kind, d in certificates if kind == ILL_TYPED]
    types = [d for kind, d in certificates if kind == OPERAND_TYPES]
    return (bad[-1], types[-1]) if bad and types else None


def reason(theorems) -> str:
    """What a refutation's theorems certify when it is not the counterexample's values at its sizes
    (the record's reason): the comments of theorems on operands' shapes
    (:func:`operand_shapes_theorem`), of a witness stated with sizes fixed or identified
    (:func:`~symuat.certify.refutation.refutation_data`) and of a count of σ-terms
    (:mod:`symuat.certify.sigma_terms`), else ""."""
    marks = ("Coq types both operands", "stated where the counterexample types it", "sigma-term")
    found = []
    for t in theorems:
        m = re.search(r"\(\* (.*?) \*\)", t.statement, re.S)
        if m and any(k in m.group(1) for k in marks):
            found.append(" ".join(m.group(1).split()))
    return ("certified: " + "; ".join(found)) if found else ""
