r"""Claims D4, D5 and P1–P6: the diamond product and its composition identities.

Each printed member of a chain is built once, as written (a :class:`~symuat.expr.diamond.DiamondChain`
where the paper leaves a chain unbracketed). Which reading axes a step depends on — the D5
definition of matrix ⋄ matrix (``C-col``/``C-prod``), the parse of a chain (``LR``/``RL``) — is
read off the printed expressions by :func:`~symuat.expr.diamond.ambiguities`; every step is checked
under ``conf`` (any conformable shapes, symbolic :math:`m,n,p`) and ``square`` (all :math:`n`).
"""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import sympy as sp
from sympy import MatrixSymbol

from symuat.expr.algebra import T, add, dims, mul
from symuat.expr.diamond import MM_DEFINITIONS, PARSES, Diamond, DiamondChain, ambiguities, resolve
from symuat.kernel import certificates, decide
from symuat.text.printing import latex
from symuat.kernel.decide import Statement
from symuat.kernel.registry import REGISTRY

m, n, p = dims("m n p")
SHAPES = ("conf", "square")


def _readings(*members):
    """The reading tuples a group of printed members must be checked under."""
    axes = set().union(*(ambiguities(e) for e in members))
    mms = MM_DEFINITIONS if "mm" in axes else (None,)
    parses = PARSES if "parse" in axes else (None,)
    for mm, parse, shape in itertools.product(mms, parses, SHAPES):
        yield mm, parse, shape


def _tags(mm, parse, shape, *extra):
    return tuple(t for t in (mm, parse, shape, *extra) if t)


# --------------------------------------------------------------------------------------------
# D4 — the definition, its stated size and the printed rows of Eq. 4
# --------------------------------------------------------------------------------------------

D4 = REGISTRY.claim(
    "D4", "Diamond product (matrix ⋄ vector)",
    where="UAT §3.2 Eq. 4; AAAI §3.2 Eq. 4",
    statement=r"\mathbf W\in\mathbb R^{(m,n)},\ \mathbf x\in\mathbb R^{(m,1)}:\ "
    r"(\mathbf W\diamond\mathbf x)_i=\sum_k w_{k,i}x_k,\ \ \mathbf y\in\mathbb R^{(m,1)}",
    group="diamond",
)

_W = MatrixSymbol("W", m, n)
_x = MatrixSymbol("x", m, 1)

D4.check(
    None, None, r"(\mathbf W\diamond\mathbf x)_i:=\sum_{k}w_{k,i}x_k",
    lambda: decide.define(Diamond(_W, _x), meaning=mul(T(_W), _x),
                          note="entry i: the products of column i of W with x, summed"),
    polarity=None,
)


def _d4_size():
    """The stated size (m,1) of W ⋄ x, against the size the definition gives."""
    return decide.check_shape(Diamond(_W, _x), (m, 1),
                              corrected_latex=r"\mathbf W\diamond\mathbf x\in\mathbb R^{(n,1)}")


D4.check("size", None, r"\mathbf W\diamond\mathbf x\in\mathbb R^{(m,1)}", _d4_size,
         note="the size the text states for y; the definition gives n entries")

# Eq. 4 as printed: row 1 "w_{1} x_1 + w_{31} * x_2 + ⋯ + w_{m,1} x_m", row 2
# "w_{1,2}x_1 + w_{2,2}x_2 + ⋯ + w_{m,2}x_m", last row "w_{1,n}x_1 + w_{2,n}x_2 + ⋯ + w_{mn}x_m".
# The ellipsis stands for the terms k = 3..m-1 of the prose pattern w_{k,i} x_k.
_EQ4_ROWS = {
    # row label: (printed output row index (1-based; "n" = last), printed explicit terms)
    "row1": (1, [((1, 1), 1), ((3, 1), 2)], (("m", 1), "m")),
    "row2": (2, [((1, 2), 1), ((2, 2), 2)], (("m", 2), "m")),
    "rown": ("n", [((1, "n"), 1), ((2, "n"), 2)], (("m", "n"), "m")),
}
_SIZES_EQ4 = [{"m": a, "n": b} for a in (3, 4, 5) for b in (2, 3)]
#: row 1 exists for n = 1 too: its smallest sizes (m = 3: the row prints three explicit terms)
_SIZES_ROW1 = [{"m": a, "n": b} for a in (3, 4, 5) for b in (1, 2, 3)]


