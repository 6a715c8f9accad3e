r"""Pruning a UAT sum (spec A1): the inequalities of UAT Eq. 9–12 / DUAT Eq. 13–16 as statements
of real arithmetic with absolute values.

A network :math:`G=\sum_{j\in\Lambda}\alpha_j\sigma(\mathbf W_j^{T}\mathbf x+\theta_j)` is split by a
partition :math:`\Lambda=\Lambda_1\sqcup\Lambda_2` into :math:`S_k(\mathbf x)=\sum_{j\in\Lambda_k}\alpha_j
\sigma(\cdot)`. Every statement of A1 is pointwise in :math:`\mathbf x` and universally quantified
over networks, partitions and :math:`f`; at one point the values :math:`S_1,S_2,f` are arbitrary
reals (any value is attained by a constant network, :math:`\mathbf W_j=0`, :math:`\theta_j=0`,
logistic :math:`\sigma(0)=1/2`), so each statement *is* a formula of linear real arithmetic with
absolute values in :math:`(S_1,S_2,f,\varepsilon,\delta)`, decided by
:func:`symuat.kernel.decide.check_real_implication`; a rational model is realised back as a
constant network and re-checked exactly (:func:`realise`).

Readings (spec A1): the smallness hypothesis on :math:`S_1` (UAT), on :math:`S_2` (DUAT) or none;
":math:`\to0`" as a uniform bound :math:`\sup_{\mathbf I_n}|S_k|\le\delta` or as a limit along a
sequence of networks (a limit constrains no finite member of the sequence, so a pointwise
statement about each member is decided as with no hypothesis); UAT Eq. 12's index ranges
:math:`\sum_{j=1}^{N_1}`, :math:`\sum_{j=1}^{N_2}` literal, or as sums over :math:`\Lambda_1,\Lambda_2`.

>>> from symuat.kernel.decide import check_real_implication
>>> str(check_real_implication(VARIABLES, setup(), a1_ii()).status)
'proved'
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import sympy as sp

S1, S2, f, eps, delta = sp.symbols(r"S_1 S_2 f \varepsilon \delta", real=True)
VARIABLES = [S1, S2, f, eps, delta]
HYPOTHESES = ("S1", "S2", "none")
TO_ZERO = ("uniform", "limit")
SUMS = ("Λ", "literal")


def setup(s1=S1, s2=S2):
    r""":math:`|S_1+S_2-f|<\varepsilon`, :math:`\varepsilon>0` (UAT Eq. 10, DUAT Eq. 14)."""
    return [sp.Abs(s1 + s2 - f) < eps, eps > 0]


def smallness(hyp: str, to_zero: str, s1=S1, s2=S2) -> list:
    """The smallness hypothesis as constraints at one point (none for a limit: see the module)."""
    if hyp == "none" or to_zero == "limit":
        return []
    return [sp.Abs(s1 if hyp == "S1" else s2) <= delta, delta > 0]


def a1_i(s1=S1, s2=S2):
    r"""A1.i (UAT Eq. 11, DUAT Eq. 15): :math:`\big||S_1-f|-|S_2|\big|<\varepsilon`."""
    return sp.Abs(sp.Abs(s1 - f) - sp.Abs(s2)) < eps


def a1_ii(t1=S1, t2=S2):
    r"""A1.ii (UAT Eq. 12, DUAT Eq. 16): :math:`|T_1-f|<\varepsilon+|T_2|`."""
    return sp.Abs(t1 - f) < eps + sp.Abs(t2)


def sample(rng) -> list[float]:
    """Random float values of (S_1, S_2, f, ε, δ) for numeric confirmation."""
    s1, s2, fv = rng.standard_normal(3) * rng.choice([0.01, 1, 10], 3)
    return [s1, s2, fv, abs(rng.standard_normal()) * 2, abs(rng.standard_normal())]


# --------------------------------------------------------------------------------------------
# literal index ranges: explicit N, every partition
# --------------------------------------------------------------------------------------------


def term_symbols(N: int) -> list[sp.Symbol]:
    """The per-unit values :math:`t_j=\\alpha_j\\sigma(\\mathbf W_j^T\\mathbf x+\\theta_j)`, j = 1..N."""
    return list(sp.symbols(f"t_1:{N + 1}", real=True))


def partitions(N: int):
    """Every ordered partition Λ₁ ⊔ Λ₂ = {1..N} with both parts non-empty."""
    units = range(1, N + 1)
    for k in range(1, N):
        for lam1 in itertools.combinations(units, k):
            yield tuple(lam1), tuple(j for j in units if j not in lam1)


def literal_statement(N: int, lam1, lam2, hyp: str, to_zero: str):
    """(variables, hypotheses, conclusion) of A1.ii with literal ranges j = 1..N_k."""
    t = term_symbols(N)
    s1 = sum(t[j - 1] for j in lam1)
    s2 = sum(t[j - 1] for j in lam2)
    T1 = sum(t[: len(lam1)])
    T2 = sum(t[: len(lam2)])
    return t + [f, eps, delta], setup(s1, s2) + smallness(hyp, to_zero, s1, s2), a1_ii(T1, T2)


# --------------------------------------------------------------------------------------------
# realising a model as a network, exactly
# --------------------------------------------------------------------------------------------


def realise(model: dict, lam1, lam2, hyp: str, to_zero: str, conclusion, units: dict) -> str:
    r"""Build the constant network of a rational model and re-check it exactly.

    ``units[j]`` is the value of unit ``j`` (:math:`t_j`); the network has
    :math:`\mathbf W_j=0`, :math:`\theta_j=0`, :math:`\alpha_j=2t_j`, logistic σ (σ(0) = 1/2,
    exact), and :math:`f` constant. Under the limit reading the model is the first member of the
    sequence :math:`S_k^{(m)}=S_k/m`, :math:`f^{(m)}=f-S_k+S_k/m` (same residual, so Eq. 10 holds for
    every :math:`m`, and :math:`\sup|S_k^{(m)}|\to0`).
    """
    val = {str(k): v for k, v in model.items()}
    half = Fraction(1, 2)  # logistic(0)
    alpha = {j: 2 * units[j] for j in units}
    unit = {j: alpha[j] * half for j in units}
    S = [sum((unit[j] for j in lam), Fraction(0)) for lam in (lam1, lam2)]
    fv, e, d = val["f"], val[r"\varepsilon"], val[r"\delta"]
    ok_setup = abs(S[0] + S[1] - fv) < e
    ok_small = True
    if hyp != "none" and to_zero == "uniform":
        ok_small = abs(S[0] if hyp == "S1" else S[1]) <= d
    subs = {**{sp.Symbol(f"t_{j}", real=True): sp.Rational(unit[j].numerator, unit[j].denominator) for j in units},
            S1: sp.Rational(S[0].numerator, S[0].denominator), S2: sp.Rational(S[1].numerator, S[1].denominator),
            f: sp.Rational(fv.numerator, fv.denominator), eps: sp.Rational(e.numerator, e.denominator),
            delta: sp.Rational(d.numerator, d.denominator)}
    concl = bool(conclusion.xreplace(subs))
    if not ok_setup or not ok_small or concl:
        from symuat.errors import KernelInconsistencyError

        raise KernelInconsistencyError("A1 model does not re-check on its network")
    text = (f"network: W_j = 0, θ_j = 0, logistic σ (σ(0) = 1/2), α = {[str(alpha[j]) for j in sorted(alpha)]}, "
            f"Λ₁ = {set(lam1)}, Λ₂ = {set(lam2)}, f ≡ {fv}: Eq. 10 holds on all of I_n, the conclusion fails everywhere")
    if hyp != "none" and to_zero == "limit":
        text += f"; the first member of the sequence S_{hyp[1]}^(m) = S_{hyp[1]}/m (→ 0), same residual"
    return text


def numeric_network_check(seed: int = 0, N: int = 8, n: int = 2, points: int = 64) -> float:
    """float64: random logistic networks, random partitions, f = G + a perturbation of size < ε;
    returns the largest value of ``|S_1 - f| - (ε + |S_2|)`` and of ``||S_1-f|-|S_2|| - ε`` on a
    grid of I_n (negative: both inequalities hold)."""
    rng = np.random.default_rng(seed)
    worst = -np.inf
    for _ in range(20):
        W, th, al = rng.standard_normal((N, n)), rng.standard_normal(N), rng.standard_normal(N) * 3
        lam1 = rng.random(N) < 0.5
        x = rng.random((points, n))
        units = al * (1 / (1 + np.exp(-(x @ W.T + th))))
        s1, s2 = units[:, lam1].sum(1), units[:, ~lam1].sum(1)
        e = 0.5
        fx = s1 + s2 + rng.uniform(-0.99, 0.99, points) * e
        worst = max(worst, float(np.max(np.abs(s1 - fx) - (e + np.abs(s2)))),
                    float(np.max(np.abs(np.abs(s1 - fx) - np.abs(s2)) - e)))
    return worst
