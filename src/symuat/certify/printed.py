r"""Printed sums with an ellipsis → Coq: "the printed row is entry ``i`` of ``W ⋄ x`` for every size".

D4's rows (Eq. 4: ``w_{1,2}x_1 + w_{2,2}x_2 + ⋯ + w_{m,2}x_m = (W ⋄ x)_2``) are ``proved`` by
:func:`~symuat.kernel.decide.printed_sums.check_printed_sum` for every ``m ≥ 3``: each printed
term is the general term ``w_{k,i}x_k`` at its position, the positions are distinct and in
range, and the ellipsis stands for the general term at every position not printed. It records
that (kind ``"printed_sum"``); this module states it in Coq with the ellipsis made explicit as
the sum of the general term over the positions the printed terms do not cover::

    Theorem … (m n : nat) (W : mx R [:: m.+3] [:: n.+2]) (x : mx R [:: m.+3] [::]) :
      diamond W x (row 2) tt =
        W 1 2 * x 1 + W 2 2 * x 2 + \sum_(k < m.+3 | k ∉ {0, 1, m.+2}) W k 2 * x k + W m 2 * x m.

A size with a lower bound ``m ≥ L`` is written ``m.+L`` (every ``m ≥ L`` is ``m' + L``, the
substitution symuat's check makes), the row's size at least the row it names. Positions are
0-based ordinals whose range proofs Coq finds (``ltac:(by [])``): a position out of range does
not typecheck. The proof (``symuat_printed`` in ``coq/SymuatWitness.v``) splits the definition's
full sum at the printed positions (``sum_printed``: they must be distinct) and closes by
``reflexivity``: each printed term must *be* the general term at its position — a printed
``w_{3,1}`` where the definition has ``w_{2,1}`` is rejected.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> from symuat.expr.diamond import Diamond
>>> m, n = sp.symbols("m n", positive=True, integer=True)
>>> k = sp.Symbol("k", integer=True, positive=True)
>>> W, x, w, xi = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1), sp.IndexedBase("w"), sp.IndexedBase("x")
>>> t = export_printed("r", {"explicit": [(1, w[1, 2] * xi[1]), (m, w[m, 2] * xi[m])],
...     "general": sp.Lambda(k, w[k, 2] * xi[k]), "k_range": (1, m), "least": {m: 3},
...     "entry": Diamond(W, x), "row": 2, "bases": {"w": W, "x": x}, "before": 1})[0]
>>> print(t.statement)  # doctest: +NORMALIZE_WHITESPACE
Theorem r (m n : nat) (W : mx R [:: m.+3] [:: n.+2]) (x : mx R [:: m.+3] [::]) :
  diamond W x (@Ordinal n.+2 1 ltac:(by []), tt) tt =
    W (@Ordinal m.+3 0 ltac:(by []), tt) (@Ordinal n.+2 1 ltac:(by []), tt) * x (@Ordinal m.+3 0 ltac:(by []), tt) tt
    + \sum_(k < m.+3 | (k : nat) \notin [:: 0; m.+2]%N) W (k, tt) (@Ordinal n.+2 1 ltac:(by []), tt) * x (k, tt) tt
    + W (@Ordinal m.+3 m.+2 ltac:(by []), tt) (@Ordinal n.+2 1 ltac:(by []), tt) * x (@Ordinal m.+3 m.+2 ltac:(by []), tt) tt.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from sympy.matrices.expressions import MatrixSymbol

from symuat.certify.coq_terms import Unsupported, ident, nat_list
from symuat.certify.export import Exported


def _succ(name: str, c: int) -> str:
    """``name + c`` as Coq's successor notation (``m.+2``)."""
    if c == 0:
        return name
    if 1 <= c <= 4:
        return f"{name}.+{c}"
    raise Unsupported(f"offset {c} of {name} (only 0..4 are written)")


class _Axes:
    """Sizes with their lower bounds (``d ≥ L`` written ``d.+L``) and 0-based positions on them."""

    def __init__(self, least: dict):
        self.least = {s: int(v) for s, v in least.items()}

    def size(self, d) -> str:
        d = sp.sympify(d)
        if d.is_Integer:
            return str(int(d))
        if not d.is_Symbol:
            raise Unsupported(f"size {d} is not a single dimension")
        return _succ(ident(d.name), self.least.get(d, 1))

    def pos(self, p, axis) -> str:
        """The 0-based position of the 1-based ``p`` on ``axis``, as an ordinal."""
        p = sp.expand(sp.sympify(p) - 1)
        shifted = sp.expand(p.subs({s: s + self.least.get(s, 1) for s in p.free_symbols}))
        free = shifted.free_symbols
        if not free and shifted.is_Integer and shifted >= 0:
            text = str(int(shifted))
        elif len(free) == 1:
            (s,) = free
            c = shifted - s
            if not (c.is_Integer and c >= 0):
                raise Unsupported(f"position {p + 1} is not a size plus a constant")
            text = _succ(ident(s.name), int(c))
        else:
            raise Unsupported(f"position {p + 1} is not a constant or a size plus a constant")
        return text, f"@Ordinal {self.size(axis)} {text} ltac:(by [])"


