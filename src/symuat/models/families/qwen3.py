"""The Qwen3 family: the Qwen2 decoder with a per-head QK-norm (an RMSNorm of each query and key
head, weight of width ``head_dim``, before RoPE: :mod:`symuat.models.qknorm`), the q, k, v, o
biases only when ``attention_bias`` says so, and Qwen2's sliding-window layers.

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps`` — also
  the QK-norms' epsilon —, ``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``,
  ``hidden_act``), the RoPE fields, ``attention_bias`` and ``use_sliding_window``,
  ``sliding_window``, ``max_window_layers``, ``layer_types`` (transformers' ``Qwen3Config`` rule,
  :func:`symuat.models.families.qwen2.layer_windows`); inert: :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* Tensors: the Llama tensors, ``self_attn.{q,k}_norm.weight`` per layer and the attention biases
  ``attention_bias`` announces.
"""

from __future__ import annotations

from symuat.models import decoder_reader
from symuat.models.families import llama, qwen2
from symuat.models import qknorm
from symuat.models.causal_lm import CausalLM, DecoderConfig
from symuat.models import reference as _reference
from symuat.models.family import Family, Fold
from symuat.models.formats import Fields, Tensors, check_folder, folder_tensors, json_tokenizer, read_config

FEATURES = ("the Llama family's features (RMSNorm, RoPE incl. linear/llama3 scaling, GQA, gated MLP, head_dim)",
            "per-head QK-norm (q_norm, k_norm of width head_dim, before RoPE)",
            "attention_bias (q, k, v, o)", "sliding-window layers (use_sliding_window, layer_types)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = tuple(k for k in llama.CONFIG_FIELDS if k != "mlp_bias") + (
    "use_sliding_window", "sliding_window", "max_window_layers", "layer_types")
INERT_FIELDS = decoder_reader.INERT_FIELDS

_SUPPORTED = "the fields and tensors symuat's qwen3 family models are listed in `symuat.models.families.qwen3`"


def load_folder(folder) -> CausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="Qwen3 checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("qwen3",))
    sizes = decoder_reader.decoder_fields(f, "qwen3")
    theta, inv, feats = decoder_reader.rope_from_config(f, sizes["head_dim"])
    tied = f.flag("tie_word_embeddings", False)
    bias = f.flag("attention_bias", False)
    windows, window = qwen2.layer_windows(f, sizes["layers"], max_window_default=28)
    vocab = decoder_reader.vocab_field(f)
    f.inert(*decoder_reader.INERT_FIELDS)
    f.refuse_unknown("qwen3", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        inv_freq=inv, family="qwen3",
                        features=feats + ["per-head QK-norm"] + ["attention bias"] * bias
                        + ([f"sliding window {window}"] if any(windows) else []), **sizes)
    t = Tensors(tensors, folder)
    every = {n: bias and n in ("q", "k", "v", "o") for n in ("q", "k", "v", "o", "gate", "up", "down")}
    model = decoder_reader.build(cfg, t, bias=every, tokenizer=json_tokenizer(folder, rows=cfg.vocab), window=windows)
    qknorm.take_norms(model.layers, t, width="head")
    t.refuse_unused("qwen3", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


#: the default islands made float64: every ``*RMSNorm`` (the QK-norms among them), the RoPE angles, eager softmax
REFERENCE_NOTE = _reference.NOTE.replace("RMSNorm (casts to float32)", "every RMSNorm, the per-head QK-norms "
                                         "q_norm/k_norm among them (casts to float32)")

FROZEN = ("the attention patterns H_i of every layer and head (the per-head QK-norm, RoPE rotation, causal or "
          "sliding-window mask and softmax evaluated at the input)",) + llama.FROZEN[1:]
EXACT = llama.EXACT


def fold_checkpoint(model: str, asked: dict):
    """``symuat model fold``: WP1 and WP3 (:mod:`symuat.models.fold_decoders`)."""
    from symuat.models.fold_decoders import fold_family

    return fold_family(model, asked, family="qwen3")


FAMILY = Family(name="qwen3", kind="decoder", model_types=("qwen3",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, reference_note=REFERENCE_NOTE, fold=Fold(run=fold_checkpoint),
                module=__name__)
