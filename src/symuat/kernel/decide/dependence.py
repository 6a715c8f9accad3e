r"""Dependence on a leaf: "``expr`` depends on ``var``" or "does not".

Soundness: independence is proved structurally (``var`` does not occur, or
:func:`~symuat.kernel.decide.identity.check_identity` *proves* ``expr`` equal to a form without
``var``); dependence is proved by an exact witness — two values of ``var``, everything else
equal, giving different exact values of ``expr`` (both drawn on the statement's hypotheses).
Anything else is ``numeric-only``: an occurrence without a witness decides nothing.
"""

from __future__ import annotations

import itertools
from typing import Iterable

import numpy as np

from symuat.kernel.status import (
    Corrected,
    Counterexample,
    Status,
    Verdict,
)

from symuat.kernel import certificates
from symuat.kernel.evaluate import values_equal
from symuat.kernel.assumptions import assuming
from symuat.kernel.hypotheses import latex_list
from symuat.kernel.decide.instances import (
    evaluate_at,
    named_sizes,
    relative_residual,
    dimension_symbols,
    leaf_shapes,
    random_values,
    size_grid,
)
from symuat.kernel.decide.identity import check_identity


def _small_dependence_witness(expr, var: str, leaves, budget: int = 400, on: str | None = None):
    """Two values of ``var`` (entries 0/1 and their flip 1 − v), everything else equal, at the
    smallest sizes and entries where ``expr`` differs (:func:`symuat.kernel.minimise.small_instances`),
    or None within ``budget`` evaluations (the caller's random search follows). ``on``: only
    instances at which both values satisfy the active hypotheses (the certificate's witness)."""
    from symuat.kernel.minimise import small_instances

    from symuat.kernel.hypotheses import violated

    for sizes, values in itertools.islice(small_instances(expr, expr, top=3, max_entry=1), budget):
        if on is not None and violated(values):
            continue
        a, err = evaluate_at(expr, sizes, values, "exact")
        if err:
            continue
        other = dict(values)
        other[var] = (1 - np.asarray(values[var], dtype=object)).astype(object)
        if on is not None and violated(other):
            continue
        b, err_b = evaluate_at(expr, sizes, other, "exact")
        if err_b or values_equal(a, b, "exact"):
            continue
        return Counterexample(
            named_sizes(sizes), {"first": values, f"second {var}": other[var]}, lhs=a, rhs=b,
            reason=f"changing only {var} changes the value",
            exact_recheck="exact integer evaluation of both",
            numeric_recheck=f"float64: relative difference {relative_residual(a.astype(float), b.astype(float)):.3g}",
        )
    return None


def _record_witness(expr, var: str, witness: Counterexample) -> None:
    """Record the dependence witness as the identity it refutes — ``expr`` against ``expr`` with
    the leaf ``var`` (a matrix, or every member of a head family) renamed ``var'`` — as a
    ``dependence`` certificate (:func:`symuat.certify.witness.export_dependence`), unless it was
    drawn on hypotheses (a theorem without them would state less than the check)."""
    import sympy as sp
    from sympy.core.symbol import Str
    from sympy.matrices.expressions import MatrixExpr

    from symuat.kernel.hypotheses import active

    hyps = tuple(active())
    if hyps:
        # drawn on hypotheses (rows summing to 1): the theorem states them as premises, for both
        # values of var, so the witness must satisfy them
        own = _on_hypotheses(witness, var)
        witness = witness if own else _small_dependence_witness(expr, var, None, budget=4000, on=var)
        if witness is None:
            return
    renamed = {node: type(node)(var + "'", *node.args[1:]) for node in sp.preorder_traversal(expr)
               if isinstance(node, MatrixExpr) and node.args and isinstance(node.args[0], Str)
               and node.args[0].name == var}
    first = dict(witness.values["first"])
    if not renamed or var + "'" in first:
        return
    values = dict(first, **{var + "'": witness.values[f"second {var}"]})
    certificates.record("dependence_hypotheses" if hyps else "dependence", lhs=expr, rhs=expr.xreplace(renamed), sizes=dict(witness.sizes),
                        values=values, lhs_value=witness.lhs, rhs_value=witness.rhs, var=var,
                        **({"hypotheses": hyps, "verdict_witness_on_hypotheses": own} if hyps else {}))