def _factors(term):
    coeff, factors = sp.Integer(1), []
    for f in sp.Mul.make_args(sp.sympify(term)):
        if isinstance(f, sp.Indexed):
            factors.append(f)
        elif f.is_Integer:
            coeff *= f
        else:
            raise Unsupported(f"printed factor {f} (only indexed entries and integers)")
    return coeff, factors


def export_printed(name: str, data: dict) -> list[Exported]:
    """The printed row (explicit terms, the ellipsis, explicit terms) = entry ``row`` of ``W ⋄ x``."""
    p = _printed(data)
    statement = f"Theorem {name} {' '.join(p['binders'])} :\n  {p['body']}."
    return [Exported(name, statement, p["proof"])]


def export_printed_refutation(name: str, data: dict) -> list[Exported]:
    """A printed row that is *not* entry ``row`` of ``W ⋄ x`` (D4's row 1, ``w_{31}`` where the
    definition has ``w_{21}``): ``~ (forall sizes W x, diamond W x row = printed row)`` over ℤ —
    the statement :func:`export_printed` makes, negated — proved at the counterexample's sizes
    (``data["sizes"]``) and the first 0/1 matrices at which the two differ (by computation,
    :coq:`symuat_refute`). Matrices at which they agree are rejected by Coq."""
    p = _printed(data)
    sizes = data["sizes"]
    W = p["W"]
    m_, n_ = W.shape
    at = {}
    args = []
    for d in p["dims_syms"]:
        if d.name not in sizes:
            raise Unsupported(f"the counterexample gives no value for the size {d.name}")
        least = p["axes"].least.get(d, 1)
        if int(sizes[d.name]) < least:
            raise Unsupported(f"the counterexample's {d.name} = {sizes[d.name]} is below the row's least {least}")
        at[d] = int(sizes[d.name])
        args.append(f"{int(sizes[d.name]) - least}%N")
    mm, nn = int(sp.sympify(m_).subs(at)), int(sp.sympify(n_).subs(at))
    values = _differing_values(data, at, mm, nn)
    if values is None:
        raise Unsupported("no 0/1 matrices at which the printed row and the entry differ")
    from symuat.certify.witness import _lmx

    Wv, xv = values
    args += [_lmx([mm], [nn], [[Fraction(v) for v in row] for row in Wv], "int"),
             _lmx([mm], [], [[Fraction(v)] for v in xv], "int")]
    binders = " ".join(b.replace("mx R ", "mx [comRingType of int] ") for b in p["binders"])
    statement = f"Theorem {name} :\n  ~ (forall {binders},\n     {p['body']})."
    return [Exported(name, statement, f"move=> H; move: (H {' '.join(args)}); symuat_refute.")]


def _differing_values(data: dict, at: dict, mm: int, nn: int):
    """The first 0/1 matrices ``(W, x)`` (``mm × nn``, ``mm``), in a fixed order, at which the
    printed row and entry ``row`` of ``W ⋄ x`` differ (exact), or None."""
    import itertools

    import numpy as np

    entry = data["entry"]
    wb, xb = (b for b, mat in sorted(data["bases"].items(), key=lambda kv: kv[1] != entry.left))
    general = data["general"]
    (var,), body = general.variables, general.expr
    row = int(sp.sympify(data["row"]).subs(at))
    explicit = [(int(sp.sympify(pos).subs(at)), sp.sympify(term).subs(at)) for pos, term in data["explicit"]]
    covered = {pos for pos, _ in explicit}
    printed = sum((t for _, t in explicit), sp.Integer(0)) + sum(
        (body.subs(var, k) for k in range(1, mm + 1) if k not in covered), sp.Integer(0))
    want = sum((body.subs(var, k) for k in range(1, mm + 1)), sp.Integer(0))
    w, x = sp.IndexedBase(str(wb)), sp.IndexedBase(str(xb))
    rng = np.random.default_rng(0)
    candidates = itertools.chain(
        ((np.eye(mm, nn, -k, dtype=int), np.eye(mm, 1, -j, dtype=int).ravel()) for k in range(mm) for j in range(mm)),
        ((rng.integers(0, 2, (mm, nn)), rng.integers(0, 2, mm)) for _ in range(64)))
    for Wv, xv in candidates:
        sub = {w[i + 1, j + 1]: int(Wv[i, j]) for i in range(mm) for j in range(nn)}
        sub.update({x[k + 1]: int(xv[k]) for k in range(mm)})
        if row <= nn and sp.expand(printed.xreplace(sub) - want.xreplace(sub)) != 0:
            return Wv.tolist(), xv.tolist()
    return None


