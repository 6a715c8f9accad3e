"""The Qwen2 family: the Llama decoder with q, k, v biases (always; no o or MLP biases) and
optional sliding-window layers. Everything else is :mod:`symuat.models.families.llama`'s.

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps``,
  ``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``, ``hidden_act``), the RoPE
  fields (``rope_theta``, ``rope_parameters``/``rope_scaling``: default, linear, llama3), and
  ``use_sliding_window``, ``sliding_window``, ``max_window_layers``, ``layer_types`` (which layers
  attend through the window); inert: :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* GGUF (architecture ``qwen2``): the Llama keys (rotate-half RoPE, weights not permuted) and the
  ``attn_q/k/v.bias`` tensors, which transformers' GGUF loader reads.
* Tensors: the Llama tensors and ``self_attn.{q,k,v}_proj.bias``.
"""

from __future__ import annotations

from symuat.models import decoder_reader
from symuat.models.families import llama
from symuat.models.causal_lm import CausalLM, DecoderConfig
from symuat.models.family import Family
from symuat.models.formats import Fields, Tensors, check_folder, folder_tensors, json_tokenizer, read_config

FEATURES = ("the Llama family's features (RMSNorm, RoPE incl. linear/llama3 scaling, GQA, gated MLP, head_dim)",
            "q, k, v projection biases", "sliding-window layers (use_sliding_window, layer_types)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = tuple(k for k in llama.CONFIG_FIELDS if k not in ("attention_bias", "mlp_bias")) + (
    "use_sliding_window", "sliding_window", "max_window_layers", "layer_types")
GGUF_KEYS = llama.GGUF_KEYS
INERT_FIELDS = decoder_reader.INERT_FIELDS

_SUPPORTED = "the fields, keys and tensors symuat's qwen2 family models are listed in `symuat.models.families.qwen2`"
_BIAS = {"q": True, "k": True, "v": True, "o": False, "gate": False, "up": False, "down": False}


def load_folder(folder) -> CausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="Qwen2 checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("qwen2",))
    sizes = decoder_reader.decoder_fields(f, "qwen2")
    theta, inv, feats = decoder_reader.rope_from_config(f, sizes["head_dim"])
    tied = f.flag("tie_word_embeddings", False)
    windows, window = layer_windows(f, sizes["layers"], max_window_default=28)
    vocab = decoder_reader.vocab_field(f)
    f.inert(*decoder_reader.INERT_FIELDS)
    f.refuse_unknown("qwen2", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=decoder_reader.vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half",
                        tied=tied,
                        inv_freq=inv, family="qwen2",
                        features=feats + ([f"sliding window {window}"] if any(windows) else []), **sizes)
    t = Tensors(tensors, folder)
    model = decoder_reader.build(cfg, t, bias=_BIAS, tokenizer=json_tokenizer(folder, rows=cfg.vocab), window=windows)
    t.refuse_unused("qwen2", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


def layer_windows(f: Fields, L: int, *, max_window_default: int) -> tuple[list, int | None]:
    """Each layer's sliding window (None: full causal) from ``use_sliding_window``,
    ``sliding_window``, ``max_window_layers`` and ``layer_types``, by transformers' rule (Qwen2Config,
    Qwen3Config: without ``use_sliding_window`` no layer is windowed); and the window."""
    c = f.data
    windowed = f.flag("use_sliding_window", False)
    window = f.int("sliding_window", None) if f.has("sliding_window") and c.get("sliding_window") is not None else None
    f.inert("sliding_window")
    max_window = f.int("max_window_layers", max_window_default, minimum=0)
    types = f.raw("layer_types", None)
    if types is None:  # transformers' rule (Qwen2Config)
        types = ["sliding_attention" if windowed and window is not None and i >= max_window else "full_attention"
                 for i in range(L)]
    if not isinstance(types, list) or len(types) != L or any(t not in ("full_attention", "sliding_attention")
                                                              for t in types):
        f.fail("layer_types", f"must list {L} entries 'full_attention' or 'sliding_attention', not {types!r}")
    if not windowed:  # transformers sets sliding_window to None: no layer is windowed
        types = ["full_attention"] * L
    if "sliding_attention" in types and window is None:
        f.fail("sliding_window", "is missing although some layers attend through a sliding window")
    return [window if t == "sliding_attention" else None for t in types], window


def load_gguf_file(path) -> CausalLM:
    return llama.load_gguf_file(path, arch="qwen2", family="qwen2", rope="half", bias_blind=True,
                                always_bias=("q", "k", "v"))


FROZEN, EXACT = llama.FROZEN, llama.EXACT

FAMILY = Family(name="qwen2", kind="decoder", model_types=("qwen2",), gguf_architectures=("qwen2",),
                features=FEATURES, load_folder=load_folder, load_gguf=load_gguf_file, frozen=FROZEN, exact=EXACT,
                module=__name__)
