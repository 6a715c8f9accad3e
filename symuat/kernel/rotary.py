r"""RoPE as a block-diagonal family of 2×2 blocks, in either layout, for symbolic head widths.

:class:`PairRotation` is the matrix :math:`R` (``d×d``, :math:`d=2e`) acting on a row vector
(:math:`q\mapsto qR`) that mixes coordinate pair :math:`k` through the 2×2 block
:math:`\rho_k` and nothing else. The blocks are a leaf (``name``, an ``(e·2)×2`` array: block
:math:`k` in rows :math:`2k,2k+1`), left generic: an identity proved with generic blocks holds in
particular for rotations by :math:`n\theta_k` at every position :math:`n` and every frequency.
The layout says where pair :math:`k` lives:

* ``"half"`` (HF ``rotate_half``): coordinates :math:`(k,\ k+e)` — multi-index :math:`(t,k)`;
* ``"interleaved"`` (GGUF / Meta): coordinates :math:`(2k,\ 2k+1)` — multi-index :math:`(k,t)`.

For the index engine an entry is :math:`\rho[(k,t),t']\,\delta_{kk'}`; numerically the matrix is
built from the leaf's value.

>>> from symuat.algebra import dims
>>> e = dims("e")
>>> PairRotation("rho", e, "half").shape
(2*e, 2*e)
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Basic
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr

from symuat.kernel.index_calculus import Term, _delta, space_of

LAYOUTS = ("half", "interleaved")


class PairRotation(MatrixExpr):
    """``d×d`` block matrix of 2×2 blocks ``name[k]`` on pair ``k`` (``layout`` half or interleaved)."""

    def __new__(cls, name, e, layout: str = "half"):
        name = name.name if isinstance(name, Str) else name
        layout = layout.name if isinstance(layout, Str) else layout
        if layout not in LAYOUTS:
            raise ValueError(f"RoPE layout must be one of {LAYOUTS}, not {layout!r}")
        return Basic.__new__(cls, Str(name), sp.sympify(e), Str(layout))

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def layout(self) -> str:
        return self.args[2].name

    @property
    def shape(self):
        return (2 * self.args[1], 2 * self.args[1])

    def _space(self):
        e = space_of(self.args[1])
        return (sp.Integer(2),) + e if self.layout == "half" else e + (sp.Integer(2),)

    _symuat_row_space = _space
    _symuat_col_space = _space

    def _symuat_leaf(self):
        return self.name, (self.args[1] * 2, sp.Integer(2))

    def _split(self, idx):
        if len(idx) == 1:  # e = 1: the pair axis only
            return None, idx[0]
        return (idx[1], idx[0]) if self.layout == "half" else (idx[0], idx[1])

    def _symuat_entry(self, ctx, I, J):
        k, t = self._split(I)
        k2, t2 = self._split(J)
        row = (k, t) if k is not None else (t,)
        factors = (("E", self.name, row, (t2,)),)
        if k is not None:
            factors += (_delta(k, k2),)
        return [Term(sp.Integer(1), factors, ())]

    def _symuat_evaluate(self, ev):
        from symuat.heads import _leaf_value

        e = ev.size(self.args[1])
        blocks = _leaf_value(ev, self.name, (2 * e, 2)).reshape(e, 2, 2)
        out = ev.const((2 * e, 2 * e), 0)
        for k in range(e):
            for t in range(2):
                for t2 in range(2):
                    i = t * e + k if self.layout == "half" else 2 * k + t
                    j = t2 * e + k if self.layout == "half" else 2 * k + t2
                    out[i, j] = blocks[k, t, t2]
        return out

    def _latex(self, printer):
        return rf"R^{{\rm {self.layout}}}_{{{printer._print(sp.Symbol(self.name))}}}"


def rotation_blocks(angles: np.ndarray) -> np.ndarray:
    """The leaf value for rotations by ``angles`` (one per pair) acting on rows: block
    :math:`[[\\cos,\\sin],[-\\sin,\\cos]]` (so that :math:`(a,b)\\mapsto(a\\cos-b\\sin,\\ a\\sin+b\\cos)`)."""
    c, s = np.cos(angles), np.sin(angles)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2).reshape(-1, 2)


# --------------------------------------------------------------------------------------------
# refutation on true rotations
# --------------------------------------------------------------------------------------------

#: rational points on the unit circle (Pythagorean triples): exact rotations
_PYTHAGOREAN = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29))


def _rational_rotations(e: int, rng):
    from fractions import Fraction

    out = np.empty((2 * e, 2), dtype=object)
    for k in range(e):
        a, b, c = _PYTHAGOREAN[int(rng.integers(len(_PYTHAGOREAN)))]
        cos, sin = Fraction(a, c), Fraction(b, c) * int(rng.choice([-1, 1]))
        out[2 * k:2 * k + 2] = [[cos, sin], [-sin, cos]]
    return out


def rotation_leaves(*exprs) -> dict:
    """``{leaf name: e}`` for every :class:`PairRotation` in the expressions."""
    out = {}
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, PairRotation):
                out[node.name] = node.args[1]
    return out


def refute_with_rotations(lhs, rhs, sizes_list: list[dict], seeds=range(6)):
    """Search a counterexample to ``lhs = rhs`` in which every :class:`PairRotation` leaf is a true
    rotation (rational cosines and sines from Pythagorean triples, so exact) and every other leaf a
    small integer matrix. A statement about RoPE must fail on rotations, not on arbitrary 2×2
    blocks, for the witness to count.

    Returns a ``refuted`` verdict with the exact witness (re-checked in float64), or a
    ``numeric-only`` one when no size and seed gave a difference (evidence, never a proof).
    """
    from symuat.kernel import decide
    from symuat.kernel.status import Counterexample, NumericWitness, Status, Verdict

    rot = rotation_leaves(lhs, rhs)
    syms = {k: v for k, v in decide.leaf_shapes(lhs, rhs).items() if k not in rot}
    tried = []
    for sizes in sizes_list:
        for seed in seeds:
            rng = np.random.default_rng(seed)
            values = decide.random_values(syms, sizes, rng, "exact")
            for name, e in rot.items():
                values[name] = _rational_rotations(int(sp.sympify(e).subs(sizes)), rng)
            left, err_l = decide._evaluate(lhs, sizes, values, "exact")
            right, err_r = decide._evaluate(rhs, sizes, values, "exact")
            if err_l or err_r:
                continue
            tried.append(sizes)
            if left.shape != right.shape or any(a != b for a, b in zip(left.flat, right.flat)):
                fl, _ = decide._evaluate(lhs, sizes, {k: np.asarray(v, dtype=float) for k, v in values.items()}, "float")
                fr, _ = decide._evaluate(rhs, sizes, {k: np.asarray(v, dtype=float) for k, v in values.items()}, "float")
                res = decide._residual(fl, fr) if fl.shape == fr.shape else float("inf")
                if not res > decide.TOLERANCE:
                    from symuat.errors import KernelInconsistencyError

                    raise KernelInconsistencyError("exact rotation witness not confirmed in float64")
                where = next(i for i, (a, b) in enumerate(zip(left.flat, right.flat)) if a != b) \
                    if left.shape == right.shape else None
                cex = Counterexample(
                    {str(k): int(v) for k, v in sizes.items()}, values, lhs=left, rhs=right,
                    reason=("shapes differ" if where is None else
                            f"entry {tuple(int(i) for i in np.unravel_index(where, left.shape))}: {left.flat[where]} ≠ {right.flat[where]}")
                    + "; every RoPE block a true rotation (rational cos/sin)",
                    exact_recheck="exact rational arithmetic",
                    numeric_recheck=f"float64: relative residual {res:.3g} > {decide.TOLERANCE}")
                return Verdict(Status.REFUTED, "exact counterexample on true rotations (Pythagorean cos/sin), "
                               "integer weights; re-checked in float64", counterexample=cex)
    return Verdict(Status.NUMERIC_ONLY, "no difference on exact rotation instances",
                   sizes=[{str(k): int(v) for k, v in s.items()} for s in tried],
                   numeric=NumericWitness([], list(seeds), 0.0, 0.0, "exact instances"))


# --------------------------------------------------------------------------------------------
# one 2×2 block as a function of its angle: lemmas for symbolic angles
# --------------------------------------------------------------------------------------------


def block(angle) -> sp.Matrix:
    """The 2×2 RoPE block at ``angle`` acting on rows, as :func:`rotation_blocks` builds it:
    :math:`\\begin{pmatrix}\\cos&\\sin\\\\-\\sin&\\cos\\end{pmatrix}`.

    >>> a, b = sp.symbols("alpha beta", real=True)
    >>> check_block_lemma(block(a).T * block(b), block(b - a), (a, b)).status
    <Status.PROVED: 'proved'>
    >>> check_block_lemma(block(a).T * block(b), block(a + b), (a, b)).status
    <Status.REFUTED: 'refuted'>
    """
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, s], [-s, c]])


#: exact angles for a counterexample (SymPy evaluates cos and sin of these in radicals)
_ANGLES = (sp.pi / 2, sp.pi / 3, sp.pi / 4, sp.pi / 6, sp.pi)


def check_block_lemma(lhs: sp.Matrix, rhs: sp.Matrix, angles) -> "Verdict":
    """Decide ``lhs = rhs`` for 2×2 matrices of trigonometric polynomials in symbolic ``angles``.

    ``proved`` when the difference expands to 0 after :func:`sympy.expand_trig` (the addition
    formulas; the relation :math:`\\cos^2+\\sin^2=1` is *not* used, so a lemma that needs it stays
    unproved); ``refuted`` with an exact witness at angles that are rational multiples of π (the
    entries evaluated in radicals); ``numeric-only`` otherwise."""
    import itertools

    from symuat.kernel.status import Counterexample, NumericWitness, Status, Verdict

    diff = (lhs - rhs).applyfunc(lambda x: sp.expand(sp.expand_trig(x)))
    if all(x == 0 for x in diff):
        return Verdict(Status.PROVED, "SymPy: the difference expands to 0 by the angle-addition formulas "
                       f"(symbolic angles {', '.join(map(str, angles))}; cos²+sin²=1 not used)")
    for point in itertools.product(_ANGLES, repeat=len(angles)):
        at = dict(zip(angles, point))
        values = diff.subs(at).applyfunc(sp.nsimplify)
        where = next(((i, j) for i in range(2) for j in range(2) if sp.simplify(values[i, j]) != 0), None)
        if where is not None:
            left, right = lhs.subs(at).applyfunc(sp.simplify), rhs.subs(at).applyfunc(sp.simplify)
            return Verdict(Status.REFUTED, "exact counterexample at rational multiples of π (entries in radicals)",
                           counterexample=Counterexample(
                               {}, {str(k): str(v) for k, v in at.items()}, lhs=left, rhs=right,
                               reason=f"entry {where}: {left[where]} ≠ {right[where]}",
                               exact_recheck="SymPy, exact (radicals)",
                               numeric_recheck=f"float64: {float(left[where]):.6g} ≠ {float(right[where]):.6g}"))
    return Verdict(Status.NUMERIC_ONLY, "no difference at the exact angles tried; not proved",
                   numeric=NumericWitness([], [], 0.0, 0.0, "exact angles"))