def _w(i, j):
    return sp.Symbol(f"w[{i},{j}]")


def _xs(k):
    return sp.Symbol(f"x[{k}]")


def _eq4_row(label, sizes, printed=True):
    mm, nn = sizes["m"], sizes["n"]
    row, terms, last = _EQ4_ROWS[label]
    row = nn if row == "n" else row
    val = {"m": mm, "n": nn}
    if printed:
        explicit = [(_w(*(val.get(a, a) for a in ij)), k) for ij, k in terms]
        (li, lj), lk = last
        printed_terms = [w * _xs(k) for w, k in explicit]
        printed_terms += [_w(k, row) * _xs(k) for k in range(3, mm)]  # the ellipsis
        printed_terms.append(_w(val.get(li, li), val.get(lj, lj)) * _xs(val.get(lk, lk)))
        left = sum(printed_terms)
    else:
        left = sum(_w(k, row) * _xs(k) for k in range(1, mm + 1))
    W = np.array([[_w(i, j) for j in range(1, nn + 1)] for i in range(1, mm + 1)], dtype=object)
    x = np.array([[_xs(k)] for k in range(1, mm + 1)], dtype=object)
    from symuat.expr.diamond import diamond

    right = diamond(W, x)[row - 1, 0]
    return np.array([[left]], dtype=object), np.array([[right]], dtype=object)


D4.check(
    "row1", None,
    r"w_{1}x_{1}+w_{31}\ast x_{2}+\cdots w_{m,1}x_{m}=(\mathbf W\diamond\mathbf x)_1",
    lambda: _d4_row1(),
    note="w_{1} read as w_{1,1}; the ellipsis as the terms k=3..m-1 of w_{k,1}x_k",
)
_wi, _xi = sp.IndexedBase("w"), sp.IndexedBase("x")
_k = sp.Symbol("k", integer=True, positive=True)


def _eq4_row_symbolic(label, printed=None):
    """The printed row for symbolic m (and n): its explicit terms against the general term w_{k,i}x_k,
    and Σ_k w_{k,i}x_k = (W ⋄ x)_i by the index calculus (the entry rule of W ⋄ x against Wᵀx, for
    every i). ``printed`` replaces the explicit terms (a mutant)."""
    row, terms, ((li, lj), lk) = _EQ4_ROWS[label]
    val = {"m": m, "n": n}
    row = val.get(row, row)
    explicit = printed or [(k, _wi[tuple(val.get(a, a) for a in ij)] * _xi[k]) for ij, k in terms] + [
        (val.get(lk, lk), _wi[val.get(li, li), val.get(lj, lj)] * _xi[val.get(lk, lk)])]
    general = sp.Lambda(_k, _wi[_k, row] * _xi[_k])
    definition = decide.check_identity(Diamond(_W, _x), mul(T(_W), _x))
    from symuat.kernel.decide.printed_sums import check_printed_sum

    def entry(sizes):
        mm, nn = sizes[m], sizes[n]
        from symuat.expr.diamond import diamond

        W = np.array([[_wi[i, j] for j in range(1, nn + 1)] for i in range(1, mm + 1)], dtype=object)
        x = np.array([[_xi[k]] for k in range(1, mm + 1)], dtype=object)
        return diamond(W, x)[int(sp.sympify(row).subs(sizes)) - 1, 0]

    return check_printed_sum(explicit, general, (1, m), {m: 3}, definition=definition, entry=entry,
                             sizes_list=[{m: s["m"], n: s["n"]} for s in _SIZES_EQ4],
                             certificate={"entry": Diamond(_W, _x), "row": row, "bases": {"w": _W, "x": _x},
                                          "before": len(explicit) - 1})


