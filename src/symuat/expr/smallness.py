r"""“Small parameters, so those parts can be removed” (spec A2), for concrete activations.

The claim read as: :math:`\forall\eta>0\ \exists\delta>0` such that when the chosen parameters
are at most δ in absolute value, the part's contribution to the output is at most η on all of
:math:`\mathbf I_n=[0,1]^n`. Readings: "parameters" = ``inner`` (:math:`\mathbf w_j,\theta_j`),
``outer`` (:math:`\alpha_j`) or ``all``; "layers" = ``units`` (one term
:math:`\alpha\sigma(\mathbf w^T\mathbf x+\theta)` of D1's sum) or ``deep`` (one layer
:math:`x\mapsto x+a\,\sigma(wx+\theta)+b` of a residual network, removed = replaced by the identity,
the contribution = the change of the network's output).

Each σ carries *envelopes* :math:`|\sigma(t)|\le c_0+c_1|t|` with a SymPy proof (:func:`envelope_proof`).
A bound :math:`|\alpha\sigma(\mathbf w^T\mathbf x+\theta)|\le|\alpha|\,(c_0+c_1(\|\mathbf w\|_1+|\theta|))`
follows on :math:`\mathbf I_n`; where the constrained parameters do not control it, an explicit
family (:func:`witness`) keeps the contribution away from 0 as δ → 0.

>>> envelope_proof("tanh", 0, 1)[0]
True
>>> envelope_proof("relu", 1, 0)[0]
False
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

t = sp.Symbol("t", real=True)
delta = sp.Symbol("delta", positive=True)
n = sp.Symbol("n", positive=True, integer=True)

ACTIVATIONS = ("logistic", "tanh", "relu", "gelu")
PARAMETERS = ("inner", "outer", "all")
PARTS = ("units", "deep")
RESTS = ("any", "fixed")  # the other parameters: arbitrary (δ uniform over them) or fixed (δ may depend on them)
alpha = sp.Symbol("alpha", real=True)  # a fixed outer weight
Wn = sp.Symbol("W", nonnegative=True)  # a fixed ‖w‖₁ + |θ|
Lam = sp.Symbol("Lambda", positive=True)  # a fixed product of the later layers' Lipschitz constants


def sigma(name: str, x):
    """σ as a SymPy expression."""
    if name == "logistic":
        return 1 / (1 + sp.exp(-x))
    if name == "tanh":
        return sp.tanh(x)
    if name == "relu":
        return sp.Max(x, 0)
    if name == "gelu":
        return x / 2 * (1 + sp.erf(x / sp.sqrt(2)))
    raise ValueError(f"unknown activation {name!r}; one of {ACTIVATIONS}")


def sigma_np(name: str):
    from scipy.special import erf

    return {"logistic": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0),
            "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))}[name]


#: the envelopes (c0, c1) symuat tries, in order of preference, per σ
ENVELOPES = {"logistic": [(1, 0)], "tanh": [(0, 1), (1, 0)], "relu": [(0, 1)], "gelu": [(0, 1)]}


@functools.lru_cache(maxsize=None)
def envelope_proof(name: str, c0, c1) -> tuple[bool, str]:
    r"""A SymPy proof of :math:`|\sigma(t)|\le c_0+c_1|t|` for all real t, or (False, why not).

    A numeric scan first (high precision at points in [−100, 100]): a violation disproves it.
    """
    s = sigma(name, t)
    for tv in (-10, -1, -sp.Rational(1, 2), 0, sp.Rational(1, 2), 1, 10):
        if sp.N(sp.Abs(s.subs(t, tv)) - c0 - c1 * abs(tv), 30) > sp.Rational(1, 10**20):
            return False, f"fails at t = {tv}"
    if (c0, c1) == (1, 0) and name == "logistic":
        ok = s.is_positive and sp.together(1 - s).is_positive
        return bool(ok), "σ > 0 and 1 − σ = e^{−t}/(1+e^{−t}) > 0"
    if (c0, c1) == (1, 0) and name == "tanh":
        ok = sp.together((1 - s).rewrite(sp.exp)).is_positive and sp.together((1 + s).rewrite(sp.exp)).is_positive
        return bool(ok), "1 ∓ tanh t = 2e^{∓t}/(e^t+e^{−t}) > 0"
    if (c0, c1) == (0, 1) and name == "tanh":
        g = t - s
        ok = sp.simplify(sp.diff(g, t) - sp.tanh(t) ** 2) == 0 and g.subs(t, 0) == 0 and sp.tanh(-t) == -sp.tanh(t)
        return bool(ok), "(t − tanh t)' = tanh² t ≥ 0 and t − tanh t = 0 at 0, so tanh t ≤ t for t ≥ 0; tanh is odd"
    if (c0, c1) == (0, 1) and name == "relu":
        tp, tn = sp.Symbol("tp", positive=True), sp.Symbol("tn", negative=True)
        ok = sigma(name, tp) == tp and sigma(name, tn) == 0
        return bool(ok), "max(t, 0) = t for t > 0 and 0 for t < 0"
    if (c0, c1) == (0, 1) and name == "gelu":
        u = sp.Symbol("u", real=True)
        ok = (sp.diff(sp.erf(u), u).is_positive and sp.limit(sp.erf(u), u, sp.oo) == 1
              and sp.limit(sp.erf(u), u, -sp.oo) == -1)
        return bool(ok), "erf' > 0 with limits ±1, so 0 < (1 + erf)/2 < 1 and |GELU t| = |t|(1 + erf(t/√2))/2 ≤ |t|"
    return False, "no proof for this envelope"


def envelope(name: str, need_c1_zero: bool = False):
    """The first envelope of σ with a proof (and c1 = 0 if asked), or None."""
    for c0, c1 in ENVELOPES[name]:
        if need_c1_zero and c1 != 0:
            continue
        ok, why = envelope_proof(name, c0, c1)
        if ok:
            return c0, c1, why
    return None


# --------------------------------------------------------------------------------------------
# units: α σ(wᵀx + θ)
# --------------------------------------------------------------------------------------------


def unit_bound(name: str, params: str, env=None, rest: str = "any"):
    r"""The bound symuat proves for a unit, or None. ``rest=any``: ``outer`` :math:`\delta c_0` (bounded σ
    only), ``all`` :math:`\delta(c_0+c_1(n+1)\delta)`, ``inner`` none (α free). ``rest=fixed`` (α or
    :math:`W=\|\mathbf w\|_1+|\theta|` fixed): ``inner`` :math:`|\alpha|c_1(n+1)\delta` when σ(0) = 0
    (:math:`c_0=0`), ``outer`` :math:`\delta(c_0+c_1W)`."""
    if params == "inner" and rest == "any":
        return None
    if env is None:
        if params == "inner":
            env = next((e for e in (envelope(name),) if e is not None and e[0] == 0), None)
        else:
            env = envelope(name, need_c1_zero=(params == "outer" and rest == "any"))
    if env is None:
        return None
    c0, c1, why = env
    if params == "all":
        expr = delta * (c0 + c1 * (n + 1) * delta)
    elif params == "outer":
        expr = delta * c0 if rest == "any" else delta * (c0 + c1 * Wn)
    else:
        expr = sp.Abs(alpha) * c1 * (n + 1) * delta
    return {"expr": expr, "facts": [(f"|σ(t)| ≤ {c0} + {c1}|t| ({why})", lambda: envelope_proof(name, c0, c1)[0]),
                                    ("x ∈ I_n ⇒ |wᵀx + θ| ≤ ‖w‖₁ + |θ|", lambda: True)],
            "confirm": lambda rng: _confirm_unit(name, params, expr, rng, rest)}


def _confirm_unit(name, params, expr, rng, rest="any"):
    f = sigma_np(name)
    bound = sp.lambdify((delta, n, alpha, Wn), expr, "math")
    pairs = []
    for dv in (0.5, 0.01):
        for nv in (1, 3):
            for _ in range(10):
                small = lambda *shape: rng.uniform(-1, 1, shape) * dv
                big = lambda *shape: rng.uniform(-1, 1, shape) * 50
                w = small(nv) if params in ("inner", "all") else big(nv)
                th = float(small(1)[0] if params in ("inner", "all") else big(1)[0])
                a = float(small(1)[0] if params in ("outer", "all") else big(1)[0])
                x = rng.random((16, nv))
                B = float(bound(dv, nv, a, float(np.abs(w).sum() + abs(th))))
                pairs.append((float(np.max(np.abs(a * f(x @ w + th)))), B))
    return pairs


def unit_witness(name: str, params: str, rest: str = "any"):
    """A family keeping a unit's contribution away from 0 while the constrained parameters → 0
    (``rest=fixed``: the other parameters do not depend on δ)."""
    if rest == "fixed":
        if params == "inner" and name == "logistic":
            return unit_witness(name, params)
        return None
    if params == "inner":
        if name == "logistic":  # σ(0) = 1/2
            return {"value": sigma(name, sp.Integer(0)), "constrained": {"w": 0, "θ": 0}, "free": {"α": 1}, "point": "any x"}
        return {"value": sigma(name, delta) / delta, "constrained": {"w": delta, "θ": 0}, "free": {"α": 1 / delta},
                "point": "x = 1 (n = 1)"}
    if params == "outer" and name in ("relu", "gelu"):
        return {"value": delta * sigma(name, 1 / delta ** 2), "constrained": {"α": delta},
                "free": {"w": 1 / delta ** 2, "θ": 0}, "point": "x = 1 (n = 1)"}
    return None


# --------------------------------------------------------------------------------------------
# deep: one residual layer among others
# --------------------------------------------------------------------------------------------


def deep_witness(name: str, params: str, rest: str = "any"):
    r"""Two residual layers :math:`x\mapsto x+a\sigma(wx+\theta)+b` (D = F = 1): layer 1 with every
    parameter δ, layer 2 with :math:`w=K,\theta=-K,a=K`, :math:`K=1/\delta`; the change of the output
    at :math:`x_0=1` when layer 1 is removed (replaced by the identity)."""
    if rest == "fixed":
        if params != "inner":
            return None
        # one layer with a = b = 1 fixed, w = θ = δ: it adds σ(δ(x+1)) + 1 → σ(0) + 1 ≠ 0
        return {"value": sigma(name, 2 * delta) + 1, "constrained": {"w_1": delta, "θ_1": delta},
                "free": {"a_1": 1, "b_1": 1}, "point": "x₀ = 1 (the layer's change of the output)"}
    K = 1 / delta
    layer2 = lambda x: x + K * sigma(name, K * x - K)
    x1 = 1 + delta * sigma(name, 2 * delta) + delta
    value = layer2(x1) - layer2(sp.Integer(1))
    constrained = {"inner": {"w_1": delta, "θ_1": delta}, "outer": {"a_1": delta, "b_1": delta},
                   "all": {"w_1": delta, "θ_1": delta, "a_1": delta, "b_1": delta}}[params]
    free = {"w_2": K, "θ_2": -K, "a_2": K, "b_2": 0}
    if params != "all":
        free.update({k: delta for k in ("w_1", "θ_1", "a_1", "b_1") if k not in constrained})
    return {"value": value, "constrained": constrained, "free": free, "point": "x₀ = 1"}


def deep_bound(name: str, params: str, rest: str):
    r"""``rest=fixed``, ``outer``/``all``: removing layer k changes the output by at most
    :math:`\Lambda\,\delta\,(1+c_0+c_1W)` (``all``: :math:`W=(n+1)\delta`), :math:`\Lambda=\prod_{m>k}\mathrm{Lip}_m`
    fixed. The composition of Lipschitz bounds is not machine-proved here: the bound is confirmed in float64."""
    if rest != "fixed" or params == "inner":
        return None
    env = envelope(name)
    c0, c1, why = env
    W = (n + 1) * delta if params == "all" else Wn
    expr = Lam * delta * (1 + c0 + c1 * W)
    return {"expr": expr,
            "facts": [(f"|σ(t)| ≤ {c0} + {c1}|t| ({why})", lambda: envelope_proof(name, c0, c1)[0]),
                      ("a change η of x_k changes x_L by at most Π_{m>k} Lip_m · η (composition of Lipschitz maps; "
                       "not machine-checked)", lambda: False)],
            "confirm": lambda rng: _confirm_deep(name, params, rng)}


def _confirm_deep(name, params, rng):
    trial = lipschitz_trial(name, params)
    pairs = []
    for sizes in ({"D": 3, "F": 4, "L": 3, "k": 1}, {"D": 2, "F": 5, "L": 4, "k": 2}):
        for seed in (0, 1):
            pairs += trial(sizes, seed, pairs=True)
    return pairs


def lipschitz_trial(name: str, params: str = "all"):
    """float64 trial of the corrected deep statement: removing layer k changes the output by at
    most :math:`\\prod_{m>k}\\mathrm{Lip}_m\\cdot\\sup|a_k\\sigma(\\cdot)+b_k|`, with
    :math:`\\mathrm{Lip}_m\\le\\|W1_m\\|+\\|W3_m\\|\\,\\|W2_m\\|\\,\\mathrm{Lip}(\\sigma)`."""
    f = sigma_np(name)
    lip_sigma = {"logistic": 0.25, "tanh": 1.0, "relu": 1.0, "gelu": 1.13}[name]  # max |σ'| (GELU: 1.129)

    def trial(sizes, seed, pairs=False):
        rng = np.random.default_rng(seed)
        D, F, L, k = sizes["D"], sizes["F"], sizes["L"], sizes["k"]
        layers = [(np.eye(D) + 0.3 * rng.standard_normal((D, D)), rng.standard_normal((F, D)), rng.standard_normal(F),
                   rng.standard_normal((D, F)), rng.standard_normal(D)) for _ in range(L)]
        small = 1e-2
        W1, W2, b2, W3, b3 = layers[k - 1]
        inner = small if params in ("inner", "all") else 1.0
        outer = small if params in ("outer", "all") else 1.0
        layers[k - 1] = (W1, inner * W2, inner * b2, outer * W3, outer * b3)
        worst = 0.0
        out_pairs = []
        for x in rng.random((8, D)):
            def run(skip):
                y = x
                for m, (A, B, c, C, d) in enumerate(layers):
                    if m == k - 1 and skip:
                        y = A @ y
                        continue
                    y = A @ y + C @ f(B @ y + c) + d
                return y
            y_in = x
            for A, B, c, C, d in layers[: k - 1]:
                y_in = A @ y_in + C @ f(B @ y_in + c) + d
            _, B, c, C, d = layers[k - 1]
            own = np.linalg.norm(C @ f(B @ y_in + c) + d)
            amp = np.prod([np.linalg.norm(A, 2) + np.linalg.norm(C, 2) * np.linalg.norm(B, 2) * lip_sigma
                           for A, B, c, C, d in layers[k:]])
            change = np.linalg.norm(run(False) - run(True))
            worst = max(worst, change - amp * own * (1 + 1e-12))
            out_pairs.append((float(change), float(amp * own)))
        if pairs:
            return out_pairs
        return worst <= 0, f"output change ≤ Π Lip · own contribution (excess {worst:.3g})", {"excess": worst}

    return trial
