r"""Index-level normal forms of matrix expressions, for symbolic dimensions.

This is symuat's symbolic prover. It does not call SymPy's matrix simplification (some of its
rewrite rules are unsound for symbolic shapes); it rewrites an expression into the entries it
denotes and compares those.

Spaces and multi-indices
------------------------
Every matrix expression has a *row space* and a *column space*: a tuple of dimensions. A plain
``m×n`` symbol has spaces ``(m,)`` and ``(n,)``; a size-1 axis has the empty space ``()``. A
Kronecker product concatenates the spaces of its factors, and a flattening ``vec`` of an
``N×M`` matrix has row space ``(N, M)`` (row-major, index ``nM+m``) or ``(M, N)``
(column-major, index ``mN+n``). An entry is addressed by one index variable per dimension —
the multi-index view of mathlib's ``Matrix.kronecker`` and ``Matrix.vec``, where the
flattened index set is a product type. Flattening is a bijection between ``[0,N)×[0,M)`` and
``[0,NM)`` (Euclidean division), so equal entries over equal spaces means equal matrices.

Entries
-------
An entry is a finite sum of *terms* ``c · Σ_{k∈K} Π factors`` where each factor is

* ``('E', name, I, J)`` — entry ``name[I, J]`` of a matrix symbol,
* ``('D', a, b)`` — Kronecker delta :math:`\delta_{ab}`,
* ``('T', a, b)`` — the indicator :math:`[a\ge b]` (a causal mask),
* ``('S', b, a, k, c)`` — the shifted Kronecker delta :math:`\delta_{b,\,a+k+c}` (``k`` an index
  or ``None``, ``c`` a SymPy offset such as :math:`-r`); with :math:`b` ranging over
  :math:`[0,N)` it carries the boundary indicator :math:`[0\le a+k+c<N]` (zero padding). It is
  kept as a constraint (never eliminated), so equal forms need the same shifts;
* ``('B', u, J, o, W)`` — the block indicator :math:`[u=o+\mathrm{flat}_W(J)]` of a block of one
  axis (:class:`symuat.kernel.head_maps.AxisBlock`): :math:`u\in[0,n)`, :math:`J` a multi-index
  over the block's space :math:`W` (row-major; empty for a one-wide block), offset :math:`o`, with
  :math:`o+\prod W\le n` checked when the block is built;
* ``('F', f, inner)`` — an elementwise function applied to an inner entry.

The rules that produce them are the definitions of the operations (``(AB)_{ij}=Σ_k A_{ik}B_{kj}``,
``(A^T)_{ij}=A_{ji}``, ``(A⊗B)_{(a,b),(c,d)}=A_{ac}B_{bd}``, …). Custom nodes supply their own
rule through ``_symuat_entry``.

Normal form and soundness
-------------------------
A term is normalised by (1) eliminating a delta with a summed index of the same range
(:math:`\sum_b\delta_{ab}f(b)=f(a)`), dropping :math:`\delta_{aa}`, (2) turning a sum over an
index that occurs nowhere into a factor of its range, and (3) renaming the summed indices
canonically (the lexicographically least renaming over all permutations). Like terms are then
collected with exact coefficients. Each step is an identity of finite sums valid for every
value of the dimensions, so equal normal forms prove equality for *all* dimensions. The
converse does not hold (the normal form is not complete): unequal forms prove nothing, and
:mod:`symuat.kernel.decide` then searches for a counterexample or expands at explicit sizes.

A summed block index is eliminated by two rules, each an identity of finite sums valid for every
value of the dimensions because :math:`0\le j+o<n`: :math:`\sum_u[u=j+o]=1`, and
:math:`\sum_u[u=j+o][u=j'+o']` is :math:`\delta_{jj'}` (one delta per axis: flattening is a
bijection) when :math:`o=o'` over the same space and :math:`0` when the
blocks :math:`[o,o+m)` and :math:`[o',o'+m')` are disjoint (decided by SymPy's sign rules on
positive dimensions; an undecided pair is left alone, which is sound).

Under a hypothesis of the statement (:mod:`symuat.kernel.hypotheses`, e.g.
:math:`\sum_bH_{ab}=1`) its rule is one more step, an identity of finite sums valid wherever the
hypothesis holds; equal forms then prove the identity under the hypothesis. A hypothesis may
also read the entries of its leaf in a canonical order (``canonical``: :math:`S_{ij}` and
:math:`S_{ji}` as one entry of a symmetric :math:`S`), applied whenever a factor is renamed — an
identity wherever the hypothesis holds, so the renaming stays canonical and sound.
"""

