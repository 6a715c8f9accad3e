r"""Independence of a leaf → Coq: "``expr`` does not depend on ``var``", stated as what it means.

:func:`~symuat.kernel.decide.check_dependence` proves an independence in one of two ways and
records it (kind ``"independence"``: ``expr``, ``var``, and for the second way ``form`` and
``hypotheses``):

* ``var`` does not occur in ``expr``: the theorem is that ``expr``, written as a Coq function
  ``F`` of ``var``, is constant — ``forall v v', F v =m F v'`` — proved by conversion
  (``reflexivity`` on every entry), which closes only when ``F`` does not use its argument. A
  leaf that does not occur has no shape in the expression: the statement is for ``var`` a
  matrix of *any* index spaces (``rs_v cs_v : seq nat``), which includes its own.
* ``expr`` equals a form in which ``var`` does not occur (proved by the index-level normal form,
  under the statement's hypotheses): two theorems, the identity ``expr =m form`` exported as
  every identity (the hypotheses its premises, :func:`~symuat.certify.export.export_identity`)
  and the form's independence as above, with ``var`` of the type ``expr`` gives it.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> m, p, q = sp.symbols("m p q", positive=True, integer=True)
>>> beta, alpha = MatrixSymbol("beta", p, m), MatrixSymbol("alpha_j", m, q)
>>> print(export_independence("c", {"expr": beta * alpha, "var": "x"})[0].statement)
Theorem c (m p q : nat) (beta : mx R [:: p] [:: m]) (alpha_j : mx R [:: m] [:: q]) (rs_x cs_x : seq nat) :
  (* x does not occur: the expression, a function of x (a matrix of any index spaces), is constant *)
  let F := fun x : mx R rs_x cs_x => mul beta alpha_j in
  forall x x' : mx R rs_x cs_x, F x =m F x'.
"""

from __future__ import annotations

import dataclasses
import re

from symuat.certify.coq_terms import Ctx, Unsupported, fresh_name, ident, strip, term
from symuat.certify.export import Exported, binders_of, export_identity


def constant_in(name: str, expr, var: str, typed: Ctx | None = None) -> Exported:
    """``expr`` as a Coq function of ``var`` is constant: ``forall v v', F v =m F v'``, ``v`` of
    the type ``typed`` (the context of an expression in which ``var`` occurs) gives it, else a
    matrix of any index spaces. Proved by conversion: rejected when ``F`` uses its argument."""
    ctx = Ctx()
    body = strip(term(expr, ctx))
    v = ident(var)
    if v in ctx.dims or v in ctx.funcs:
        raise Unsupported(f"{var} names a size or a function of the expression")
    binders = binders_of(ctx)
    taken = set(ctx.leaves) | set(ctx.dims) | set(ctx.funcs) | set(getattr(typed, "dims", {}))
    f, i, j = fresh_name("F", taken, "_"), fresh_name("i", taken, "_"), fresh_name("j", taken, "_")
    if typed is not None and v in ctx.leaves:
        raise Unsupported(f"{var} occurs in the form said to be free of it")
    if typed is not None and v in typed.leaves:
        typ = typed.leaves[v]
        # the sizes of var's type that the expression does not bind
        extra = sorted(d for d in typed.dims if d not in ctx.dims and d in re.findall(r"[A-Za-z_][\w']*", typ))
        if extra:
            binders.insert(0, "(" + " ".join(extra) + " : nat)")
        why = f"{var} does not occur in the form: the form, a function of {var}, is constant"
    elif v in ctx.leaves:
        # the kernel said it does not occur, yet it does: the statement is still made (Coq rejects it)
        typ = ctx.leaves[v]
        binders = [b for b in binders if not b.startswith(f"({v} :")]
        why = f"the expression, a function of {var}, is constant"
    else:
        rs, cs = fresh_name(f"rs_{v}", taken, "_"), fresh_name(f"cs_{v}", taken, "_")
        binders.append(f"({rs} {cs} : seq nat)")
        typ = f"mx R {rs} {cs}"
        why = f"{var} does not occur: the expression, a function of {var} (a matrix of any index spaces), is constant"
    w = fresh_name(v + "'", taken | {v}, "_")
    statement = (f"Theorem {name} " + " ".join(binders) + " :\n"
                 f"  (* {why} *)\n"
                 f"  let {f} := fun {v} : {typ} => {body} in\n"
                 f"  forall {v} {w} : {typ}, {f} {v} =m {f} {w}.")
    proof = f"move=> {f} {v} {w} {i} {j}; reflexivity."
    return Exported(name, statement, proof)


def by_conversion(t: Exported) -> bool:
    """Whether ``t`` is a constancy proved by conversion (:func:`constant_in`): no sum is expanded,
    so the tier's statement budget, a bound on the prenex sums' cost, does not apply to it."""
    return bool(re.fullmatch(r"move=> (\S+ ){4}\S+; reflexivity\.", t.proof)) and "\n  let " in t.statement


