r"""Fold a pre-LayerNorm decoder (GPT-2, GPT-NeoX): the weight-processing identities of spec §9 that
hold when every reader of the residual stream is a LayerNorm, applied to an
:class:`~symuat.models.ln_decoder.LNCausalLM` (weights ``x @ W``).

* **WP1** (LayerNorm form) — :math:`(\mathrm{LN}(x)\odot\gamma+\beta)W+b=\mathrm{LN}(x)(\operatorname{diag}(\gamma)W)+(\beta W+b)`
  for every map that reads a layer's norms: Q, K, V read :math:`\mathrm{LN}_1`, the MLP's input map
  reads :math:`\mathrm{LN}_2` (in a parallel layer both read the layer's input; the identity is the
  same). The *final* LayerNorm is kept: its :math:`\beta_f` would fold into an unembedding bias,
  which the HF heads of these families do not have (TransformerLens adds ``b_U``).
* **WP4** — each head's value bias into the output bias, :math:`b_O'=b_O+b_VW_O` (every row of
  :math:`H_i` sums to one, H7).
* **WP12** — every writer of the residual stream centred, :math:`W(I-\tfrac1M\mathbf 1\mathbf 1^T)`
  and its bias alike: the token and position embeddings, :math:`W_O, b_O`, :math:`W_{\rm out}, b_{\rm out}`.
  Every reader is a LayerNorm, which removes the mean, so every reader's output is unchanged; the
  residual stream itself loses each row's mean, so the folded model's states are compared after
  removing it (a tied head is untied first: it reads the embeddings' original rows).
* **WP3** — the unembedding centred over the vocabulary: each row of logits moves by its mean.

>>> import numpy as np
>>> from symuat.models.ln_decoder import random_ln_layer
>>> layer = random_ln_layer(np.random.default_rng(0))
>>> X = np.random.default_rng(1).standard_normal((4, 8))
>>> folded = fold_layer(layer, norms=True, value_biases=True, centre=True)
>>> bool(np.allclose(centred_rows(folded.forward(X - X.mean(1, keepdims=True))),
...                  centred_rows(layer.forward(X)), rtol=0, atol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np


def centred_rows(X: np.ndarray) -> np.ndarray:
    """Each row minus its mean (the part of a residual state a LayerNorm reads)."""
    return X - X.mean(axis=-1, keepdims=True)


def _centre_cols(W):
    return None if W is None else W - W.mean(axis=-1, keepdims=True)


def fold_layer(layer, *, norms: bool, value_biases: bool, centre: bool):
    """One :class:`~symuat.models.ln_decoder.LNDecoderLayer` folded (a new object; the old one unchanged)."""
    M = layer.WO.shape[1]
    new = replace(layer)
    if norms:
        (g1, b1), (g2, b2) = layer.ln1, layer.ln2
        for w, b in (("WQ", "bq"), ("WK", "bk"), ("WV", "bv")):
            W, bias = getattr(layer, w), getattr(layer, b)
            setattr(new, b, b1 @ W + (bias if bias is not None else 0.0))
            setattr(new, w, g1[:, None] * W)
        new.bin = b2 @ layer.Win + (layer.bin if layer.bin is not None else 0.0)
        new.Win = g2[:, None] * layer.Win
        new.ln1 = new.ln2 = (np.ones(M), np.zeros(M))
    if value_biases and new.bv is not None:
        new.bo = new.bv @ new.WO + (new.bo if new.bo is not None else 0.0)
        new.bv = np.zeros_like(new.bv)
    if centre:
        new.WO, new.Wout = _centre_cols(new.WO), _centre_cols(new.Wout)
        new.bo, new.bout = _centre_cols(new.bo), _centre_cols(new.bout)
    return new


def fold_ln_decoder(model, *, norms: bool = True, value_biases: bool = True, centre_writers: bool = True,
                    centre_unembedding: bool = True):
    """Fold an :class:`~symuat.models.ln_decoder.LNCausalLM`; returns ``(LNCausalLM, log)``."""
    from symuat.models.ln_decoder import LNCausalLM

    c = replace(model.config)
    layers = [replace(fold_layer(layer, norms=norms, value_biases=value_biases, centre=centre_writers), config=c)
              for layer in model.layers]
    embed, positions, head = model.embed_tokens, model.positions, model.lm_head
    log: list[tuple[str, str]] = []
    if norms:
        log.append(("WP1", f"{2 * c.layers} LayerNorms (γ, β) folded into Q, K, V and the MLP's input map (weights "
                           "and biases); the final LayerNorm kept (its β needs an unembedding bias the head lacks)"))
    if value_biases and (norms or any(layer.bv is not None for layer in model.layers)):  # WP1 gives b_V = β₁W_V
        log.append(("WP4", "each head's value bias folded into the attention's output bias (rows of H sum to 1)"))
    if centre_writers:
        head = model.lm_head.copy()  # a tied head reads the original rows
        embed = _centre_cols(model.embed_tokens)
        positions = _centre_cols(model.positions)
        c.tied = False
        log.append(("WP12", "the embeddings" + (" and learned positions" if positions is not None else "")
                    + f" and the {2 * c.layers} residual writers (attention output, MLP output; weights and biases) "
                      "centred: every reader is a LayerNorm"))
    if centre_unembedding:
        head = head - head.mean(axis=0, keepdims=True)
        c.tied = False
        log.append(("WP3", "unembedding centred over the vocabulary: each row of logits moves by its mean; "
                           "the probabilities do not change (no soft-capping)"))
    out = LNCausalLM(c, embed, layers, (model.norm, model.norm_bias), None if c.tied else head, positions=positions,
                     source=model.source, tokenizer=model.tokenizer)
    return out, log
