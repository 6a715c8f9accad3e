r"""A NumPy reference Transformer and its exact rewrite into the DUAT form (``to_duat``).

A :class:`Block` is one Transformer layer — multi-head attention (``split``/``std`` projections,
optional Q/K/V/O biases, masks), a per-token FFN :math:`\sigma(XW_1+1b_1^\top)W_2+1b_2^\top`, residual
connections (``both`` skips, or the FFN's only) and optional LayerNorm (``pre`` or ``post``).
:meth:`Block.eq20` gives the raw parameters of the layer in the general term of DUAT Eq. 20,

.. math:: x'_{\rm next}=W1\,x'+b3+W3\,\sigma(W2\,x'+b2),

as *input-dependent* linear operators on :math:`x'=\operatorname{vec}_r(X)`: attention contributes
:math:`W'(X)=\sum_iH_i\otimes B_i^\top` (H5) and a constant bias (H7); LayerNorm contributes the
affine map :math:`z\mapsto S(z)\,z+\beta` with :math:`S(z)` = per-token centring and scaling frozen
at its input (T12). :func:`to_duat` runs the network once and accumulates the combined
parameters with symuat's recursion (:mod:`symuat.residual`); :meth:`DUAT.evaluate` recomputes
the output from the combined parameters alone.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> blocks = [Block.random(rng, M=8, heads=2, F=16, ln=ln) for ln in ("none", "post", "pre")]
>>> X0 = rng.standard_normal((5, 8))
>>> duat = to_duat(blocks, X0)
>>> err = np.abs(duat.evaluate() - forward(blocks, X0)[-1]).max()
>>> bool(err < 1e-12)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from symuat.attention import MHAOperator, attention_patterns, mha_forward
from symuat.errors import NonFiniteError, ShapeMismatchError
from symuat.operators import Composed, Identity, Operator, RowMap, Sum, TokenAffine, Wrap

try:  # SciPy's vectorised erf when the model extra is installed; math.erf elementwise otherwise
    from scipy.special import erf as _erf_vec
except ImportError:  # pragma: no cover - depends on the environment
    _erf_py = np.frompyfunc(math.erf, 1, 1)

    def _erf_vec(x):
        return _erf_py(x).astype(float)


def gelu(x):
    """GELU with the exact erf (BERT's ``gelu``)."""
    x = np.asarray(x, dtype=float)
    return 0.5 * x * (1.0 + _erf_vec(x / math.sqrt(2.0)))


ACTIVATIONS: dict[str, Callable] = {"gelu": gelu, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


def layer_norm_scales(Z, eps: float) -> np.ndarray:
    """:math:`s_n=1/\\sqrt{\\operatorname{var}(z_n)+\\epsilon}` per token (population variance)."""
    return 1.0 / np.sqrt(Z.var(axis=1) + eps)


def layer_norm(Z, gamma, beta, eps):
    return (Z - Z.mean(axis=1, keepdims=True)) * layer_norm_scales(Z, eps)[:, None] * gamma + beta


def check_tokens(X, M: int | None = None, name: str = "X") -> np.ndarray:
    """``X`` as a float64 (tokens, width) array with at least one token and finite entries."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or (M is not None and X.shape[1] != M):
        raise ShapeMismatchError("Transformer block", name, X.shape, "model width", (M,),
                                 f"{name} must be (tokens, model width)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no tokens (N = 0): a layer needs at least one token")
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise NonFiniteError(f"{name} has a non-finite entry (NaN or inf) at {tuple(int(i) for i in bad)}"
                             " — an overflowed or corrupted input")
    return X


@dataclass
class Eq20:
    """Raw Eq. 20 parameters of one layer at one input (operators on vec_r)."""

    W1: Operator
    W2: Operator
    b2: np.ndarray
    W3: Operator
    b3: np.ndarray
    sigma: Callable


@dataclass
class Block:
    """One Transformer layer; weights in the ``(in, out)`` convention ``X @ W``."""

    WQ: np.ndarray  # (h, width, d_k)
    WK: np.ndarray
    WV: np.ndarray  # (h, width, d_v)
    WO: np.ndarray  # (h·d_v, M)
    W1: np.ndarray  # (M, F)
    b1: np.ndarray  # (F,)
    W2: np.ndarray  # (F, M)
    b2: np.ndarray  # (M,)
    heads: int
    projection: str = "split"
    bQ: np.ndarray | None = None
    bK: np.ndarray | None = None
    bV: np.ndarray | None = None
    bO: np.ndarray | None = None
    ln: str = "none"  # none | pre | post
    ln1: tuple = (None, None)
    ln2: tuple = (None, None)
    eps: float = 1e-12
    residual: str = "both"  # both | ffn (only with ln="none")
    activation: str = "gelu"
    mask: object = "bidir"
    scale: float | None = None

    def __post_init__(self):
        if self.ln not in ("none", "pre", "post"):
            raise ValueError(f"ln must be 'none', 'pre' or 'post', not {self.ln!r}")
        if self.residual not in ("both", "ffn"):
            raise ValueError(f"residual must be 'both' or 'ffn', not {self.residual!r}")
        if self.residual == "ffn" and self.ln != "none":
            raise ValueError("the FFN-only skip (block B-ffn) is defined without LayerNorm")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, not {self.activation!r}")
        if isinstance(self.heads, bool) or not isinstance(self.heads, (int, np.integer)) or self.heads < 1:
            raise ValueError(f"heads must be a positive integer, not {self.heads!r}")
        if np.ndim(self.WO) != 2:
            raise ShapeMismatchError("MHA output projection", "W_O", np.shape(self.WO), "(h·d_v, M)", ("h·d_v", "M"),
                                     "W_O must be 2-D")
        M = self.WO.shape[1]
        if self.projection == "split" and M % self.heads:
            raise ShapeMismatchError("head split", "W_O", self.WO.shape, "heads", (self.heads,),
                                     f"the model width {M} must be divisible by heads={self.heads}")
        width = M // self.heads if self.projection == "split" else M
        for name, W in (("W_Q", self.WQ), ("W_K", self.WK), ("W_V", self.WV)):
            shape = np.shape(W)
            if len(shape) == 3 and (shape[0] != self.heads or shape[1] != width):
                raise ShapeMismatchError("attention", name, shape, "heads, head input width",
                                         (self.heads, width), f"{name} must be (heads, {width}, d)")
        for name, W in (("W1", self.W1), ("W2", self.W2), ("W_O", self.WO)):
            if not np.isfinite(np.asarray(W, dtype=float)).all():
                raise NonFiniteError(f"Block: {name} contains NaN or inf")
        for name, W, shape in (("W1", self.W1, (M, None)), ("W2", self.W2, (None, M))):
            if W.ndim != 2 or any(s is not None and s != w for s, w in zip(shape, W.shape)):
                raise ShapeMismatchError("FFN", name, W.shape, "W_O", self.WO.shape,
                                         f"{name} must map the model width {M}")
        if self.ln != "none":
            for name, (g, b) in (("ln1", self.ln1), ("ln2", self.ln2)):
                if g is None or b is None or np.shape(g) != (M,) or np.shape(b) != (M,):
                    raise ShapeMismatchError("LayerNorm", name, np.shape(g), "model width", (M,),
                                             f"{name} needs gamma and beta of shape ({M},)")

    @property
    def M(self) -> int:
        return self.WO.shape[1]

    @classmethod
    def random(cls, rng, *, M: int, heads: int, F: int, ln: str = "none", biases: bool = True,
               projection: str = "split", residual: str = "both", activation: str = "gelu",
               mask="bidir") -> "Block":
        if isinstance(heads, bool) or not isinstance(heads, (int, np.integer)) or heads < 1:
            raise ValueError(f"heads must be a positive integer, not {heads!r}")
        if projection == "split" and M % heads:
            raise ValueError(f"M={M} is not divisible by heads={heads}: with the split projection every "
                             "head takes M/heads columns")
        width = M // heads if projection == "split" else M
        d = M // heads
        g = lambda *s, scale=None: rng.standard_normal(s) / np.sqrt(scale or s[-2] if len(s) > 1 else 1)
        b = (lambda *s: 0.1 * rng.standard_normal(s)) if biases else (lambda *s: None)
        ln_params = lambda: (1 + 0.1 * rng.standard_normal(M), 0.1 * rng.standard_normal(M))
        return cls(
            WQ=g(heads, width, d), WK=g(heads, width, d), WV=g(heads, width, d), WO=g(heads * d, M),
            W1=g(M, F), b1=b(F) if biases else np.zeros(F), W2=g(F, M), b2=b(M) if biases else np.zeros(M),
            heads=heads, projection=projection, bQ=b(heads, d), bK=b(heads, d), bV=b(heads, d), bO=b(M),
            ln=ln, ln1=ln_params() if ln != "none" else (None, None),
            ln2=ln_params() if ln != "none" else (None, None), eps=1e-5,
            residual=residual, activation=activation, mask=mask,
        )

    # -- the layer ----------------------------------------------------------------------------
    def _mha(self, Z):
        return mha_forward(Z, self.WQ, self.WK, self.WV, self.WO, heads=self.heads,
                           projection=self.projection, mask=self.mask, bQ=self.bQ, bK=self.bK,
                           bV=self.bV, bO=self.bO, scale=self.scale)

    def _ffn(self, Z):
        return ACTIVATIONS[self.activation](Z @ self.W1 + self.b1) @ self.W2 + self.b2

    def forward(self, X) -> np.ndarray:
        X = check_tokens(X, self.M, "X")
        if self.ln == "pre":
            Y = X + self._mha(layer_norm(X, *self.ln1, self.eps))[0]
            return Y + self._ffn(layer_norm(Y, *self.ln2, self.eps))
        attn = self._mha(X)[0]
        Y = (X + attn) if self.residual == "both" else attn
        if self.ln == "post":
            Y = layer_norm(Y, *self.ln1, self.eps)
            return layer_norm(Y + self._ffn(Y), *self.ln2, self.eps)
        return Y + self._ffn(Y)

    # -- the layer in the Eq. 20 form ----------------------------------------------------------
    def attention_bias(self, N: int) -> np.ndarray:
        """:math:`b'_{\\rm MHA}=\\operatorname{vec}_r(1_N(\\sum_ib_{Vi}^\\top W_{O,i}+b_O^\\top))` (H7)."""
        dv = self.WV.shape[2]
        row = np.zeros(self.M) if self.bO is None else np.asarray(self.bO, dtype=float).copy()
        if self.bV is not None:
            row += np.einsum("hv,hvm->m", np.asarray(self.bV).reshape(self.heads, dv),
                             self.WO.reshape(self.heads, dv, self.M))
        return np.tile(row, N)

    def _attention_operator(self, Z) -> Wrap:
        H = attention_patterns(Z, self.WQ, self.WK, self.heads, self.mask, projection=self.projection,
                               bQ=self.bQ, bK=self.bK, scale=self.scale)
        return Wrap(MHAOperator(H, self.WV, self.WO, projection=self.projection), "W'_MHA")

    def eq20(self, X) -> Eq20:
        """The raw Eq. 20 parameters of this layer at input ``X`` (they depend on ``X``)."""
        return self.step(X)[0]

    def step(self, X) -> tuple[Eq20, np.ndarray]:
        """The raw Eq. 20 parameters at ``X`` and the layer's output, in one pass."""
        X = check_tokens(X, self.M, "X")
        N, M = X.shape
        D = N * M
        I = Identity(D)
        L1, f1 = RowMap(self.W1, N), np.tile(self.b1, N)
        L2, f2 = RowMap(self.W2, N), np.tile(self.b2, N)
        sigma = ACTIVATIONS[self.activation]
        b_att = self.attention_bias(N)
        if self.ln == "pre":
            S1 = TokenAffine(layer_norm_scales(X, self.eps), self.ln1[0])
            beta1 = np.tile(self.ln1[1], N)
            U = layer_norm(X, *self.ln1, self.eps)
            A = self._attention_operator(U)
            W1 = Sum([I, Composed([A, S1])])
            Y = X + (A @ U.reshape(-1) + b_att).reshape(N, M)  # the attention just built, applied
            S2 = TokenAffine(layer_norm_scales(Y, self.eps), self.ln2[0])
            beta2 = np.tile(self.ln2[1], N)
            shift = A @ beta1 + b_att  # y = W1 x + shift
            out = Y + self._ffn(layer_norm(Y, *self.ln2, self.eps))
            return Eq20(W1=W1, W2=Composed([L1, S2, W1]), b2=L1 @ (S2 @ shift + beta2) + f1,
                        W3=L2, b3=shift + f2, sigma=sigma), out
        A = self._attention_operator(X)
        skip = Sum([I, A]) if self.residual == "both" else A
        if self.ln == "post":
            Z1 = X + (A @ X.reshape(-1) + b_att).reshape(N, M)
            S1 = TokenAffine(layer_norm_scales(Z1, self.eps), self.ln1[0])
            beta1 = np.tile(self.ln1[1], N)
            Ymat = layer_norm(Z1, *self.ln1, self.eps)
            Z2 = Ymat + self._ffn(Ymat)
            S2 = TokenAffine(layer_norm_scales(Z2, self.eps), self.ln2[0])
            beta2 = np.tile(self.ln2[1], N)
            Ly = Composed([S1, skip])  # y = Ly x + ly
            ly = S1 @ b_att + beta1
            return Eq20(W1=Composed([S2, Ly]), W2=Composed([L1, Ly]), b2=L1 @ ly + f1,
                        W3=Composed([S2, L2]), b3=S2 @ (ly + f2) + beta2, sigma=sigma), \
                layer_norm(Z2, *self.ln2, self.eps)
        Y = (skip @ X.reshape(-1) + b_att).reshape(N, M)
        return Eq20(W1=skip, W2=Composed([L1, skip]), b2=L1 @ b_att + f1, W3=L2, b3=b_att + f2,
                    sigma=sigma), Y + self._ffn(Y)


def forward(blocks: list[Block], X0) -> list[np.ndarray]:
    """All hidden states ``[X0, X1, …, XL]``."""
    states = [check_tokens(X0, blocks[0].M if blocks else None, "X0")]
    for k, block in enumerate(blocks):
        states.append(block.forward(states[-1]))
        if not np.isfinite(states[-1]).all():
            raise NonFiniteError(f"the output of layer {k + 1} is not finite (overflow or NaN): "
                                 f"max |input| = {np.abs(states[0]).max():.3g}")
    return states


@dataclass
class DUAT:
    r"""The combined parameters of :math:`x'_L=A\,x'_0+c+\sum_jU_j\sigma_j(V_jx'_0+e_j)`.

    ``A``, ``U_j``, ``V_j`` are lazy operator chains; ``c``, ``e_j`` vectors; ``raw`` the per-layer
    Eq. 20 parameters they were built from; ``depths[k]`` holds ``(A, c, U)`` after ``k+1``
    layers, so every intermediate hidden state has its own DUAT form.
    """

    x0: np.ndarray
    shape: tuple[int, int]
    A: Operator
    c: np.ndarray
    U: list[Operator]
    V: list[Operator]
    e: list[np.ndarray]
    sigmas: list[Callable]
    raw: list[Eq20] = field(default_factory=list)
    depths: list[tuple] = field(default_factory=list)

    @property
    def L(self) -> int:
        return len(self.V)

    def terms(self, depth: int | None = None) -> list[np.ndarray]:
        r"""The σ-terms :math:`U_{L,j}\sigma_j(V_jx'_0+e_j)` of the form at ``depth`` (default: all layers)."""
        k = self.L if depth is None else depth
        _, _, U = self.depths[k - 1]
        return [Uj @ s(Vj @ self.x0 + ej) for Uj, Vj, ej, s in zip(U, self.V[:k], self.e[:k], self.sigmas[:k])]

    def evaluate(self, depth: int | None = None, method: str = "direct") -> np.ndarray:
        r"""The hidden state after ``depth`` layers, recomputed from the combined parameters alone.

        ``direct`` applies every chain on its own (:math:`O(L^2)` operator applications, each term
        independently); ``factored`` shares the common prefixes of the chains
        (:math:`U_{L,j}=W1_L\cdots W1_{j+1}W3_j`, :math:`V_j=W2_jA_{j-1}`): :math:`O(L)`.
        """
        k = self.L if depth is None else depth
        if not 1 <= k <= self.L:
            raise ValueError(f"depth must be between 1 and {self.L}, not {depth}")
        if method == "factored":
            a, acc = self.x0, np.zeros_like(self.x0)
            for p, ej, s in zip(self.raw[:k], self.e[:k], self.sigmas[:k]):
                acc = p.W1 @ acc + p.W3 @ s(p.W2 @ a + ej)
                a = p.W1 @ a
            c = self.depths[k - 1][1]
            return (a + c + acc).reshape(self.shape)
        if method != "direct":
            raise ValueError(f"method must be 'direct' or 'factored', not {method!r}")
        A, c, _ = self.depths[k - 1]
        out = A @ self.x0 + c
        for t in self.terms(k):
            out = out + t
        return out.reshape(self.shape)


def to_duat(blocks: list[Block], X0) -> DUAT:
    """Run the network once and return its exact DUAT form at ``X0`` (symuat's recursion)."""
    X0 = np.asarray(X0, dtype=float)
    if not blocks:
        raise ValueError("to_duat needs at least one block")
    x0 = X0.reshape(-1)
    D = x0.size
    A: Operator = Identity(D)
    c = np.zeros(D)
    U: list[Operator] = []
    V: list[Operator] = []
    e: list[np.ndarray] = []
    sigmas: list[Callable] = []
    raw, depths = [], []
    X = X0
    R = np.zeros(D)  # UAT^R: the σ-sum part of x'_{j-1}
    a = x0  # A_{j-1} x0
    for block in blocks:
        p, X_next = block.step(X)
        raw.append(p)
        V.append(Composed([p.W2, A]))
        e.append(p.W2 @ (c + R) + p.b2)
        sigmas.append(p.sigma)
        R = p.W1 @ R + p.W3 @ p.sigma(p.W2 @ a + e[-1])  # UAT^R_{j} = W1_j UAT^R_{j-1} + W3_j σ_j(…)
        U = [Composed([p.W1, Uj]) for Uj in U] + [p.W3]
        A = Composed([p.W1, A])
        a = p.W1 @ a
        c = p.W1 @ c + p.b3
        depths.append((A, c, list(U)))
        X = X_next
    return DUAT(x0, X0.shape, A, c, U, V, e, sigmas, raw, depths)