from __future__ import annotations

import contextvars
import itertools
from dataclasses import dataclass

import sympy as sp

from symuat.errors import describe
from symuat.kernel.assumptions import active
from sympy.matrices.expressions import (
    Identity,
    KroneckerProduct,
    MatAdd,
    MatMul,
    MatPow,
    MatrixExpr,
    MatrixSymbol,
    OneMatrix,
    Transpose,
    ZeroMatrix,
)


class SpaceMismatch(Exception):
    """Two index spaces that an operation requires equal are not structurally equal."""


Space = tuple  # tuple of SymPy dimension expressions


def space_of(dim) -> Space:
    """The index space of one axis of length ``dim``: empty for a size-1 axis."""
    dim = sp.sympify(dim)
    return () if dim == 1 else (dim,)


def row_space(expr) -> Space:
    if hasattr(expr, "_symuat_row_space"):
        return expr._symuat_row_space()
    if isinstance(expr, Transpose):
        return col_space(expr.arg)
    if isinstance(expr, MatMul):
        mats = [a for a in expr.args if isinstance(a, MatrixExpr)]
        return row_space(mats[0])
    if isinstance(expr, MatAdd):
        spaces = {row_space(a) for a in expr.args}
        if len(spaces) != 1:
            raise SpaceMismatch(f"terms of {describe(expr)} have row spaces {sorted(map(str, spaces))}")
        return spaces.pop()
    if isinstance(expr, KroneckerProduct):
        return sum((row_space(a) for a in expr.args), ())
    if isinstance(expr, MatPow):
        return row_space(expr.base)
    return space_of(expr.rows)


def col_space(expr) -> Space:
    if hasattr(expr, "_symuat_col_space"):
        return expr._symuat_col_space()
    if isinstance(expr, Transpose):
        return row_space(expr.arg)
    if isinstance(expr, MatMul):
        mats = [a for a in expr.args if isinstance(a, MatrixExpr)]
        return col_space(mats[-1])
    if isinstance(expr, MatAdd):
        spaces = {col_space(a) for a in expr.args}
        if len(spaces) != 1:
            raise SpaceMismatch(f"terms of {describe(expr)} have column spaces {sorted(map(str, spaces))}")
        return spaces.pop()
    if isinstance(expr, KroneckerProduct):
        return sum((col_space(a) for a in expr.args), ())
    if isinstance(expr, MatPow):
        return col_space(expr.base)
    return space_of(expr.cols)


@dataclass(frozen=True)
class Term:
    """``coeff · Σ_{bound} Π factors`` (before or after normalisation)."""

    coeff: sp.Expr
    factors: tuple
    bound: tuple  # names of summed indices


def _mul(a: list[Term], b: list[Term]) -> list[Term]:
    return [
        Term(sp.expand(s.coeff * t.coeff), s.factors + t.factors, s.bound + t.bound)
        for s in a
        for t in b
    ]


