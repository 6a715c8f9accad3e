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
parameters with symuat's recursion (:mod:`symuat.expr.residual`); :meth:`DUAT.evaluate` recomputes
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
from functools import cached_property
from typing import Any, Callable

import numpy as np

from symuat.expr.attention import MHAOperator, attention_patterns, mha_forward, patterns_from
from symuat.errors import NonFiniteError, ShapeMismatchError
from symuat.numeric.operators import Composed, Identity, Operator, RowMap, Sum, TokenAffine, Wrap

try:  # SciPy's vectorised erf when the model extra is installed; math.erf elementwise otherwise
    from scipy.special import erf as _erf_vec
except ImportError:  # pragma: no cover - depends on the environment
    _erf_py = np.frompyfunc(math.erf, 1, 1)

    def _erf_vec(x):
        return _erf_py(x).astype(float)


def gelu(x):
    """GELU with the exact erf (BERT's ``gelu``)."""
    x = np.asarray(x, dtype=float)
    out = x * (1.0 / math.sqrt(2.0))  # in place from here: one temporary, not four
    out[...] = _erf_vec(out)
    out += 1.0
    out *= x
    out *= 0.5
    return out


def gelu_tanh(x):
    """GELU's tanh approximation (HF ``gelu_new`` / ``gelu_pytorch_tanh``):
    :math:`\\tfrac12x\\,(1+\\tanh(\\sqrt{2/\\pi}\\,(x+0.044715\\,x^3)))`, in torch's order
    (``x * x * x``, not a power) and in place: one temporary, not six.

    >>> gelu_tanh(np.array([-1.0, 0.0, 1.0])).round(6)
    array([-0.158808,  0.      ,  0.841192])
    """
    x = np.asarray(x, dtype=float)
    return x * tanh_gate(x)


def tanh_gate(x):
    """The gate :math:`\\phi` with ``gelu_tanh(x) = x * phi(x)``:
    :math:`\\tfrac12(1+\\tanh(\\sqrt{2/\\pi}\\,(x+0.044715\\,x^3)))`."""
    x = np.asarray(x, dtype=float)
    t = x * x
    t *= x
    t *= 0.044715
    t += x
    t *= math.sqrt(2.0 / math.pi)
    np.tanh(t, out=t)
    t += 1.0
    t *= 0.5
    return t


def silu(x):
    """:math:`x\\,\\mathrm{sigmoid}(x)` without overflow: :math:`x\\cdot\\tfrac12(1+\\tanh\\tfrac x2)`,
    in place from the first product (one temporary, not four; the same operations, so the same bits).

    >>> silu(np.array([0.0, 2.0, -800.0]))
    array([ 0.        ,  1.76159416, -0.        ])
    """
    x = np.asarray(x, dtype=float)
    out = np.multiply(x, 0.5)
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    out *= x
    return out


ACTIVATIONS: dict[str, Callable] = {"gelu": gelu, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0),
                                    "gelu_tanh": gelu_tanh, "silu": silu}


def layer_norm_scales(Z, eps: float) -> np.ndarray:
    """:math:`s_n=1/\\sqrt{\\operatorname{var}(z_n)+\\epsilon}` per token (population variance)."""
    return 1.0 / np.sqrt(Z.var(axis=1) + eps)


def layer_norm(Z, gamma, beta, eps):
    return (Z - Z.mean(axis=1, keepdims=True)) * layer_norm_scales(Z, eps)[:, None] * gamma + beta


def token_affine(parts, scales, gamma) -> np.ndarray:
    """:class:`~symuat.numeric.operators.TokenAffine` (LayerNorm's linear part frozen at an input) applied to
    a stack of token matrices ``(k, N, M)`` at once."""
    return (parts - parts.mean(axis=-1, keepdims=True)) * scales[:, None] * gamma


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


