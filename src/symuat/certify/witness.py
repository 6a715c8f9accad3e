r"""Exact witnesses → Coq: "the identity ``lhs = rhs`` fails in general", proved at symuat's values.

A negation (:func:`~symuat.kernel.decide.check_negation`, e.g. P3 "⋄ is not associative") is
``proved`` by an exact witness: sizes and integer/rational matrices at which the identity it
denies fails. The procedure records it (kind ``"witness"``: ``lhs``, ``rhs``, ``sizes``,
``values``, and the exact values of both sides ``lhs_value``/``rhs_value``); this module states
in Coq exactly what symuat concluded — that the identity, universally quantified over the sizes
and the matrices (over ℤ, or ℚ when a value is a fraction), is false::

    ~ (forall (n : nat) (A B : mx [comRingType of int] [:: n] [:: n]) (v : …), lhs =m rhs)

and generates its proof from the witness: instantiate the hypothesis at symuat's sizes and
values (``lmx``: a concrete matrix from its rows) and at one entry where the recorded sides
differ, then evaluate that entry (:coq:`symuat_witness` in ``coq/SymuatWitness.v``: the big sums
expanded, the integers/rationals computed) to ``false``. A "witness" at which the identity
holds leaves Coq a goal it cannot close, so the theorem is rejected.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> n = sp.Symbol("n", positive=True, integer=True)
>>> A, v = MatrixSymbol("A", n, n), MatrixSymbol("v", n, 1)
>>> t = export_witness("w", {"lhs": A * v, "rhs": A.T * v, "sizes": {"n": 2},
...                          "values": {"A": [[0, 1], [0, 0]], "v": [[0], [1]]},
...                          "lhs_value": [[1], [0]], "rhs_value": [[0], [0]]})[0]
>>> print(t.statement)
Theorem w :
  ~ (forall (n : nat) (A : mx [comRingType of int] [:: n] [:: n]) (v : mx [comRingType of int] [:: n] [::]),
     mul A v =m mul (tr A) v).
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import sympy as sp
from sympy.matrices.expressions import MatrixSymbol

from symuat.certify.coq_terms import Ctx, Unsupported, ident, strip, term, unit_premise
from symuat.certify.export import Exported, unit_name
from symuat.kernel.index_calculus import col_space, row_space


def _exact(v) -> Fraction:
    if isinstance(v, bool):
        raise Unsupported(f"witness value {v!r} is not a number")
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    s = sp.sympify(v)
    if not (isinstance(s, sp.Basic) and s.is_Rational):
        raise Unsupported(f"witness value {v} is not an exact rational")
    return Fraction(int(s.p), int(s.q))


def _rows(value) -> list[list[Fraction]]:
    rows = value.tolist() if hasattr(value, "tolist") else value
    if not all(isinstance(row, (list, tuple)) for row in rows):
        raise Unsupported("a witness value that is not a matrix (a list of rows)")
    return [[_exact(a) for a in row] for row in rows]


def _family(value) -> list[list[list[Fraction]]]:
    """A head family's value (``h`` matrices, :class:`~symuat.expr.heads.HeadMatrix`), exact."""
    members = value.tolist() if hasattr(value, "tolist") else value
    return [_rows(m) for m in members]


def _lmx(rs: list[int], cs: list[int], vals, ring: str) -> str:
    body = "[:: " + "; ".join("[:: " + "; ".join(_coq_number(q, ring) for q in r) + "]" for r in vals) + "]"
    return f"(lmx {_space_text(rs)} {_space_text(cs)} {body})"


def _coq_number(q: Fraction, ring: str) -> str:
    if ring == "int":
        return f"{q.numerator}%:Z" if q >= 0 else f"(- {-q.numerator}%:Z)"
    num = f"{abs(q.numerator)}%:Q" if q.denominator == 1 else f"({abs(q.numerator)}%:Q / {q.denominator}%:Q)"
    return num if q >= 0 else f"(- {num})"