class IndexContext:
    """Builds entries of matrix expressions; owns the fresh index names and their ranges."""

    def __init__(self, depth: int = 0):
        self.env: dict = {}  # head symbol -> the bound index variable standing for it
        self.dims: dict[str, sp.Expr] = {}
        self._counters: dict[str, int] = {}
        self.depth = depth

    # -- indices ---------------------------------------------------------------------------
    def fresh(self, dim, prefix: str = "k") -> str:
        count = self._counters.get(prefix, 0)
        name = f"{prefix}{count}"
        self._counters[prefix] = count + 1
        self.dims[name] = sp.sympify(dim)
        return name

    def fresh_multi(self, space: Space, prefix: str = "k") -> tuple:
        return tuple(self.fresh(d, prefix) for d in space)

    # -- entries ---------------------------------------------------------------------------
    def entry(self, expr, I: tuple, J: tuple) -> list[Term]:
        """The entry ``expr[I, J]`` as a list of terms (not yet normalised)."""
        if hasattr(expr, "_symuat_entry"):
            return expr._symuat_entry(self, I, J)
        if isinstance(expr, MatrixSymbol):
            return [Term(sp.Integer(1), (("E", expr.name, tuple(I), tuple(J)),), ())]
        if isinstance(expr, Identity):
            if not I:  # Identity(1): a size-1 axis has no index
                return [Term(sp.Integer(1), (), ())]
            return [Term(sp.Integer(1), (_delta(I[0], J[0]),), ())]
        if isinstance(expr, MatPow) and sp.sympify(expr.exp).is_Integer and int(expr.exp) >= 1:
            return self.entry(MatMul(*[expr.base] * int(expr.exp)), I, J)
        if isinstance(expr, ZeroMatrix):
            return []
        if isinstance(expr, OneMatrix):
            return [Term(sp.Integer(1), (), ())]
        if isinstance(expr, Transpose):
            return self.entry(expr.arg, J, I)
        if isinstance(expr, MatAdd):
            out: list[Term] = []
            for arg in expr.args:
                if row_space(arg) != row_space(expr.args[0]) or col_space(arg) != col_space(
                    expr.args[0]
                ):
                    raise SpaceMismatch(f"cannot add {describe(expr.args[0])} and {describe(arg)}: spaces differ")
                out += self.entry(arg, I, J)
            return out
        if isinstance(expr, MatMul):
            coeff = sp.Integer(1)
            mats = []
            for arg in expr.args:
                if isinstance(arg, MatrixExpr):
                    mats.append(arg)
                else:
                    coeff *= arg
            result = [Term(coeff, (), ())]
            left_index = I
            for pos, mat in enumerate(mats):
                if pos == len(mats) - 1:
                    right_index = J
                else:
                    inner = col_space(mat)
                    if inner != row_space(mats[pos + 1]):
                        raise SpaceMismatch(
                            f"product {describe(mat)} · {describe(mats[pos + 1])}: column space {inner} "
                            f"≠ row space {row_space(mats[pos + 1])}"
                        )
                    right_index = self.fresh_multi(inner)
                    result = [Term(t.coeff, t.factors, t.bound + right_index) for t in result]
                result = _mul(result, self.entry(mat, left_index, right_index))
                left_index = right_index
            return result
        if isinstance(expr, KroneckerProduct):
            result = [Term(sp.Integer(1), (), ())]
            i0 = j0 = 0
            for arg in expr.args:
                r, c = len(row_space(arg)), len(col_space(arg))
                result = _mul(result, self.entry(arg, I[i0 : i0 + r], J[j0 : j0 + c]))
                i0, j0 = i0 + r, j0 + c
            return result
        raise TypeError(f"no index rule for {type(expr).__name__}: {expr}")


def _delta(a: str, b: str) -> tuple:
    return ("D",) + tuple(sorted((a, b)))


# --------------------------------------------------------------------------------------------
# normal form
# --------------------------------------------------------------------------------------------


