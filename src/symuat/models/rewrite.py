r"""The DUAT rewrite of a model at an input, and the exact decomposition of a decoder's logit —
one of each for every family.

:func:`rewrite` runs :func:`symuat.numeric.transformer.to_duat` (the one recursion: each layer frozen at
the input the form has just produced, :math:`x'_k=A_kx'_0+c_k+R_k`) over the model's layers and,
for a decoder, applies the LM head frozen at the last state (X5). :func:`decompose_logit` writes
one next-token logit as the exact sum of the DUAT terms (X6), pulling the readout back through
the layers with the transposed operators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from symuat.models.formats import ModelError
from symuat.models.lifts import adjoint
from symuat.numeric.operators import Operator
from symuat.numeric.transformer import DUAT, Eq20, to_duat

_rmatvec = adjoint  # the name X6's mutant test patches (forward chain instead of the transposed one)


@dataclass
class Rewrite:
    r"""The DUAT form :math:`x'_k=A_kx'_0+c_k+\sum_{j\le k}U_{k,j}\,\sigma(V_jx'_0+e_j)` of every depth,
    the states recomputed from it and (decoders) the logits through the frozen head."""

    duat: DUAT
    states: list[np.ndarray]  # x'_k, k = 0..L, as (N, M)
    head: Operator | None = None
    logits: np.ndarray | None = None

    @property
    def L(self) -> int:
        return self.duat.L

    @property
    def raw(self) -> list[Eq20]:
        return self.duat.raw

    @property
    def e(self) -> list[np.ndarray]:
        return self.duat.e

    @property
    def x0(self) -> np.ndarray:
        return self.duat.x0

    @property
    def shape(self) -> tuple[int, int]:
        return self.duat.shape

    @property
    def sigma_out(self) -> list[np.ndarray]:
        """:math:`\\sigma_j(V_jx'_0+e_j)`, the values the σ-terms multiply."""
        return self.duat.sigma_values


def rewrite(model, X0: np.ndarray, *, layers=None, keep_sigma: bool = False,
            progress: Callable[[str], None] | None = None) -> Rewrite:
    """Freeze every layer at its input and recompute every state (and a decoder's logits) from the DUAT form."""
    X0 = np.asarray(X0, dtype=float)
    blocks = list(model.layers if layers is None else layers)
    if progress:
        blocks = [_Announce(b, k, len(blocks), progress) for k, b in enumerate(blocks)]
    duat = to_duat(blocks, X0, keep_sigma=keep_sigma)
    states = [P.sum(axis=0) for P in duat.parts]
    out = Rewrite(duat, states)
    if hasattr(model, "head"):
        X = states[-1]
        out.head = model.head(X)  # the final norm frozen at the last state (X5)
        out.logits = (out.head @ X.reshape(-1)).reshape(X.shape[0], -1)
        if hasattr(model, "head_bias"):  # a final norm with a bias (LayerNorm's β): the head's constant
            out.logits = out.logits + model.head_bias(X)
    return out


def rewrite_states(model, X0: np.ndarray, *, layers=None, progress: Callable[[str], None] | None = None):
    r"""The states :math:`x'_0, x'_1, \dots, x'_L` of :func:`rewrite`, streamed: the same one pass
    (each layer's ``duat_step`` frozen at the parts :math:`[A_kx'_0,\ c_k,\ R_k]` the pass has just
    produced, the state their sum), but each layer's frozen operators — its :math:`(h, N, N)`
    patterns — are dropped once the layer has advanced the parts, so memory is one layer's working
    set plus the parts, :math:`O(hN^2 + NM)`, not :math:`O(L\,hN^2)`. The states are bit for bit
    :func:`rewrite`'s (the same operations in the same order).

    >>> from symuat.models.families.llama import random_llama
    >>> net = random_llama(np.random.default_rng(0), layers=3, vocab=16)
    >>> X0 = net.embed([1, 2, 3, 4])
    >>> all(np.array_equal(a, b) for a, b in zip(rewrite_states(net, X0), rewrite(net, X0).states))
    True
    """
    from symuat.numeric.transformer import duat_step_from_step

    X0 = np.asarray(X0, dtype=float)
    blocks = list(model.layers if layers is None else layers)
    parts = np.stack([X0, np.zeros_like(X0), np.zeros_like(X0)])  # [A_0 x0, c_0, R_0] = [x0, 0, 0]
    yield parts.sum(axis=0)
    for k, block in enumerate(blocks):
        if progress:
            progress(f"  layer {k + 1}/{len(blocks)}")
        step = getattr(block, "duat_step", None)
        _, parts, _ = step(parts) if step is not None else duat_step_from_step(block, parts)
        yield parts.sum(axis=0)


class _Announce:
    """A layer that says when the recursion reaches it (progress on long runs)."""

    def __init__(self, layer, k: int, L: int, say):
        self.layer, self.k, self.L, self.say = layer, k, L, say

    def duat_step(self, parts):
        self.say(f"  layer {self.k + 1}/{self.L}")
        return self.layer.duat_step(parts)


# --------------------------------------------------------------------------------------------
# the exact logit decomposition (X6)
# --------------------------------------------------------------------------------------------


@dataclass
class LogitDecomposition:
    token: int
    token_text: str
    position: int
    logit: float  # the model's logit (plain forward)
    linear: float  # readout of A_L x'_0: the linear path from the embeddings
    linear_per_token: np.ndarray  # the same, split over the input tokens
    layers: np.ndarray  # readout of U_{L,j} σ_j(V_j x'_0 + e_j), j = 1..L
    bias: float  # readout of c_L (the bias terms; zero without biases)
    rewrite_logit: float = float("nan")  # the same logit through the DUAT form's own head (a second route)

    @property
    def total(self) -> float:
        return float(self.linear + self.layers.sum() + self.bias)

    @property
    def abs_error(self) -> float:
        return abs(self.total - self.logit)

    @property
    def rel_error(self) -> float:
        return self.abs_error / max(abs(self.logit), np.finfo(float).tiny)


def decompose_logit(model, ids, token: int | None = None, *, duat: Rewrite | None = None,
                    states: list[np.ndarray] | None = None, position: int | None = None,
                    forward: bool = True) -> LogitDecomposition:
    """The chosen next-token logit at ``position`` (default: the last) as the exact sum of the DUAT terms.

    ``token`` defaults to the model's prediction. The readout row is pulled back through the
    layers with the transposed operators (:math:`\\rho_{j-1}=W1_j^\\top\\rho_j`), so each term
    costs one pass: layer ``j``'s σ-term is :math:`\\rho_j\\cdot W3_j\\sigma_j`, the linear path
    :math:`\\rho_0\\cdot x'_0`, the bias :math:`\\sum_j\\rho_j\\cdot b3_j`.

    Without ``duat`` the rewrite is streamed: the forward half of the one pass keeps only each
    layer's input parts :math:`[A_kx'_0, c_k, R_k]` (:math:`O(LNM)`), and the reverse half freezes
    layer ``j`` again at its parts — the same ``duat_step``, so the same operators and σ-values,
    bit for bit — one layer's patterns alive at a time. Only the position's logits are formed.

    ``forward=False`` (without ``duat`` and ``states``): the plain forward is not run — ``token``
    defaults to the rewrite's own prediction and ``logit`` is the rewrite's (through the frozen head);
    every term is the same, bit for bit (a caller that holds the forward's logit compares it).
    """
    ids = model.check_ids(ids)
    if states is None and not forward and duat is None:  # the terms read x'_0 only
        states = [model.embed(ids), None]
    if states is None:  # the forward's first and last states are all this reads: the others are not kept
        X = model.embed(ids)
        states = [X]
        for layer in model.layers:
            X = layer.forward(X)
        states.append(X)
    N, M = states[0].shape
    n = N - 1 if position is None else int(position)
    if not 0 <= n < N:
        raise ModelError(f"position {n} is outside the text's {N} tokens")
    logits_n = None if states[-1] is None else model.logits(states[-1][n:n + 1])[0]

    def chosen(logits_n):
        t = int(np.argmax(logits_n)) if token is None else token
        if not 0 <= t < model.config.vocab:
            raise ModelError(f"token id {t} is outside the vocabulary [0, {model.config.vocab})")
        return t

    if logits_n is not None or token is not None:  # a bad token is refused before the rewrite runs
        token = chosen(logits_n)
    if duat is not None and duat.sigma_out:
        L, x0, xL = duat.L, duat.x0, duat.states[-1]
        layer_at = lambda j: (duat.raw[j], duat.sigma_out[j])
    else:
        blocks = list(model.layers)
        parts = [np.stack([states[0], np.zeros_like(states[0]), np.zeros_like(states[0])])]
        for block in blocks:  # the forward half: the parts entering every layer
            parts.append(block.duat_step(parts[-1])[1])
        L, x0, xL = len(blocks), states[0].reshape(-1), parts[-1].sum(axis=0)
        parts.pop()

        def layer_at(j):  # layer j frozen again at its input parts (what to_duat froze it at)
            p, _, pre = blocks[j].duat_step(parts[j])
            parts[j] = None
            return p, p.sigma(pre.sum(axis=0)).reshape(-1)

    rewrite_row = model.head(xL[n:n + 1]) @ xL[n]  # the head frozen at x'_L's row n (X5)
    if hasattr(model, "head_bias"):  # a final norm with a bias (LayerNorm's β): the head's constant
        rewrite_row = rewrite_row + model.head_bias(xL[n:n + 1])[0]
    if logits_n is None:  # no forward: the rewrite's own logits choose the token
        logits_n = rewrite_row
        token = chosen(logits_n)
    rho = model.readout(xL, n, token)  # logit = rho . x'_L, the head frozen at the rewrite's x'_L
    layer_terms = np.zeros(L)
    bias = 0.0
    for j in range(L - 1, -1, -1):
        p, sigma_j = layer_at(j)
        layer_terms[j] = rho @ (p.W3 @ sigma_j)
        bias += rho @ p.b3
        rho = _rmatvec(p.W1, rho)
        del p, sigma_j
    if hasattr(model, "readout_bias"):  # the final norm's β read by the head row: a bias term
        bias += model.readout_bias(n, token)
    per_token = (rho.reshape(N, M) * x0.reshape(N, M)).sum(axis=1)
    return LogitDecomposition(token, model.decode(token), n, float(logits_n[token]), float(per_token.sum()),
                              per_token, layer_terms, float(bias), rewrite_logit=float(rewrite_row[token]))