def _concrete(space, sizes: dict) -> list[int]:
    out = []
    for d in space:
        val = sp.sympify(d).subs({s: sizes[s.name] for s in sp.sympify(d).free_symbols if s.name in sizes})
        if not val.is_Integer:
            raise Unsupported(f"dimension {d} has no value at the witness sizes {sizes}")
        out.append(int(val))
    return out


def _space_text(dims: list[int]) -> str:
    return "[:: " + "; ".join(f"{d}%N" for d in dims) + "]" if dims else "[::]"


def _index(flat: int, dims: list[int]) -> str:
    """The multi-index (row-major position ``flat``) of the concrete space ``dims``, as a Coq term."""
    digits = []
    for d in reversed(dims):
        digits.append(flat % d)
        flat //= d
    if flat:
        raise Unsupported("entry outside the witness's index space")
    out = "tt"
    for a, d in zip(reversed(digits), reversed(dims)):
        out = f"(@Ordinal {d} {a} isT, {out})"
    return out


def export_witness(name: str, data: dict, tactic: str = "symuat_witness", premises=None) -> list[Exported]:
    """``~ (forall sizes matrices, lhs =m rhs)`` over ℤ (ℚ if a value is a fraction), proved at
    the recorded witness (by ``tactic``: :coq:`symuat_witness`, or :coq:`symuat_refute`, the
    same conclusion by computation alone; ``data["ring"]``, if given, the ring stated: ``"rat"`` for
    a rotation refutation at quarter turns, as at the kernel's). ``premises(ctx)``: the (proposition, proof at the
    witness) of each premise of the identity (``~ (forall …, P -> lhs =m rhs)``)."""
    lhs, rhs, sizes, values = data["lhs"], data["rhs"], data["sizes"], data["values"]
    from symuat.expr.heads import HeadMatrix
    from symuat.kernel.index_calculus import space_of

    # the statement first (what it cannot state is the reason, before the values' form)
    ctx = Ctx()
    left, right = term(lhs, ctx), term(rhs, ctx)
    families = {ident(f.name): f for e in (lhs, rhs) for f in e.atoms(HeadMatrix)}
    rows = {k: (_family(v) if ident(k) in families else _rows(v)) for k, v in values.items()}
    entries = [q for k, r in rows.items() for m in (r if ident(k) in families else [r]) for row in m for q in row]
    # a size's inverse (1/M, :func:`~symuat.certify.coq_terms.inverse`) is a fraction at the witness
    ring = data.get("ring") or ("int" if all(q.denominator == 1 for q in entries) and not ctx.inverses else "rat")
    if ctx.funcs and data.get("sigma") is None:
        raise Unsupported("a witness of an identity with elementwise functions (no function values)")
    from symuat.expr.heads import BlockSymbol

    from symuat.kernel.rotary import PairRotation

    leaves, spaces = {}, {}
    for e in (lhs, rhs):
        for s in e.atoms(MatrixSymbol, BlockSymbol):
            leaves[ident(s.name)] = s
        for s in e.atoms(PairRotation):  # its leaf: the blocks, rows (k, t) of [:: e; 2], columns [:: 2]
            leaves[ident(s.name)] = s
            spaces[ident(s.name)] = (tuple(space_of(s.args[1])) + (sp.Integer(2),), (sp.Integer(2),))
    R = f"[comRingType of {ring}]"
    binders, args = [], []
    if ctx.dims:
        binders.append("(" + " ".join(sorted(ctx.dims)) + " : nat)")
        for d in sorted(ctx.dims):
            sym = ctx.dims[d]
            if sym.name not in sizes:
                raise Unsupported(f"the witness gives no value for the size {sym.name}")
            args.append(f"{int(sizes[sym.name])}%N")
    for inv, den in ctx.inverses.items():
        # 1/D at the witness's sizes, and the premise that it is D's inverse (by computation)
        (value,) = _concrete([den], sizes)
        binders += [f"({inv} : {R})", f"({unit_name(inv)} : {unit_premise(inv, ctx)})"]
        args += [_coq_number(Fraction(1, value), ring), "erefl"]
    for f in sorted(ctx.funcs):
        # every elementwise function at the concrete σ symuat evaluated (one σ for all of them:
        # the identity is claimed for every function, so one instance refutes it)
        binders.append(f"({f} : {R} -> {R})")
        args.append(coq_polynomial(data["sigma"], ring))
    for leaf, typ in ctx.leaves.items():
        if leaf in families and typ.startswith("'I_") and typ.count("'I_") == 1:
            # a head family 'I_h -> mx: member k is the k-th matrix of the value
            fam = families[leaf]
            if fam.name not in rows:
                raise Unsupported(f"the witness gives no value for {fam.name}")
            (h,) = _concrete([fam.args[2]], sizes)
            rs, cs = _concrete(space_of(fam.args[3]), sizes), _concrete(space_of(fam.args[4]), sizes)
            members = rows[fam.name]
            if len(members) != h or any(len(m) != _prod(rs) or any(len(r) != _prod(cs) for r in m) for m in members):
                raise Unsupported(f"the witness value of {fam.name} is not {h} matrices {_prod(rs)}×{_prod(cs)}")
            binders.append(f"({leaf} : {typ.split(' -> ', 1)[0]} -> mx {R}{typ.split(' -> ', 1)[1][4:]})")
            args.append(f"(fun k : 'I_{h} => nth (lmx {_space_text(rs)} {_space_text(cs)} [::]) [:: "
                        + "; ".join(_lmx(rs, cs, m, ring) for m in members) + "] k)")
            continue
        if not typ.startswith("mx R ") or leaf not in leaves:
            raise Unsupported(f"a witness for {leaf} : {typ} (only plain matrices have values)")
        sym = leaves[leaf]
        if sym.name not in rows:
            raise Unsupported(f"the witness gives no value for {sym.name}")
        rs, cs = (_concrete(space, sizes) for space in spaces.get(leaf, (row_space(sym), col_space(sym))))
        vals = rows[sym.name]
        nr, nc = _prod(rs), _prod(cs)
        if len(vals) != nr or any(len(r) != nc for r in vals):
            raise Unsupported(f"the witness value of {sym.name} is not {nr}×{nc}")
        binders.append(f"({leaf} : mx {R}{typ[4:]})")
        args.append(_lmx(rs, cs, vals, ring))
    props = []
    for prop, proof in (premises(ctx) if premises is not None else ()):
        props.append(prop)
        args.append(proof)
    for side in (left, right):
        if re.search(r"\bR\b", side):
            raise Unsupported("the identity names the generic ring R outside a leaf's type")
    # the entry where symuat's exact values of the two sides differ (Coq recomputes both)
    lv, rv = _rows(data["lhs_value"]), _rows(data["rhs_value"])
    at = next(((i, j) for i, (a, b) in enumerate(zip(lv, rv)) for j, (p, q) in enumerate(zip(a, b)) if p != q),
              None)
    if at is None:
        raise Unsupported("the recorded sides agree at every entry: no witness")
    rs, cs = _concrete(row_space(lhs), sizes), _concrete(col_space(lhs), sizes)
    args += [_index(at[0], rs), _index(at[1], cs)]
    comment = f"(* {data['comment']} *)\n  " if data.get("comment") else ""
    statement = (f"Theorem {name} :\n  {comment}~ (forall " + " ".join(binders) + ",\n"
                 + "".join(f"     ({p}) ->\n" for p in props)
                 + f"     {strip(left)} =m {strip(right)}).")
    proof = f"move=> H; move: (H {' '.join(args)}); {tactic}."
    return [Exported(name, statement, proof)]