def _rename_factor(factor: tuple, mapping: dict[str, str], dims: dict) -> tuple:
    kind = factor[0]
    if kind == "E":
        _, name, I, J = factor
        out = ("E", name, tuple(mapping.get(i, i) for i in I), tuple(mapping.get(j, j) for j in J))
        for hyp in _hypotheses():  # a symmetric leaf: its entry's indices in a canonical order
            canonical = getattr(hyp, "canonical", None)
            if canonical is not None:
                out = canonical(out)
        return out
    if kind == "D":
        return _delta(mapping.get(factor[1], factor[1]), mapping.get(factor[2], factor[2]))
    if kind == "T":
        return ("T", mapping.get(factor[1], factor[1]), mapping.get(factor[2], factor[2]))
    if kind == "S":
        _, b, a, k, c = factor
        return ("S", mapping.get(b, b), mapping.get(a, a), mapping.get(k, k) if k is not None else None, c)
    if kind == "B":
        _, u, js, o, widths = factor
        return ("B", mapping.get(u, u), tuple(mapping.get(j, j) for j in js), o, widths)
    if kind == "F":
        _, fname, inner = factor
        local_dims = dict(dims)
        terms = []
        for t, (coeff, factors, bound) in enumerate(inner):
            # each term's summed indices get names of their own: two terms may use one canonical
            # name for indices of different ranges (L2.2.1: ~1_1 < D in one, < F in the other)
            own = {b: f"{b}#{t}" for b, _ in bound}
            local = {k: v for k, v in mapping.items() if k not in own} | own
            for b, d in bound:
                local_dims[own[b]] = d
            terms.append(
                Term(coeff, tuple(_rename_factor(f, local, local_dims) for f in factors),
                     tuple(own[b] for b, _ in bound))
            )
        return ("F", fname, normal_form(terms, local_dims, prefix=_inner_prefix(inner)).key)
    raise TypeError(factor)


def _inner_prefix(inner) -> str:
    for _, _, bound in inner:
        for b, _ in bound:
            return b.rsplit("_", 1)[0] + "_"
    return "~_"


def _free_vars(factor: tuple) -> set:
    """Index names a factor mentions (for an elementwise function: the free ones inside)."""
    kind = factor[0]
    if kind == "E":
        return set(factor[2]) | set(factor[3])
    if kind in ("D", "T"):
        return {factor[1], factor[2]}
    if kind == "S":
        return {factor[1], factor[2]} | ({factor[3]} if factor[3] is not None else set())
    if kind == "B":
        return {factor[1], *factor[2]}
    out = set()
    for _, factors, bound in factor[2]:
        inner_bound = {b for b, _ in bound}
        for f in factors:
            out |= _free_vars(f) - inner_bound
    return out


def _occurs(var: str, factor: tuple) -> bool:
    return var in _free_vars(factor)


def _hypotheses() -> tuple:
    return active()


def _block_width(widths: tuple) -> sp.Expr:
    return sp.Mul(*widths)


def _nonnegative(x) -> bool:
    return sp.simplify(x).is_nonnegative is True


def _sum_blocks(factors: list, bound: list, dims: dict):
    """Eliminate one summed block index ``u`` (see the module docstring), or ``None``.

    Returns ``(factors, bound, zero)``: the term rewritten (``zero``: it vanishes). Only an index
    that occurs in block indicators alone (as their ``u``) is summed."""
    for u in bound:
        uses = [k for k, f in enumerate(factors) if _occurs(u, f)]
        if not uses or not all(factors[k][0] == "B" and factors[k][1] == u for k in uses):
            continue
        rest = [f for k, f in enumerate(factors) if k not in uses]
        if len(uses) == 1:  # Σ_u [u = j+o] = 1  (0 ≤ j+o < n by construction)
            return rest, [b for b in bound if b != u], False
        if len(uses) != 2:
            continue
        (_, _, j1, o1, w1), (_, _, j2, o2, w2) = factors[uses[0]], factors[uses[1]]
        if _nonnegative(o2 - o1 - _block_width(w1)) or _nonnegative(o1 - o2 - _block_width(w2)):  # disjoint: 0
            return rest, bound, True
        if sp.simplify(o1 - o2) == 0 and w1 == w2:  # Σ_u [u=o+flat(J)][u=o+flat(J')] = Π δ
            extra = [_delta(a, b) for a, b in zip(j1, j2) if a != b]
            return rest + extra, [b for b in bound if b != u], False
    return None