def _d4_row1():
    """The printed row 1 at sizes (refuted: w_{31} where the definition has w_{21}); its correction, the row
    with w_{2,1}, proved for every m ≥ 3 as D4.rows."""
    verdict = decide.check_explicit(
        partial(_eq4_row, "row1"), _SIZES_ROW1,
        corrected_build=partial(_eq4_row, "row1", printed=False),
        corrected_latex=r"w_{1,1}x_1+w_{2,1}x_2+\cdots+w_{m,1}x_m=(\mathbf W\diamond\mathbf x)_1")
    if verdict.corrected is not None:
        verdict.corrected.verdict = _eq4_row_symbolic(
            "row1", printed=[(1, _wi[1, 1] * _xi[1]), (2, _wi[2, 1] * _xi[2]), (m, _wi[m, 1] * _xi[m])])
    if verdict.counterexample is not None and certificates.listened():
        # what the ``refuted`` rests on: the printed row (for every m ≥ 3) is not entry 1 of W ⋄ x,
        # at the counterexample's sizes (the Coq statement is the printed row's, negated)
        row, terms, ((li, lj), lk) = _EQ4_ROWS["row1"]
        val = {"m": m, "n": n}
        explicit = [(k, _wi[tuple(val.get(a, a) for a in ij)] * _xi[k]) for ij, k in terms] + [
            (val.get(lk, lk), _wi[val.get(li, li), val.get(lj, lj)] * _xi[val.get(lk, lk)])]
        certificates.record("printed_refutation", explicit=explicit, general=sp.Lambda(_k, _wi[_k, row] * _xi[_k]),
                            k_range=(1, m), least={m: 3}, entry=Diamond(_W, _x), row=row,
                            bases={"w": _W, "x": _x}, before=len(explicit) - 1, sizes=dict(verdict.counterexample.sizes))
    return verdict


D4.check(
    "rows", ("row2",), r"w_{1,2}x_1+w_{2,2}x_2+\cdots w_{m,2}x_m=(\mathbf W\diamond\mathbf x)_2",
    partial(_eq4_row_symbolic, "row2"),
    note="for every m ≥ 3 (the row prints three explicit terms): each printed term is w_{k,2}x_k at its k, the "
         "ellipsis the terms between, and Σ_k w_{k,i}x_k = (W ⋄ x)_i by the index calculus",
)
D4.check(
    "rows", ("rown",), r"w_{1,n}x_1+w_{2,n}x_2+\cdots w_{mn}x_m=(\mathbf W\diamond\mathbf x)_n",
    partial(_eq4_row_symbolic, "rown"),
    note="w_{mn} read as w_{m,n}; for every m ≥ 3 and n, as D4.rows[row2]",
)

# --------------------------------------------------------------------------------------------
# D5 — matrix ⋄ matrix: used, never defined
# --------------------------------------------------------------------------------------------

D5 = REGISTRY.claim(
    "D5", "Matrix ⋄ matrix (used, never defined)",
    where="UAT App. A Eq. 13–14, §3.4; AAAI §3.4, App. A, App. B",
    statement=r"\mathbf W_2\diamond\mathbf W_1\diamond\mathbf x,\quad \mathbf W^{T}_{WH}\diamond\mathbf W'_O",
    group="diamond",
    remarks="The papers apply ⋄ to two matrices but define it only for a (matrix, vector) pair. "
    "symuat checks every matrix ⋄ matrix occurrence under both candidate definitions.",
)
_A = MatrixSymbol("A", m, n)
_B = MatrixSymbol("B", m, p)
_Bp = MatrixSymbol("B", n, p)
_u = MatrixSymbol("u", p, 1)
for _mm, _meaning in (("C-col", mul(T(_A), _B)), ("C-prod", mul(_A, _Bp))):
    _rhs_b = _B if _mm == "C-col" else _Bp
    D5.check(
        None, (_mm,), latex(Diamond(_A, _rhs_b)) + " := " + latex(_meaning),
        partial(decide.define, Diamond(_A, _rhs_b, _mm), meaning=_meaning), polarity=None,
    )
    # does the candidate extend D4 column by column? (A ⋄ B) u = A ⋄ (B u) for every u
    D5.check(
        "ext", (_mm,),
        r"(\mathbf A\diamond\mathbf B)\mathbf u=\mathbf A\diamond(\mathbf B\mathbf u)\ \ \forall\mathbf u",
        partial(decide.check_identity, mul(Diamond(_A, _rhs_b, _mm), _u),
                Diamond(_A, mul(_rhs_b, _u))),
        note="whether the candidate agrees with D4 on every column (symuat's question: the papers "
             "define no matrix ⋄ matrix)",
        polarity=None, role="extension",
    )

