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

from symuat.certify.coq_terms import Ctx, Unsupported
from symuat.certify.export import Exported
from symuat.certify.witness import export_witness
from symuat.kernel.index_calculus import col_space, row_space

#: the counterexample reasons this module states (``Counterexample.reason`` starts with one)
VALUES, SHAPES = "values differ", "shapes differ"



def _clip(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary to ``width`` characters with " …" (never mid-word)."""
    import textwrap

    return textwrap.shorten(" ".join(str(text).split()), width, placeholder=" …")

def _evaluates_to(expr, sizes: dict, values: dict, want, sigma=None) -> bool:
    """Whether ``expr`` evaluated exactly at the counterexample (its elementwise functions as the
    concrete ``sigma``; None: symuat's first, :func:`~symuat.expr.elementwise.sigma_exact`) is the
    recorded value ``want``."""
    from symuat.kernel.decide.instances import dimension_symbols, evaluate_at

    syms = {d.name: d for d in dimension_symbols(expr)}
    if any(name not in sizes for name in syms):
        return False
    got, err = evaluate_at(expr, {syms[k]: v for k, v in sizes.items() if k in syms}, values, "exact", sigma)
    if err or got is None or want is None or np.shape(got) != np.shape(want):
        return False
    return all(sp.simplify(a - b) == 0 for a, b in zip(np.asarray(got).flat, np.asarray(want).flat))


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
        raise Unsupported("a side is undefined at the counterexample (a shape the definition does not admit; "
                          f"no Coq statement types it): {_clip(reason, 120)}")
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
        raise Unsupported("the refuted statement is ill-typed for symbolic sizes, so not a Coq "
                          f"statement (symuat refutes it where it evaluates): {_clip(typed, 120)}")
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
EXPORTERS = {"refutation": export_refutation, "shape_refutation": export_shape_refutation}


#: a refuted negation ("``lhs = rhs`` fails in general", P4): refuted by a proof of the identity
DENIED_HOLDS = "the identity the claim denies holds"


#: the certificate a refuted density claim records (the expression, the claim, the derived
#: density and the counterexample's sizes): :func:`symuat.certify.density.export_density_refutation`
DENSITY_REFUTATION = "density_refutation"


#: the certificate of a witness a claim's own search found
#: (:func:`~symuat.kernel.decide.witness.refute_with_exact_witness` with its ``statement``: the
#: sides as expressions, the leaves' values, the concrete σ, the exact values of both sides)
WITNESS_REFUTATION = "refutation_witness"


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