def _normalise_term(term: Term, dims: dict, prefix: str):
    """Return ``(coeff, key)`` with ``key`` canonical, or ``None`` for a zero term."""
    coeff = term.coeff
    factors = list(term.factors)
    bound = list(dict.fromkeys(term.bound))
    changed = True
    while changed:
        changed = False
        for hyp in _hypotheses():  # an assumption of the statement (kernel.hypotheses)
            rewritten = hyp.rewrite(factors, bound)
            if rewritten is not None:
                factors, bound = rewritten
                coeff = coeff * hyp.value
                changed = True
                break
        if changed:
            continue
        if any(f[0] == "B" for f in factors):
            blocks = _sum_blocks(factors, bound, dims)
            if blocks is not None:
                factors, bound, zero = blocks
                if zero:
                    return None
                changed = True
                continue
        for pos, f in enumerate(factors):
            if f[0] != "D":
                continue
            a, b = f[1], f[2]
            if a == b:
                del factors[pos]
                changed = True
                break
            for gone, kept in ((b, a), (a, b)):
                if gone in bound and sp.simplify(dims[gone] - dims[kept]) == 0:
                    del factors[pos]
                    factors = [_rename_factor(g, {gone: kept}, dims) for g in factors]
                    bound.remove(gone)
                    changed = True
                    break
            if changed:
                break
    for var in list(bound):  # Σ over an index that occurs nowhere
        if not any(_occurs(var, f) for f in factors):
            coeff = coeff * dims[var]
            bound.remove(var)
    coeff = sp.expand(coeff)
    if coeff == 0:
        return None
    if len(bound) <= 6:
        orders = itertools.permutations(range(len(bound)))
    else:  # still sound (any renaming is); canonical when the refined classes leave few ties
        orders = _refined_orders(factors, bound, dims)
    best, best_repr = None, ""
    # a factor's renaming depends only on the new names of the summed indices it mentions: each
    # (factor, those names) is renamed, and its repr taken, once for all the orders tried
    renamed: dict = {}
    mentions = [[b for b in bound if _occurs(b, f)] for f in factors]
    for order in orders:
        mapping = {bound[k]: f"{prefix}{order[k]}" for k in range(len(bound))}
        parts = []
        for k, f in enumerate(factors):
            seen = (k, tuple(mapping[b] for b in mentions[k]))
            part = renamed.get(seen)
            if part is None:
                g = _rename_factor(f, mapping, dims)
                part = renamed[seen] = (g, _repr(g))
            parts.append(part)
        parts.sort(key=lambda part: part[1])
        bnd = tuple(sorted(((mapping[b], dims[b]) for b in bound), key=lambda t: t[0]))
        cand_repr = _tuple_repr([_tuple_repr([part[1] for part in parts]), _repr(bnd)])  # == repr(cand)
        if best is None or cand_repr < best_repr:  # the first order, or a smaller repr
            best, best_repr = (tuple(part[0] for part in parts), bnd), cand_repr
    return coeff, best


#: repr of the SymPy leaves of keys, by (type, value): SymPy prints through a fresh printer each
#: time, and the canonical renaming compares the reprs of many keys sharing the same leaves
_REPRS: dict = {}


def _tuple_repr(parts: list[str]) -> str:
    """``repr`` of a tuple whose items have the reprs ``parts``.

    >>> _tuple_repr([]), _tuple_repr(["'a'"]), _tuple_repr(["'a'", "1"]) == repr(('a', 1))
    ('()', "('a',)", True)
    """
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _repr(x) -> str:
    """``repr(x)`` for the keys of normal forms (nested tuples of strings, numbers, None and
    SymPy objects), the same string, with the SymPy leaves' reprs remembered.

    >>> N = sp.Symbol("N")
    >>> key = (("E", "A", ("_0",), ()), (("_0", N - 1),), None, 2)
    >>> _repr(key) == repr(key)
    True
    """
    if isinstance(x, str):
        return repr(x)
    if type(x) is tuple:
        return _tuple_repr([_repr(item) for item in x])
    try:
        seen = (type(x), x)
        out = _REPRS.get(seen)
    except TypeError:  # unhashable
        return repr(x)
    if out is None:
        if len(_REPRS) > 200_000:
            _REPRS.clear()
        out = _REPRS[seen] = repr(x)
    return out


_TIE_BUDGET = 5040  # renamings tried among the ties left by colour refinement


