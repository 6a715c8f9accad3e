r"""A counterexample re-checked: exactly, with a fresh evaluator, and in float64.

Every refutation of an identity rests on :func:`recheck`: the witness's values are evaluated again
on both sides in exact arithmetic (integers, rationals, closed-form constants; a fresh evaluator,
not the search's) and in float64, with the same σ. Soundness: a counterexample is returned only
when the exact evaluation finds an entry that differs (or one side undefined where the other is
defined, or different shapes); a witness that does not re-check exactly, that violates the
statement's hypotheses, or that float64 cannot see although its exact difference is large, is a
:class:`~symuat.errors.KernelInconsistencyError` — a bug, never a verdict. A difference below
what float64 resolves is kept, with the exact re-check standing and the reason stated.
:func:`exact_relative` is the exact counterpart of the float64 residual, as a float.

>>> import numpy as np
>>> exact_relative(np.array([1, 2], dtype=object), np.array([1, 4], dtype=object))
0.5
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symuat.errors import KernelInconsistencyError
from symuat.kernel.constants import magnitude, zero_status
from symuat.kernel.decide.instances import TOLERANCE, _has_sigma, evaluate_at, relative_residual
from symuat.kernel.evaluate import exact_equal
from symuat.kernel.status import Counterexample


def exact_relative(left, right) -> float:
    """max|l − r| / max(1, |l|, |r|) of two exact arrays, as a float (0 when not comparable)."""
    if not any(isinstance(v, sp.Basic) for v in (*left.flat, *right.flat)):
        try:
            diff = max((abs(x - y) for x, y in zip(left.flat, right.flat)), default=0)
            scale = max([1] + [abs(x) for x in left.flat] + [abs(y) for y in right.flat])
            return float(sp.Rational(diff) / sp.Rational(scale))
        except (TypeError, ValueError):
            return 1.0
    # closed-form constants: certified magnitudes (interval arithmetic), never SymPy's ordering of
    # two radicals (undecidable at its precision) nor a 15-digit evalf of a cancellation
    diff = max((magnitude(sp.sympify(x) - sp.sympify(y)) for x, y in zip(left.flat, right.flat)), default=0.0)
    scale = max([1.0] + [magnitude(v) for v in (*left.flat, *right.flat)])
    return diff / scale


def recheck(cex: Counterexample, lhs, rhs, sizes, sigma=None) -> Counterexample:
    """Re-evaluate the counterexample exactly (fresh evaluator) and in float64, with the same σ."""
    if _has_sigma(lhs, rhs):
        from symuat.expr.elementwise import SIGMA_WITNESS, sigma_exact

        used = SIGMA_WITNESS if sigma in (None, sigma_exact) else getattr(sigma, "__doc__", None) or "σ"
        cex.reason += f" (the opaque σ evaluated as {used}: a counterexample for one σ refutes a claim for every σ)"
    exact = {k: (v.astype(object) if isinstance(v, np.ndarray) else v) for k, v in cex.values.items()}
    from symuat.kernel.hypotheses import violated

    broken = violated(exact)
    if broken:  # instances are drawn on the hypotheses: a witness outside them is a kernel bug
        raise KernelInconsistencyError(f"counterexample violates the hypotheses: {'; '.join(broken)}")
    left, err_l = evaluate_at(lhs, sizes, exact, "exact", sigma)
    right, err_r = evaluate_at(rhs, sizes, exact, "exact", sigma)
    floats = {k: np.asarray(v, dtype=float) for k, v in cex.values.items()}
    fl, ferr_l = evaluate_at(lhs, sizes, floats, "float", sigma)
    fr, ferr_r = evaluate_at(rhs, sizes, floats, "float", sigma)
    if err_l or err_r:
        if (err_l is None) == (err_r is None):
            raise KernelInconsistencyError(f"counterexample did not re-check: {cex.reason}")
        cex.exact_recheck = f"exact: {'right' if err_r else 'left'} side undefined ({err_l or err_r})"
        if (ferr_l is None) == (ferr_r is None):
            raise KernelInconsistencyError("float64 re-check disagrees on definedness")
        cex.numeric_recheck = f"float64: {'right' if ferr_r else 'left'} side undefined as well"
        return cex
    if left.shape != right.shape:
        cex.exact_recheck = f"exact: shapes {left.shape} ≠ {right.shape}"
        cex.numeric_recheck = f"float64: shapes {fl.shape} ≠ {fr.shape}"
        return cex
    diff = [(idx, x - y) for (idx, x), y in zip(np.ndenumerate(left), right.flat) if not exact_equal(x, y)]
    if not diff:
        raise KernelInconsistencyError("counterexample did not re-check exactly")
    idx, d = diff[0]
    cex.exact_recheck = f"exact: entry {idx} differs by {d} ({len(diff)} of {left.size} entries differ)"
    if isinstance(d, sp.Basic) and not d.is_Rational and not d.free_symbols:
        cex.exact_recheck += "; " + zero_status(d)[1]  # a closed-form constant: certified nonzero
    res = relative_residual(fl, fr)
    exact_rel = exact_relative(left, right)
    if np.isnan(res):  # float64 overflows (σ compounds magnitudes): a limit of float64, not a verdict
        cex.numeric_recheck = ("float64: not finite at these values (overflow); the exact re-check stands")
        return cex
    if not res > TOLERANCE:
        if exact_rel > 1e-6:  # float64 would see a difference this large: the evaluators disagree
            raise KernelInconsistencyError("counterexample not confirmed in float64")
        cex.numeric_recheck = (
            f"float64: the difference (exact relative size {exact_rel:.3g}) is below what float64 "
            f"resolves at these magnitudes (residual {res:.3g}); the exact re-check stands")
        return cex
    cex.numeric_recheck = f"float64: relative residual {res:.3g} > tolerance {TOLERANCE}"
    return cex
