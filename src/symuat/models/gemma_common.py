r"""What the Gemma families (Gemma 2, Gemma 3) share when read from a Hugging Face folder
(``config.json`` + ``*.safetensors`` + ``tokenizer.json``): the config fields, the tensors, the
layer, and the float32 islands of HF's float64 model.

A Gemma layer is the sandwich-norm decoder layer of :mod:`symuat.models.causal_lm` (an RMSNorm
before *and after* each sub-layer), with a tanh-GELU gated MLP, GQA, a score scale
:math:`1/\sqrt{\texttt{query\_pre\_attn\_scalar}}`, local sliding-window and global layers
(``layer_types``), the embedding scaled by :math:`\sqrt M`, and — optionally — attention and
final-logit soft-capping (:mod:`symuat.models.softcap`). Gemma 3 adds per-head QK-norms and one
RoPE base per layer type.

**WP10 in a folder.** HF's Gemma RMSNorm multiplies by :math:`(1+w)` and the folder stores
:math:`w` (transformers ``Gemma2RMSNorm``/``Gemma3RMSNorm``: ``output * (1.0 + self.weight.float())``);
symuat's layer multiplies by its gain, so the loader takes :math:`1+w`, formed in float64 — the
same float64 addition the float64-faithful reference makes.

**The embedding scale.** ``Gemma{2,3}TextScaledWordEmbedding`` multiplies by a buffer
``torch.tensor(hidden_size ** 0.5)`` cast to the hidden dtype (``.to(self.weight.dtype)``): in a
float64 model that is :math:`\sqrt M` in float64 when the buffer is made in float64, and the
float32 :math:`\sqrt M` widened otherwise — one of the float32 islands. symuat uses the float64
:math:`\sqrt M` (``math.sqrt``) and the reference's buffer is set to the same number
(:class:`GemmaIslands`).

Every field is modelled or refused by name (:func:`load_folder`); :data:`INERT_FIELDS` do not
change an eval-mode float64 forward.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from symuat.models import decoder_reader
from symuat.models.causal_lm import DecoderConfig
from symuat.models.formats import Fields, ModelError, Tensors, check_folder, folder_tensors, json_tokenizer, read_config
from symuat.models.softcap import SoftcapLayer, SoftcapLM

#: fields that do not change the float64 forward of an eval-mode Gemma (beyond Llama's)
INERT_FIELDS = decoder_reader.INERT_FIELDS + ("attention_dropout", "cache_implementation")

#: transformers' defaults (Gemma2Config / Gemma3TextConfig, 5.23) of the fields a config may omit
DEFAULTS = {
    "gemma2": {"final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0, "pattern": 2},
    "gemma3": {"final_logit_softcapping": None, "attn_logit_softcapping": None, "pattern": 6},
}
#: Gemma3TextConfig.default_theta
GEMMA3_THETA = {"global": 1_000_000.0, "local": 10_000.0}

NORMS = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")


def _supported(family: str) -> str:
    return f"the fields and tensors symuat's {family} family models are listed in `symuat.models.{family}`"


def _layer_types(f: Fields, L: int, pattern: int, family: str) -> list[str]:
    """``layer_types`` as given, else transformers' rule: layer ``i`` is full attention iff
    ``(i + 1) % pattern == 0`` (Gemma2Config: 2; Gemma3TextConfig: ``sliding_window_pattern``, 6)."""
    types = f.raw("layer_types", None)
    if types is None:
        if family == "gemma3":
            if f.has("_sliding_window_pattern"):
                f.fail("_sliding_window_pattern", "is given without layer_types; symuat reads layer_types (or the "
                                                  "legacy sliding_window_pattern)")
            pattern = f.int("sliding_window_pattern", pattern)
        types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]
    else:
        f.inert("_sliding_window_pattern", "sliding_window_pattern")
    if not isinstance(types, list) or len(types) != L or any(t not in ("full_attention", "sliding_attention")
                                                              for t in types):
        f.fail("layer_types", f"must list {L} entries 'full_attention' or 'sliding_attention', not {types!r}")
    return types


def _gemma3_rope(f: Fields, d: int) -> dict[str, tuple[float, np.ndarray, list[str]]]:
    """One RoPE per layer type, by transformers' rule (``Gemma3TextConfig.convert_rope_params_to_dict``):
    ``rope_parameters`` per type, else the legacy ``rope_theta`` (+ ``rope_scaling``) for the global layers
    and ``rope_local_base_freq`` for the local ones (defaults 10⁶ and 10⁴); each type ``default`` or
    ``linear`` (:func:`symuat.models.decoder_reader.rope_from_config` on the type's dict)."""
    params = f.raw("rope_parameters", None)
    legacy = f.raw("rope_scaling", None)
    top = f.number("rope_theta", None) if f.has("rope_theta") else None
    local = f.number("rope_local_base_freq", None) if f.has("rope_local_base_freq") else None
    if params is not None and not isinstance(params, dict):
        f.fail("rope_parameters", f"must be an object, not {params!r}")
    if params is not None and set(params) - {"full_attention", "sliding_attention"}:
        f.fail("rope_parameters", f"has keys {sorted(params)}; Gemma 3 takes one per layer type "
                                  "('full_attention', 'sliding_attention')")
    params = {k: dict(v) for k, v in (params or {}).items() if isinstance(v, dict)}
    full = params.setdefault("full_attention", {"rope_type": "default"})
    if legacy is not None:
        if not isinstance(legacy, dict):
            f.fail("rope_scaling", f"must be an object, not {legacy!r}")
        full.update(legacy)
    full.setdefault("rope_theta", top if top is not None else GEMMA3_THETA["global"])
    if top is not None and full["rope_theta"] != top:
        f.fail("rope_theta", f"is {top!r} but rope_parameters['full_attention'] says {full['rope_theta']!r}")
    sliding = params.setdefault("sliding_attention", {"rope_type": "default"})
    sliding.setdefault("rope_theta", local if local is not None else GEMMA3_THETA["local"])
    if local is not None and sliding["rope_theta"] != local:
        f.fail("rope_local_base_freq", f"is {local!r} but rope_parameters['sliding_attention'] says "
                                       f"{sliding['rope_theta']!r}")
    out = {}
    for kind, p in (("full_attention", full), ("sliding_attention", sliding)):
        sub = Fields(f.path, {"rope_parameters": p}, what=f"rope_parameters['{kind}'] of the")
        if (p.get("rope_type") or p.get("type") or "default") not in ("default", "linear"):
            sub.fail("rope_parameters", f"has rope_type {p.get('rope_type') or p.get('type')!r}; symuat's gemma3 "
                                        "family supports 'default' and 'linear'")
        out[kind] = decoder_reader.rope_from_config(sub, d)
    return out


def load_folder(folder, *, family: str, model_type: str) -> SoftcapLM:
    """A Gemma-2 (``family='gemma2'``) or Gemma-3 text (``'gemma3'``) folder → a
    :class:`~symuat.models.softcap.SoftcapLM` of :class:`~symuat.models.softcap.SoftcapLayer` s, every
    field and tensor modelled or refused by name."""
    folder = check_folder(folder)
    path, c = read_config(folder, kind=f"{family} checkpoint")
    f = Fields(path, c)
    f.choice("model_type", (model_type,))
    defaults = DEFAULTS[family]
    if f.has("hidden_act"):  # Gemma's HF modules read hidden_activation only (the legacy hidden_act is unread)
        f.inert("hidden_act")
    saved = c.pop("hidden_act", None)
    try:
        sizes = decoder_reader.decoder_fields(f, family)
    finally:
        if saved is not None:
            c["hidden_act"] = saved
    act = f.raw("hidden_activation", "gelu_pytorch_tanh")
    if act not in decoder_reader.HIDDEN_ACT:
        f.fail("hidden_activation",
               f"is {act!r}; symuat's {family} family models {', '.join(decoder_reader.HIDDEN_ACT)}")
    sizes["activation"] = decoder_reader.HIDDEN_ACT[act]
    f.require("attention_bias", f.raw("attention_bias", False) is False,
              f"is {c.get('attention_bias')!r}; symuat's {family} family reads bias-free projections (false)")
    f.require("use_bidirectional_attention", not f.raw("use_bidirectional_attention", False),
              f"is {c.get('use_bidirectional_attention')!r}: attention that is not causal is not modelled")
    qpas = f.number("query_pre_attn_scalar", 256)
    L, d = sizes["layers"], sizes["head_dim"]
    types = _layer_types(f, L, defaults["pattern"], family)
    window = f.int("sliding_window", 4096) if c.get("sliding_window", 0) is not None else None
    if window is None:
        f.inert("sliding_window")
        if "sliding_attention" in types:
            f.fail("sliding_window", "is null although layer_types has sliding-attention layers")
    caps = {}
    for key in ("final_logit_softcapping", "attn_logit_softcapping"):
        caps[key] = f.number(key, defaults[key]) if c.get(key, defaults[key]) is not None else None
        f.inert(key)
    if family == "gemma3" and caps["attn_logit_softcapping"] is not None:
        # transformers 5.23 Gemma3Attention stores it but never passes softcap= to the attention (Gemma 3 replaced
        # soft-capping by QK-norm), while Gemma 2 applies it: which one the checkpoint means is not known
        f.fail("attn_logit_softcapping", f"is {caps['attn_logit_softcapping']!r}: transformers' Gemma 3 attention "
                                         "ignores it (Gemma 2's applies it), so symuat refuses rather than guess")
    if family == "gemma3":
        ropes = _gemma3_rope(f, d)
        theta = ropes["full_attention"][0]
        inv = {k: v[1] for k, v in ropes.items()}
        feats = [f"{k} " + ", ".join(v[2]) for k, v in ropes.items() if v[2]]
        f.inert("rope_parameters", "rope_scaling", "rope_theta", "rope_local_base_freq")
    else:
        theta, one, feats = decoder_reader.rope_from_config(f, d)
        inv = {"full_attention": one, "sliding_attention": one}
    tied = f.flag("tie_word_embeddings", True)
    vocab = decoder_reader.vocab_field(f)
    f.inert(*INERT_FIELDS)
    f.refuse_unknown(family, _supported(family))
    tensors = folder_tensors(folder)
    if any(k.startswith(("model.language_model.", "model.vision_tower.", "vision_tower.")) for k in tensors):
        raise ModelError(f"{folder}: tensors of a multimodal Gemma checkpoint (model.language_model.*, vision tower) "
                         f"in a {model_type} folder; symuat reads the text decoder's own layout only")
    kinds = ["global" if t == "full_attention" else "local" for t in types]
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        family=family, features=feats + [f"sliding window {window}"] * ("local" in kinds)
                        + [f"{k} {v:g}" for k, v in caps.items() if v is not None]
                        + ["layers " + "".join("G" if k == "global" else "L" for k in kinds)], **sizes)
    t = Tensors(tensors, folder)
    M, F, h, g, V = cfg.M, cfg.F, cfg.heads, cfg.kv_heads, cfg.vocab
    one = lambda key, n: 1.0 + t.take(key, (n,))
    layers = []
    for k, typ in enumerate(types):
        p = f"model.layers.{k}."
        W = lambda name, shape: t.take(p + name + ".weight", shape).T
        qk = {}
        if family == "gemma3":
            qk = {"q_norm": one(p + "self_attn.q_norm.weight", d), "k_norm": one(p + "self_attn.k_norm.weight", d)}
        layers.append(SoftcapLayer(
            WQ=W("self_attn.q_proj", (h * d, M)), WK=W("self_attn.k_proj", (g * d, M)),
            WV=W("self_attn.v_proj", (g * d, M)), WO=W("self_attn.o_proj", (M, h * d)),
            Wg=W("mlp.gate_proj", (F, M)), Wu=W("mlp.up_proj", (F, M)), Wd=W("mlp.down_proj", (M, F)),
            g1=one(p + "input_layernorm.weight", M), g2=one(p + "pre_feedforward_layernorm.weight", M),
            post_attn=one(p + "post_attention_layernorm.weight", M),
            post_ffn=one(p + "post_feedforward_layernorm.weight", M), config=cfg,
            window=window if typ == "sliding_attention" else None, inv_freq=inv[typ], scale=qpas ** -0.5,
            attn_softcap=caps["attn_logit_softcapping"], **qk))
    embed = t.take("model.embed_tokens.weight", (V, M))
    head = None
    if tied:
        if "lm_head.weight" in t and not np.array_equal(t.take("lm_head.weight", (V, M)), embed):
            raise ModelError(f"{folder}: tensor 'lm_head.weight' differs from the embeddings although the checkpoint "
                             "ties them (tie_word_embeddings)")
    else:
        head = t.take("lm_head.weight", (V, M))
    model = SoftcapLM(cfg, embed, layers, one("model.norm.weight", M), head, source=folder,
                      tokenizer=json_tokenizer(folder, rows=V), embed_scale=math.sqrt(M),
                      final_softcap=caps["final_logit_softcapping"])
    t.refuse_unused(family, _supported(family))
    model.layer_types, model.window, model.norm_storage = kinds, window, {}
    model.query_pre_attn_scalar, model.softcaps = qpas, caps
    model.fields_read = sorted(f.used)
    return model


class GemmaIslands:
    """HF Gemma 2's float32 islands made float64 for a ``with`` block: the generic ones
    (:class:`symuat.models.reference.Float64Islands` with the norm multiplier ``1 + w``: RMSNorm,
    RoPE angles, eager softmax) and the embedding scale buffer set to the float64 :math:`\\sqrt M`."""

    def __init__(self, model):
        from symuat.models.reference import Float64Islands

        self.model, self.inner = model, Float64Islands(model, norm_offset=1.0)

    def __enter__(self):
        import torch

        emb = self.model.get_input_embeddings()
        self.saved = emb.embed_scale.clone()
        emb.embed_scale = torch.tensor(math.sqrt(emb.embedding_dim), dtype=torch.float64)
        self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)
        self.model.get_input_embeddings().embed_scale = self.saved
        return False


def is_folder(source) -> bool:
    return Path(str(source)).is_dir()
