r"""Claim X9: the parallel residual (GPT-NeoX/Pythia, GPT-J) as one Eq. 20 general term (spec §8;
an extension, not in the papers).

A parallel layer reads its input twice, :math:`x+\mathrm{Attn}(\mathrm{LN}_1x)+\mathrm{MLP}(\mathrm{LN}_2x)`.
With the attention patterns and the norms' scales frozen at the input, each norm is an affine
per-token lift :math:`\mathrm{LN}_k(X)=\operatorname{diag}(s_k)XG_k+\mathcal B_k` (:math:`G_k` any
:math:`M\times M` matrix: LayerNorm's :math:`C_M\operatorname{diag}(\gamma_k)`, T12, or RMSNorm's
:math:`\operatorname{diag}(\gamma_k)`, X3; :math:`\mathcal B_k` its shift, :math:`\mathbf 1\beta_k^T`), and
the layer is Eq. 20 with

.. math:: W1=I+\textstyle\sum_i(H_i\otimes B_i^T)S_1,\quad W2=(I_N\otimes W_{\rm in}^T)S_2,\quad
          W3=I_N\otimes W_{\rm out}^T,

:math:`S_k=\operatorname{diag}(s_k)\otimes G_k^T`, :math:`b3=\sum_i(H_i\otimes B_i^T)\operatorname{vec}_r\mathcal B_1+\operatorname{vec}_r(C_{\rm att}+C_{\rm out})`,
:math:`b2=(I_N\otimes W_{\rm in}^T)\operatorname{vec}_r\mathcal B_2+\operatorname{vec}_r C_{\rm in}`. Against the
sequential block (T7, :math:`W2=(I_N\otimes W_{\rm in}^T)S_2W1`) only :math:`W2` and :math:`b2` change:
the MLP reads :math:`x'`, not :math:`W1x'`. Lemma 2's unrolling (L2.main.exact[induction]) is proved
for *any* per-layer Eq. 20 parameters, so it carries over unchanged.

Checks (all ``polarity=None``, ``role="extension"``):

* ``X9.layer`` — the identity above, for symbolic :math:`N, M, F` (two frozen heads, σ opaque,
  every bias a free :math:`N\times\cdot` matrix — the token-constant rows of a real model are a special case);
* ``X9.layer[sequential]`` — the sequential pre-norm layer with the same biases, :math:`W2=(I_N\otimes W_{\rm in}^T)S_2W1`
  (the contrast: each form is refuted for the other layer, tests);
* ``X9.unrolling`` — the layer identity and L2.main.exact[induction] combined: every depth of a stack of
  parallel layers is :math:`A_Lx'_0+c_L+\sum_jU_{L,j}\sigma(V_jx'_0+e_j)` with these parameters;
* ``X9.layer[numeric]`` — :mod:`symuat.models.ln_decoder`'s parallel layer (LayerNorm, biases, partial RoPE):
  its Eq. 20 parameters reproduce its forward to ≤ decide.TOLERANCE (1e-12), a confirmation beside the proof.

>>> from symuat.kernel import decide
>>> decide.check_identity(*parallel_layer_statement()).status.value
'proved'
>>> decide.check_identity(*parallel_layer_statement("sequential-W2")).status.value
'refuted'
"""

from __future__ import annotations

import numpy as np
from sympy import Identity, MatrixSymbol

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.decoder import Diag
from symuat.expr.elementwise import Sigma
from symuat.kernel import decide
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status
from symuat.expr.vec import Vec

EXT = {"polarity": None, "role": "extension"}

_N, _M, _F = dims("N M F")

#: the mutants a test feeds the procedure (each must be refuted)
MUTANTS = ("sequential-W2", "no-ln2-scale", "no-skip", "ln1-for-mlp", "no-ln1-shift")

X9 = REGISTRY.claim(
    "X9", "The parallel residual (extension)",
    where="not in the papers (spec §8); GPT-NeoX/Pythia (use_parallel_residual), GPT-J",
    statement=r"x+\mathrm{Attn}(\mathrm{LN}_1x)+\mathrm{MLP}(\mathrm{LN}_2x):\ W1=I+AS_1,\ "
              r"W2=(I_N\otimes W_{\rm in}^{T})S_2,\ W3=I_N\otimes W_{\rm out}^{T}",
    group="decoder",
    remarks=r"Spec §8 asks: is a parallel layer one Eq. 20 general term, with which combined $W_1, W_2, W_3$, "
            r"and does Lemma 2's unrolling carry over unchanged? Yes: $W1=I+AS_1$ as in the sequential block, "
            r"$W3=I_N\otimes W_{\rm out}^T$, but $W2=(I_N\otimes W_{\rm in}^T)S_2$ — without the factor $W1$ of the "
            r"sequential block's $W2=(I_N\otimes W_{\rm in}^T)S_2W1$, since the MLP reads the layer's input; "
            r"$S_2$ is frozen at $x'$, not at $W1x'$. Lemma 2's induction holds for any per-layer parameters, "
            r"so it carries over. `symuat model check` on a GPT-NeoX folder runs this form.",
)