def _on_hypotheses(witness: Counterexample, var: str) -> bool:
    """Whether both values of ``var`` of ``witness`` (and the other leaves) satisfy the active
    hypotheses."""
    from symuat.kernel.hypotheses import violated

    first = {k: np.asarray(v, dtype=object) for k, v in witness.values["first"].items()}
    second = dict(first, **{var: np.asarray(witness.values[f"second {var}"], dtype=object)})
    return not violated(first) and not violated(second)


def check_dependence(expr, var: str, *, depends: bool, equal_to=None, hypotheses: Iterable = ()) -> Verdict:
    """The claim "``expr`` depends on the leaf ``var``" (``depends=True``) or "does not".

    Structural independence (``var`` does not occur in ``expr``) is a proof that it does not
    depend; a dependence is shown by an exact witness: two values of ``var``, everything else
    equal, giving different values of ``expr``. If ``var`` occurs but no witness is found, the
    verdict is ``numeric-only``.

    ``equal_to``: a form of ``expr`` without ``var``; when :func:`check_identity` proves
    ``expr = equal_to`` (under ``hypotheses``), the independence is structural. ``hypotheses``
    also constrain the witness search (both values of ``var`` satisfy them).
    """
    hypotheses = tuple(hypotheses)
    if hypotheses:
        with assuming(hypotheses):
            verdict = check_dependence(expr, var, depends=depends, equal_to=equal_to)
        verdict.hypotheses = latex_list(hypotheses)
        return verdict
    leaves = leaf_shapes(expr)
    occurs = var in leaves
    witness = None
    if occurs and equal_to is not None and var not in leaf_shapes(equal_to):
        from symuat.kernel.hypotheses import active

        rewrite = check_identity(expr, equal_to, hypotheses=active())
        if rewrite.status is Status.PROVED:
            fact = Verdict(Status.PROVED, f"structural: the expression equals a form in which {var} does not "
                           f"occur ({rewrite.method})", detail=rewrite.detail, numeric=rewrite.numeric)
            if certificates.listened():  # the identity with the form, and the form's independence
                certificates.record("independence", expr=expr, var=var, form=equal_to, hypotheses=tuple(active()))
            if not depends:
                return fact
            return Verdict(Status.REFUTED, "the expression does not depend on " + var,
                           corrected=Corrected("does not depend on " + var, fact))
    if occurs:  # the smallest witness first (sizes from 1, entries 0/1, the other value of var flipped)
        from symuat.kernel.hypotheses import active, violated

        # under hypotheses (rows of H summing to 1) both values of var must satisfy them: a witness
        # that breaks them shows nothing about the check (searched further: fewer instances qualify)
        on_hypotheses = bool(tuple(active()))
        witness = _small_dependence_witness(expr, var, leaves, budget=4000 if on_hypotheses else 400,
                                            on=var if on_hypotheses else None)
    if occurs and witness is None:
        dims = dimension_symbols(expr)
        for sizes in size_grid(dims, (2, 3), 8):
            rng = np.random.default_rng(1)
            values = random_values(leaves, sizes, rng, "exact")
            a, err = evaluate_at(expr, sizes, values, "exact")
            if err:
                continue
            other = dict(values)
            other[var] = random_values({var: leaves[var]}, sizes, np.random.default_rng(7), "exact")[var]
            if on_hypotheses and (violated(values) or violated(other)):
                continue
            b, _ = evaluate_at(expr, sizes, other, "exact")
            if not values_equal(a, b, "exact"):
                witness = Counterexample(
                    named_sizes(sizes), {"first": values, f"second {var}": other[var]}, lhs=a, rhs=b,
                    reason=f"changing only {var} changes the value",
                    exact_recheck="exact integer evaluation of both",
                    numeric_recheck=f"float64: relative difference {relative_residual(a.astype(float), b.astype(float)):.3g}",
                )
                break
    if witness is not None and certificates.listened():
        _record_witness(expr, var, witness)
    if not occurs:
        if certificates.listened():  # the expression, a function of var, is constant
            certificates.record("independence", expr=expr, var=var)
        fact = Verdict(Status.PROVED, f"structural: {var} does not occur in the expression")
    elif witness is not None:
        fact = Verdict(Status.PROVED, f"exact witness: the value changes with {var}",
                       quantities={"witness": witness.as_dict()})
    else:
        return Verdict(Status.NUMERIC_ONLY, f"{var} occurs but no exact witness of dependence was found")
    holds = occurs == depends
    if holds:
        return fact
    return Verdict(Status.REFUTED,
                   ("the expression depends on " if occurs else "the expression does not depend on ") + var,
                   counterexample=witness, corrected=Corrected(
                       ("depends on " if occurs else "does not depend on ") + var, fact))
