r"""The OLMo 2 family: a decoder whose norms come *after* each sub-layer, inside the residual
(:math:`x+\mathrm{RMS}(\mathrm{Attn}(x))`, then :math:`y+\mathrm{RMS}(\mathrm{MLP}(y))`, no norm
before either: :mod:`symuat.models.postnorm`), with a QK-norm over the full projection width
(``q_norm`` of width :math:`hd`, ``k_norm`` of width :math:`gd`, before the split into heads and
RoPE: :func:`symuat.models.qknorm.full_width`) — transformers' ``modeling_olmo2.py``.

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps`` — every
  norm's epsilon —, ``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``,
  ``hidden_act``), the RoPE fields and ``attention_bias`` (q, k, v, o); inert:
  :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* Tensors: embeddings, the final norm, ``lm_head`` (untied), per layer ``q/k/v/o_proj``,
  ``gate/up/down_proj``, ``self_attn.q_norm``, ``self_attn.k_norm``, ``post_attention_layernorm``,
  ``post_feedforward_layernorm`` and the biases ``attention_bias`` announces.

>>> m = random_olmo2(np.random.default_rng(1))
>>> type(m).__name__, m.layers[0].q_norm.shape, m.layers[0].k_norm.shape
('PostNormLM', (8,), (4,))
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from symuat.models import decoder_reader
from symuat.models.families import llama
from symuat.models import qknorm
from symuat.models.causal_lm import DecoderConfig
from symuat.models import reference as _reference
from symuat.models.family import Family, Fold
from symuat.models.formats import (
    Fields, ModelError, Tensors, check_folder, folder_tensors, json_tokenizer, read_config,
)
from symuat.models.postnorm import PostNormLayer, PostNormLM

FEATURES = ("post-sub-layer RMSNorms inside the residual (no pre-norms)",
            "QK-norm over the full q/k projection width, before RoPE",
            "RoPE incl. linear/llama3 scaling, GQA, gated MLP, head_dim", "attention_bias (q, k, v, o)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = tuple(k for k in llama.CONFIG_FIELDS if k != "mlp_bias")
INERT_FIELDS = decoder_reader.INERT_FIELDS

_SUPPORTED = "the fields and tensors symuat's olmo2 family models are listed in `symuat.models.families.olmo2`"
_PROJ = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
         "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}


def build(cfg: DecoderConfig, t: Tensors, *, bias: bool, tokenizer) -> PostNormLM:
    """The :class:`PostNormLM` of an OLMo 2 checkpoint from its tensors (HF names, ``(out, in)``)."""
    M, d, F, h, g = cfg.M, cfg.head_dim, cfg.F, cfg.heads, cfg.kv_heads
    embed = t.take("model.embed_tokens.weight", (cfg.vocab, M))
    norm = t.take("model.norm.weight", (M,))
    if cfg.tied:
        if "lm_head.weight" in t and not np.array_equal(t.take("lm_head.weight", (cfg.vocab, M)), embed):
            raise ModelError(f"{t.source}: tensor 'lm_head.weight' differs from the embeddings although the "
                             "checkpoint ties them (tie_word_embeddings)")
        head = None
    else:
        head = t.take("lm_head.weight", (cfg.vocab, M))
    shapes = {"q": (h * d, M), "k": (g * d, M), "v": (g * d, M), "o": (M, h * d), "gate": (F, M), "up": (F, M),
              "down": (M, F)}
    layers = []
    for k in range(cfg.layers):
        p = f"model.layers.{k}."
        W = {n: t.take(p + _PROJ[n] + ".weight", shapes[n]).T for n in _PROJ}
        b = {n: t.take(p + _PROJ[n] + ".bias", (shapes[n][0],)) if bias and n in "qkvo" else None for n in _PROJ}
        layers.append(PostNormLayer(
            WQ=W["q"], WK=W["k"], WV=W["v"], WO=W["o"], Wg=W["gate"], Wu=W["up"], Wd=W["down"], g1=None, g2=None,
            config=cfg, bq=b["q"], bk=b["k"], bv=b["v"], bo=b["o"],
            post_attn=t.take(p + "post_attention_layernorm.weight", (M,)),
            post_ffn=t.take(p + "post_feedforward_layernorm.weight", (M,)), qk_width="full"))
    qknorm.take_norms(layers, t, width="full")
    return PostNormLM(cfg, embed, layers, norm, head, source=t.source, tokenizer=tokenizer)


def load_folder(folder) -> PostNormLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="OLMo2 checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("olmo2",))
    sizes = decoder_reader.decoder_fields(f, "olmo2")
    theta, inv, feats = decoder_reader.rope_from_config(f, sizes["head_dim"])
    tied = f.flag("tie_word_embeddings", False)
    bias = f.flag("attention_bias", False)
    vocab = decoder_reader.vocab_field(f)
    f.inert(*decoder_reader.INERT_FIELDS)
    f.refuse_unknown("olmo2", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        inv_freq=inv, family="olmo2",
                        features=feats + ["post-norms", "full-width QK-norm"] + ["attention bias"] * bias, **sizes)
    t = Tensors(tensors, folder)
    model = build(cfg, t, bias=bias, tokenizer=json_tokenizer(folder, rows=cfg.vocab))
    t.refuse_unused("olmo2", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


def random_olmo2(rng, *, M: int = 8, heads: int = 4, kv_heads: int = 2, F: int = 12, layers: int = 2,
                 vocab: int = 24, bias: bool = False) -> PostNormLM:
    """A random OLMo 2 decoder (GQA, full-width QK-norm, post-norms) for doctests and tests."""
    d = M // heads
    cfg = DecoderConfig(vocab=vocab, M=M, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=d, F=F,
                        rope_theta=10000.0, eps=1e-6, context=64, rope="half", tied=True, family="olmo2")
    g = lambda *s: rng.standard_normal(s) / np.sqrt(s[-1])
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, M)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(M)}
    shapes = {"q": (heads * d, M), "k": (kv_heads * d, M), "v": (kv_heads * d, M), "o": (M, heads * d),
              "gate": (F, M), "up": (F, M), "down": (M, F)}
    for k in range(layers):
        p = f"model.layers.{k}."
        for n, shape in shapes.items():
            t[p + _PROJ[n] + ".weight"] = g(*shape)
            if bias and n in "qkvo":
                t[p + _PROJ[n] + ".bias"] = 0.1 * rng.standard_normal(shape[0])
        for name, width in (("post_attention_layernorm", M), ("post_feedforward_layernorm", M),
                            ("self_attn.q_norm", heads * d), ("self_attn.k_norm", kv_heads * d)):
            t[p + name + ".weight"] = 1 + 0.1 * rng.standard_normal(width)
    return build(cfg, Tensors(t, Path("<random olmo2>")), bias=bias, tokenizer=None)


#: the default islands made float64: every ``*RMSNorm`` (QK- and post-norms), the RoPE angles, eager softmax
REFERENCE_NOTE = _reference.NOTE.replace("RMSNorm (casts to float32)", "every RMSNorm, the full-width QK-norms "
                                         "q_norm/k_norm and the post-norms among them (casts to float32)")

FROZEN = ("the attention patterns H_i of every layer and head (the full-width QK-norm, RoPE rotation, causal mask "
          "and softmax evaluated at the input)", "the RMSNorm scales of both post-norms of every layer and of the "
          "final norm", *llama.FROZEN[2:])
EXACT = llama.EXACT


def fold_checkpoint(model: str, asked: dict):
    """``symuat model fold``: WP3; the post-norms refused naming WP2 (:mod:`symuat.models.fold_decoders`)."""
    from symuat.models.fold_decoders import fold_family

    return fold_family(model, asked, family="olmo2", post_norms=True)


FAMILY = Family(name="olmo2", kind="decoder", model_types=("olmo2",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, reference_note=REFERENCE_NOTE, fold=Fold(run=fold_checkpoint),
                module=__name__)
