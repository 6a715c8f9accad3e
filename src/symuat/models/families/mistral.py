"""The Mistral family: the Llama decoder (no biases) whose every layer attends through one
sliding window (``sliding_window``; ``null``: full causal), with grouped-query attention and an
optional ``head_dim``. Everything else is :mod:`symuat.models.families.llama`'s.

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps``,
  ``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``, ``hidden_act``), the RoPE
  fields (``rope_theta``, ``rope_parameters``/``rope_scaling``: default, linear, llama3) and
  ``sliding_window`` (transformers ``MistralModel``: a sliding-window causal mask on every layer
  when it is not ``null``; key :math:`m` seen from query :math:`n` iff :math:`0\\le n-m<w`);
  inert: :data:`symuat.models.decoder_reader.INERT_FIELDS`. ``attention_bias``, ``mlp_bias`` and
  ``layer_types`` are not Mistral fields (transformers ignores them): refused.
* Tensors: the Llama tensors without biases.
"""

from __future__ import annotations

from symuat.models import decoder_reader
from symuat.models.families import llama
from symuat.models.causal_lm import CausalLM, DecoderConfig
from symuat.models.family import Family, Fold
from symuat.models.formats import Fields, Tensors, check_folder, folder_tensors, json_tokenizer, read_config

FEATURES = ("the Llama family's features without biases (RMSNorm, RoPE incl. linear/llama3 scaling, GQA, gated MLP, "
            "head_dim)", "one sliding window on every layer (sliding_window)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = tuple(k for k in llama.CONFIG_FIELDS if k not in ("attention_bias", "mlp_bias")) + ("sliding_window",)
INERT_FIELDS = decoder_reader.INERT_FIELDS

_SUPPORTED = "the fields and tensors symuat's mistral family models are listed in `symuat.models.families.mistral`"
_NO_BIAS = dict.fromkeys(("q", "k", "v", "o", "gate", "up", "down"), False)


def load_folder(folder) -> CausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="Mistral checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("mistral",))
    sizes = decoder_reader.decoder_fields(f, "mistral")
    theta, inv, feats = decoder_reader.rope_from_config(f, sizes["head_dim"])
    tied = f.flag("tie_word_embeddings", False)
    window = f.int("sliding_window", None) if c.get("sliding_window") is not None else None
    f.inert("sliding_window")
    vocab = decoder_reader.vocab_field(f)
    f.inert(*decoder_reader.INERT_FIELDS)
    f.refuse_unknown("mistral", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        inv_freq=inv, family="mistral",
                        features=feats + ([f"sliding window {window}"] if window is not None else []), **sizes)
    t = Tensors(tensors, folder)
    model = decoder_reader.build(cfg, t, bias=_NO_BIAS, tokenizer=json_tokenizer(folder, rows=cfg.vocab),
                                 window=[window] * sizes["layers"])
    t.refuse_unused("mistral", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


FROZEN, EXACT = llama.FROZEN, llama.EXACT


def fold_checkpoint(model: str, asked: dict):
    """``symuat model fold``: WP1 and WP3 (:mod:`symuat.models.fold_decoders`)."""
    from symuat.models.fold_decoders import fold_family

    return fold_family(model, asked, family="mistral")


FAMILY = Family(name="mistral", kind="decoder", model_types=("mistral",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, fold=Fold(run=fold_checkpoint), module=__name__)
