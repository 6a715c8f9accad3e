r"""RoPE statements decided on true rotations: an exact witness or evidence, never a proof from blocks.

A statement about rotary embeddings proved with *generic* 2×2 blocks (:class:`~symuat.kernel.rotary.PairRotation`)
holds for rotations in particular; one that fails with generic blocks may still hold for rotations.
So its refutation must come from rotations:

* :func:`refute_with_rotations` — every :class:`~symuat.kernel.rotary.PairRotation` leaf a *true*
  rotation with rational cosine and sine (points of the unit circle from Pythagorean triples), every
  other leaf a small integer matrix, evaluated in exact rational arithmetic. A difference is an exact
  witness (sound: exact arithmetic on a rotation), re-checked in float64 (a witness float64 does not
  confirm is a :class:`~symuat.errors.KernelInconsistencyError`, never a verdict); none found is
  ``numeric-only`` (evidence over the sizes and seeds tried, never ``proved``).
* :func:`check_block_lemma` — one 2×2 block as a function of symbolic angles: ``proved`` only when the
  difference expands to 0 by the angle-addition formulas (a SymPy identity, so a proof for every
  angle); ``refuted`` only at an angle that is a rational multiple of π where SymPy evaluates the
  entries in radicals and finds a nonzero entry (exact); otherwise ``numeric-only``.

>>> a = sp.Symbol("alpha", real=True)
>>> check_block_lemma(block(a).T * block(a), sp.eye(2), (a,)).status   # needs cos²+sin²=1: not proved
<Status.NUMERIC_ONLY: 'numeric-only'>
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symuat.kernel.rotary import rotation_leaves
from symuat.kernel.status import Verdict

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
            left, err_l = decide.evaluate_at(lhs, sizes, values, "exact")
            right, err_r = decide.evaluate_at(rhs, sizes, values, "exact")
            if err_l or err_r:
                continue
            tried.append(sizes)
            if left.shape != right.shape or any(a != b for a, b in zip(left.flat, right.flat)):
                fl, _ = decide.evaluate_at(lhs, sizes, {k: np.asarray(v, dtype=float) for k, v in values.items()}, "float")
                fr, _ = decide.evaluate_at(rhs, sizes, {k: np.asarray(v, dtype=float) for k, v in values.items()}, "float")
                res = decide.relative_residual(fl, fr) if fl.shape == fr.shape else float("inf")
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
                from symuat.kernel import certificates

                if certificates.listened():  # the certify tier: the identity refuted, at these rotations
                    certificates.record("rotation_refutation", lhs=lhs, rhs=rhs, sizes=dict(cex.sizes),
                                        values=dict(values), lhs_value=left, rhs_value=right,
                                        rotations=sorted(rot))
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


def check_block_lemma(lhs: sp.Matrix, rhs: sp.Matrix, angles) -> Verdict:
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
