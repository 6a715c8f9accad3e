r"""LoRA seen through the matrix-vector method and the DUAT form (spec A3, A4).

**A3.** A LoRA update of a Linear map is :math:`W=W_0+\Delta W`, :math:`\Delta W=BA`,
:math:`B\in\mathbb R^{p\times r}`, :math:`A\in\mathbb R^{r\times q}`. Its lift to the flattened
tokens (M1, :func:`symuat.expr.linear.lift_right`) is linear in :math:`W`, so the lift of the update is
the lift of :math:`\Delta W`: :math:`I_N\otimes(BA)^\top` (``row``) or :math:`(BA)^\top\otimes I_N`
(``col``) — of rank :math:`N\,r` (rank of a Kronecker product is the product of the ranks), not
:math:`r`.

**A4.** DUAT Eq. 18 writes the fine-tuned network in the unrolled form with increments
:math:`\Delta\mathbf W_{j+1,3}`, :math:`\Delta\mathbf W_{j+1,2}` next to the base combined
parameters. :func:`eq18` evaluates the printed formula under each reading of the spec
(``Δ=induced|raw``, ``b2=kept|recomputed``, ``idx=j|j+1``, ``op=plus|times``) from the combined
parameters of the base and of the fine-tuned network; the reference is the unrolled form of the
fine-tuned network itself (``to_duat`` on the fine-tuned blocks), which equals its forward pass.

Two instances of a Transformer serve: the NumPy :class:`symuat.numeric.transformer.Block` (softmax, GELU;
float64), and :class:`ExactBlock`, a Transformer whose every operation is rational — attention
weights :math:`H_{nn'}=s_{nn'}/\sum_{n''}s_{nn''}` with :math:`s=1+(q_n\cdot k_{n'})^2` (row-stochastic
and input-dependent, like softmax) and the bounded sigmoidal :math:`\sigma(t)=t/(1+|t|)` (softsign) —
evaluated with integers and fractions, so a reading that fails does so by an exact amount (and the
values stay of moderate size, so the same difference shows in float64).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> blocks = exact_blocks(rng, L=2, N=2, M=2, F=2)
>>> X0 = exact_input(rng, 2, 2)
>>> form = exact_form(blocks, X0)
>>> bool((form.evaluate() == exact_forward(blocks, X0)).all())
True
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable

import numpy as np

from symuat.errors import ShapeMismatchError
from symuat.kernel.decide.instances import TOLERANCE
from symuat.expr.residual import RawLayer, forward as raw_forward, numpy_algebra, reading_grid, unroll
from symuat.expr.residual import reading_tags  # noqa: F401  (the tags of a reading, as for T8)

READING_AXES = {"Δ": ("induced", "raw"), "b2": ("kept", "recomputed"), "idx": ("j", "j+1"), "op": ("plus", "times")}
TARGETS = ("W3", "W2", "attn")


def readings():
    return reading_grid(READING_AXES)


# --------------------------------------------------------------------------------------------
# the unrolled form, with vector-level access (float: to_duat; exact: dense object arrays)
# --------------------------------------------------------------------------------------------


@dataclass
class Form:
    r""":math:`x'_L=Ax'_0+c+\sum_jU_j\sigma(V_jx'_0+e_j)`: ``U[j](v)``, ``V[j](x)`` apply the operators."""

    x0: np.ndarray
    A: Callable
    c: np.ndarray
    U: list[Callable]
    V: list[Callable]
    e: list[np.ndarray]
    sigma: Callable
    F: list[int]  # hidden length of each σ-term

    @property
    def L(self) -> int:
        return len(self.e)

    def term(self, j: int) -> np.ndarray:
        return self.U[j](self.sigma(self.V[j](self.x0) + self.e[j]))

    def evaluate(self) -> np.ndarray:
        out = self.A(self.x0) + self.c
        for j in range(self.L):
            out = out + self.term(j)
        return out


def float_form(blocks, X0) -> Form:
    """The unrolled form of NumPy Transformer blocks (``to_duat``)."""
    from symuat.numeric.transformer import to_duat

    d = to_duat(blocks, X0)
    A, c, U = d.depths[-1]
    return Form(d.x0, lambda v, A=A: A @ v, c, [lambda v, u=u: u @ v for u in U],
                [lambda v, w=w: w @ v for w in d.V], list(d.e), d.sigmas[0], [w.shape[0] for w in d.V])


# --------------------------------------------------------------------------------------------
# exact Transformer (rational attention, polynomial σ)
# --------------------------------------------------------------------------------------------


@dataclass
class ExactBlock:
    """One Transformer layer with rational arithmetic; weights in the ``X @ W`` convention."""

    WQ: np.ndarray  # (M, k)
    WK: np.ndarray
    WV: np.ndarray  # (M, M)
    WO: np.ndarray  # (M, M)
    W1: np.ndarray  # (M, F)  FFN first matrix (the Eq. 20 W2 of the layer)
    b1: np.ndarray  # (F,)
    W2: np.ndarray  # (F, M)  FFN second matrix (the Eq. 20 W3 of the layer)
    b2: np.ndarray  # (M,)

    def attention(self, X) -> np.ndarray:
        """:math:`H_{nn'}=s_{nn'}/\\sum_{n''}s_{nn''}`, :math:`s=1+(q_n\\cdot k_{n'})^2`."""
        s = 1 + (X @ self.WQ @ (X @ self.WK).T) ** 2
        return np.array([[Fraction(v) / sum(row) for v in row] for row in s], dtype=object)

    def raw(self, X) -> RawLayer:
        """The Eq. 20 parameters of this layer at input ``X`` (``vec_r``; W2 absorbs W1)."""
        N, M = X.shape
        H = self.attention(X)
        W1 = np.eye(N * M, dtype=int).astype(object) + np.kron(H, (self.WV @ self.WO).T)
        L1 = np.kron(np.eye(N, dtype=int).astype(object), self.W1.T)
        L2 = np.kron(np.eye(N, dtype=int).astype(object), self.W2.T)
        col = lambda b: np.tile(b, N).reshape(-1, 1)
        return RawLayer(W1, L1 @ W1, col(self.b1), L2, col(self.b2))

    def forward(self, X) -> np.ndarray:
        Y = X + self.attention(X) @ X @ self.WV @ self.WO
        Z = Y @ self.W1 + self.b1
        return Y + _softsign_array(Z) @ self.W2 + self.b2


def softsign(t):
    """:math:`t/(1+|t|)`: rational, bounded, increasing (exact on ints and fractions)."""
    return Fraction(t) / (1 + abs(Fraction(t)))


def _softsign_array(v):
    return np.vectorize(softsign, otypes=[object])(v)


def _ints(rng, *shape, lo=-2, hi=3):
    return rng.integers(lo, hi, size=shape).astype(object)


def exact_blocks(rng, *, L: int, N: int, M: int, F: int, k: int = 2) -> list[ExactBlock]:
    return [ExactBlock(_ints(rng, M, k), _ints(rng, M, k), _ints(rng, M, M), _ints(rng, M, M),
                       _ints(rng, M, F), _ints(rng, F), _ints(rng, F, M), _ints(rng, M)) for _ in range(L)]


def exact_input(rng, N: int, M: int) -> np.ndarray:
    return _ints(rng, N, M, lo=-2, hi=3)


def exact_forward(blocks: list[ExactBlock], X0) -> np.ndarray:
    X = X0
    for b in blocks:
        X = b.forward(X)
    return X.reshape(-1, 1)


def exact_form(blocks: list[ExactBlock], X0) -> Form:
    """symuat's recursion (:func:`symuat.expr.residual.unroll`) on the layers' Eq. 20 parameters, each
    taken at the layer's own input."""
    layers, X = [], X0
    for b in blocks:
        layers.append(b.raw(X))
        X = b.forward(X)
    x0 = X0.reshape(-1, 1)
    alg = numpy_algebra(exact=True)
    alg.sigma = _softsign_array
    D = x0.shape[0]
    u = unroll(alg, layers, x0, np.eye(D, dtype=int).astype(object), x0 * 0)
    sig = alg.sigma
    form = Form(x0, lambda v, A=u.A: A @ v, u.c, [lambda v, m=m: m @ v for m in u.U],
                [lambda v, m=m: m @ v for m in u.V], list(u.e), sig, [m.shape[0] for m in u.V])
    form.raw_layers = layers
    form.check_forward = lambda: raw_forward(alg, layers, x0)
    return form


