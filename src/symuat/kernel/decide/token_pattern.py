r"""Which input tokens an output token depends on, for symbolic sizes: the token pattern of a lift.

A lift :math:`W'` acting on :math:`x'=T_D(X)` has an index space with one token axis (range
:math:`N`) on each side. Output token :math:`n` depends on input token :math:`n'` iff the token
block :math:`(n,n')` of :math:`W'` is nonzero. For generic parameters the pattern is read off the
index-level normal form of the entry (as :func:`~symuat.kernel.structure.generic_density` reads a
density):

* a Kronecker delta between the token indices gives :math:`n=n'`; a causal indicator
  :math:`[a\ge b]` gives :math:`a-b\ge0`; a shifted delta :math:`\delta_{b,a+k+c}` summed over
  :math:`k\in[0,R)` gives :math:`0\le b-a-c\le R-1` (the summed :math:`k` is then unique), and
  unsummed gives :math:`b=a+c`;
* constraints among the feature indices alone are satisfiable (a delta or an indicator between two
  indices of one range holds at equal values), and any other shape of constraint has no rule here.

Every term must carry the same constraints (then the block is, where they hold, a sum of distinct
products of independent generic entries: a nonzero polynomial, zero only on a null set; where they
fail every term vanishes). The derived predicate is then compared with the claimed one, both
conjunctions of linear inequalities in :math:`n,n'` and the sizes, by exact Fourier–Motzkin
elimination in both directions (infeasible over ℚ ⇒ over ℤ): ``proved`` when each implies the
other for all sizes; ``refuted`` by an integer point where they differ, re-checked on the lift
materialised exactly at those sizes (:func:`~symuat.kernel.structure.generic_support`); anything
else ``numeric-only`` (never a guess).
"""

from __future__ import annotations

import sympy as sp

from symuat.errors import KernelInconsistencyError, KernelInputError
from symuat.kernel.index_calculus import IndexContext, col_space, normal_form, row_space
from symuat.kernel.status import Counterexample, Status, Verdict

n_out, n_in = sp.symbols("n n'", integer=True)


class NoTokenRule(ValueError):
    """The entry's constraints have a shape this procedure does not decide."""


def token_constraints(expr, token_dim) -> list[sp.Expr]:
    """The derived pattern as expressions ``e`` meaning ``e ≥ 0`` in ``n`` (output token) and ``n'`` (input
    token) and the sizes; raises :class:`NoTokenRule` when it cannot be read off."""
    ctx = IndexContext()
    I = ctx.fresh_multi(row_space(expr), "i")
    J = ctx.fresh_multi(col_space(expr), "j")
    tok_i = [v for v in I if sp.simplify(ctx.dims[v] - token_dim) == 0]
    tok_j = [v for v in J if sp.simplify(ctx.dims[v] - token_dim) == 0]
    if len(tok_i) != 1 or len(tok_j) != 1:
        raise KernelInputError(f"token pattern: {expr} needs one token axis of range {token_dim} on each side")
    var = {tok_i[0]: n_out, tok_j[0]: n_in}
    form = normal_form(ctx.entry(expr, I, J), ctx.dims)
    if not form.key:
        raise NoTokenRule("the lift is zero")
    patterns = set()
    for _, factors, bound in form.key:
        ranges = dict(bound)
        out = []
        for f in factors:
            kind = f[0]
            if kind in ("E", "F"):
                continue
            if kind in ("D", "T"):
                a, b = f[1], f[2]
                if a in ranges or b in ranges:
                    raise NoTokenRule(f"a constraint {f} on a summed index")
                if a in var and b in var:
                    e = var[a] - var[b]
                    out += [e, -e] if kind == "D" else [e]
                elif a in var or b in var:
                    raise NoTokenRule(f"a constraint {f} between a token and a feature index")
                elif sp.simplify(ctx.dims.get(a, 0) - ctx.dims.get(b, 0)) != 0:
                    raise NoTokenRule(f"a constraint {f} between feature indices of different ranges")
                continue
            if kind == "S":
                _, b, a, k, c = f
                if b not in var or a not in var:
                    raise NoTokenRule(f"a shift {f} off the token indices")
                e = var[b] - var[a] - c
                if k is None:
                    out += [e, -e]
                elif k in ranges and sum(1 for g in factors if g[0] in ("D", "T", "S") and k in g[1:]) == 1:
                    out += [e, ranges[k] - 1 - e]
                else:
                    raise NoTokenRule(f"a shift {f} whose summed index is constrained elsewhere")
                continue
            raise NoTokenRule(f"factor {kind} has no token rule")
        patterns.add(frozenset(sp.expand(e) for e in out))
    if len(patterns) != 1:
        raise NoTokenRule("the terms of the entry carry different token constraints")
    return sorted(patterns.pop(), key=str)