# --------------------------------------------------------------------------------------------
# P1, P2 — W ⋄ x = Wᵀx and the swap
# --------------------------------------------------------------------------------------------

P1 = REGISTRY.claim(
    "P1", r"W ⋄ x = Wᵀx", where="UAT §3.2; AAAI §3.2",
    statement=r"\mathbf W\diamond\mathbf x=\mathbf W^{T}\mathbf x", group="diamond",
)
P1.check(None, None, r"\mathbf W\diamond\mathbf x=\mathbf W^{T}\mathbf x",
         partial(decide.check_identity, Diamond(_W, _x), mul(T(_W), _x)))

P2 = REGISTRY.claim(
    "P2", "x ⋄ W = W ⋄ x", where="UAT §3.2; AAAI §3.2",
    statement=r"\mathbf W\diamond\mathbf x=\mathbf x\diamond\mathbf W", group="diamond",
)
P2.check(None, ("mv",), r"\mathbf W\diamond\mathbf x=\mathbf x\diamond\mathbf W",
         partial(decide.check_identity, Diamond(_W, _x), Diamond(_x, _W)))
_An = MatrixSymbol("A", n, n)
_Bn = MatrixSymbol("B", n, n)
for _mm in MM_DEFINITIONS:
    _corr = (Statement(Diamond(_An, _Bn, _mm), T(Diamond(_Bn, _An, _mm)),
                       r"\mathbf A\diamond\mathbf B=(\mathbf B\diamond\mathbf A)^{T}")
             if _mm == "C-col" else
             Statement(Diamond(_An, _Bn, _mm), T(Diamond(T(_Bn), T(_An), _mm)),
                       r"\mathbf A\diamond\mathbf B=(\mathbf B^{T}\diamond\mathbf A^{T})^{T}"))
    P2.check(None, ("mm", _mm, "square"), r"\mathbf A\diamond\mathbf B=\mathbf B\diamond\mathbf A",
             partial(decide.check_identity, Diamond(_An, _Bn, _mm), Diamond(_Bn, _An, _mm),
                     corrected=_corr),
             admitted=False,
             note="the text states the swap for a (matrix, vector) pair (mv); applying it to two matrices, "
                  "as the chains of P5, P6, H1 and H4 do, is symuat's alternative reading")

# --------------------------------------------------------------------------------------------
# P3, P4 — "not associative", "not distributive"
# --------------------------------------------------------------------------------------------

_v = MatrixSymbol("v", n, 1)
_y = MatrixSymbol("y", n, 1)
_Wn = MatrixSymbol("W", n, n)
_Vn = MatrixSymbol("V", n, n)

P3 = REGISTRY.claim(
    "P3", "“⋄ is not associative”", where="UAT §3.2 (absent from AAAI, DUAT)",
    statement=r"(\mathbf A\diamond\mathbf B)\diamond\mathbf v\neq\mathbf A\diamond(\mathbf B\diamond\mathbf v)\ \text{in general}",
    group="diamond",
)
for _mm in MM_DEFINITIONS:
    P3.check(None, (_mm, "square"),
             r"(\mathbf A\diamond\mathbf B)\diamond\mathbf v\neq\mathbf A\diamond(\mathbf B\diamond\mathbf v)",
             partial(decide.check_negation, Diamond(Diamond(_An, _Bn, _mm), _v),
                     Diamond(_An, Diamond(_Bn, _v))),
             note="the paper's sentence as stated; both D5 candidates admitted")