def _lift(k, Y):
    """:math:`\\operatorname{diag}(s_k)\\,Y\\,G_k+\\mathcal B_k`: a norm frozen at its input (LayerNorm or RMSNorm)."""
    return add(mul(Diag(MatrixSymbol(f"s_{k}", _N, 1)), Y, MatrixSymbol(f"G_{k}", _M, _M)),
               MatrixSymbol(f"Beta_{k}", _N, _M))


def _S(k):
    return kron(Diag(MatrixSymbol(f"s_{k}", _N, 1)), T(MatrixSymbol(f"G_{k}", _M, _M)))


def parallel_layer_statement(mutant: str | None = None, *, sequential: bool = False):
    """``(vec_r(layer(X)), W1 x' + b3 + W3 σ(W2 x' + b2))`` for one layer with two frozen heads, symbolic
    ``N, M, F``: ``layer(X) = X + Σ_i H_i LN₁(X) B_i + C_att + σ(LN₂(·) W_in + C_in) W_out + C_out`` with
    ``LN₂`` reading ``X`` (parallel) or ``h = X + attention`` (``sequential``).

    Mutants of the Eq. 20 side: ``sequential-W2`` (the sequential block's :math:`W2=L_{\\rm in}S_2W1`, its
    :math:`b2`), for the ``sequential`` layer ``parallel-W2`` (the parallel block's),
    ``no-ln2-scale`` (:math:`W2=L_{\\rm in}`, LN₂'s scale dropped), ``no-skip`` (:math:`W1=AS_1`),
    ``ln1-for-mlp`` (:math:`W2=L_{\\rm in}S_1`), ``no-ln1-shift`` (:math:`b3` without :math:`A\\operatorname{vec}\\mathcal B_1`)."""
    X = MatrixSymbol("X", _N, _M)
    heads = [(MatrixSymbol(f"H_{i}", _N, _N), MatrixSymbol(f"B_{i}", _M, _M)) for i in (1, 2)]
    Win, Wout = MatrixSymbol("W_in", _M, _F), MatrixSymbol("W_out", _F, _M)
    Catt, Cout, Cin = MatrixSymbol("C_att", _N, _M), MatrixSymbol("C_out", _N, _M), MatrixSymbol("C_in", _N, _F)
    B1, B2 = MatrixSymbol("Beta_1", _N, _M), MatrixSymbol("Beta_2", _N, _M)
    attn = add(*[mul(H, _lift(1, X), B) for H, B in heads], Catt)
    h = add(X, attn)
    mlp = add(mul(Sigma(add(mul(_lift(2, h if sequential else X), Win), Cin)), Wout), Cout)
    out = add(h, mlp)

    x = Vec(X, "row")
    A = add(*[kron(H, T(B)) for H, B in heads])
    Lin, Lout = kron(Identity(_N), T(Win)), kron(Identity(_N), T(Wout))
    # W1x' = x' + A S₁x' (written applied: SymPy folds I_N⊗I_M into one I_{NM}, another index space)
    W1x = mul(A, _S(1), x) if mutant == "no-skip" else add(x, mul(A, _S(1), x))
    shift = Vec(Catt, "row") if mutant == "no-ln1-shift" else add(mul(A, Vec(B1, "row")), Vec(Catt, "row"))
    b3 = add(shift, Vec(Cout, "row"))
    # the sequential block's W2 = L_in S₂ W1 and b2 = L_in (S₂ (A vec B₁ + vec C_att) + vec B₂) + vec C_in;
    # the parallel block's W2 = L_in S₂ and b2 = L_in vec B₂ + vec C_in (each mutant: the other one's)
    sequential_form = (mutant == "parallel-W2") if sequential else (mutant == "sequential-W2")
    sequential_form = sequential_form != sequential
    if sequential_form:
        W2x = mul(Lin, _S(2), W1x)
        b2 = add(mul(Lin, add(mul(_S(2), add(mul(A, Vec(B1, "row")), Vec(Catt, "row"))), Vec(B2, "row"))),
                 Vec(Cin, "row"))
    else:
        W2x = mul(Lin, _S(2), x)
        b2 = add(mul(Lin, Vec(B2, "row")), Vec(Cin, "row"))
    if mutant == "no-ln2-scale":
        W2x = mul(Lin, x)
    elif mutant == "ln1-for-mlp":
        W2x = mul(Lin, _S(1), x)
    return Vec(out, "row"), add(W1x, b3, mul(Lout, Sigma(add(W2x, b2))))


_CONSTRUCTION = (r"W1=I+\textstyle\sum_i(H_i\otimes B_i^{T})S_1,\ W2=(I_N\otimes W_{\rm in}^{T})S_2,\ "
                 r"W3=I_N\otimes W_{\rm out}^{T},\ b3=A\operatorname{vec}_r\mathcal B_1+\operatorname{vec}_r(C_{\rm att}+C_{\rm out}),\ "
                 r"b2=(I_N\otimes W_{\rm in}^{T})\operatorname{vec}_r\mathcal B_2+\operatorname{vec}_rC_{\rm in}")


