r"""The Phi-3 family: the Llama decoder with *fused* projections — ``qkv_proj`` (the rows of
:math:`W_Q`, :math:`W_K`, :math:`W_V` stacked) and ``gate_up_proj`` (gate rows, then up rows) —
split exactly into the Llama pieces (WP6: a fused projection is the concatenation of its parts,
so the split is a slicing of rows, no arithmetic). Everything else is :mod:`symuat.models.families.llama`'s.

>>> from symuat.models.causal_lm import DecoderConfig
>>> cfg = DecoderConfig(vocab=4, M=2, layers=1, heads=2, kv_heads=1, head_dim=1, F=1, rope_theta=1e4, eps=1e-5,
...                     context=8)
>>> t = {"model.layers.0.self_attn.qkv_proj.weight": np.arange(8.0).reshape(4, 2),
...      "model.layers.0.mlp.gate_up_proj.weight": np.arange(4.0).reshape(2, 2)}
>>> out, names, _ = split_fused(t, cfg, "<doc>")
>>> out["model.layers.0.self_attn.k_proj.weight"].tolist(), names["model.layers.0.mlp.up_proj.weight"]
([[4.0, 5.0]], 'model.layers.0.mlp.gate_up_proj.weight (rows 1:)')

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps``,
  ``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``, ``hidden_act``), the RoPE
  fields (``rope_theta``, ``rope_parameters``/``rope_scaling`` of type ``default``, with
  ``partial_rotary_factor``: RoPE on the first ``int(head_dim · factor)`` coordinates of each head,
  :mod:`symuat.models.partial_rotary`), ``sliding_window`` (every layer attends through it, HF's
  ``create_sliding_window_causal_mask``); ``original_max_position_embeddings`` only matters to
  ``longrope``, which is refused by name (as are ``su``/``yarn``, which transformers renames
  ``longrope``); ``attention_bias`` false (true is refused: transformers' Phi3 builds no bias); the
  dropouts ``resid_pdrop``, ``embd_pdrop`` and ``auto_map`` are inert; inert:
  :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* Tensors: ``model.embed_tokens``, ``model.norm``, ``lm_head`` (untied), per layer
  ``self_attn.qkv_proj`` ``(h·d + 2g·d, M)``, ``self_attn.o_proj``, ``mlp.gate_up_proj`` ``(2F, M)``,
  ``mlp.down_proj``, ``input_layernorm``, ``post_attention_layernorm``. No biases (Phi-3 has none).

The reference: ``Phi3ForCausalLM`` on the folder, its float32 islands (RMSNorm, the RoPE angles of
the rotary width, the eager softmax) made float64 by :class:`symuat.models.reference.Float64Islands`.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np

from symuat.models import decoder_reader
from symuat.models.families import llama
from symuat.models.causal_lm import CausalLM, DecoderConfig
from symuat.models.family import Family, Fold, resolve
from symuat.models.formats import Fields, Tensors, check_folder, folder_tensors, json_tokenizer, read_config
from symuat.models.partial_rotary import PartialRotaryLayer, rotary_width

FEATURES = ("RMSNorm, RoPE (default; partial_rotary_factor), GQA, gated MLP, head_dim",
            "fused qkv_proj and gate_up_proj, split exactly (WP6)", "sliding window (sliding_window)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = tuple(k for k in llama.CONFIG_FIELDS if k != "mlp_bias") + (
    "sliding_window", "partial_rotary_factor", "original_max_position_embeddings")
#: inert in an eval-mode float64 forward (dropouts; ``auto_map``, the remote-code classes transformers' own
#: Phi3 replaces)
INERT_FIELDS = decoder_reader.INERT_FIELDS + ("resid_pdrop", "embd_pdrop", "auto_map")
#: the tensors (HF names; {k} a layer); any other is refused
TENSORS = ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
           "model.layers.{k}.self_attn.qkv_proj.weight", "model.layers.{k}.self_attn.o_proj.weight",
           "model.layers.{k}.mlp.gate_up_proj.weight", "model.layers.{k}.mlp.down_proj.weight",
           "model.layers.{k}.input_layernorm.weight", "model.layers.{k}.post_attention_layernorm.weight")

_SUPPORTED = "the fields and tensors symuat's phi3 family models are listed in `symuat.models.families.phi3`"
_NO_BIAS = {n: False for n in ("q", "k", "v", "o", "gate", "up", "down")}


def split_fused(tensors: dict, cfg: DecoderConfig, source) -> tuple[dict, dict, set]:
    """The Llama tensors of a Phi-3 checkpoint: ``qkv_proj`` rows ``[:h·d]``, ``[h·d:(h+g)·d]``,
    ``[(h+g)·d:]`` → ``q/k/v_proj``; ``gate_up_proj`` rows ``[:F]``, ``[F:]`` → ``gate/up_proj`` (HF's
    slicing and ``chunk(2)``). Returns the renamed tensors, their file names (messages) and the fused
    names consumed."""
    t = Tensors(tensors, source)
    h, g, d, M, F = cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.M, cfg.F
    out, names = {}, {}
    for k in range(cfg.layers):
        p = f"model.layers.{k}."
        qkv = t.take(p + "self_attn.qkv_proj.weight", ((h + 2 * g) * d, M))
        gu = t.take(p + "mlp.gate_up_proj.weight", (2 * F, M))
        for name, rows, src in (("self_attn.q_proj", slice(0, h * d), "self_attn.qkv_proj"),
                                ("self_attn.k_proj", slice(h * d, (h + g) * d), "self_attn.qkv_proj"),
                                ("self_attn.v_proj", slice((h + g) * d, None), "self_attn.qkv_proj"),
                                ("mlp.gate_proj", slice(0, F), "mlp.gate_up_proj"),
                                ("mlp.up_proj", slice(F, None), "mlp.gate_up_proj")):
            out[p + name + ".weight"] = (qkv if src.endswith("qkv_proj") else gu)[rows]
            names[p + name + ".weight"] = f"{p}{src}.weight (rows {rows.start}:{rows.stop or ''})"
    for key, value in tensors.items():
        if key not in t.used:
            out[key] = value
    return out, names, t.used


def _rope(f: Fields, c: dict, d: int) -> tuple[float, np.ndarray, list[str], int]:
    """θ, the frequencies of the rotary width, the features and the rotary width: the Llama RoPE
    reader on the config with ``partial_rotary_factor`` taken out (read here)."""
    key = "rope_parameters" if c.get("rope_parameters") is not None else "rope_scaling"
    rope = c.get(key)
    factor = 1.0
    if isinstance(rope, dict):
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind in ("longrope", "su", "yarn"):
            f.fail(key, f"has rope_type {kind!r}; symuat's phi3 family models the default RoPE (longrope's "
                        "short/long factors switch on the text's length: not modelled)")
        if "partial_rotary_factor" in rope:
            factor = rope["partial_rotary_factor"]
            rope = {k: v for k, v in rope.items() if k != "partial_rotary_factor"}
    if f.has("partial_rotary_factor"):
        top = f.number("partial_rotary_factor")
        inner = c.get(key) if isinstance(c.get(key), dict) else {}
        if "partial_rotary_factor" in inner and inner["partial_rotary_factor"] != top:
            f.fail("partial_rotary_factor", f"is {top!r} but {key} says {factor!r}")
        factor = top
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 0 < factor <= 1:
        f.fail(key, f"has partial_rotary_factor {factor!r}; it must be a number in (0, 1]")
    r = rotary_width(d, factor)
    if r % 2 or r == 0:
        f.fail(key, f"has partial_rotary_factor {factor!r}: rotary width {r} of head width {d} is not a positive "
                    "even number (RoPE rotates pairs)")
    data = dict(c)
    if isinstance(c.get(key), dict):
        data[key] = rope
    sub = Fields(f.path, data)
    theta, inv, feats = decoder_reader.rope_from_config(sub, r)
    f.used |= sub.used
    if r != d:
        feats = feats + [f"partial rotary {r}/{d}"]
    return theta, inv, feats, r


def load_folder(folder) -> CausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="Phi-3 checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("phi3",))
    sizes = decoder_reader.decoder_fields(f, "phi3")
    theta, inv, feats, rot = _rope(f, c, sizes["head_dim"])
    tied = f.flag("tie_word_embeddings", False)
    if f.flag("attention_bias", False):  # Phi-3's published configs say false; transformers builds no bias either way
        f.fail("attention_bias", "is true, but transformers' Phi3 builds no attention bias (symuat refuses the "
                                 "contradiction rather than choose)")
    window = f.int("sliding_window") if c.get("sliding_window") is not None else None
    f.inert("sliding_window", "original_max_position_embeddings")  # the latter: longrope only (refused above)
    vocab = decoder_reader.vocab_field(f)
    f.inert(*INERT_FIELDS)
    f.refuse_unknown("phi3", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        inv_freq=inv, family="phi3",
                        features=feats + ["fused qkv_proj, gate_up_proj (split: WP6)"]
                        + ([f"sliding window {window}"] if window else []), **sizes)
    split, names, fused = split_fused(tensors, cfg, folder)
    t = Tensors(split, folder, names=names)
    model = decoder_reader.build(cfg, t, bias=_NO_BIAS, tokenizer=json_tokenizer(folder, rows=cfg.vocab),
                        window=[window] * cfg.layers if window else None)
    t.refuse_unused("phi3", _SUPPORTED)
    if rot != sizes["head_dim"]:
        model.layers = [PartialRotaryLayer(**{x.name: getattr(layer, x.name) for x in fields(layer)}, rotary_dim=rot)
                        for layer in model.layers]
    model.fields_read = sorted(f.used)
    return model


FROZEN, EXACT = llama.FROZEN, llama.EXACT


# --------------------------------------------------------------------------------------------
# `symuat model fold`: the Llama folds (WP1 RMSNorm scales, WP3), written back fused (WP6)
# --------------------------------------------------------------------------------------------

REFUSE_WP4 = "WP4: a Phi-3 decoder has no value biases — nothing to fold"


def hf_tensors(model) -> dict[str, np.ndarray]:
    """The tensors of a Phi-3 decoder under its own names: the Llama tensors with q/k/v and gate/up
    fused back by rows (the inverse of :func:`split_fused`)."""
    from symuat.models.fold import hf_tensors as llama_tensors

    t = llama_tensors(model)
    for k in range(model.config.layers):
        p = f"model.layers.{k}."
        t[p + "self_attn.qkv_proj.weight"] = np.concatenate(
            [t.pop(p + f"self_attn.{n}_proj.weight") for n in ("q", "k", "v")])
        t[p + "mlp.gate_up_proj.weight"] = np.concatenate([t.pop(p + f"mlp.{n}_proj.weight") for n in ("gate", "up")])
    return t


def fold_checkpoint(model: str, asked: dict):
    """``(original, folded tensors, log, extra files, config.json)`` for ``symuat model fold``: the
    RMSNorm scales into Q, K, V and gate, up and the final norm into an untied head (WP1), the
    unembedding centred (WP3), written fused (WP6); centring the writers is refused (WP12: RMSNorm readers)."""
    import json

    from symuat.models.fold import REFUSE_WP12, FoldRefused, fold_llama, llama_config_json

    if asked.get("center-writers"):
        raise FoldRefused(REFUSE_WP12)
    if asked.get("value-biases"):
        raise FoldRefused(REFUSE_WP4)
    path = resolve(model).path
    original = load_folder(path)
    opts = dict(norms=True, centre_unembedding=True) if not asked else \
        dict(norms=asked["norms"], centre_unembedding=asked["center-unembedding"])
    folded, log = fold_llama(original, **opts)
    log.append(("WP6", "q/k/v and gate/up written fused again (qkv_proj, gate_up_proj: rows concatenated)"))
    config = llama_config_json(folded, json.loads((Path(path) / "config.json").read_text()))
    extra = {"tokenizer.json": original.tokenizer.to_str().encode()} if original.tokenizer is not None else {}
    return original, hf_tensors(folded), log, extra, config


FAMILY = Family(name="phi3", kind="decoder", model_types=("phi3",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, fold=Fold(run=fold_checkpoint), module=__name__)
