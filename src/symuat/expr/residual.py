r"""Residual networks in the Eq. 20 form, their unrolling into a (D)UAT form, and the paper's rules.

A layer of the general term (DUAT Eq. 20) maps :math:`x'_{i-1}` to

.. math:: x'_i=(W1_i\,x'_{i-1}+b3_i)+W3_i\,\sigma(W2_i\,x'_{i-1}+b2_i)

(raw parameters; in a Transformer :math:`W1_i` comes from MHA and depends on the input).

**The exact recursion** (symuat's; proved by induction in :mod:`symuat.claims.lemmas`): with
:math:`A_0=I`, :math:`c_0=0`,

.. math::

   x'_L = A_Lx'_0+c_L+\sum_{j=1}^{L}U_{L,j}\,\sigma(V_jx'_0+e_j),\qquad
   \begin{aligned}
   A_L&=W1_LA_{L-1}, & c_L&=W1_Lc_{L-1}+b3_L,\\
   U_{L,j}&=W1_LU_{L-1,j}\ (j<L),\ U_{L,L}=W3_L, & V_L&=W2_LA_{L-1},\\
   e_L&=W2_L\big(c_{L-1}+R_{L-1}\big)+b2_L, & R_{L-1}&=\sum_{j<L}U_{L-1,j}\sigma(V_jx'_0+e_j).
   \end{aligned}

The bias :math:`e_L` contains σ-terms of :math:`x'_0`: the unrolled form is a *dynamic* UAT (D6).

Everything here is written once against an :class:`Algebra` — matrix product, sum, σ — and runs
on SymPy matrix expressions (proofs), exact integer arrays (counterexamples) and floats.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass
class Algebra:
    """The three operations the recursions need."""

    mm: Callable  # product
    add: Callable  # sum of two
    sigma: Callable  # elementwise σ
    zero: Callable  # zero vector like a given vector

    def sum(self, items, like):
        items = list(items)
        if not items:
            return self.zero(like)
        out = items[0]
        for it in items[1:]:
            out = self.add(out, it)
        return out


def sympy_algebra() -> Algebra:
    from sympy import ZeroMatrix

    from symuat.expr.algebra import add, mul
    from symuat.expr.elementwise import Sigma

    return Algebra(mm=lambda a, b: mul(a, b), add=lambda a, b: add(a, b), sigma=Sigma,
                   zero=lambda like: ZeroMatrix(*like.shape))


def numpy_algebra(exact: bool = False) -> Algebra:
    from symuat.expr.elementwise import sigma_exact

    sig = (lambda v: np.vectorize(sigma_exact, otypes=[object])(v)) if exact else np.tanh
    return Algebra(mm=lambda a, b: a @ b, add=lambda a, b: a + b, sigma=sig,
                   zero=lambda like: like * 0)


@dataclass
class RawLayer:
    """Raw Eq. 20 parameters of one layer."""

    # NumPy arrays (float or exact object dtype) or SymPy matrices: any operand of the Algebra
    W1: Any
    W2: Any
    b2: Any
    W3: Any
    b3: Any


def forward(alg: Algebra, layers: list[RawLayer], x0):
    """Layer by layer: :math:`x_i=W1_ix_{i-1}+b3_i+W3_i\\sigma(W2_ix_{i-1}+b2_i)`."""
    x = x0
    for L in layers:
        x = alg.add(alg.add(alg.mm(L.W1, x), L.b3), alg.mm(L.W3, alg.sigma(alg.add(alg.mm(L.W2, x), L.b2))))
    return x


@dataclass
class Unrolled:
    """Combined parameters of the unrolled form :math:`A x_0 + c + \\sum_j U_j\\sigma(V_jx_0+e_j)`."""

    A: object
    c: object
    U: list
    V: list
    e: list
    x0: object = None

    def evaluate(self, alg: Algebra):
        terms = [alg.mm(U, alg.sigma(alg.add(alg.mm(V, self.x0), e))) for U, V, e in zip(self.U, self.V, self.e)]
        return alg.add(alg.add(alg.mm(self.A, self.x0), self.c), alg.sum(terms, self.c))


def unroll_step(alg: Algebra, state: Unrolled, layer: RawLayer) -> Unrolled:
    """One layer of symuat's exact recursion (module docstring): the state after layer ``L-1``
    and layer ``L``'s raw parameters give the state after layer ``L``."""
    A, c, U, V, e, x0 = state.A, state.c, state.U, state.V, state.e, state.x0
    R = alg.sum([alg.mm(Uj, alg.sigma(alg.add(alg.mm(Vj, x0), ej))) for Uj, Vj, ej in zip(U, V, e)], c)
    return Unrolled(alg.mm(layer.W1, A), alg.add(alg.mm(layer.W1, c), layer.b3),
                    [alg.mm(layer.W1, Uj) for Uj in U] + [layer.W3], list(V) + [alg.mm(layer.W2, A)],
                    list(e) + [alg.add(alg.mm(layer.W2, alg.add(c, R)), layer.b2)], x0)