def coq_polynomial(sigma, ring: str) -> str:
    """The concrete σ (a Python function that is a polynomial with integer coefficients, as
    :func:`~symuat.expr.elementwise.sigma_exact`) as a Coq function of the ring, in Horner form.

    >>> from symuat.expr.elementwise import sigma_exact, sigma_alternative
    >>> print(coq_polynomial(sigma_exact, "int"))
    (fun t => ((((1%:Z) * t + 0%:Z) * t + (- 2%:Z)) * t + 1%:Z))
    >>> print(coq_polynomial(sigma_alternative, "rat"))
    (fun t => (((1%:Q) * t + 3%:Q) * t + 2%:Q))
    """
    t = sp.Symbol("t")
    try:
        poly = sp.Poly(sp.expand(sigma(t)), t)
    except (TypeError, sp.PolynomialError) as exc:
        raise Unsupported(f"the concrete σ is not a polynomial ({exc})") from None
    coeffs = poly.all_coeffs()
    if not all(c.is_Integer for c in coeffs):
        raise Unsupported(f"the concrete σ {poly.as_expr()} has a coefficient that is not an integer")
    body = f"{_coq_number(Fraction(int(coeffs[0])), ring)}"
    for c in coeffs[1:]:
        body = f"({body}) * t + {_coq_number(Fraction(int(c)), ring)}"
    return f"(fun t => ({body}))"