def _fm_model(constraints, variables):
    """A rational point with every ``(e, strict)`` (``e > 0`` / ``e ≥ 0``), or None (exact)."""
    from symuat.kernel.decide.implication import _linear_coeffs, fourier_motzkin

    rows = []
    for e, strict in constraints:
        coeffs, const = _linear_coeffs(e, variables)
        rows.append((coeffs, const, strict))
    return fourier_motzkin(rows, list(variables))


def _holds(pattern, point) -> bool:
    return all(sp.sympify(e).subs(point) >= 0 for e in pattern)


def check_token_pattern(name: str, expr, token_dim, claimed: list, *, fill: dict | None = None) -> Verdict:
    """``{(n, n') : block (n, n') of expr ≠ 0} = {(n, n') : every e ≥ 0 for e in claimed}`` for generic
    parameters and every size. ``fill`` gives the sizes of the other dimensions when the lift is
    materialised to re-check a counterexample (default 2)."""
    try:
        derived = token_constraints(expr, token_dim)
    except NoTokenRule as exc:
        return Verdict(Status.NUMERIC_ONLY, f"{name}: the token pattern is not read off the normal form ({exc})")
    claimed = [sp.expand(sp.sympify(e)) for e in claimed]
    sizes = sorted({s for e in derived + claimed for s in e.free_symbols if s not in (n_out, n_in)}
                   | set(sp.sympify(token_dim).free_symbols), key=str)
    variables = [n_out, n_in] + sizes
    domain = [(n_out, False), (n_in, False), (token_dim - 1 - n_out, False), (token_dim - 1 - n_in, False)]
    domain += [(s - (0 if s.is_nonnegative and not s.is_positive else 1), False) for s in sizes]
    show = lambda pat: " ∧ ".join(f"{e} ≥ 0" for e in pat) or "every (n, n')"
    quantities = {"derived token pattern": show(derived), "claimed": show(claimed)}
    witness = None
    for have, want in ((derived, claimed), (claimed, derived)):
        for c in want:
            model = _fm_model(domain + [(e, False) for e in have] + [(-c, True)], variables)
            if model is None:
                continue
            if all(v.denominator == 1 for v in model.values()):
                witness = {k: int(v) for k, v in model.items()}
                break
            return Verdict(Status.NUMERIC_ONLY, f"{name}: the patterns differ over ℚ at a non-integer point; undecided "
                           "over ℤ", quantities=quantities)
        if witness is not None:
            break
    if witness is None:
        return Verdict(Status.PROVED, f"{name}: the token pattern read off the index-level normal form (generic "
                       f"parameters), {show(derived)}, is the claimed one, {show(claimed)}, for every size "
                       "(each implies the other: exact Fourier–Motzkin)", quantities=quantities)
    point = dict(witness)
    at = {str(s): point[s] for s in sizes}
    from symuat.kernel.decide import dimension_symbols
    from symuat.kernel.structure import generic_support

    env = {s.name: at.get(s.name, (fill or {}).get(s.name, 2)) for s in dimension_symbols(expr)}
    env.update(at)
    support = generic_support(expr, env)
    rs, cs = row_space(expr), col_space(expr)
    # token block (n, n') of the materialised lift
    import numpy as np

    def axes(space):
        return [int(sp.sympify(d).subs({s: env[s.name] for s in sp.sympify(d).free_symbols})) for d in space]

    ra, ca = axes(rs), axes(cs)
    ti = [k for k, d in enumerate(rs) if sp.simplify(d - token_dim) == 0][0]
    tj = [k for k, d in enumerate(cs) if sp.simplify(d - token_dim) == 0][0]
    blocks = support.reshape(ra + ca)
    blocks = np.moveaxis(np.moveaxis(blocks, ti, 0), len(ra) + tj, 1)
    nz = bool(blocks[point[n_out], point[n_in]].any())
    if nz != _holds(derived, point):
        raise KernelInconsistencyError(f"{name}: derived pattern and materialised support disagree at {point}")
    cex = Counterexample(
        dict(env), {"n": point[n_out], "n'": point[n_in]},
        lhs="nonzero" if nz else "zero", rhs="nonzero" if _holds(claimed, point) else "zero",
        reason=f"output token n = {point[n_out]} {'depends' if nz else 'does not depend'} on input token "
               f"n' = {point[n_in]} (0-based); the claim says {'it does' if _holds(claimed, point) else 'it does not'}",
        exact_recheck="the lift materialised exactly with random nonzero integers (two draws): token block "
                      f"({point[n_out]}, {point[n_in]}) is {'nonzero' if nz else 'zero'}",
        numeric_recheck="the same support from the derived pattern",
    )
    return Verdict(Status.REFUTED, f"{name}: an integer point where the derived and the claimed patterns differ "
                   "(exact Fourier–Motzkin), re-checked on the materialised lift", counterexample=cex,
                   quantities=quantities)


__all__ = ["check_token_pattern", "token_constraints", "NoTokenRule", "n_out", "n_in"]
