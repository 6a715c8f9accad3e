"""Fold a checkpoint of the decoder families beyond Llama (Mistral, Qwen3, OLMo2, …): spec §9's
identities on the :class:`~symuat.models.causal_lm.CausalLM` a family loaded, written back under the
family's own tensor names and ``config.json``.

A family module opts in by declaring ``fold=Fold(run=fold_checkpoint)`` (:class:`symuat.models.family.Fold`),
its ``fold_checkpoint(model, asked)`` calling :func:`fold_family` saying what its architecture refuses:

* pre-norm families (Mistral, Qwen3): WP1 (each RMSNorm scale into Q, K, V and into gate *and* up;
  the final norm into an untied head — a per-head QK-norm reads :math:`W_Q` after the fold
  exactly as before, so it stays as it is) and WP3 (the unembedding centred);
* post-norm families (OLMo2): WP1 refused naming WP2 (the norms after each sub-layer are read by
  the skip path too — WP2.sandwich); WP3 still folds.

Every family refuses WP12 (RMSNorm readers see the mean) and WP4 (not written for these
families). ``symuat model fold`` reloads the written folder with the family's loader and compares
every state (:func:`symuat.models.fold.check_folded`).
"""

from __future__ import annotations

import json

import numpy as np

from symuat.models.fold import REFUSE_WP12, FoldRefused, _PROJ, _decoder, fold_llama, llama_config_json


def refuse_wp2(family: str) -> str:
    return (f"WP2: the RMSNorms of each {family} layer come after its sub-layers, inside the residual — their output "
            "is read by the skip path as well as by the next maps, so folding their scales into the next Q/K/V "
            "changes the model (WP2.sandwich is refuted) — not folded")


def refuse_wp4(family: str) -> str:
    return f"WP4: symuat's fold does not move value biases for the {family} family (llama, bert) — not folded"


def decoder_tensors(model) -> dict[str, np.ndarray]:
    """The tensors of a decoder under HF names, ``(out, in)`` as stored: the projections and their
    biases, the pre-norms (``input_layernorm``, ``post_attention_layernorm``) or the post-norms
    (``post_attention_layernorm``, ``post_feedforward_layernorm``) and the QK-norms a layer has."""
    m = _decoder(model)
    t = {"model.embed_tokens.weight": m.embed_tokens, "model.norm.weight": m.norm}
    if not m.config.tied:
        t["lm_head.weight"] = m.lm_head
    for k, layer in enumerate(m.layers):
        p = f"model.layers.{k}."
        for name, w, b in _PROJ:
            t[p + name + ".weight"] = getattr(layer, w).T
            if getattr(layer, b) is not None:
                t[p + name + ".bias"] = getattr(layer, b)
        if layer.g1 is not None:
            t[p + "input_layernorm.weight"], t[p + "post_attention_layernorm.weight"] = layer.g1, layer.g2
        else:
            t[p + "post_attention_layernorm.weight"] = layer.post_attn
            t[p + "post_feedforward_layernorm.weight"] = layer.post_ffn
        if layer.q_norm is not None:
            t[p + "self_attn.q_norm.weight"], t[p + "self_attn.k_norm.weight"] = layer.q_norm, layer.k_norm
    return t


def fold_family(model: str, asked: dict, *, family: str, post_norms: bool = False):
    """``fold_model``'s tuple for a decoder folder of ``family``: every fold §9 allows (``asked``
    empty) or those asked, the others refused naming their entry."""
    from symuat.models.family import resolve

    fam, how, path = resolve(model)
    if asked.get("center-writers"):
        raise FoldRefused(REFUSE_WP12.replace("a Llama decoder's", f"a {family} decoder's"))
    if asked.get("value-biases"):
        raise FoldRefused(refuse_wp4(family))
    if post_norms and asked.get("norms"):
        raise FoldRefused(refuse_wp2(family))
    original = fam.load_folder(path)
    norms = not post_norms and (not asked or asked["norms"])
    folded, log = fold_llama(original, norms=norms, centre_unembedding=not asked or asked["center-unembedding"])
    if post_norms:
        log.insert(0, ("WP2", "the post-sub-layer RMSNorms kept as they are (read by the skip path too)"))
    config = llama_config_json(folded, json.loads((path / "config.json").read_text()))
    extra = {"tokenizer.json": original.tokenizer.to_str().encode()} if original.tokenizer is not None else {}
    return original, decoder_tensors(folded), log, extra, config