def _prod(dims: list[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


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


def sigma_of(data: dict):
    """The concrete σ at which both recorded sides (``lhs``, ``rhs``) evaluate to their recorded
    values at ``sizes``/``values`` — None for sides without an elementwise function; a witness
    neither of symuat's σ reproduces is :class:`Unsupported`."""
    found, sigma = matching_sigma(data["lhs"], data["rhs"], data["sizes"], data["values"],
                                  np.asarray(data["lhs_value"], dtype=object), np.asarray(data["rhs_value"], dtype=object))
    if not found:
        raise Unsupported("the recorded sides evaluate to the witness's values at neither of symuat's σ")
    return sigma


def matching_sigma(lhs, rhs, sizes: dict, values: dict, lhs_value, rhs_value) -> tuple[bool, object]:
    """``(True, σ)`` for the first concrete σ of symuat's (its first, else its second; None for
    sides without an elementwise function) at which both sides evaluate exactly to the recorded
    values, else ``(False, None)``."""
    from symuat.expr.elementwise import sigma_alternative, sigma_exact
    from symuat.kernel.decide.instances import _has_sigma

    for sigma in (sigma_exact, sigma_alternative) if _has_sigma(lhs, rhs) else (None,):
        if _evaluates_to(lhs, sizes, values, lhs_value, sigma) and _evaluates_to(rhs, sizes, values, rhs_value, sigma):
            return True, sigma
    return False, None


def export_dependence(name: str, data: dict) -> list[Exported]:
    """"``expr`` depends on ``var``", proved by two values of ``var`` (everything else equal) at
    which it differs: ``~ (forall sizes … var var', expr =m expr[var'/var])``, proved at them by
    computation (:coq:`symuat_refute`; the elementwise functions at the σ at which both sides
    evaluate to the recorded values)."""
    return export_witness(name, dict(data, sigma=sigma_of(data)), tactic="symuat_refute")


#: H9.dep's witness the library states (``coq/SymuatEnv.v``): sizes, the recorded values
_SOFTMAX_WITNESS = ({"N": 2, "M": 1, "h": 1},
                    {"X_1": [[0], [0]], "X_2": [[0], [1]], "W~_Q": [[[1]]], "W_K": [[[-1]]],
                     "H(X_1)": [[["1/2", "1/2"], ["1/2", "1/2"]]], "H(X_2)": [[["1/2", "1/2"], ["2/3", "1/3"]]]})

#: what the theorem assumes of exp (its premises) and of the parameters not in the certificate,
#: as the record's reason says it
SOFTMAX_PREMISES = ("stated over any numFieldType F (ℝ is one) with exp a function e of F and ln 2 a variable l, "
                    "and as premises the two facts e(k·l) = 2^k the scores use (e 0 = 1, e(−l) = 1/2, true of "
                    "exp with l = ln 2); W_V, W_O (not in the certificate) any pair with W_V·W_O ≠ 0")


def export_softmax_witness(name: str, data: dict) -> list[Exported]:
    """H9.dep's exact witness through softmax, at N = 2, M = 1, h = 1 (the one symuat finds
    first): ``W'_HVO(X)ᵀ = H(X) ⊗ (W_V W_O)ᵀ`` with ``H(X)`` the row softmax of the scores
    ``(x_n W_Q)(x_m W_K)/√M``, ``W_Q = ln 2·√M·W̃_Q``; over any ``numFieldType`` with ``e``
    for exp and ``l`` for ln 2, the facts ``e 0 = 1`` and ``e(−l) = 1/2`` (``e(k·l) = 2^k`` at
    the scores' k) as premises (:data:`SOFTMAX_PREMISES`); ``exists X1 X2 n m``, an entry of
    ``W'`` that differs, proved at the recorded ``X_1``, ``X_2`` (``env_half_two_thirds``: the
    patterns' 1/2 and 2/3). Any other witness is :class:`Unsupported` (the reason says why)."""
    w = data.get("witness") or {}
    sizes, values = _SOFTMAX_WITNESS
    if w.get("sizes") != sizes or any(w.get("values", {}).get(k) != v for k, v in values.items()):
        raise Unsupported(
            "exact witness through softmax: the patterns are rational only because softmax(ln 2·k) = 2^k/Σ2^k, "
            "a fact about the real exp/ln; only the witness at N = 2, M = 1, h = 1 with X_2 = (0, 1)ᵀ, "
            f"W̃_Q = 1, W_K = −1 is stated (coq/SymuatEnv.v), not {w.get('sizes')}")
    statement = (
        f"Theorem {name} :\n"
        "  (* H9.dep at N = 2, M = 1, h = 1: W'_HVO(X)ᵀ = H(X) ⊗ (W_V W_O)ᵀ, H(X) the row softmax of the scores "
        "(x_n W_Q)(x_m W_K)/√M, W_Q = ln 2·√M·W̃_Q, W̃_Q = 1, W_K = −1 (√M = 1). Over any numFieldType F "
        "(ℝ is one) with e standing for exp and l for ln 2: the premises are e(k·l) = 2^k at the two scores "
        "k = 0, −1 the witness uses, true of exp; W_V, W_O are not in the certificate: any pair with "
        "W_V W_O ≠ 0 *)\n"
        "  (forall (F : numFieldType) (e : F -> F) (l : F), e 0 = 1 -> e (- l) = 2%:R^-1 ->\n"
        "  forall wv wo : F, wv * wo != 0 ->\n"
        "  let H (X : 'I_2 -> F) (n m : 'I_2) :=\n"
        "    e (X n * (l * 1) * (X m * -1)) / \\sum_(m' < 2) e (X n * (l * 1) * (X m' * -1)) in\n"
        "  exists X1 X2 : 'I_2 -> F, exists n m : 'I_2, H X1 n m * (wv * wo) != H X2 n m * (wv * wo))%R.")
    proof = ("move=> F e l He0 Hel wv wo Hb H; "
             "exists (fun _ => 0), (fun i => if (i : nat) == 0%nat then 0 else 1), ord_max, ord0; "
             "rewrite /H !big_ord_recr big_ord0 /= !(mul0r, mulr0, mul1r, add0r, mulN1r, mulrN1, oppr0, mulr1) He0 Hel; "
             "rewrite !div1r big_ord0 add0r; exact: env_half_two_thirds.")
    return [Exported(name, statement, proof, requires="SymuatEnv")]