P4 = REGISTRY.claim(
    "P4", "“⋄ is not distributive”", where="UAT §3.2",
    statement=r"\diamond\ \text{is not distributive}", group="diamond",
)
_dist = {
    ("right", "mv"): (Diamond(_Wn, add(_v, _y)), add(Diamond(_Wn, _v), Diamond(_Wn, _y)),
                      r"\mathbf W\diamond(\mathbf x+\mathbf y)=\mathbf W\diamond\mathbf x+\mathbf W\diamond\mathbf y"),
    ("left", "mv"): (Diamond(add(_Wn, _Vn), _v), add(Diamond(_Wn, _v), Diamond(_Vn, _v)),
                     r"(\mathbf W+\mathbf V)\diamond\mathbf x=\mathbf W\diamond\mathbf x+\mathbf V\diamond\mathbf x"),
}
for _mm in MM_DEFINITIONS:
    _dist[("right", _mm)] = (Diamond(_An, add(_Bn, _Vn), _mm),
                             add(Diamond(_An, _Bn, _mm), Diamond(_An, _Vn, _mm)),
                             r"\mathbf A\diamond(\mathbf B+\mathbf C)=\mathbf A\diamond\mathbf B+\mathbf A\diamond\mathbf C")
    _dist[("left", _mm)] = (Diamond(add(_An, _Vn), _Bn, _mm),
                            add(Diamond(_An, _Bn, _mm), Diamond(_Vn, _Bn, _mm)),
                            r"(\mathbf A+\mathbf C)\diamond\mathbf B=\mathbf A\diamond\mathbf B+\mathbf C\diamond\mathbf B")
for (_side, _kind), (_l, _r, _tex) in _dist.items():
    P4.check(None, (_side, _kind), r"\neg\big(" + _tex + r"\big)",
             partial(decide.check_negation, _l, _r, corrected=Statement(_l, _r, _tex)),
             note="the paper asserts the negation; refuted means ⋄ is distributive on this side")

# --------------------------------------------------------------------------------------------
# P5, P6 — the composition chains of App. A
# --------------------------------------------------------------------------------------------


def _p5_members(shape):
    """The printed members of Eq. 13 for the shape reading."""
    a, b, c = (m, n, p) if shape == "conf" else (n, n, n)
    x = MatrixSymbol("x", a, 1)
    W2 = MatrixSymbol("W_2", a, b)
    W1 = MatrixSymbol("W_1", b, c)
    W12 = mul(T(W1), T(W2))
    members = {
        "0": Diamond(W1, Diamond(x, W2)),
        "a": Diamond(W1, mul(T(W2), x)),
        "b": mul(T(W1), mul(T(W2), x)),
        "c": mul(T(W1), T(W2), x),
        "d": Diamond(T(W12), x),
        "e": Diamond(mul(W2, W1), x),
        "f": DiamondChain(W2, W1, x),
        "g": DiamondChain(T(W2), W1, x),
    }
    extra = {
        "W12": W12, "W12x": mul(W12, x), "W12dia": Diamond(W12, x),
        "x": x, "W1": W1, "W2": W2,
    }
    return members, extra


def _p6_members(shape):
    a, b, c = (m, n, p) if shape == "conf" else (n, n, n)
    x = MatrixSymbol("x", a, 1)
    W1 = MatrixSymbol("W_1", a, b)
    W2 = MatrixSymbol("W_2", b, c)
    members = {
        "0": Diamond(Diamond(W1, x), W2),
        "a": Diamond(mul(T(W1), x), W2),
        "b": mul(T(W2), mul(T(W1), x)),
        "c": Diamond(T(mul(T(W2), T(W1))), x),
        "d": Diamond(mul(W1, W2), x),
        "e": DiamondChain(W1, W2, x),
        "f": DiamondChain(T(W1), W2, x),
    }
    return members, {"x": x, "W1": W1, "W2": W2}


def _resolved(expr, mm, parse):
    return resolve(expr, mm, parse)


def _identity_check(lhs, rhs, mm, parse, corrected=None):
    return decide.check_identity(_resolved(lhs, mm, parse), _resolved(rhs, mm, parse),
                                 corrected=corrected)


def _applied(expr, mm, parse) -> str:
    """``expr`` with the reading applied, in ordinary matrix algebra (LaTeX): ``W_1^T W_2 x``."""
    try:
        plain = _resolved(expr, mm, parse).doit()
        return latex(plain.doit())
    except Exception:  # a member the reading leaves undefined (shapes, a chain without parse)
        return "undefined"


def _why(a, b, mm, parse) -> str:
    """One line of why: each side of the step with the reading applied."""
    under = " and ".join(t for t in (mm, parse) if t)
    left, right = _applied(a, mm, parse), _applied(b, mm, parse)

    def shown(e):
        try:
            return latex(_resolved(e, mm, parse))  # the parse's brackets made explicit
        except Exception:
            return latex(e)

    return (f"under {under}: " if under else "") + (
        f"{shown(a)} = {left}, but {shown(b)} = {right}" if left != right else f"both sides are {left}")