def _refined_orders(factors, bound, dims):
    """Renamings of many summed indices (more than 6: all 7! or more are too many), canonical up to
    the ties colour refinement leaves.

    Each summed index gets a colour from its range and, round by round, from the factors it occurs in
    (kind, name, position, the colours of the other indices there) — an invariant of the term under
    renaming. Indices are numbered by colour, and every order of the indices *within* one colour is
    tried (the least ``repr`` wins, as for ≤ 6 indices): the candidates are the same set for two
    terms equal up to renaming, so the key is canonical. When the ties would need more than
    ``_TIE_BUDGET`` orders, the given order alone (the former behaviour; still sound, any renaming is).
    """
    import math

    colour = {b: repr(dims[b]) for b in bound}

    def signature(b):
        items = []
        for f in factors:
            kind = f[0]
            if kind == "E":
                idx = tuple(f[2]) + tuple(f[3])
                for pos, x in enumerate(idx):
                    if x == b:
                        items.append(("E", f[1], pos, tuple(colour.get(y, y) for y in idx)))
            elif kind in ("D", "T", "S"):
                vals = [v for v in f[1:] if isinstance(v, str)]
                for pos, x in enumerate(vals):
                    if x == b:
                        items.append((kind, pos, tuple(colour.get(y, y) for y in vals), repr(f[-1]) if kind == "S" else ""))
            elif kind == "F" and b in _free_vars(f):
                items.append(("F", f[1]))
        return colour[b], tuple(sorted(map(repr, items)))

    classes = len(set(colour.values()))
    for _ in range(len(bound)):
        sigs = {b: signature(b) for b in bound}
        ranks = {sg: f"c{n:03d}" for n, sg in enumerate(sorted(set(sigs.values())))}
        colour = {b: ranks[sigs[b]] for b in bound}
        if len(set(colour.values())) == classes:
            break
        classes = len(set(colour.values()))
    groups: dict = {}
    for k, b in enumerate(bound):
        groups.setdefault(colour[b], []).append(k)
    ordered = [groups[c] for c in sorted(groups)]
    if math.prod(math.factorial(len(g)) for g in ordered) > _TIE_BUDGET:
        return [tuple(range(len(bound)))]
    out = []
    for perms in itertools.product(*[itertools.permutations(g) for g in ordered]):
        order = [0] * len(bound)
        pos = 0
        for g in perms:
            for k in g:
                order[k] = pos
                pos += 1
        out.append(tuple(order))
    return out


@dataclass(frozen=True)
class NormalForm:
    """A normalised entry: canonical terms with their exact coefficients."""

    key: tuple  # ((coeff, factors, bound), ...) sorted

    def __eq__(self, other):  # structural
        return isinstance(other, NormalForm) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def latex(self) -> str:
        return normal_form_latex(self.key)


def normal_form(terms: list[Term], dims: dict, prefix: str = "_") -> NormalForm:
    collected: dict = {}
    for term in terms:
        res = _normalise_term(term, dims, prefix)
        if res is None:
            continue
        coeff, key = res
        collected[key] = sp.expand(collected.get(key, 0) + coeff)
    items = sorted(
        ((c, key[0], key[1]) for key, c in collected.items() if c != 0), key=lambda t: _repr(t[1:])
    )
    return NormalForm(tuple(items))


@dataclass
class EntryComparison:
    equal: bool
    lhs: NormalForm | None
    rhs: NormalForm | None
    row_space: Space | None
    col_space: Space | None
    reason: str = ""


#: An optional observer of every comparison (``observer(lhs, rhs, comparison)``), set by
#: :mod:`symuat.certify` to capture the statements a symbolic ``proved`` rests on; ``None``
#: (the default) costs nothing.
OBSERVER: contextvars.ContextVar = contextvars.ContextVar("symuat_comparison_observer", default=None)


def compare_entries(lhs, rhs) -> EntryComparison:
    """Compare the index-level normal forms of two matrix expressions at a generic entry."""
    result = _compare_entries(lhs, rhs)
    observer = OBSERVER.get()
    if observer is not None:
        observer(lhs, rhs, result)
    return result