def _printed(data: dict) -> dict:
    """The pieces of the printed row's statement: its binders, its body (``diamond W x row =
    printed``), its proof by :coq:`symuat_printed`, and what they are made of."""
    entry = data["entry"]
    if type(entry).__name__ != "Diamond" or getattr(entry, "kind", None) != "mv":
        raise Unsupported("a printed sum against an entry other than W ⋄ x")
    W, x = entry.left, entry.right
    if not (isinstance(W, MatrixSymbol) and isinstance(x, MatrixSymbol)):
        raise Unsupported("W ⋄ x of expressions (only of matrices)")
    m_, n_ = W.shape
    lo, hi = data["k_range"]
    if sp.sympify(lo) != 1 or sp.sympify(hi) != m_:
        raise Unsupported(f"the printed range {lo}..{hi} is not the whole axis 1..{m_}")
    least = dict(data["least"])
    row = sp.sympify(data["row"])
    if row.is_Integer:
        if n_.is_Symbol:
            least[n_] = max(least.get(n_, 1), int(row))
    elif row != n_:
        raise Unsupported(f"row {row} is neither a constant nor the last row")
    axes = _Axes(least)
    Wc, xc = ident(W.name), ident(x.name)
    bases = {str(b): (ident(mat.name), mat) for b, mat in data["bases"].items()}
    if set(bases.values()) != {(Wc, W), (xc, x)}:
        raise Unsupported("the printed entries name matrices other than W and x")
    _, row_ord = axes.pos(row, n_)
    k = "k" if "k" not in (Wc, xc) else "k_"

    def entry_text(f, bound=None):
        coq, mat = bases.get(str(f.base), (None, None))
        if coq is None:
            raise Unsupported(f"printed entry {f} of an unknown matrix")
        idx = []
        for value, axis in zip(f.indices, mat.shape):
            if axis == 1:
                if sp.sympify(value) != 1:
                    raise Unsupported(f"column {value} of the vector {mat.name}")
                idx.append("tt")
            elif bound is not None and sp.sympify(value) == bound:
                idx.append(f"({k}, tt)")
            else:
                idx.append(f"({axes.pos(value, axis)[1]}, tt)")
        if len(f.indices) == 1 and mat.shape[1] == 1:
            idx.append("tt")
        if len(idx) != 2:
            raise Unsupported(f"printed entry {f} does not index {mat.name} fully")
        return f"{coq} {idx[0]} {idx[1]}"

    def term_text(term, bound=None):
        coeff, factors = _factors(term)
        order = {Wc: 0, xc: 1}  # the definition's order: w_{k,i} x_k
        factors.sort(key=lambda f: order.get(bases.get(str(f.base), ("",))[0], 2))
        out = " * ".join(entry_text(f, bound) for f in factors)
        return out if coeff == 1 else f"{int(coeff)}%:R * {out}"

    general = data["general"]
    (var,), body = general.variables, general.expr
    explicit = list(data["explicit"])
    before = int(data.get("before", len(explicit)))
    texts, positions, ords = [], [], []
    for pos, term in explicit:
        nat, ordinal = axes.pos(pos, m_)
        positions.append(nat)
        ords.append(ordinal)
        texts.append(term_text(term))
    ellipsis = (f"\\sum_({k} < {axes.size(m_)} | ({k} : nat) \\notin [:: {'; '.join(positions)}]%N) "
                f"{term_text(body, bound=var)}")
    parts = texts[:before] + [ellipsis] + texts[before:]
    dims = sorted({ident(s.name) for s in (m_, n_) if s.is_Symbol})
    binders = [f"({' '.join(dims)} : nat)"] if dims else []
    binders += [f"({Wc} : mx R {nat_list([axes.size(m_)])} {nat_list([axes.size(n_)])})",
                f"({xc} : mx R {nat_list([axes.size(m_)])} [::])"]
    body = f"diamond {Wc} {xc} ({row_ord}, tt) tt =\n    " + "\n    + ".join(parts)
    proof = (f"symuat_printed ([:: {'; '.join(ords[:before])}]) ([:: {'; '.join(ords[before:])}]) "
             f"([:: {'; '.join(positions)}]%N).")
    dims_syms = sorted((s for s in (m_, n_) if s.is_Symbol), key=lambda s: ident(s.name))
    return {"binders": binders, "body": body, "proof": proof, "W": W, "x": x, "axes": axes, "dims_syms": dims_syms}