# --------------------------------------------------------------------------------------------
# fine-tuning one matrix by a rank-r increment
# --------------------------------------------------------------------------------------------


def lora_increment(rng, p: int, q: int, r: int, exact: bool) -> np.ndarray:
    """:math:`\\Delta W=BA` with :math:`B\\in\\mathbb R^{p\\times r}`, :math:`A\\in\\mathbb R^{r\\times q}`."""
    if exact:
        B, A = _ints(rng, p, r, lo=1, hi=3), _ints(rng, r, q, lo=1, hi=3)
    else:
        B, A = rng.standard_normal((p, r)), rng.standard_normal((r, q))
    return B @ A


def finetune(blocks, layer: int, target: str, rng, r: int = 1):
    """A copy of ``blocks`` with a rank-``r`` increment on one matrix of layer ``layer`` (1-based):
    ``W3`` (the FFN's second matrix, Eq. 20's W3), ``W2`` (the FFN's first matrix, Eq. 20's W2
    before absorption) or ``attn`` (the value projection). Returns (blocks, increment)."""
    exact = isinstance(blocks[0], ExactBlock)
    b = blocks[layer - 1]
    name = {"W3": "W2", "W2": "W1", "attn": "WV"}[target]
    W = getattr(b, name)
    if target == "attn" and not exact:  # (h, width, d): one head
        delta = np.zeros_like(W)
        delta[0] = lora_increment(rng, W.shape[1], W.shape[2], r, exact)
    else:
        delta = lora_increment(rng, W.shape[0], W.shape[1], r, exact)
    new = list(blocks)
    new[layer - 1] = replace(copy.copy(b), **{name: W + delta})
    return new, delta


