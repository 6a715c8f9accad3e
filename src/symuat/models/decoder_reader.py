"""Reading a Hugging Face pre-norm decoder checkpoint, shared by the decoder families (Llama, Qwen2,
Qwen3, Mistral, Phi-3, OLMo2, Gemma): the size fields every such ``config.json`` has, the activation,
the RoPE fields (HF's ``default``, ``linear`` and ``llama3`` frequencies in float64), the vocabulary,
the fields that do not change an eval-mode forward pass, and :func:`build`, the
:class:`~symuat.models.causal_lm.CausalLM` from the layers' tensors. A family module reads its own
fields beside these and refuses the rest.

>>> inv = scaled_inv_freq(4, 10000.0, "linear", {"factor": 2.0})
>>> inv.tolist()
[0.5, 0.005]
"""

from __future__ import annotations

import math

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderConfig, DecoderLayer
from symuat.models.formats import Fields, ModelError, Tensors
from symuat.models.lifts import rope_inv_freq

#: config.json fields that do not change the float64 forward pass of an eval-mode model
INERT_FIELDS = ("architectures", "transformers_version", "_name_or_path", "torch_dtype", "dtype", "bos_token_id",
                "eos_token_id", "pad_token_id", "initializer_range", "use_cache", "attention_dropout",
                "output_hidden_states", "output_attentions", "return_dict", "chunk_size_feed_forward",
                "is_encoder_decoder", "id2label", "label2id", "problem_type", "pretraining_tp", "tokenizer_class",
                "model_type", "_attn_implementation_autoset", "tie_encoder_decoder", "prefix", "task_specific_params",
                "finetuning_task", "cross_attention_hidden_size", "sep_token_id", "decoder_start_token_id")

#: hidden_act values → symuat's activations (HF's ACT2FN meanings)
HIDDEN_ACT = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu_tanh",
              "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}


# --------------------------------------------------------------------------------------------
# RoPE frequencies (HF's formulas in float64)
# --------------------------------------------------------------------------------------------


def scaled_inv_freq(d: int, theta: float, kind: str, params: dict) -> np.ndarray:
    """The RoPE frequencies of HF's ``default``, ``linear`` and ``llama3`` types, in float64."""
    inv = rope_inv_freq(d, theta)
    if kind == "default":
        return inv
    if kind == "linear":
        return inv / params["factor"]
    if kind == "llama3":
        factor, lo, hi = params["factor"], params["low_freq_factor"], params["high_freq_factor"]
        old = params["original_max_position_embeddings"]
        lo_wave, hi_wave = old / lo, old / hi
        wave = 2 * math.pi / inv
        out = np.where(wave > lo_wave, inv / factor, inv)
        smooth = (old / wave - lo) / (hi - lo)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wave < hi_wave) & ~(wave > lo_wave)
        return np.where(medium, smoothed, out)
    raise ValueError(kind)


def rope_from_config(f: Fields, d: int) -> tuple[float, np.ndarray, list[str]]:
    """``rope_theta`` and the scaled frequencies from ``rope_parameters`` (transformers 5) or
    ``rope_theta`` + ``rope_scaling`` (transformers 4); every key of the dict modelled or refused."""
    params = f.raw("rope_parameters", None)
    legacy = f.raw("rope_scaling", None)
    if params is not None and legacy is not None and params != legacy:
        f.fail("rope_scaling", "and rope_parameters are both given; symuat reads one")
    rope = params if params is not None else legacy
    theta_top = f.number("rope_theta", None) if f.has("rope_theta") else None
    if rope is None:
        rope = {}
    key = "rope_parameters" if params is not None else "rope_scaling"
    if not isinstance(rope, dict):
        f.fail(key, f"must be an object, not {rope!r}")
    sub = Fields(f.path, rope, what=f"{key} key")
    kind = sub.raw("rope_type", None) or sub.raw("type", None) or "default"
    sub.inert("rope_type", "type")
    if kind not in ("default", "linear", "llama3"):
        f.fail(key, f"has rope_type {kind!r}; symuat supports 'default', 'linear' and 'llama3'")
    theta = sub.number("rope_theta", theta_top if theta_top is not None else 10000.0)
    if theta_top is not None and theta != theta_top:
        f.fail("rope_theta", f"is {theta_top!r} but {key} says {theta!r}")
    p = {}
    if kind in ("linear", "llama3"):
        p["factor"] = sub.number("factor")
    if kind == "llama3":
        p["low_freq_factor"] = sub.number("low_freq_factor")
        p["high_freq_factor"] = sub.number("high_freq_factor")
        p["original_max_position_embeddings"] = sub.int("original_max_position_embeddings")
        if p["high_freq_factor"] == p["low_freq_factor"]:
            sub.fail("high_freq_factor", "equals low_freq_factor (the llama3 interpolation divides by their difference)")
    if sub.has("partial_rotary_factor"):
        sub.require("partial_rotary_factor", sub.raw("partial_rotary_factor") == 1.0,
                    f"is {rope.get('partial_rotary_factor')!r}; symuat rotates the whole head (1.0)")
    sub.refuse_unknown("llama", f"rope_type {kind!r} takes " + (", ".join(["rope_theta", *p]) or "rope_theta"))
    feats = [] if kind == "default" else [f"rope {kind} " + ", ".join(f"{k}={v:g}" for k, v in p.items())]
    return theta, scaled_inv_freq(d, theta, kind, p), feats


