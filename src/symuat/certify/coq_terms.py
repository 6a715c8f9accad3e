r"""How the parts of a SymPy statement are written in Coq, over the library in ``coq/`` (SymuatMx):
the names, the sizes and the matrix terms every exporter of :mod:`symuat.certify` shares.

* :func:`ident` — a SymPy name as a Coq identifier (renamed off :data:`RESERVED`, the names the
  library and Coq use);
* :class:`Ctx` — what a statement binds as it is written (its dimensions, leaves with their Coq
  types, elementwise functions, the heads of the sums it is inside, the range hypotheses of fixed
  positions);
* :func:`nat_expr`, :func:`int_expr` — a size as a ``nat``, an offset as a MathComp ``int``;
* :func:`term` — a matrix expression as a Coq ``mx`` term: every operation the library's
  definition of it (its index rule), written by the entry of :data:`NODES` for its kind — one
  entry per node kind, its writer and the library definitions it uses; :func:`definitions` lists
  those, the ones the library's ``symuat_unfold_nodes`` (``coq/SymuatMx.v``) unfolds;
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
>>> NODES["Diamond"].definitions
('diamond', 'diamond_vm', 'diamond_prod')
>>> ident("mul"), ident("W_q"), ident("2x")
('mul_', 'W_q', 'v2x')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from sympy.matrices.expressions import MatMul, MatrixExpr

from symuat.kernel.index_calculus import col_space, row_space, space_of


class Unsupported(Exception):
    """The statement is outside the fragment the Coq library defines."""


def ident(name: str) -> str:
    """A SymPy name as a Coq identifier: other characters as ``_``, a leading letter, off :data:`RESERVED`."""
    out = re.sub(r"[^A-Za-z0-9_']", "_", name)
    if not out or not (out[0].isalpha()):
        out = "v" + out
    return out + "_" if out in RESERVED else out


def nat_list(sizes: list[str]) -> str:
    """A list of sizes (Coq texts) as Coq reads it, a literal size in ``nat``'s scope: the
    statements open ``ring_scope``, where the ``2`` of ``[:: 2]`` would be a ring element.

    >>> nat_list(["N", "2"]), nat_list([])
    ('[:: N; 2%N]', '[::]')
    """
    return "[:: " + "; ".join(f"{d}%N" if d.isdigit() else d for d in sizes) + "]" if sizes else "[::]"


@dataclass
class Ctx:
    """What a statement binds, filled in as its terms are written (the theorem's binders)."""

    dims: dict = field(default_factory=dict)      # coq name -> sympy symbol
    leaves: dict = field(default_factory=dict)    # coq name -> coq type
    funcs: dict = field(default_factory=dict)     # coq name -> "R -> R"
    heads: dict = field(default_factory=dict)     # sympy head symbol -> (coq name, range text)
    ranges: dict = field(default_factory=dict)    # hypothesis name -> "(p < n)%N" (a fixed position)
    #: coq name of an inverse -> the size it inverts (a SymPy expression): ``1/M`` is written
    #: ``inv_M``, an element of ``R`` bound with the premise ``M%:R * inv_M = 1`` (:func:`unit_premise`)
    inverses: dict = field(default_factory=dict)

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
        """An index space: :func:`nat_list` of its sizes."""
        return nat_list([self.dim(d) for d in space])

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
    """A size (a polynomial in the dimensions with natural coefficients) as a Coq ``nat``."""
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


@dataclass(frozen=True)
class CoqNode:
    """How one kind of node is written in Coq: ``write(e, ctx)`` gives its term, built with the
    library's ``definitions`` (``coq/SymuatMx.v``) — the constants a proof unfolds to reach the
    entries (the Ltac ``symuat_unfold_nodes`` unfolds exactly those of :func:`definitions`)."""

    write: Callable[[Any, Ctx], str]
    definitions: tuple[str, ...] = ()


#: node kind (the class name, looked up along the class's MRO) → how it is written: the one table
#: (a new node is one entry here, one definition in ``coq/SymuatMx.v`` and its name in
#: ``symuat_unfold_nodes`` there; ``tests/test_certify_terms.py`` holds the two in step)
NODES: dict[str, CoqNode] = {}


def writes(*kinds: str, definitions: tuple[str, ...] = ()):
    """Register the decorated function as the Coq writer of the node kinds ``kinds``."""

    def register(fn: Callable[[Any, Ctx], str]) -> Callable[[Any, Ctx], str]:
        for kind in kinds:
            NODES[kind] = CoqNode(fn, definitions)
        return fn

    return register


def definitions() -> list[str]:
    """Every library definition a written term may use, each once, in the table's order."""
    return list(dict.fromkeys(d for node in NODES.values() for d in node.definitions))


def term(e, ctx: Ctx) -> str:
    """``e`` as a Coq ``mx`` term (its leaves, dimensions and functions recorded in ``ctx``)."""
    for cls in type(e).__mro__:
        node = NODES.get(cls.__name__)
        if node is not None:
            return node.write(e, ctx)
    raise Unsupported(f"no Coq definition for {type(e).__name__}")


@writes("MatrixSymbol", "BlockSymbol")
def _leaf(e, ctx: Ctx) -> str:
    typ = f"mx R {ctx.space(row_space(e))} {ctx.space(col_space(e))}"
    return ctx.leaf(e.name, typ)


@writes("HeadMatrix", "CausalHeadMatrix", definitions=("cmask",))
def _head_matrix(e, ctx: Ctx) -> str:
    head = e.args[1]
    if head not in ctx.heads:
        raise Unsupported(f"{e.name}_{head} outside a sum over {head}")
    # the family is indexed by the range of the sum it is used in (Σ_{i<1} H_i: one head)
    typ = f"'I_{ctx.heads[head][1]} -> mx R {ctx.space(space_of(e.args[3]))} {ctx.space(space_of(e.args[4]))}"
    out = f"{ctx.leaf(e.name, typ)} {ctx.heads[head][0]}"
    return f"(cmask ({out}))" if type(e).__name__ == "CausalHeadMatrix" else f"({out})"


@writes("PairHeadMatrix", definitions=("cmask",))
def _pair_head_matrix(e, ctx: Ctx) -> str:
    a, b, g, r, rows, cols, causal = e.args[1:]
    typ = (f"'I_{ctx.dim(g)} -> 'I_{ctx.dim(r)} -> mx R {ctx.space(space_of(rows))} "
           f"{ctx.space(space_of(cols))}")
    for head in (a, b):
        if head not in ctx.heads:
            raise Unsupported(f"{e.name} outside a sum over {head}")
    out = f"{ctx.leaf(e.name, typ)} {ctx.heads[a][0]} {ctx.heads[b][0]}"
    return f"(cmask ({out}))" if bool(causal) else f"({out})"


@writes("Basis", definitions=("selector",))
def _basis(e, ctx: Ctx) -> str:
    """e_p at a fixed position p: the theorem assumes p < n (the vector exists)."""
    n = ctx.dim(e.args[1])
    hyp = f"h_{ident(n)}_{e.position}"
    ctx.ranges[hyp] = f"({e.position} < {n})%N"
    return f"(selector (Ordinal {hyp}))"


@writes("Selector", definitions=("selector",))
def _selector(e, ctx: Ctx) -> str:
    head = e.args[0]
    if head not in ctx.heads:
        raise Unsupported(f"e_{head} outside a sum over {head}")
    return f"(selector {ctx.heads[head][0]})"


@writes("HeadSum", definitions=("headsum",))
def _head_sum(e, ctx: Ctx) -> str:
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


@writes("Transpose", definitions=("tr",))
def _transpose(e, ctx: Ctx) -> str:
    return f"(tr {term(e.arg, ctx)})"


@writes("MatMul", definitions=("mul", "scale"))
def _product(e, ctx: Ctx) -> str:
    coeff = sp.Integer(1)
    mats = []
    for a in e.args:
        if isinstance(a, MatrixExpr):
            mats.append(a)
        else:
            coeff *= a
    out = _left_fold("mul", [term(m, ctx) for m in mats])
    if coeff != 1:
        out = f"(scale {_scalar(coeff, ctx)} {out})"
    return out


@writes("MatAdd", definitions=("add",))
def _sum(e, ctx: Ctx) -> str:
    return _left_fold("add", [term(a, ctx) for a in e.args])


@writes("KroneckerProduct", definitions=("kron",))
def _kronecker(e, ctx: Ctx) -> str:
    return _left_fold("kron", [term(a, ctx) for a in e.args])


@writes("MatPow", definitions=("mul",))
def _power(e, ctx: Ctx) -> str:
    if sp.sympify(e.exp).is_Integer and int(e.exp) >= 1:
        return term(MatMul(*[e.base] * int(e.exp)), ctx)
    raise Unsupported(f"no Coq definition for {type(e).__name__}")


@writes("Identity", definitions=("idm",))
def _identity(e, ctx: Ctx) -> str:
    return f"(idm {ctx.space(space_of(e.rows))})"


@writes("ZeroMatrix", definitions=("zero",))
def _zero(e, ctx: Ctx) -> str:
    return f"(zero {ctx.space(space_of(e.rows))} {ctx.space(space_of(e.cols))})"


@writes("OneMatrix", definitions=("ones",))
def _ones(e, ctx: Ctx) -> str:
    return f"(ones {ctx.space(space_of(e.rows))} {ctx.space(space_of(e.cols))})"


@writes("Vec", definitions=("vec_r", "vec_c"))
def _vec(e, ctx: Ctx) -> str:
    return f"({'vec_r' if e.order == 'row' else 'vec_c'} {term(e.arg, ctx)})"


@writes("Diamond", definitions=("diamond", "diamond_vm", "diamond_prod"))
def _diamond(e, ctx: Ctx) -> str:
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


@writes("Sigma", definitions=("ew",))
def _elementwise(e, ctx: Ctx) -> str:
    f = ident(e.fname)
    ctx.funcs[f] = "R -> R"
    return f"(ew {f} {term(e.arg, ctx)})"


@writes("Diag", definitions=("diag",))
def _diag(e, ctx: Ctx) -> str:
    return f"(diag {term(e.arg, ctx)})"


@writes("Hadamard", definitions=("hadamard",))
def _hadamard(e, ctx: Ctx) -> str:
    return f"(hadamard {term(e.args[0], ctx)} {term(e.args[1], ctx)})"


@writes("TraceOf", definitions=("mtrace",))  # SymPy's Trace (kernel.language)
def _trace(e, ctx: Ctx) -> str:
    return f"(mtrace {term(e.arg, ctx)})"


@writes("DiagonalVector", definitions=("diagonal",))  # SymPy's DiagonalOf
def _diagonal(e, ctx: Ctx) -> str:
    return f"(diagonal {term(e.arg, ctx)})"


@writes("ShiftMatrix", definitions=("shift",))
def _shift(e, ctx: Ctx) -> str:
    n, tap, r = e.args
    if tap not in ctx.heads:
        raise Unsupported(f"shift S_{tap} outside a sum over {tap}")
    return f"(@shift R {ctx.dim(n)} _ ({int_expr(sp.sympify(r), ctx)}) {ctx.heads[tap][0]})"


@writes("Conv1d", definitions=("conv",))
def _conv(e, ctx: Ctx) -> str:
    X, kernels, r = e.args
    if len(row_space(X)) != 1 or len(col_space(X)) != 1:
        raise Unsupported("a convolution of a matrix whose axes are not single dimensions")
    m, h = ctx.dim(X.shape[1]), ctx.dim(2 * r + 1)
    K = ctx.leaf(kernels.name, f"'I_{h} -> mx R {nat_list([m])} {nat_list([m])}")
    return f"(conv {ctx.dim(r)} {term(X, ctx)} {K})"


@writes("Commutation", definitions=("commutation",))
def _commutation(e, ctx: Ctx) -> str:
    return f"(commutation {ctx.dim(e.args[0])} {ctx.dim(e.args[1])})"


@writes("AxisBlock", definitions=("axis_block",))
def _axis_block(e, ctx: Ctx) -> str:
    """The block ``[o, o+m)`` of an axis of length ``n``: ``axis_block n o ws``, entry
    ``[u = o + flat(j)]`` (the block's own space ``ws``, row-major), as symuat's normal form reads it."""
    n, offset = e.args[0], e.args[1]
    if len(space_of(n)) != 1:
        raise Unsupported(f"a block of an axis of length {n} (not one dimension)")
    return f"(axis_block {ctx.dim(n)} {ctx.dim(offset)} {ctx.space(col_space(e))})"


@writes("PairRotation", definitions=("rot_half", "rot_inter"))
def _pair_rotation(e, ctx: Ctx) -> str:
    """Generic 2×2 blocks ``ρ_k`` on the pairs of a head (``rot_half``: pair ``k`` at ``(t, k)``;
    ``rot_inter``: at ``(k, t)``), the blocks a leaf over ``[:: e; 2] × [:: 2]``."""
    width = e.args[1]
    if len(space_of(width)) != 1:
        raise Unsupported(f"a rotation of {width} pairs (not one dimension)")
    rho = ctx.leaf(e.name, f"mx R {ctx.space(space_of(width) + (sp.Integer(2),))} {ctx.space((sp.Integer(2),))}")
    return f"({'rot_half' if e.layout == 'half' else 'rot_inter'} {rho})"


#: names the library or Coq use; a leaf with one of these names is renamed (the nodes' definitions
#: come from :data:`NODES`)
RESERVED = set(definitions()) | {
    "mx", "R", "sdelta", "meq", "delta", "deltaI", "sumI", "idx", "dl", "I", "J", "at", "as",
    "fun", "forall", "match", "with", "end", "in", "let", "if", "then", "else", "Type",
    "Prop", "Set", "nat", "seq", "fix", "is", "return", "tt", "unit", "x0"}



def _scalar(c, ctx: Ctx | None = None) -> str:
    r"""A scalar coefficient as an element of ``R``: an integer ``k`` as ``k%:R`` (``(-k)%:~R``),
    a fraction ``k/D`` whose denominator ``D`` is a size (a polynomial in the dimensions with
    natural coefficients, or a positive integer) as ``k`` times the inverse of ``D`` (:func:`inverse`:
    ``inv_D``, bound with the premise that it is ``D``'s inverse in ``R``).

    >>> M = sp.Symbol("M", positive=True, integer=True)
    >>> ctx = Ctx()
    >>> _scalar(-1 / M, ctx), _scalar(3 / (M + 1), ctx), _scalar(-2, ctx)
    ('(- inv_M)', '(3%:R * inv_1_M)', '(-2)%:~R')
    >>> [unit_premise(n, ctx) for n in ctx.inverses]
    ['M%:R * inv_M = 1', '(1 + M)%N%:R * inv_1_M = 1']
    """
    c = sp.sympify(c)
    if c.is_Integer:
        return f"({int(c)})%:~R" if c < 0 else f"{int(c)}%:R"
    num, den = sp.fraction(sp.together(c))
    if ctx is None or not num.is_Integer or not all(d.is_integer and d.is_positive for d in den.free_symbols):
        raise Unsupported(f"scalar coefficient {c} (an integer over a size is exported, not this)")
    inv = inverse(den, ctx)
    k = int(num)
    return (inv if k == 1 else f"(- {inv})" if k == -1
            else f"({k}%:R * {inv})" if k > 0 else f"(({k})%:~R * {inv})")


def inverse(den, ctx: Ctx) -> str:
    """The Coq name of ``1/den`` (``den`` a size: a polynomial in the dimensions with natural
    coefficients, or a positive integer), recorded in ``ctx.inverses``: the statement binds it as an
    element of ``R`` with :func:`unit_premise`, so it says "for every commutative ring in which
    ``den`` is a unit" — over ℝ (or any field of characteristic 0) every size ``den ≥ 1`` is one."""
    den = sp.sympify(den)
    if den.is_Integer and den <= 0:
        raise Unsupported(f"scalar coefficient with denominator {den}")
    size = ctx.dim(den)  # raises for what is not a size
    for name, d in ctx.inverses.items():
        if sp.simplify(d - den) == 0:
            return name
    name = "inv_" + (re.sub(r"[^A-Za-z0-9]+", "_", size.replace("%N", "")).strip("_") or "0")
    name = fresh_name(name, set(ctx.inverses) | set(ctx.dims) | set(ctx.leaves) | set(ctx.funcs))
    ctx.inverses[name] = den
    return name


def fresh_name(base: str, taken: set, mark: str = "'") -> str:
    """``base``, with ``mark`` appended until it is not in ``taken``; the name is added to ``taken``.

    >>> taken = {"s", "s'"}
    >>> fresh_name("s", taken), fresh_name("i", taken, "_"), fresh_name("i", taken, "_")
    ("s''", 'i', 'i_')
    """
    out = base
    while out in taken:
        out += mark
    taken.add(out)
    return out


def unit_premise(name: str, ctx: Ctx) -> str:
    """The premise binding the inverse ``name`` (:func:`inverse`): ``D%:R * name = 1``."""
    size = ctx.dim(ctx.inverses[name])
    cast = f"{size}%:R" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_']*", size) else (
        f"{size}%:R" if size.endswith("%N") else f"{size}%N%:R")
    return f"{cast} * {name} = 1"


def strip(s: str) -> str:
    """``s`` without its outer parentheses, when they enclose all of it."""
    return s[1:-1] if s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]) else s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0