def raw_lifts(target: str, layer: int, delta, N: int, exact: bool) -> dict:
    """The lifts of the raw increment, by the Eq. 18 slot they fill: ``{("3"|"2", layer): map}``.

    ``W3``: :math:`I_N\\otimes\\Delta^\\top` in the W3 slot; ``W2``: the same in the W2 slot; an
    attention projection has no slot in Eq. 18 (it changes W1), so nothing."""
    if target == "attn":
        return {}
    if exact:
        lift = np.kron(np.eye(N, dtype=int).astype(object), delta.T)
        f = lambda v, m=lift: m @ v
    else:
        from symuat.numeric.operators import RowMap

        op = RowMap(delta, N)
        f = lambda v, o=op: o @ v
    return {("3" if target == "W3" else "2", layer): f}


# --------------------------------------------------------------------------------------------
# Eq. 18 under a reading
# --------------------------------------------------------------------------------------------


def eq18(base: Form, ft: Form, reading: dict, raw: dict) -> np.ndarray:
    r"""Printed Eq. 18 at depth :math:`L=i+1`:

    .. math:: (W'_{L,1}x_0+b_{L,1})+\sum_{j=1}^{L}(W'_{j,3}+\Delta W_{m,3})\ \mathrm{op}\ 
              \sigma((W'_{j,2}+\Delta W_{m,2})x'_0+b'_{j,2}),\quad m=j\text{ or }j+1,

    with :math:`W'_{L,1}`, :math:`b_{L,1}`, :math:`W'_{j,3}`, :math:`W'_{j,2}` the base network's
    combined parameters (as printed), and :math:`\Delta W_{m,\cdot}` the induced change of the
    combined parameter ``m`` or the lift of the raw increment of layer ``m``
    (:math:`\Delta W_{L+1,\cdot}=0`: there is no layer ``L+1``). ``op=plus`` is ill-typed: it raises.
    """
    x0 = base.x0
    out = base.A(x0) + base.c
    L = base.L
    for j in range(L):
        m = j if reading["idx"] == "j" else j + 1  # 0-based combined index of ΔW
        e = base.e[j] if reading["b2"] == "kept" else ft.e[j]

        def d3(v, m=m):
            if m >= L:
                return np.zeros_like(out)
            if reading["Δ"] == "induced":
                return ft.U[m](v) - base.U[m](v)
            f = raw.get(("3", m + 1))
            return f(v) if f is not None else np.zeros_like(out)

        def d2(v, m=m, like=None):
            if m >= L:
                return 0 * like
            if reading["Δ"] == "induced":
                return ft.V[m](v) - base.V[m](v)
            f = raw.get(("2", m + 1))
            return f(v) if f is not None else 0 * like

        z = base.V[j](x0)
        if m < L and reading["Δ"] == "induced" and base.F[m] != base.F[j]:
            raise ShapeMismatchError("Eq. 18", f"W'_{{{j + 1},2}}", (base.F[j], x0.shape[0]), f"ΔW_{{{m + 1},2}}",
                                     (base.F[m], x0.shape[0]), "a sum needs equal shapes")
        s = base.sigma(z + d2(x0, like=z) + e)
        if reading["op"] == "plus":
            raise ShapeMismatchError("Eq. 18 (op=plus)", f"W'_{{{j + 1},3}}+ΔW", (x0.shape[0], s.shape[0]),
                                     f"σ(·)_{j + 1}", s.shape, "a matrix plus a vector: no sum is defined")
        out = out + base.U[j](s) + d3(s)
    return out