def _register_chain(claim, build, steps, ends, corrections):
    """Register every step (pairs of consecutive members), ``end`` and ``main`` per reading."""
    printed, _ = build("square")
    pairs = [(label, prev, label) for prev, label in zip(steps, steps[1:])]
    pairs = [(lab, a, b) for lab, a, b in pairs] + ends
    for label, a, b in pairs:
        for mm, parse, shape in _readings(printed[a], printed[b]):
            members, extra = build(shape)
            corr = corrections.get(label)
            corr_stmt = corr(members, extra) if corr else None
            claim.check(
                label, _tags(mm, parse, shape),
                f"{latex(printed[a])} = {latex(printed[b])}",
                partial(_identity_check, members[a], members[b], mm, parse, corr_stmt),
                role="claim" if label in ("end", "main") else "step",
                admitted=shape == "square",
                note="" if shape == "square" else
                "conf: any conformable shapes, symuat's generalisation (the text states square W_1, W_2)",
                why=_why(members[a], members[b], mm, parse),
            )


def _p5_corr_end(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(members["0"], Diamond(W1, Diamond(W2, x)),
                     r"\mathbf W_1\diamond[\mathbf x\diamond\mathbf W_2]=\mathbf W_1\diamond(\mathbf W_2\diamond\mathbf x)=(\mathbf W_2\mathbf W_1)\diamond\mathbf x")


def _p5_corr_f(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(members["e"], Diamond(W1, Diamond(W2, x)),
                     r"(\mathbf W_2\mathbf W_1)\diamond\mathbf x=\mathbf W_1\diamond(\mathbf W_2\diamond\mathbf x)")


def _p5_corr_g(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(Diamond(W1, Diamond(W2, x)), Diamond(Diamond(T(W2), W1, "C-col"), x),
                     r"\mathbf W_1\diamond(\mathbf W_2\diamond\mathbf x)=(\mathbf W_2^{T}\diamond\mathbf W_1)\diamond\mathbf x\ \ (\texttt{C-col})")


P5 = REGISTRY.claim(
    "P5", "Composition identity 1 (Eq. 13)",
    where="UAT §3.2 (inline, square) and App. A Eq. 13; AAAI §3.2, App. A Eq. (1)",
    statement=r"\mathbf W_1\diamond[\mathbf x\diamond\mathbf W_2]\overset{a}{=}\mathbf W_1\diamond[\mathbf W_2^{T}\mathbf x]"
    r"\overset{b}{=}\mathbf W_1^{T}[\mathbf W_2^{T}\mathbf x]\overset{c}{=}\mathbf W_1^{T}\mathbf W_2^{T}\mathbf x=\mathbf W_{12}\mathbf x"
    r"\overset{d}{=}(\mathbf W_1^{T}\mathbf W_2^{T})^{T}\diamond\mathbf x\overset{e}{=}(\mathbf W_2\mathbf W_1)\diamond\mathbf x"
    r"\overset{f}{=}\mathbf W_2\diamond\mathbf W_1\diamond\mathbf x\overset{g}{=}\mathbf W_2^{T}\diamond\mathbf W_1\diamond\mathbf x",
    group="diamond",
    remarks=r"Shapes: $x\in\mathbb R^m$, $W_2\in\mathbb R^{m\times n}$, $W_1\in\mathbb R^{n\times p}$ "
    r"(`conf`), or all square (`square`, as the paper states). $W_{12}:=W_1^TW_2^T$.",
)
_p5_corrections = {"f": _p5_corr_f, "g": _p5_corr_g, "end": _p5_corr_end, "main": _p5_corr_end}
_register_chain(P5, _p5_members, ["0", "a", "b", "c", "d", "e", "f", "g"],
                [("end", "0", "g"), ("main", "0", "g")], _p5_corrections)


def _p5_pre(last, mm, parse, shape):
    members, extra = _p5_members(shape)
    chain = [resolve(members["0"], mm, parse), resolve(members["g"], mm, parse),
             resolve(extra[last], mm, parse)]
    corr = Statement(members["0"], extra["W12x"],
                     r"\mathbf W_1\diamond[\mathbf x\diamond\mathbf W_2]=\mathbf W_{12}\mathbf x")
    return decide.check_chain(chain, corrected=corr, labels=["first=second", "second=last"])


_pm, _px = _p5_members("square")
for _last, _tex in (("W12", r"\mathbf W_{12}"), ("W12x", r"\mathbf W_{12}\mathbf x"),
                    ("W12dia", r"\mathbf W_{12}\diamond\mathbf x")):
    for mm, parse, shape in _readings(_pm["0"], _pm["g"]):
        P5.check("pre", _tags(mm, parse, shape, _last),
                 f"{latex(_pm['0'])} = {latex(_pm['g'])} = {_tex}",
                 partial(_p5_pre, _last, mm, parse, shape), admitted=shape == "square",
                 note="the preamble's last member read literally (W12), as W12 x, and as W12 ⋄ x"
                      + ("" if shape == "square" else "; conf is symuat's generalisation"))


def _p5_c_aaai(shape):
    members, extra = _p5_members(shape)
    return decide.check_identity(
        members["c"], extra["W12dia"],
        corrected=Statement(members["c"], Diamond(T(extra["W12"]), extra["x"]),
                            r"\mathbf W_1^{T}\mathbf W_2^{T}\mathbf x=\mathbf W_{12}\mathbf x=\mathbf W_{12}^{T}\diamond\mathbf x"),
    )


for shape in SHAPES:
    P5.check("c-aaai", (shape,), r"\mathbf W_1^{T}\mathbf W_2^{T}\mathbf x=\mathbf W_{12}\diamond\mathbf x",
             partial(_p5_c_aaai, shape), role="step", admitted=shape == "square",
             note="step c as the AAAI OCR prints it (the OCR is unreliable here)")


def _p6_corr_end(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(members["0"], Diamond(W2, Diamond(W1, x)),
                     r"[\mathbf W_1\diamond\mathbf x]\diamond\mathbf W_2=\mathbf W_2\diamond(\mathbf W_1\diamond\mathbf x)=(\mathbf W_1\mathbf W_2)\diamond\mathbf x")


def _p6_corr_e(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(members["d"], Diamond(W2, Diamond(W1, x)),
                     r"[\mathbf W_1\mathbf W_2]\diamond\mathbf x=\mathbf W_2\diamond(\mathbf W_1\diamond\mathbf x)")


def _p6_corr_f(members, extra):
    W1, W2, x = extra["W1"], extra["W2"], extra["x"]
    return Statement(Diamond(W2, Diamond(W1, x)), Diamond(Diamond(T(W1), W2, "C-col"), x),
                     r"\mathbf W_2\diamond(\mathbf W_1\diamond\mathbf x)=(\mathbf W_1^{T}\diamond\mathbf W_2)\diamond\mathbf x\ \ (\texttt{C-col})")


P6 = REGISTRY.claim(
    "P6", "Composition identity 2 (Eq. 14)",
    where="UAT §3.2 (inline, square) and App. A Eq. 14; AAAI App. A Eq. (2)",
    statement=r"[\mathbf W_1\diamond\mathbf x]\diamond\mathbf W_2\overset{a}{=}[\mathbf W_1^{T}\mathbf x]\diamond\mathbf W_2"
    r"\overset{b}{=}\mathbf W_2^{T}[\mathbf W_1^{T}\mathbf x]\overset{c}{=}[\mathbf W_2^{T}\mathbf W_1^{T}]^{T}\diamond\mathbf x"
    r"\overset{d}{=}[\mathbf W_1\mathbf W_2]\diamond\mathbf x\overset{e}{=}\mathbf W_1\diamond\mathbf W_2\diamond\mathbf x"
    r"\overset{f}{=}\mathbf W_1^{T}\diamond\mathbf W_2\diamond\mathbf x",
    group="diamond",
    remarks=r"Shapes: $x\in\mathbb R^m$, $W_1\in\mathbb R^{m\times n}$, $W_2\in\mathbb R^{n\times p}$ "
    r"(`conf`), or all square (`square`).",
)
_register_chain(P6, _p6_members, ["0", "a", "b", "c", "d", "e", "f"],
                [("end", "0", "f"), ("main", "0", "f")],
                {"e": _p6_corr_e, "f": _p6_corr_f, "end": _p6_corr_end, "main": _p6_corr_end})