class Eq20:
    """Raw Eq. 20 parameters of one layer at one input (operators on vec_r).

    ``b2`` and ``b3`` may be given as zero-argument functions: they are then computed when first
    asked for (the one-pass rewrite folds them into :math:`c` and :math:`e` and never needs them
    on their own).
    """

    def __init__(self, W1: Operator, W2: Operator, b2, W3: Operator, b3, sigma: Callable):
        self.W1, self.W2, self.W3, self.sigma = W1, W2, W3, sigma
        self._b2, self._b3 = b2, b3

    @property
    def b2(self) -> np.ndarray:
        if callable(self._b2):
            self._b2 = self._b2()
        return self._b2

    @property
    def b3(self) -> np.ndarray:
        if callable(self._b3):
            self._b3 = self._b3()
        return self._b3


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
    ln1: tuple[Any, Any] = (None, None)  # (gamma, beta), (M,) each; None without LayerNorm
    ln2: tuple[Any, Any] = (None, None)
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
            W1=g(M, F), b1=0.1 * rng.standard_normal(F) if biases else np.zeros(F), W2=g(F, M),
            b2=0.1 * rng.standard_normal(M) if biases else np.zeros(M),
            heads=heads, projection=projection, bQ=b(heads, d), bK=b(heads, d), bV=b(heads, d), bO=b(M),
            ln=ln, ln1=ln_params() if ln != "none" else (None, None),
            ln2=ln_params() if ln != "none" else (None, None), eps=1e-5,
            residual=residual, activation=activation, mask=mask,
        )

    # -- the layer ----------------------------------------------------------------------------
    @cached_property
    def _qkv(self):
        r"""``std`` projection: :math:`[W_{Q1}\cdots W_{Qh}\,|\,W_{K1}\cdots\,|\,W_{V1}\cdots]` side by
        side, (M, h(2d_k+d_v)), and the biases likewise, so one BLAS product gives every head's
        queries, keys and values (the attention of HF and of the paper's Eq. 7 alike)."""
        h = self.heads
        W = np.concatenate([np.asarray(W, dtype=float).transpose(1, 0, 2).reshape(W.shape[1], -1)
                            for W in (self.WQ, self.WK, self.WV)], axis=1)
        b = np.concatenate([np.zeros(h * W_.shape[2]) if b_ is None else np.asarray(b_, dtype=float).reshape(-1)
                            for W_, b_ in ((self.WQ, self.bQ), (self.WK, self.bK), (self.WV, self.bV))])
        return W, b

    def _scale(self) -> float:
        return self.scale if self.scale is not None else 1 / np.sqrt(self.WQ.shape[2])

    def _project(self, Z, which: str):
        """Queries/keys/values of every head at ``Z`` (``std``): ``(h, N, ·)`` arrays."""
        W, b = self._qkv
        h, dk, dv = self.heads, self.WQ.shape[2], self.WV.shape[2]
        cols = {"qk": slice(0, 2 * h * dk), "qkv": slice(0, None)}[which]
        P = Z @ W[:, cols] + b[cols]
        N = Z.shape[0]
        Q = P[:, :h * dk].reshape(N, h, dk).transpose(1, 0, 2)
        K = P[:, h * dk:2 * h * dk].reshape(N, h, dk).transpose(1, 0, 2)
        V = P[:, 2 * h * dk:].reshape(N, h, dv).transpose(1, 0, 2) if which == "qkv" else None
        return Q, K, V

    @cached_property
    def _fused(self) -> bool:
        """The ``std`` projection with per-head weight families of the declared shapes: the fused
        products of :attr:`_qkv` apply (anything else goes through :func:`mha_forward`, which
        validates and names what is wrong)."""
        W = (self.WQ, self.WK, self.WV)
        h, M = self.heads, self.M
        return (self.projection == "std" and all(np.ndim(w) == 3 and w.shape[:2] == (h, M) for w in W)
                and self.WQ.shape[2] == self.WK.shape[2] and self.WO.shape[0] == h * self.WV.shape[2])

    def _mha(self, Z):
        if not self._fused:
            return mha_forward(Z, self.WQ, self.WK, self.WV, self.WO, heads=self.heads,
                               projection=self.projection, mask=self.mask, bQ=self.bQ, bK=self.bK,
                               bV=self.bV, bO=self.bO, scale=self.scale)
        Q, K, V = self._project(Z, "qkv")
        H = patterns_from(Q, K, self._scale(), self.mask)
        heads_out = np.matmul(H, V)
        out = heads_out.transpose(1, 0, 2).reshape(Z.shape[0], -1) @ self.WO
        if self.bO is not None:
            out += self.bO
        return out, H

    def _ffn(self, Z):
        pre = Z @ self.W1
        pre += self.b1
        out = ACTIVATIONS[self.activation](pre) @ self.W2
        out += self.b2
        return out

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
    def attention_bias_row(self) -> np.ndarray:
        r""":math:`\sum_ib_{Vi}^\top W_{O,i}+b_O^\top`: the bias every token gets from attention (H7)."""
        dv = self.WV.shape[2]
        row = np.zeros(self.M) if self.bO is None else np.asarray(self.bO, dtype=float).copy()
        if self.bV is not None:
            row += np.asarray(self.bV, dtype=float).reshape(-1) @ self.WO.reshape(self.heads * dv, self.M)
        return row

    def attention_bias(self, N: int) -> np.ndarray:
        r""":math:`b'_{\rm MHA}=\operatorname{vec}_r(1_N(\sum_ib_{Vi}^\top W_{O,i}+b_O^\top))` (H7)."""
        return np.tile(self.attention_bias_row(), N)

    def _attention_operator(self, Z) -> MHAOperator:
        if self._fused:
            Q, K, _ = self._project(Z, "qk")
            H = patterns_from(Q, K, self._scale(), self.mask)
        else:
            H = attention_patterns(Z, self.WQ, self.WK, self.heads, self.mask, projection=self.projection,
                                   bQ=self.bQ, bK=self.bK, scale=self.scale)
        if self._fused:  # the operator shares the block's [W_V1 … W_Vh] instead of copying it per layer
            hk = 2 * self.heads * self.WQ.shape[2]
            return MHAOperator(H, self.WV, self.WO, projection="std", WV_all=self._qkv[0][:, hk:])
        return MHAOperator(H, self.WV, self.WO, projection=self.projection)

    def eq20(self, X) -> Eq20:
        """The raw Eq. 20 parameters of this layer at input ``X`` (they depend on ``X``)."""
        return self.step(X)[0]

    def step(self, X) -> tuple[Eq20, np.ndarray]:
        """The raw Eq. 20 parameters at ``X`` and the layer's output, in one pass."""
        X = check_tokens(X, self.M, "X")
        p, parts, _ = self.duat_step(np.stack([X, np.zeros_like(X), np.zeros_like(X)]))
        return p, parts.sum(axis=0)

    def duat_step(self, parts) -> tuple[Eq20, np.ndarray, np.ndarray]:
        r"""One layer of the one-pass rewrite (:func:`to_duat`).

        ``parts`` = :math:`[A_{j-1}x'_0,\ c_{j-1},\ R_{j-1}]` as token matrices (3, N, M); the layer's
        input is their sum :math:`x'_{j-1}`. Returns the raw Eq. 20 parameters at that input, the
        next parts :math:`[A_jx'_0,\ c_j,\ R_j]` — :math:`A_j=W1_jA_{j-1}`,
        :math:`c_j=W1_jc_{j-1}+b3_j`, :math:`R_j=W1_jR_{j-1}+W3_j\sigma(V_jx'_0+e_j)` — and
        :math:`[V_jx'_0,\ e_j]` (2, N, F) with :math:`V_j=W2_jA_{j-1}`,
        :math:`e_j=W2_j(c_{j-1}+R_{j-1})+b2_j`.

        Each operator of the layer is applied once to the stacked parts (attention: one BLAS
        product per factor for all three), and the layer's own intermediate values — attention
        output, LayerNorm inputs, FFN pre-activation — are the sums of the parts, so nothing is
        computed twice: the FFN pre-activation *is* :math:`V_jx'_0+e_j`.
        """
        T = np.asarray(parts, dtype=float)
        _, N, M = T.shape
        sigma = ACTIVATIONS[self.activation]
        row_att = self.attention_bias_row()
        L1, L2 = RowMap(self.W1, N), RowMap(self.W2, N)
        f1 = lambda: np.tile(self.b1, N)  # the bias vectors, for b2/b3 when asked for
        f2 = lambda: np.tile(self.b2, N)
        b_att = lambda: np.tile(row_att, N)
        I = Identity(N * M)

        def ffn_in(y, bias):  # [V_j x0, e_j]: W1 of the FFN applied to [a-part, (c+R)-part + bias]
            pre = (np.concatenate([y[0], y[1] + y[2] + bias]) @ self.W1).reshape(2, N, -1)  # one BLAS product
            pre[1] += self.b1
            return pre

        if self.ln == "pre":
            s1 = layer_norm_scales(T.sum(axis=0), self.eps)
            g1, beta1 = self.ln1
            u = token_affine(T, s1, g1)  # S1 parts; LN1(x') = Σu + β1
            op = self._attention_operator(u.sum(axis=0) + beta1)
            A, S1 = Wrap(op, "W'_MHA"), TokenAffine(s1, g1)
            Au = op.apply_many(np.concatenate([u, np.broadcast_to(beta1, (1, N, M))]))
            y = T + Au[:3]  # W1 = I + A S1 on each part
            shift = (Au[3] + row_att).reshape(-1)  # A β1 + b_att
            y[1] += Au[3] + row_att  # c-part: W1 c + shift
            s2 = layer_norm_scales(y.sum(axis=0), self.eps)
            g2, beta2 = self.ln2
            S2 = TokenAffine(s2, g2)
            pre = ffn_in(token_affine(y, s2, g2), beta2)  # W2 = L1 S2 W1, b2 = L1(S2 shift + β2) + f1
            W1 = Sum([I, Composed([A, S1])])
            p = Eq20(W1=W1, W2=Composed([L1, S2, W1]), b2=lambda: L1 @ (S2 @ shift + np.tile(beta2, N)) + f1(),
                     W3=L2, b3=lambda: shift + f2(), sigma=sigma)
            y[1] += self.b2
            y[2] += sigma(pre.sum(axis=0)) @ self.W2
            return p, y, pre
        op = self._attention_operator(T.sum(axis=0))
        A = Wrap(op, "W'_MHA")
        skip = Sum([I, A]) if self.residual == "both" else A
        y = op.apply_many(T)
        if self.residual == "both":
            y += T
        y[1] += row_att  # [skip a, skip c + b_att, skip R]: the attention sublayer, its sum Z1
        if self.ln == "post":
            g1, beta1 = self.ln1
            g2, beta2 = self.ln2
            s1 = layer_norm_scales(y.sum(axis=0), self.eps)
            S1 = TokenAffine(s1, g1)
            u = token_affine(y, s1, g1)
            u[1] += beta1  # LN1(Z1) = Σu; u[1] = S1 skip c + l_y with l_y = S1 b_att + β1
            pre = ffn_in(u, 0.0)
            u[1] += self.b2
            u[2] += sigma(pre.sum(axis=0)) @ self.W2  # Z2 = LN1(Z1) + FFN(LN1(Z1)) = Σu
            s2 = layer_norm_scales(u.sum(axis=0), self.eps)
            S2 = TokenAffine(s2, g2)
            nxt = token_affine(u, s2, g2)
            nxt[1] += beta2
            Ly = Composed([S1, skip])  # y = Ly x + l_y
            ly = lambda: S1 @ b_att() + np.tile(beta1, N)
            p = Eq20(W1=Composed([S2, Ly]), W2=Composed([L1, Ly]), b2=lambda: L1 @ ly() + f1(),
                     W3=Composed([S2, L2]), b3=lambda: S2 @ (ly() + f2()) + np.tile(beta2, N), sigma=sigma)
            return p, nxt, pre
        pre = ffn_in(y, 0.0)
        p = Eq20(W1=skip, W2=Composed([L1, skip]), b2=lambda: L1 @ b_att() + f1(), W3=L2,
                 b3=lambda: b_att() + f2(), sigma=sigma)
        y[1] += self.b2
        y[2] += sigma(pre.sum(axis=0)) @ self.W2
        return p, y, pre


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
    #: ``parts[k]`` = :math:`[A_kx'_0,\ c_k,\ R_k]` (3, N, M) as the one pass computed them
    #: (``parts[0]`` = :math:`[x'_0, 0, 0]`); their sum is the hidden state after ``k`` layers.
    parts: list[np.ndarray] = field(default_factory=list)
    #: :math:`\sigma_j(V_jx'_0+e_j)` of every layer, kept when ``to_duat(..., keep_sigma=True)``
    #: (the values the σ-terms multiply: an exact decomposition reads them).
    sigma_values: list[np.ndarray] = field(default_factory=list)

    @property
    def L(self) -> int:
        return len(self.V)

    def terms(self, depth: int | None = None) -> list[np.ndarray]:
        r"""The σ-terms :math:`U_{L,j}\sigma_j(V_jx'_0+e_j)` of the form at ``depth`` (default: all layers)."""
        k = self.L if depth is None else depth
        _, _, U = self.depths[k - 1]
        return [Uj @ s(Vj @ self.x0 + ej) for Uj, Vj, ej, s in zip(U, self.V[:k], self.e[:k], self.sigmas[:k])]

    def states(self) -> list[np.ndarray]:
        r"""Every hidden state :math:`x'_k=A_kx'_0+c_k+R_k`, ``k = 0 … L``, from the one pass of
        :func:`to_duat` (no operator applied again)."""
        return [P.sum(axis=0) for P in self.parts]

    def evaluate(self, depth: int | None = None, method: str = "direct") -> np.ndarray:
        r"""The hidden state after ``depth`` layers, recomputed from the combined parameters alone.

        ``direct`` applies every chain on its own (:math:`O(L^2)` operator applications, each term
        independently); ``factored`` shares the common prefixes of the chains
        (:math:`U_{L,j}=W1_L\cdots W1_{j+1}W3_j`, :math:`V_j=W2_jA_{j-1}`): :math:`O(L)`;
        ``pass`` is :math:`A_kx'_0+c_k+R_k` as :func:`to_duat` accumulated it (no work).
        """
        k = self.L if depth is None else depth
        if not 1 <= k <= self.L:
            raise ValueError(f"depth must be between 1 and {self.L}, not {depth}")
        if method == "pass":
            return self.parts[k].sum(axis=0).reshape(self.shape)
        if method == "factored":
            a, acc = self.x0, np.zeros_like(self.x0)
            for p, ej, s in zip(self.raw[:k], self.e[:k], self.sigmas[:k]):
                acc = p.W1 @ acc + p.W3 @ s(p.W2 @ a + ej)
                a = p.W1 @ a
            c = self.depths[k - 1][1]
            return (a + c + acc).reshape(self.shape)
        if method != "direct":
            raise ValueError(f"method must be 'direct', 'factored' or 'pass', not {method!r}")
        A, c, _ = self.depths[k - 1]
        out = A @ self.x0 + c
        for t in self.terms(k):
            out = out + t
        return out.reshape(self.shape)


