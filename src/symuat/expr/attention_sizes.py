r"""The whole-MHA identity at explicit sizes, four ways (for benchmarks and cross-checks).

The identity is :math:`\operatorname{vec}_r(\mathring H)=\big(\sum_iH_i\otimes B_i^\top\big)\operatorname{vec}_r(X)`
with :math:`\mathring H` computed as H0 defines it (split into heads, :math:`H_ix_iW_{Vi}`,
concatenate, :math:`W_O`) and :math:`H_i` independent symbols.

``index``
    index-level normal form for symbolic :math:`N,h,d,d_v` — ``proved`` (every size at once).
``poly``
    both sides as exact sparse polynomials over ℤ (:class:`SparsePoly`), the right side applied
    through its Kronecker structure (the vec lemma, proved symbolically) — ``proved-at-sizes``.
``naive``
    SymPy expressions, the dense :math:`W'`, ``expand`` per entry (the baseline) —
    ``proved-at-sizes``.
``pit``
    exact evaluation at random points of :math:`\mathbb F_p`, :math:`p=2^{25}-39` (prime), with
    the dense :math:`W'`; by Schwartz–Zippel a false identity (degree 4) survives one trial with
    probability :math:`\le 4/p\approx 1.2\cdot10^{-7}` — never a status, a cross-check only.
"""

from __future__ import annotations

import numpy as np

P = 2**25 - 39  # prime


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % k for k in range(2, int(n**0.5) + 1))


assert _is_prime(P)  # a module constant, not user input


def prove_index() -> bool:
    from symuat.expr.algebra import mul
    from symuat.expr.attention import mha_symbols
    from symuat.kernel.index_calculus import compare_entries
    from symuat.expr.vec import Vec

    s = mha_symbols("split")
    return compare_entries(Vec(s.mha(), "row"), mul(s.W_HVO("row"), Vec(s.X, "row"))).equal


def _forward(X, H, WV, WO, h):
    """H0 as printed: split, H_i x_i W_Vi, concatenate, W_O (object or int arrays)."""
    N, M = X.shape
    d = M // h
    heads = [H[i] @ X[:, i * d:(i + 1) * d] @ WV[i] for i in range(h)]
    return np.concatenate(heads, axis=1) @ WO


def _blocks(WV, WO, h, M):
    dv = WV.shape[2]
    d = M // h
    B = []
    for i in range(h):
        Bi = np.zeros((M, WO.shape[1]), dtype=WO.dtype)
        if WO.dtype == object:
            Bi[...] = 0
        Bi[i * d:(i + 1) * d] = WV[i] @ WO[i * dv:(i + 1) * dv]
        B.append(Bi)
    return B


class SparsePoly:
    """An exact polynomial over ℤ: ``{monomial: coefficient}``, a monomial being the sorted tuple
    of its variables' ids (with repetition). Only ``+``, ``*`` and ``==`` — what matrix products
    of object arrays need. Sparse in the variables, unlike a dense-exponent ring with thousands
    of generators."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict):
        self.terms = terms

    @classmethod
    def var(cls, k: int) -> "SparsePoly":
        return cls({(k,): 1})

    def __add__(self, other):
        if isinstance(other, int):
            if other == 0:
                return self
            other = SparsePoly({(): other})
        out = dict(self.terms)
        for mono, c in other.terms.items():
            v = out.get(mono, 0) + c
            if v:
                out[mono] = v
            else:
                out.pop(mono, None)
        return SparsePoly(out)

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, int):
            return SparsePoly({m: c * other for m, c in self.terms.items()}) if other else SparsePoly({})
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                mono = tuple(sorted(m1 + m2))
                v = out.get(mono, 0) + c1 * c2
                if v:
                    out[mono] = v
                else:
                    out.pop(mono, None)
        return SparsePoly(out)

    __rmul__ = __mul__

    def __eq__(self, other):
        if isinstance(other, int):
            other = SparsePoly({(): other} if other else {})
        return self.terms == other.terms

    __hash__ = None  # type: ignore[assignment]  # unhashable (mutable terms, __eq__ by value): mypy wants a callable


def prove_poly(N: int, h: int, d: int, dv: int, blocks=None) -> bool:
    """Exact sparse-polynomial comparison; right side through the Kronecker structure."""
    M = h * d
    shapes = {"H": (h, N, N), "X": (N, M), "V": (h, d, dv), "O": (h * dv, M)}
    counter = 0
    arrays = {}
    for k, shp in shapes.items():
        arr = np.empty(shp, dtype=object)
        for idx in np.ndindex(*shp):
            arr[idx] = SparsePoly.var(counter)
            counter += 1
        arrays[k] = arr
    H, X, WV, WO = arrays["H"], arrays["X"], arrays["V"], arrays["O"]
    lhs = _forward(X, H, WV, WO, h)
    B = (blocks or _blocks)(WV, WO, h, M)
    # (Σ_i H_i ⊗ B_iᵀ) vec_r(X) = vec_r(Σ_i H_i X B_i): the vec lemma, proved at index level
    rhs = sum(H[i] @ X @ B[i] for i in range(h))
    return all(a == b for a, b in zip(lhs.flat, rhs.flat))


def prove_naive(N: int, h: int, d: int, dv: int) -> bool:
    from symuat.expr.algebra import mul
    from symuat.expr.attention import mha_symbols
    from symuat.kernel.decide import explicit_expansion
    from symuat.expr.vec import Vec

    s = mha_symbols("split")
    sizes = {s.N: N, s.h: h, s.d: d, s.dv: dv}
    proved, cex = explicit_expansion(Vec(s.mha(), "row"), mul(s.W_HVO("row"), Vec(s.X, "row")), [sizes])
    return bool(proved) and cex is None


def check_pit(N: int, h: int, d: int, dv: int, trials: int = 3, seed: int = 0, blocks=None) -> bool:
    """Randomised exact test over F_p with the dense W' (never a proof)."""
    rng = np.random.default_rng(seed)
    M = h * d
    for _ in range(trials):
        H = rng.integers(0, P, (h, N, N), dtype=np.int64)
        X = rng.integers(0, P, (N, M), dtype=np.int64)
        WV = rng.integers(0, P, (h, d, dv), dtype=np.int64)
        WO = rng.integers(0, P, (h * dv, M), dtype=np.int64)
        mm = lambda A, B: (A @ B) % P  # entries < 2^25, inner length ≤ 2^12: no int64 overflow
        heads = [mm(mm(H[i], X[:, i * d:(i + 1) * d]), WV[i]) for i in range(h)]
        lhs = mm(np.concatenate(heads, axis=1), WO).reshape(-1)
        W = np.zeros((N * M, N * M), dtype=np.int64)
        B = (blocks or _blocks)(WV, WO, h, M)
        for i in range(h):
            W = (W + np.kron(H[i], (B[i] % P).T) % P) % P
        rhs = mm(W, X.reshape(-1))
        if not np.array_equal(lhs, rhs):
            return False
    return True


STRATEGIES = {"poly": prove_poly, "naive": prove_naive, "pit": check_pit}


def size_for(nm: int) -> tuple[int, int, int, int]:
    """A size (N, h, d, d_v) with N·M = nm, N = M, h = 2 heads where possible."""
    n = int(round(nm**0.5))
    h = 2 if n % 2 == 0 else 1
    return n, h, n // h, n // h