# --------------------------------------------------------------------------------------------
# the scenarios of A4: depth L, tuned layer k, tuned matrix
# --------------------------------------------------------------------------------------------

SCENARIOS = [(2, 1), (2, 2), (3, 1), (3, 2), (3, 3)]
EXACT_SIZES = {"N": 2, "M": 2, "F": 2}
FLOAT_SIZES = {"N": 3, "M": 4, "F": 6, "heads": 2}


@dataclass
class Scenario:
    L: int
    k: int
    target: str
    exact: bool
    base: Form
    ft: Form
    reference: np.ndarray  # the fine-tuned network's forward pass (vec_r)
    raw: dict
    seed: int
    values: dict


_CACHE: dict = {}


def _base(L: int, k: int, exact: bool):
    """The base network and input of a scenario (shared by the three targets)."""
    key = ("base", L, k, exact)
    if key not in _CACHE:
        from symuat.numeric.transformer import Block, forward

        rng = np.random.default_rng(100 * L + 10 * k)
        if exact:
            N, M, F = EXACT_SIZES["N"], EXACT_SIZES["M"], EXACT_SIZES["F"]
            blocks, X0 = exact_blocks(rng, L=L, N=N, M=M, F=F), exact_input(rng, N, M)
            _CACHE[key] = (blocks, X0, exact_form(blocks, X0), exact_forward(blocks, X0))
        else:
            N, M, F, h = (FLOAT_SIZES[x] for x in ("N", "M", "F", "heads"))
            blocks = [Block.random(rng, M=M, heads=h, F=F) for _ in range(L)]
            X0 = rng.standard_normal((N, M))
            _CACHE[key] = (blocks, X0, float_form(blocks, X0), forward(blocks, X0)[-1].reshape(-1))
    return _CACHE[key]


def scenario(L: int, k: int, target: str, exact: bool) -> Scenario:
    """A base network and its fine-tuned copy (rank-1 increment on ``target`` of layer ``k``);
    the first increment seed that changes the output (a vacuous instance proves nothing)."""
    key = (L, k, target, exact)
    if key in _CACHE:
        return _CACHE[key]
    from symuat.numeric.transformer import forward

    blocks, X0, base, base_out = _base(L, k, exact)
    N = X0.shape[0]
    for seed in range(1000, 1010):
        rng = np.random.default_rng(seed)
        ft_blocks, delta = finetune(blocks, k, target, rng)
        if exact:
            ref = exact_forward(ft_blocks, X0)
            changed = not (ref == base_out).all()
        else:
            ref = forward(ft_blocks, X0)[-1].reshape(-1)
            changed = np.abs(ref - base_out).max() > 1e-6
        if not changed:
            continue
        ft = exact_form(ft_blocks, X0) if exact else float_form(ft_blocks, X0)
        if exact:
            values = {"X0": X0, **{f"layer{j + 1}.{n}": getattr(b, n) for j, b in enumerate(blocks)
                                   for n in ("WQ", "WK", "WV", "WO", "W1", "b1", "W2", "b2")}, "ΔW": delta}
        else:
            values = {"base seed": 100 * L + 10 * k, "increment seed": seed}
        out = Scenario(L, k, target, exact, base, ft, ref, raw_lifts(target, k, delta, N, exact), seed, values)
        _CACHE[key] = out
        return out
    raise RuntimeError(f"no seed gives an effective increment for {key}")


def corrected_eq18(base: Form, ft: Form) -> np.ndarray:
    r"""The corrected Eq. 18: every combined parameter of the fine-tuned network —
    :math:`(\tilde W'_{L,1}x_0+\tilde b_{L,1})+\sum_j(W'_{j,3}+\Delta W_{j,3})\sigma((W'_{j,2}+\Delta W_{j,2})x'_0+\tilde b'_{j,2})`
    with the *induced* increments at index ``j`` and :math:`\tilde W'_{L,1}`, :math:`\tilde b_{L,1}`,
    :math:`\tilde b'_{j,2}` recomputed (T7, T9) from the fine-tuned network."""
    out = ft.A(ft.x0) + ft.c
    for j in range(base.L):
        dV = ft.V[j](ft.x0) - base.V[j](base.x0)
        s = base.sigma(base.V[j](base.x0) + dV + ft.e[j])
        out = out + base.U[j](s) + (ft.U[j](s) - base.U[j](s))
    return out


