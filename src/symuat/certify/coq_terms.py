r"""How the parts of a SymPy statement are written in Coq, over the library in ``coq/`` (SymuatMx):
the names, the sizes and the matrix terms every exporter of :mod:`symuat.certify` shares.

* :func:`ident` — a SymPy name as a Coq identifier (renamed off :data:`RESERVED`, the names the
  library and Coq use);
* :class:`Ctx` — what a statement binds as it is written (its dimensions, leaves with their Coq
  types, elementwise functions, the heads of the sums it is inside, the range hypotheses of fixed
  positions);
* :func:`nat_expr`, :func:`int_expr` — a size as a ``nat``, an offset as a MathComp ``int``;
* :func:`term` — a matrix expression as a Coq ``mx`` term: every operation the library's
  definition of it (its index rule);
* :func:`strip` — a term without its outer parentheses;
* :class:`Unsupported` — raised, with the reason, for what the library has no definition of.

The statements' exporters (:mod:`symuat.certify.export`, :mod:`~symuat.certify.witness`,
:mod:`~symuat.certify.density`, …) and the printer of the normal form
(:mod:`symuat.certify.normal_form`) build on these; none of them imports another's private names.

>>> from sympy import MatrixSymbol, symbols
>>> from symuat.expr.diamond import Diamond
>>> m, n = symbols("m n", positive=True, integer=True)
>>> ctx = Ctx()
>>> term(Diamond(MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)).T, ctx)
'(tr (diamond W x))'
>>> ctx.leaves, sorted(ctx.dims)
({'W': 'mx R [:: m] [:: n]', 'x': 'mx R [:: m] [::]'}, ['m', 'n'])
>>> ident("mul"), ident("W_q"), ident("2x")
('mul_', 'W_q', 'v2x')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sympy as sp
from sympy.matrices.expressions import (
    Identity, KroneckerProduct, MatAdd, MatMul, MatPow, MatrixExpr, MatrixSymbol, OneMatrix,
    Transpose, ZeroMatrix,
)

from symuat.kernel.index_calculus import col_space, row_space, space_of


class Unsupported(Exception):
    """The statement is outside the fragment the Coq library defines."""


#: names the library or Coq use; a leaf with one of these names is renamed
RESERVED = {"mul", "tr", "add", "scale", "zero", "ones", "idm", "kron", "vec_r", "vec_c", "diamond",
             "diamond_vm", "diamond_prod", "selector", "headsum", "ew", "hadamard", "diag", "mtrace", "diagonal", "cmask", "mx", "R",
             "sdelta", "shift", "conv",
             "meq", "delta", "deltaI", "sumI", "idx", "dl", "commutation", "I", "J", "at", "as",
             "fun", "forall", "match", "with", "end", "in", "let", "if", "then", "else", "Type",
             "Prop", "Set", "nat", "seq", "fix", "is", "return", "tt", "unit", "x0"}


def ident(name: str) -> str:
    out = re.sub(r"[^A-Za-z0-9_']", "_", name)
    if not out or not (out[0].isalpha()):
        out = "v" + out
    return out + "_" if out in RESERVED else out


@dataclass
class Ctx:
    dims: dict = field(default_factory=dict)      # coq name -> sympy symbol
    leaves: dict = field(default_factory=dict)    # coq name -> coq type
    funcs: dict = field(default_factory=dict)     # coq name -> "R -> R"
    heads: dict = field(default_factory=dict)     # sympy head symbol -> (coq name, range text)
    ranges: dict = field(default_factory=dict)    # hypothesis name -> "(p < n)%N" (a fixed position)

    def dim(self, d) -> str:
        d = sp.sympify(d)
        for s in d.free_symbols:
            self.dims[ident(s.name)] = s
        if d.is_Symbol:
            return ident(d.name)
        if d.is_Integer and d >= 0:
            return str(int(d))
        return "(" + nat_expr(d) + ")%N"

    def space(self, space) -> str:
        return "[:: " + "; ".join(self.dim(d) for d in space) + "]" if space else "[::]"

    def leaf(self, name: str, typ: str) -> str:
        coq = ident(name)
        old = self.leaves.get(coq)
        if old is not None and old != typ:
            raise Unsupported(f"leaf {name} with two types ({old}; {typ})")
        self.leaves[coq] = typ
        return coq


def int_expr(d, ctx) -> str:
    """An integer offset (a polynomial in the dimensions) as a MathComp ``int``."""
    if d.is_Symbol:
        return f"{ctx.dim(d)}%:Z"
    if d.is_Integer:
        return f"{int(d)}%:Z" if d >= 0 else f"(- {-int(d)}%:Z)"
    if d.is_Add:
        return "(" + " + ".join(int_expr(a, ctx) for a in d.args) + ")"
    if d.is_Mul:
        return "(" + " * ".join(int_expr(a, ctx) for a in d.args) + ")"
    raise Unsupported(f"offset {d} is not a polynomial with integer coefficients")


def nat_expr(d) -> str:
    if d.is_Symbol:
        return ident(d.name)
    if d.is_Integer:
        if d < 0:
            raise Unsupported(f"negative dimension term {d}")
        return str(int(d))
    if d.is_Add:
        return " + ".join(nat_expr(a) for a in d.args)
    if d.is_Mul:
        return " * ".join(f"({nat_expr(a)})" for a in d.args)
    if d.is_Pow and d.exp.is_Integer and d.exp > 0:
        return " * ".join([f"({nat_expr(d.base)})"] * int(d.exp))
    raise Unsupported(f"dimension {d} is not a polynomial with natural coefficients")


def _left_fold(op: str, parts: list[str]) -> str:
    """``(op (op a b) c)`` — a binary Coq operation applied left to right over ``parts``."""
    out = parts[0]
    for p in parts[1:]:
        out = f"({op} {out} {p})"
    return out


def term(e, ctx: Ctx) -> str:
    name = type(e).__name__
    if isinstance(e, MatrixSymbol) or name == "BlockSymbol":
        typ = f"mx R {ctx.space(row_space(e))} {ctx.space(col_space(e))}"
        return ctx.leaf(e.name, typ)
    if name == "HeadMatrix" or name == "CausalHeadMatrix":
        head = e.args[1]
        if head not in ctx.heads:
            raise Unsupported(f"{e.name}_{head} outside a sum over {head}")
        # the family is indexed by the range of the sum it is used in (Σ_{i<1} H_i: one head)
        typ = f"'I_{ctx.heads[head][1]} -> mx R {ctx.space(space_of(e.args[3]))} {ctx.space(space_of(e.args[4]))}"
        out = f"{ctx.leaf(e.name, typ)} {ctx.heads[head][0]}"
        return f"(cmask ({out}))" if name == "CausalHeadMatrix" else f"({out})"
    if name == "PairHeadMatrix":
        a, b, g, r, rows, cols, causal = e.args[1:]
        typ = (f"'I_{ctx.dim(g)} -> 'I_{ctx.dim(r)} -> mx R {ctx.space(space_of(rows))} "
               f"{ctx.space(space_of(cols))}")
        for head in (a, b):
            if head not in ctx.heads:
                raise Unsupported(f"{e.name} outside a sum over {head}")
        out = f"{ctx.leaf(e.name, typ)} {ctx.heads[a][0]} {ctx.heads[b][0]}"
        return f"(cmask ({out}))" if bool(causal) else f"({out})"
    if name == "Basis":  # e_p at a fixed position p: the theorem assumes p < n (the vector exists)
        n = ctx.dim(e.args[1])
        hyp = f"h_{ident(n)}_{e.position}"
        ctx.ranges[hyp] = f"({e.position} < {n})%N"
        return f"(selector (Ordinal {hyp}))"
    if name == "Selector":
        head = e.args[0]
        if head not in ctx.heads:
            raise Unsupported(f"e_{head} outside a sum over {head}")
        return f"(selector {ctx.heads[head][0]})"
    if name == "HeadSum":
        head, h, body = e.args
        coq = "h_" + ident(str(head))
        saved = ctx.heads.get(head)
        ctx.heads[head] = (coq, ctx.dim(h))
        try:
            inner = term(body, ctx)
        finally:
            if saved is None:
                ctx.heads.pop(head)
            else:
                ctx.heads[head] = saved
        return f"(headsum (fun {coq} : 'I_{ctx.dim(h)} => {inner}))"
    if isinstance(e, Transpose):
        return f"(tr {term(e.arg, ctx)})"
    if isinstance(e, MatMul):
        coeff = sp.Integer(1)
        mats = []
        for a in e.args:
            if isinstance(a, MatrixExpr):
                mats.append(a)
            else:
                coeff *= a
        out = _left_fold("mul", [term(m, ctx) for m in mats])
        if coeff != 1:
            out = f"(scale {_scalar(coeff)} {out})"
        return out
    if isinstance(e, MatAdd):
        return _left_fold("add", [term(a, ctx) for a in e.args])
    if isinstance(e, KroneckerProduct):
        return _left_fold("kron", [term(a, ctx) for a in e.args])
    if isinstance(e, MatPow) and sp.sympify(e.exp).is_Integer and int(e.exp) >= 1:
        return term(MatMul(*[e.base] * int(e.exp)), ctx)
    if isinstance(e, Identity):
        return f"(idm {ctx.space(space_of(e.rows))})"
    if isinstance(e, ZeroMatrix):
        return f"(zero {ctx.space(space_of(e.rows))} {ctx.space(space_of(e.cols))})"
    if isinstance(e, OneMatrix):
        return f"(ones {ctx.space(space_of(e.rows))} {ctx.space(space_of(e.cols))})"
    if name == "Vec":
        return f"({'vec_r' if e.order == 'row' else 'vec_c'} {term(e.arg, ctx)})"
    if name == "Diamond":
        kind = e.kind
        if kind == "mv":
            return f"(diamond {term(e.left, ctx)} {term(e.right, ctx)})"
        if kind == "vm":
            return f"(diamond_vm {term(e.left, ctx)} {term(e.right, ctx)})"
        mm = e.mm
        if mm == "C-col":
            return f"(diamond {term(e.left, ctx)} {term(e.right, ctx)})"
        if mm == "C-prod":
            return f"(diamond_prod {term(e.left, ctx)} {term(e.right, ctx)})"
        raise Unsupported("matrix ⋄ matrix without a reading")
    if name == "Sigma":
        f = ident(e.fname)
        ctx.funcs[f] = "R -> R"
        return f"(ew {f} {term(e.arg, ctx)})"
    if name == "Diag":
        return f"(diag {term(e.arg, ctx)})"
    if name == "Hadamard":
        return f"(hadamard {term(e.args[0], ctx)} {term(e.args[1], ctx)})"
    if name == "TraceOf":  # SymPy's Trace (kernel.language)
        return f"(mtrace {term(e.arg, ctx)})"
    if name == "DiagonalVector":  # SymPy's DiagonalOf
        return f"(diagonal {term(e.arg, ctx)})"
    if name == "ShiftMatrix":
        n, tap, r = e.args
        if tap not in ctx.heads:
            raise Unsupported(f"shift S_{tap} outside a sum over {tap}")
        return f"(@shift R {ctx.dim(n)} _ ({int_expr(sp.sympify(r), ctx)}) {ctx.heads[tap][0]})"
    if name == "Conv1d":
        X, kernels, r = e.args
        if len(row_space(X)) != 1 or len(col_space(X)) != 1:
            raise Unsupported("a convolution of a matrix whose axes are not single dimensions")
        m, h = ctx.dim(X.shape[1]), ctx.dim(2 * r + 1)
        K = ctx.leaf(kernels.name, f"'I_{h} -> mx R [:: {m}] [:: {m}]")
        return f"(conv {ctx.dim(r)} {term(X, ctx)} {K})"
    if name == "Commutation":
        return f"(commutation {ctx.dim(e.args[0])} {ctx.dim(e.args[1])})"
    raise Unsupported(f"no Coq definition for {name}")


def _scalar(c) -> str:
    c = sp.sympify(c)
    if c.is_Integer:
        return f"({int(c)})%:~R" if c < 0 else f"{int(c)}%:R"
    raise Unsupported(f"scalar coefficient {c} (only integers are exported)")


def strip(s: str) -> str:
    return s[1:-1] if s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]) else s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0