def duat_step_from_step(block, parts) -> tuple[Eq20, np.ndarray, np.ndarray]:
    r"""The one-pass layer of :func:`to_duat` for any block that only has ``step(X) → (Eq20, X_next)``
    (e.g. :class:`symuat.models.causal_lm.DecoderLayer`): the Eq. 20 parameters at the layer's input
    :math:`x'_{j-1}=a+c+R` (``parts`` = :math:`[a, c, R]`, token matrices), then the same recursion
    as :meth:`Block.duat_step`, one operator application per part."""
    T = np.asarray(parts, dtype=float)
    shape = T.shape[1:]
    a, c, R = (t.reshape(-1) for t in T)
    p, _ = block.step(T.sum(axis=0))
    Va = p.W2 @ a
    e = p.W2 @ (c + R) + p.b2
    nxt = np.stack([(p.W1 @ a).reshape(shape), (p.W1 @ c + p.b3).reshape(shape),
                    (p.W1 @ R + p.W3 @ p.sigma(Va + e)).reshape(shape)])
    return p, nxt, np.stack([Va, e])


def to_duat(blocks: list[Block], X0, *, keep_sigma: bool = False) -> DUAT:
    r"""The exact DUAT form at ``X0`` and every hidden state, in one :math:`O(L)` pass.

    Layer :math:`j` is built at its input :math:`x'_{j-1}=A_{j-1}x'_0+c_{j-1}+R_{j-1}` — the sum of
    the three parts the pass carries (:meth:`Block.duat_step`) — and the recursion of
    :mod:`symuat.expr.residual` advances them: :math:`A_j=W1_jA_{j-1}`, :math:`c_j=W1_jc_{j-1}+b3_j`,
    :math:`V_j=W2_jA_{j-1}`, :math:`e_j=W2_j(c_{j-1}+R_{j-1})+b2_j`,
    :math:`R_j=W1_jR_{j-1}+W3_j\sigma(V_jx'_0+e_j)`. No separate forward pass runs: the hidden
    states are the rewrite's own (:meth:`DUAT.states`); ``A``, ``U_j``, ``V_j`` are kept as lazy
    operator chains. Memory: the attention patterns of every layer, :math:`O(L\,hN^2)`, and
    the weights, :math:`O(M^2)` per layer. ``keep_sigma`` also keeps :math:`\sigma_j(V_jx'_0+e_j)`.
    """
    X0 = np.asarray(X0, dtype=float)
    if not blocks:
        raise ValueError("to_duat needs at least one block")
    x0 = X0.reshape(-1)
    D = x0.size
    A: Operator = Identity(D)
    U: list[Operator] = []
    V: list[Operator] = []
    e: list[np.ndarray] = []
    sigmas: list[Callable] = []
    raw, depths, kept = [], [], []
    parts = [np.stack([X0, np.zeros_like(X0), np.zeros_like(X0)])]  # [A_0 x0, c_0, R_0] = [x0, 0, 0]
    for block in blocks:
        step = getattr(block, "duat_step", None)
        p, nxt, pre = step(parts[-1]) if step is not None else duat_step_from_step(block, parts[-1])
        raw.append(p)
        V.append(Composed([p.W2, A]))
        e.append(pre[1].reshape(-1).copy())  # a copy: V_j x0, the other half of pre, is not kept
        if keep_sigma:
            kept.append(p.sigma(pre.sum(axis=0)).reshape(-1))
        sigmas.append(p.sigma)
        U = [Composed([p.W1, Uj]) for Uj in U] + [p.W3]
        A = Composed([p.W1, A])
        parts.append(nxt)
        depths.append((A, nxt[1].reshape(-1), list(U)))
    return DUAT(x0, X0.shape, A, depths[-1][1], U, V, e, sigmas, raw, depths, parts, kept)