def changed_parameters(base: Form, ft: Form, probe_seed: int = 0) -> dict[str, bool]:
    """Which combined parameters differ between base and fine-tuned networks (action on probes)."""
    rng = np.random.default_rng(probe_seed)
    exact = base.x0.dtype == object

    def probe(n):
        v = rng.integers(-3, 4, size=(n, 1)).astype(object) if exact else rng.standard_normal(n)
        return v

    D = base.x0.shape[0]
    diff = (lambda a, b: not (a == b).all()) if exact else (lambda a, b: np.abs(a - b).max() > TOLERANCE * max(1, np.abs(a).max()))
    out = {}
    v = probe(D)
    out[f"W'_{{{base.L},1}}"] = diff(base.A(v), ft.A(v))
    out[f"b_{{{base.L},1}}"] = diff(base.c, ft.c)
    for j in range(base.L):
        h = probe(base.F[j])
        out[f"W'_{{{j + 1},3}}"] = diff(base.U[j](h), ft.U[j](h))
        out[f"W'_{{{j + 1},2}}"] = diff(base.V[j](v), ft.V[j](v))
        out[f"b'_{{{j + 1},2}}"] = diff(base.e[j], ft.e[j])
    return out


# --------------------------------------------------------------------------------------------
# A3: the rank of the lifted increment
# --------------------------------------------------------------------------------------------


def structural_rank(expr, hypotheses: dict | None = None):
    r"""The rank of ``expr`` for generic matrix symbols, from its structure: a Kronecker product
    has the product of its factors' ranks, a transpose the rank of its argument, :math:`I_k`
    rank :math:`k`, a product of generic factors the least of its dimensions. ``hypotheses``
    replaces a ``Min`` by its value (LoRA: :math:`r\le\min(p,q)`)."""
    import sympy as sp
    from sympy.matrices.expressions import Identity, KroneckerProduct, MatMul, MatrixSymbol, Transpose

    def rank(e):
        if isinstance(e, Identity):
            return e.rows
        if isinstance(e, MatrixSymbol):
            return sp.Min(e.rows, e.cols)
        if isinstance(e, Transpose):
            return rank(e.arg)
        if isinstance(e, KroneckerProduct):
            out = sp.Integer(1)
            for a in e.args:
                out *= rank(a)
            return out
        if isinstance(e, MatMul):
            dims = [a.rows for a in e.args] + [e.args[-1].cols]
            return sp.Min(*dims)
        raise ValueError(f"no structural rank for {type(e).__name__}")

    out = rank(expr)
    for k, v in (hypotheses or {}).items():
        out = out.subs(k, v)
    return sp.simplify(out)


# --------------------------------------------------------------------------------------------
# Eq. 20 networks (W1 independent of the input): the same readings, exactly
# --------------------------------------------------------------------------------------------


def eq20_scenario(L: int, k: int, target: str) -> Scenario:
    """A residual network of the Eq. 20 form with constant raw parameters (integers; D = 3,
    F = 2; σ = softsign) and its copy with a rank-1 increment on W3_k or W2_k."""
    key = ("eq20", L, k, target)
    if key in _CACHE:
        return _CACHE[key]
    from symuat.expr.residual import random_instance

    alg = numpy_algebra(exact=True)
    alg.sigma = _softsign_array
    inst = random_instance(L, 3, 2, seed=500 + 10 * L + k, exact=True)
    x0 = inst.x0
    D = x0.shape[0]

    def form(layers):
        u = unroll(alg, layers, x0, np.eye(D, dtype=int).astype(object), x0 * 0)
        return Form(x0, lambda v, A=u.A: A @ v, u.c, [lambda v, m=m: m @ v for m in u.U],
                    [lambda v, m=m: m @ v for m in u.V], list(u.e), alg.sigma, [m.shape[0] for m in u.V])

    for seed in range(1000, 1010):
        rng = np.random.default_rng(seed)
        layers = list(inst.layers)
        old = layers[k - 1]
        name = "W3" if target == "W3" else "W2"
        W = getattr(old, name)
        delta = lora_increment(rng, W.shape[0], W.shape[1], 1, True)
        layers[k - 1] = replace(old, **{name: W + delta})
        ref = raw_forward(alg, layers, x0)
        if (ref == raw_forward(alg, inst.layers, x0)).all():
            continue
        lift = {(("3" if target == "W3" else "2"), k): (lambda v, m=delta: m @ v)}
        values = {f"layer{j + 1}.{n}": getattr(l, n) for j, l in enumerate(inst.layers)
                  for n in ("W1", "W2", "b2", "W3", "b3")}
        values.update({"x0": x0, "ΔW": delta})
        out = Scenario(L, k, target, True, form(inst.layers), form(layers), ref, lift, seed, values)
        _CACHE[key] = out
        return out
    raise RuntimeError(f"no seed gives an effective increment for {key}")