def _compare_entries(lhs, rhs) -> EntryComparison:
    try:
        rs_l, cs_l, rs_r, cs_r = row_space(lhs), col_space(lhs), row_space(rhs), col_space(rhs)
    except SpaceMismatch as exc:
        return EntryComparison(False, None, None, None, None, f"ill-typed: {exc}")
    if (rs_l, cs_l) != (rs_r, cs_r):
        return EntryComparison(
            False, None, None, None, None,
            f"index spaces differ: {rs_l}×{cs_l} against {rs_r}×{cs_r}",
        )
    ctx = IndexContext()
    I = ctx.fresh_multi(rs_l, "i")
    J = ctx.fresh_multi(cs_l, "j")
    try:
        left = normal_form(ctx.entry(lhs, I, J), ctx.dims)
        right = normal_form(ctx.entry(rhs, I, J), ctx.dims)
    except SpaceMismatch as exc:
        return EntryComparison(False, None, None, rs_l, cs_l, f"ill-typed: {exc}")
    return EntryComparison(left == right, left, right, rs_l, cs_l)


def entry_normal_form(expr) -> tuple[NormalForm, tuple, tuple]:
    """Normal form of ``expr[I, J]`` with free indices ``i0.., j0..``."""
    ctx = IndexContext()
    I = ctx.fresh_multi(row_space(expr), "i")
    J = ctx.fresh_multi(col_space(expr), "j")
    return normal_form(ctx.entry(expr, I, J), ctx.dims), I, J


# --------------------------------------------------------------------------------------------
# LaTeX of normal forms
# --------------------------------------------------------------------------------------------


def _idx_latex(name: str) -> str:
    if name.startswith("~"):
        depth, k = name[1:].split("_")
        return "l" + "'" * (int(depth) - 1) + f"_{{{k}}}"
    if name.startswith("_"):
        return f"k_{{{name[1:]}}}"
    if name[0] in "ij" and name[1:].isdigit():
        return f"{name[0]}_{{{name[1:]}}}"
    return name.replace("~", "l").replace("_", "")


def _factor_latex(f) -> str:
    if f[0] == "E":
        idx = ",".join(_idx_latex(i) for i in f[2] + f[3])
        name = sp.latex(sp.Symbol(f[1]))
        if "_" in name:
            name = "{" + name + "}"
        return f"{name}_{{{idx}}}" if idx else name
    if f[0] == "D":
        return rf"\delta_{{{_idx_latex(f[1])}{_idx_latex(f[2])}}}"
    if f[0] == "T":
        return rf"[{_idx_latex(f[1])}\ge {_idx_latex(f[2])}]"
    if f[0] == "B":
        j = "".join("+" + _idx_latex(x) for x in f[2]) if len(f[2]) <= 1 else \
            r"+\mathrm{flat}(" + ",".join(_idx_latex(x) for x in f[2]) + ")"
        return rf"[{_idx_latex(f[1])}={sp.latex(f[3])}{j}]"
    if f[0] == "S":
        shift = (f"+{_idx_latex(f[3])}" if f[3] is not None else "") + (
            "" if f[4] == 0 else ("+" if not str(sp.latex(f[4])).startswith("-") else "") + sp.latex(f[4]))
        return rf"\delta_{{{_idx_latex(f[1])},{_idx_latex(f[2])}{shift}}}"
    return rf"{sp.latex(sp.Symbol(f[1]))}\!\left({normal_form_latex(f[2])}\right)"


def normal_form_latex(key) -> str:
    if not key:
        return "0"
    parts = []
    for coeff, factors, bound in key:
        s = ""
        if bound:
            s += r"\sum_{" + ",".join(
                rf"{_idx_latex(b)}<{sp.latex(d)}" for b, d in bound
            ) + "} "
        body = " ".join(_factor_latex(f) for f in factors) or "1"
        c = sp.latex(coeff)
        s += body if coeff == 1 else f"{c}\\,{body}"
        parts.append(s)
    return " + ".join(parts)
