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

import numpy as np

from symuat.certify.coq_terms import Ctx, Unsupported
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