def unroll(alg: Algebra, layers: list[RawLayer], x0, identity, zero_vec) -> Unrolled:
    """symuat's exact recursion (module docstring)."""
    state = Unrolled(identity, zero_vec, [], [], [], x0)
    for L in layers:
        state = unroll_step(alg, state, L)
    return state


# --------------------------------------------------------------------------------------------
# the paper's printed update rules (T8, T9), under every reading
# --------------------------------------------------------------------------------------------

T8_AXES = {
    "W1rhs": ("acc", "raw"),
    "unprimed": ("acc", "raw"),
    "abs": ("all", "j1", "none"),  # "none": symuat's addition (no absorption), for the Eq. 20 form
    "W3": ("all", "once"),
    "W2in34": ("final", "layer"),
    "W3in34": ("final", "stage"),
    "b3in34": ("acc", "raw"),
}


def reading_grid(axes: dict):
    """Every reading of a family of axes (``{axis: alternatives}``) as ``{axis: choice}``."""
    keys = list(axes)
    for combo in itertools.product(*(axes[k] for k in keys)):
        yield dict(zip(keys, combo))


def t8_readings():
    return reading_grid(T8_AXES)


def reading_tags(reading: dict) -> tuple[str, ...]:
    return tuple(f"{k}={v}" for k, v in reading.items())


@dataclass
class RulesState:
    r"""The lists the printed rules update in place: raw (``r…``) and combined (``c…``) parameters
    per layer, the ``W'_{\cdot,3}`` after each layer's updates (``stages``), and the Eq. 34 biases."""

    rW1: list
    rb3: list
    rW2: list
    rb2: list
    cW1: list
    cb3: list
    cW2: list
    cW3: list
    stages: list
    e: list


def absorbed_W2(alg: Algebra, layer: RawLayer, j: int, reading: dict):
    """Eq. 31's absorption ``W'_{j,2} ← W'_{j,2}W'_{j,1}`` (raw factors) under ``reading``."""
    absorb = reading["abs"] == "all" or (reading["abs"] == "j1" and j == 0)
    return alg.mm(layer.W2, layer.W1) if absorb else layer.W2


def paper_update(alg: Algebra, st: RulesState, j: int, reading: dict) -> None:
    """The printed updates after Eq. 33 for the pair (layer ``j``, layer ``j+1``), in place —
    printed j = 1..i ↔ here j = 0..L−2, updating layer j+1."""
    unW1 = st.cW1[j] if reading["unprimed"] == "acc" else st.rW1[j]
    unb3 = st.cb3[j] if reading["unprimed"] == "acc" else st.rb3[j]
    st.cW1[j + 1] = alg.mm(st.cW1[j + 1], unW1)
    w1 = st.cW1[j + 1] if reading["W1rhs"] == "acc" else st.rW1[j + 1]
    st.cb3[j + 1] = alg.add(alg.mm(w1, unb3), st.cb3[j + 1])
    st.cW2[j + 1] = alg.mm(st.cW2[j + 1], unW1)
    if reading["W3"] == "once":
        st.cW3[j] = alg.mm(w1, st.cW3[j])
    else:  # every earlier W3 is multiplied by the raw W1 of this later layer
        for k in range(j + 1):
            st.cW3[k] = alg.mm(st.rW1[j + 1], st.cW3[k])
    st.stages.append(list(st.cW3))