def _layer(mutant: str | None = None, sequential: bool = False):
    return decide.check_identity(*parallel_layer_statement(mutant, sequential=sequential),
                                   construction=_CONSTRUCTION)


def _unrolling():
    """The layer is Eq. 20 (symbolic N, M, F) and T7's recursion holds for any per-layer parameters and any
    elementwise σ (L2.main.exact[induction]): the unrolling carries over to a stack of parallel layers."""
    step = _layer()
    out = decide.combine_all([step, REGISTRY.verdict("L2.main.exact[induction]")],
                             ["a parallel-residual layer is Eq. 20", "L2.main.exact[induction]"])
    if out.status is Status.PROVED:
        out.method = ("a parallel-residual layer is the general term Eq. 20 (symbolic N, M, F; two frozen heads, norm "
                      "scales frozen, σ opaque), and Lemma 2's unrolling / T7's recursion holds for any per-layer "
                      "parameters (L2.main.exact[induction]): " + out.method)
    return out


def parallel_trial(sizes, seed, *, mutant: str | None = None):
    """A random parallel-residual LayerNorm layer (:class:`symuat.models.ln_decoder.LNDecoderLayer`: biases, partial
    RoPE) at a random input: :math:`W1x'+b3+W3\\sigma(W2x'+b2)` against its forward. ``mutant="sequential-W2"``
    uses :math:`W2=L_{\\rm in}S_2W1`, ``"no-ln2-scale"`` :math:`W2=L_{\\rm in}`; each must fail."""
    from symuat.models.compare import relative_error
    from symuat.models.ln_decoder import random_ln_layer
    from symuat.numeric.operators import Composed

    rng = np.random.default_rng(seed)
    layer = random_ln_layer(rng, M=sizes["M"], F=sizes["F"])
    X = rng.standard_normal((sizes["N"], sizes["M"]))
    p, _ = layer.step(X)
    W2 = p.W2
    if mutant == "sequential-W2":
        W2 = Composed([p.parts["Lin"], p.parts["S2"], p.W1])
    elif mutant == "no-ln2-scale":
        W2 = p.parts["Lin"]
    x = X.reshape(-1)
    mine = (p.W1 @ x + p.b3 + p.W3 @ p.sigma(W2 @ x + p.b2)).reshape(X.shape)
    err = relative_error(mine, layer.forward(X))
    return err <= decide.TOLERANCE, f"Eq. 20 vs the forward: relative error {err:.2e} (tolerance {decide.TOLERANCE})", \
        {"residual": err}


_TEX = r"x+\mathrm{Attn}(\mathrm{LN}_1x)+\mathrm{MLP}(\mathrm{LN}_2x)=W1x'+b3+W3\,\sigma(W2x'+b2)"
X9.check("layer", None, _TEX, _layer,
         note="a parallel-residual layer is Eq. 20 for symbolic N, M, F (two frozen heads, norm scales frozen, σ "
              "opaque, every bias free): W1 = I + A S₁ as in the sequential block, W3 = I_N⊗W_outᵀ, but "
              "W2 = (I_N⊗W_inᵀ) S₂ without W1 — the MLP reads the layer's input", **EXT)
X9.check("layer", ("sequential",), r"h+\mathrm{MLP}(\mathrm{LN}_2h),\ h=x+\mathrm{Attn}(\mathrm{LN}_1x):\ "
         r"W2=(I_N\otimes W_{\rm in}^{T})S_2W1",
         lambda: _layer(sequential=True),
         note="the sequential pre-norm layer (GPT-2; GPT-NeoX with use_parallel_residual false) with the same biases: "
              "W2 = (I_N⊗W_inᵀ) S₂ W1, S₂ frozen at W1x' + b — the contrast with the parallel form", **EXT)
X9.check("unrolling", None,
         r"x'_L=A_Lx'_0+c_L+\textstyle\sum_jU_{L,j}\,\sigma(V_jx'_0+e_j)\ \text{for parallel layers}",
         _unrolling,
         note="Lemma 2's unrolling carries over unchanged: each parallel layer is Eq. 20 (X9.layer) and the "
              "induction holds for any per-layer parameters (L2.main.exact[induction])", **EXT)
X9.check("layer", ("numeric",), r"\|W1x'+b3+W3\sigma(W2x'+b2)-\text{forward}(x')\|\le10^{-12}\|\text{forward}(x')\|",
         lambda: decide.check_numeric(parallel_trial, [{"N": 5, "M": 8, "F": 12}, {"N": 9, "M": 12, "F": 8}],
                                      what=f"float64, random parallel LayerNorm layers; relative error ≤ {decide.TOLERANCE}"),
         note="symuat.models.ln_decoder's parallel layer (LayerNorm, biases, partial RoPE) on random weights: a "
              "float64 "
              "confirmation of the implementation beside the proof (X9.layer)", polarity=None, role="confirmation")
