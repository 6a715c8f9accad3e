r"""A count of σ-terms → Coq: "``b'_{j,2}`` has no σ-term", stated as what it means.

T11 counts the top-level σ-terms of symuat's unrolled bias ``b'_{j,2}`` (``e_j``) and refutes the
claim "a ``j``-layer UAT of ``x_0``" (``j`` σ-terms) at ``j = 1``, where the count is 0. The claim
(:func:`~symuat.claims.transformer._t11`) records the counted expressions (kind ``sigma_terms``);
at a counterexample where symuat counts 0 and the claim ``k ≥ 1``, two theorems state its meaning:

* ``b'_{j,2}``, written as a Coq function of the elementwise function σ, is constant — ``forall s
  s', F s =m F s'`` — proved by conversion (``reflexivity`` on every entry: it closes only when
  ``F`` does not use σ; :func:`~symuat.certify.independence.constant_in`'s proof, for a function);
* the claimed form, a one-layer UAT of ``x_0`` — ``U σ(V x_0 + c)``, one σ-term, of any hidden
  width ``K`` — is not: ``~ (forall sizes U V x_0 c, forall s s', G s =m G s')`` over ℤ, proved at
  ``D = F = K = 1``, ``U = 1``, ``V = x_0 = c = 0``, ``σ = 0`` against ``σ = 1`` by computation
  (:coq:`symuat_refute`).

What is certified is this reading of "0 σ-terms" (independence of σ); the count itself is symuat's.
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, fresh_name, ident, strip, term
from symuat.certify.export import Exported, binders_of

def constant_in_sigma(name: str, expr, what: str, note: str = "") -> Exported:
    """``expr`` as a Coq function of its elementwise function ``sigma`` is constant: ``forall s s',
    F s =m F s'``, proved by conversion (rejected when ``F`` uses σ)."""
    ctx = Ctx()
    body = strip(term(expr, ctx))
    extra = sorted(f for f in ctx.funcs if f != "sigma")
    if extra:
        raise Unsupported(f"the expression has elementwise functions other than σ: {extra}")
    binders = [b for b in binders_of(ctx) if not b.startswith("(sigma :")]
    taken = set(ctx.leaves) | set(ctx.dims) | {"sigma"}
    f, s, s2, i, j = (fresh_name(n, taken) for n in ("F", "s", "s'", "i", "j"))
    statement = (f"Theorem {name} " + " ".join(binders) + " :\n"
                 f"  (* {what}, a function of the elementwise function sigma, is constant: it has no sigma-term{note} *)\n"
                 f"  let {f} := fun sigma : R -> R => {body} in\n"
                 f"  forall {s} {s2} : R -> R, {f} {s} =m {f} {s2}.")
    return Exported(name, statement, f"move=> {f} {s} {s2} {i} {j}; reflexivity.")


def claimed_form_depends_on_sigma(name: str, x0, rows, what: str) -> Exported:
    """The claimed form, a one-layer UAT of ``x0`` with ``rows`` outputs — ``U σ(V x0 + c)``, hidden
    width ``K`` — is not constant in σ: ``~ (forall …, forall s s', G s =m G s')`` over ℤ, proved at
    every size 1, ``U = 1``, ``V = x0 = c = 0``, ``σ = 0`` against ``σ = 1``."""
    from symuat.expr.algebra import add, mul
    from symuat.expr.elementwise import Sigma
    from sympy import MatrixSymbol

    D = x0.shape[0]
    K = sp.Symbol("K", positive=True, integer=True)
    U, V, c = MatrixSymbol("U", rows, K), MatrixSymbol("V", K, D), MatrixSymbol("c", K, 1)
    form = mul(U, Sigma(add(mul(V, x0), c)))
    ctx = Ctx()
    body = strip(term(form, ctx))
    Z = "[comRingType of int]"
    binders = [f"({' '.join(sorted(ctx.dims))} : nat)"] + [f"({leaf} : mx {Z}{typ[4:]})" for leaf, typ in ctx.leaves.items()]
    taken = set(ctx.leaves) | set(ctx.dims) | {"sigma"}
    g, s, s2 = (fresh_name(n, taken) for n in ("G", "s", "s'"))
    values = {ident(U.name): "(fun _ _ => 1)"}
    args = ["1%N"] * len(ctx.dims) + [values.get(leaf, "(fun _ _ => 0)") for leaf in ctx.leaves]
    args += ["(fun _ => 0)", "(fun _ => 1)", "(@Ordinal 1 0 isT, tt)", "tt"]
    statement = (f"Theorem {name} :\n"
                 f"  (* the claim's form of {what}: a one-layer UAT of {x0.name}, one sigma-term U sigma(V {x0.name} + c) "
                 "(any hidden width K), is not constant in sigma *)\n"
                 f"  ~ (forall {' '.join(binders)},\n"
                 f"     let {g} := fun sigma : int -> int => {body} in\n"
                 f"     forall {s} {s2} : int -> int, {g} {s} =m {g} {s2}).")
    return Exported(name, statement, f"move=> H; move: (H {' '.join(args)}); symuat_refute.")


def export_sigma_terms_refutation(name: str, data: dict, cex) -> list[Exported]:
    """The refuted count at the counterexample ``cex`` (its sizes give the index, its sides the
    counts: symuat's, the claim's): at a count of 0 against a claimed 1, the two theorems of the
    module's docstring; any other :class:`Unsupported`."""
    index = cex.sizes.get(data["index"]) if cex is not None else None
    if index is None or int(index) not in data["members"]:
        raise Unsupported("the counterexample names no counted member")
    k = int(index)
    derived, claimed = sp.sympify(cex.lhs), sp.sympify(cex.rhs)
    if int(data["counted"][k]) != derived:
        raise Unsupported(f"the recorded count of member {k} is not the counterexample's ({data['counted'][k]} against {derived})")
    if derived != 0 or claimed != 1:
        raise Unsupported(f"a count of {derived} σ-terms against a claimed {claimed}: only 0 against 1 is stated "
                          "(independence of σ against a one-layer UAT)")
    expr = data["members"][k]
    what = data["name"].replace("_{j,", "_{" + str(k) + ",")
    note = f" (symuat counts 0, the claim {claimed}: this is what the count 0 means; the count itself is symuat's)"
    return [constant_in_sigma(f"{name}_derived", expr, what, note),
            claimed_form_depends_on_sigma(f"{name}_claimed", data["x0"], expr.shape[0], what)]