def eq34_bias(alg: Algebra, st: RulesState, j: int, reading: dict, x0, zero_vec):
    """Eq. 34: the bias ``b'_{j,2}`` of layer ``j`` (0-based) under ``reading``."""
    W2j = st.cW2[j] if reading["W2in34"] == "final" else st.rW2[j]
    prev_b3 = (st.cb3[j - 1] if reading["b3in34"] == "acc" else st.rb3[j - 1]) if j > 0 else zero_vec
    W3s = st.cW3 if reading["W3in34"] == "final" else st.stages[j - 1] if j > 0 else []
    sig = [alg.mm(W3s[k], alg.sigma(alg.add(alg.mm(st.cW2[k], x0), st.e[k]))) for k in range(j)]
    return alg.add(alg.add(alg.mm(W2j, prev_b3), st.rb2[j]), alg.mm(W2j, alg.sum(sig, zero_vec)))


def is_forward_reading(reading: dict) -> bool:
    """Whether the reading's rules are a recursion in the layer index, uniform in it: layer j+1's
    parameters from layer j's state alone (Eq. 34 with the layer's own W2 and the stage-j W3, the
    absorption the same at every layer)."""
    return reading["W2in34"] == "layer" and reading["W3in34"] == "stage" and reading["abs"] != "j1"


def paper_rules(alg: Algebra, layers: list[RawLayer], x0, reading: dict, zero_vec) -> Unrolled:
    """The combined parameters of DUAT App. B.3 (after Eq. 33) and Eq. 34, under ``reading``.

    ``layers`` hold the raw parameters of the form being unrolled (for the Eq. 30/31 form,
    ``W2`` is the FFN's own matrix, before absorption).
    """
    L = len(layers)
    rW2 = [absorbed_W2(alg, l, j, reading) for j, l in enumerate(layers)]
    st = RulesState([l.W1 for l in layers], [l.b3 for l in layers], rW2, [l.b2 for l in layers],
                    [l.W1 for l in layers], [l.b3 for l in layers], list(rW2), [l.W3 for l in layers],
                    [[l.W3 for l in layers]], [])
    for j in range(L - 1):
        paper_update(alg, st, j, reading)
    for j in range(L):
        st.e.append(eq34_bias(alg, st, j, reading, x0, zero_vec))
    return Unrolled(st.cW1[L - 1], st.cb3[L - 1], st.cW3, st.cW2, st.e, x0)


def is_correct_reading(reading: dict, form: str) -> bool:
    """Whether a reading coincides with symuat's recursion (for documentation, never a verdict)."""
    want_abs = "all" if form == "eq30" else "none"
    return (reading["W1rhs"] == "raw" and reading["unprimed"] == "acc" and reading["abs"] == want_abs
            and reading["W3"] == "all" and reading["W2in34"] == "layer" and reading["W3in34"] == "stage"
            and reading["b3in34"] == "acc")


@dataclass
class RandomInstance:
    """Random raw layers and input, as exact integers or floats."""

    layers: list[RawLayer]
    x0: np.ndarray
    D: int
    F: int
    form: str = "eq20"
    extra: dict = field(default_factory=dict)


def random_instance(L: int, D: int, F: int, seed: int, exact: bool, form: str = "eq20") -> RandomInstance:
    """For ``eq30`` the raw W2 is the FFN's own matrix: the network is W1x+b3+W3σ(W2W1x+b2)."""
    rng = np.random.default_rng(seed)

    def arr(*shape):
        if exact:
            return rng.integers(-2, 3, size=shape).astype(object)
        return rng.standard_normal(shape) / np.sqrt(shape[-1])

    layers = [RawLayer(arr(D, D), arr(F, D), arr(F, 1), arr(D, F), arr(D, 1)) for _ in range(L)]
    return RandomInstance(layers, arr(D, 1), D, F, form)


def network_layers(inst: RandomInstance) -> list[RawLayer]:
    """The Eq. 20 layers the network actually computes (for eq30: W2 ← W2 W1)."""
    if inst.form == "eq20":
        return inst.layers
    return [RawLayer(l.W1, l.W2 @ l.W1, l.b2, l.W3, l.b3) for l in inst.layers]