# --------------------------------------------------------------------------------------------
# building the layers
# --------------------------------------------------------------------------------------------


def build(cfg: DecoderConfig, t: Tensors, *, bias: dict[str, bool], tokenizer, window: list | None = None,
          quant_types: dict | None = None, finite: bool = False) -> CausalLM:
    """The :class:`CausalLM` of a pre-norm decoder from its tensors (HF names, ``(out, in)`` as stored).

    ``bias`` says which projections carry a bias (``q k v o gate up down``); every tensor is taken
    with its expected shape and :meth:`Tensors.refuse_unused` refuses the rest."""
    M, d, F, h, g = cfg.M, cfg.head_dim, cfg.F, cfg.heads, cfg.kv_heads
    take = lambda k, s: t.take(k, s, finite=finite)
    embed = take("model.embed_tokens.weight", (cfg.vocab, M))
    norm = take("model.norm.weight", (M,))
    if cfg.tied:
        if "lm_head.weight" in t:  # HF ties it to the embeddings whatever the file holds: only equal is inert
            if not np.array_equal(t.take("lm_head.weight", (cfg.vocab, M)), embed):
                raise ModelError(f"{t.source}: tensor 'lm_head.weight' differs from the embeddings although the "
                                 "checkpoint ties them (tie_word_embeddings)")
        head = None
    else:
        head = take("lm_head.weight", (cfg.vocab, M))
    shapes = {"q": (h * d, M), "k": (g * d, M), "v": (g * d, M), "o": (M, h * d),
              "gate": (F, M), "up": (F, M), "down": (M, F)}
    names = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
             "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}
    layers = []
    for k in range(cfg.layers):
        p = f"model.layers.{k}."
        W = {n: take(p + names[n] + ".weight", shapes[n]).T for n in names}
        b = {n: (take(p + names[n] + ".bias", (shapes[n][0],)) if bias.get(n) else None) for n in names}
        t.ignore(p + "self_attn.rotary_emb.inv_freq")  # a buffer old checkpoints carry; HF recomputes it
        layers.append(DecoderLayer(
            WQ=W["q"], WK=W["k"], WV=W["v"], WO=W["o"], Wg=W["gate"], Wu=W["up"], Wd=W["down"],
            g1=take(p + "input_layernorm.weight", (M,)), g2=take(p + "post_attention_layernorm.weight", (M,)),
            config=cfg, bq=b["q"], bk=b["k"], bv=b["v"], bo=b["o"], bg=b["gate"], bu=b["up"], bd=b["down"],
            window=window[k] if window else None))
    return CausalLM(cfg, embed, layers, norm, head, source=t.source, tokenizer=tokenizer, quant_types=quant_types)


def decoder_fields(f: Fields, family: str) -> dict:
    """The size fields every HF pre-norm decoder config shares, typed and cross-checked."""
    M, h = f.int("hidden_size"), f.int("num_attention_heads")
    g = f.int("num_key_value_heads", h)
    if h % g:
        f.fail("num_attention_heads", f"{h} is not a multiple of num_key_value_heads {g} (grouped-query attention "
                                      "shares each key/value head among the same number of query heads)")
    d = f.int("head_dim", None) if f.has("head_dim") and f.data.get("head_dim") is not None else None
    f.inert("head_dim")
    if d is None:
        d = M // h
        if M % h:
            f.fail("num_attention_heads", f"{h} does not divide hidden_size {M} and head_dim is not given "
                                          f"(transformers would use head_dim {d}, leaving {M - h * d} columns)")
    if d % 2:
        f.fail("head_dim", f"is {d}: odd, but RoPE rotates pairs of coordinates (an even head width)")
    act = f.raw("hidden_act", "silu")
    if act not in HIDDEN_ACT:
        f.fail("hidden_act", f"is {act!r}; symuat's {family} family models {', '.join(HIDDEN_ACT)}")
    return dict(M=M, heads=h, kv_heads=g, head_dim=d, F=f.int("intermediate_size"), layers=f.int("num_hidden_layers"),
                eps=f.number("rms_norm_eps"), context=f.int("max_position_embeddings", 2048),
                activation=HIDDEN_ACT[act])


def vocab_field(f: Fields) -> int | None:
    """``vocab_size`` when the config gives it (``null`` or absent: None, read from the embeddings)."""
    if f.has("vocab_size") and f.data["vocab_size"] is not None:
        return f.int("vocab_size")
    f.inert("vocab_size")
    return None


def vocab_rows(vocab: int | None, tensors: dict, source) -> int:
    """The vocabulary size: ``vocab`` (the config's), else the embedding's rows."""
    if vocab is not None:
        return vocab
    emb = tensors.get("model.embed_tokens.weight")
    if emb is None or emb.ndim != 2:
        raise ModelError(f"{source}: tensor 'model.embed_tokens.weight' is missing (and config.json gives no "
                         "vocab_size)")
    return emb.shape[0]