def export_independence(name: str, data: dict) -> list[Exported]:
    """The theorems of an ``independence`` certificate (the module's docstring)."""
    expr, var, form = data["expr"], data["var"], data.get("form")
    if form is None:
        return [constant_in(name, expr, var)]
    typed = Ctx()
    term(expr, typed)
    if ident(var) not in typed.leaves:
        raise Unsupported(f"{var} does not occur in the expression said to equal a form free of it")
    eq = export_identity(f"{name}_eq", expr, form, hypotheses=tuple(data.get("hypotheses") or ()))
    using = re.fullmatch(r"symuat_entry using \((.*)\)\.", eq.proof)
    if using:
        # the premises' line sums are folded from innermost sums: T12's line (over N) is the
        # outermost of four, brought innermost by three rotations first; else the plain tactic
        lines = using.group(1)
        eq = dataclasses.replace(eq, proof=(
            f"first [ symuat_entry using (rewrite [in LHS]sum_rot4 [in LHS]sum_rot4 [in LHS]sum_rot4; {lines})"
            f" | symuat_entry using ({lines}) ]."))
    return [eq, constant_in(f"{name}_form", form, var, typed)]


def export_dependence_on_hypotheses(name: str, data: dict) -> list[Exported]:
    """"``expr`` depends on ``var``" for a check decided under hypotheses (rows of ``H`` summing
    to 1): two values of ``var``, both on the hypotheses, everything else equal, at which
    ``expr`` differs — ``~ (forall sizes … var var', P(var) -> P(var') -> expr =m expr[var'/var])``
    (:func:`~symuat.certify.witness.export_witness` with the premises), each premise proved at
    the witness by computation (every line of the concrete matrix, :func:`_premise_proof`), the
    inequality by :coq:`symuat_refute`."""
    from symuat.certify.export import premise
    from symuat.certify.witness import export_witness, sigma_of

    hyps = tuple(data.get("hypotheses") or ())
    var = data["var"]
    if not hyps:
        raise Unsupported("a dependence on hypotheses without hypotheses")
    sizes = data["sizes"]

    def premises(ctx: Ctx):
        out = []
        for hyp in dict.fromkeys(hyps):
            if hyp.name != var:
                raise Unsupported(f"a hypothesis on {hyp.name}, not on {var}: no value of it is varied")
            for leaf in (hyp, dataclasses.replace(hyp, name=var + "'")):
                text = premise(leaf, ctx)
                out.append((text, _premise_proof(text, ctx, sizes)))
        return out

    return export_witness(name, dict(data, sigma=sigma_of(data)), tactic="symuat_refute", premises=premises)


def _premise_proof(text: str, ctx: Ctx, sizes: dict) -> str:
    """A line-sum premise (``forall (i : 'I_h) (a : 'I_N), Σ_b … = v``, :func:`~symuat.certify.export.premise`)
    at the witness's concrete matrix, proved by computation: every ordinal of the binders taken
    in turn (``case``: the concrete sizes), the sum computed (:coq:`symuat_refute`'s listing of the
    ordinals, ``vm_compute``) to ``true`` of ``_ == v``."""
    head = text.split(",", 1)[0]
    binders = re.findall(r"\(([\w']+) : 'I_([\w']+)\)", head)
    if not head.startswith("forall") or not binders:
        raise Unsupported(f"a premise not of the form forall (i : 'I_n) …: {text[:80]}")
    cases = []
    for k, (b, dim) in enumerate(binders):
        sym = ctx.dims.get(dim)
        if sym is None or sym.name not in sizes:
            raise Unsupported(f"the witness gives no value for the size {dim} of a premise")
        inner = f"k{k}"
        for _ in range(int(sizes[sym.name])):
            inner = f"[|{inner}]"
        cases.append(f"case: {b} => [{inner} Hk{k}] //")
    names = " ".join(b for b, _ in binders)
    return (f"(ltac:(move=> {names}; apply/eqP; " + "; ".join(cases)
            + "; rewrite ?index_enum_ordl ?unlock; vm_compute; reflexivity))")


def reason(certificates: list) -> str:
    """What the theorems of a check's ``independence``/``dependence_hypotheses`` certificates
    certify, for the record's reason ("" for a check with neither)."""
    out = []
    for kind, data in certificates:
        if kind not in ("independence", "dependence_hypotheses"):
            continue  # another exporter's certificate (its data, e.g. hypotheses, are its own)
        var = data.get("var")
        hyps = "; ".join(h.latex() for h in dict.fromkeys(data.get("hypotheses") or ()))
        if kind == "independence" and data.get("form") is None:
            out.append(f"certified: the expression as a Coq function of {var} is constant (by conversion; "
                       f"{var} does not occur, so the statement is for {var} of any index spaces)")
        elif kind == "independence":
            out.append(f"certified: the expression equals a form free of {var}"
                       + (f" (premise: {hyps}, the check's hypothesis)" if hyps else "")
                       + f", and that form as a Coq function of {var} is constant (by conversion)")
        elif kind == "dependence_hypotheses":
            sizes = ", ".join(f"{k}={v}" for k, v in data["sizes"].items())
            text = (f"certified: two values of {var}, both satisfying {hyps} (the check's hypothesis, premises "
                    f"of the theorem), everything else equal, at which the expression differs ({sizes}; by computation)")
            if not data.get("verdict_witness_on_hypotheses", True):
                text += ("; the verdict's own witness breaks the hypothesis (Coq cannot prove its premise), so the "
                         "certificate's witness is the smallest one on it")
            out.append(text)
    return "; ".join(out)
