r"""The GPT-NeoX family (Pythia): the *parallel* residual
:math:`x+\mathrm{Attn}(\mathrm{LN}_1x)+\mathrm{MLP}(\mathrm{LN}_2x)` (``use_parallel_residual``; the
sequential one when false), *partial* rotary positions (RoPE on the first
``int(d · partial_rotary_factor)`` coordinates of each head), LayerNorms with biases, a fused
``query_key_value`` in its per-head interleaved layout, biases on every projection, an ungated
GELU MLP and an untied ``embed_out`` — :mod:`symuat.models.ln_decoder`'s layer.

**The fused layout.** ``query_key_value`` is a ``Linear(M, 3M)`` whose output is viewed as
``(N, h, 3d)`` and chunked in three along the last axis (HF's ``view(…, -1, 3 * head_size)`` then
``chunk(3, dim=-1)``): its rows are ``[q_0, k_0, v_0, q_1, k_1, v_1, …]``, each block ``d`` rows — *not*
``[Q | K | V]`` as in GPT-2's ``c_attn`` or Phi-3's ``qkv_proj``. :func:`split_qkv` takes rows
``i·3d + j·d … + d`` for head ``i`` and ``j`` ∈ (q, k, v): a permutation of rows, exact (WP6).

**In the DUAT form** a parallel layer is one Eq. 20 term with :math:`W1=I+AS_1`,
:math:`W2=(I_N\otimes W_{\rm in}^\top)S_2` (the MLP reads the layer's input, so :math:`W2` has no
:math:`W1` factor), :math:`W3=I_N\otimes W_{\rm out}^\top` — claim X9
(:mod:`symuat.claims.parallel_residual`), whose Lemma 2 unrolling the one-pass recursion uses unchanged.

>>> W = np.arange(12.0)[:, None] * np.ones((1, 2))  # h = 2 heads of width d = 2: rows q0 q0 k0 k0 v0 v0 q1 …
>>> (WQ, WK, WV), _ = split_qkv(W, None, heads=2, d=2)
>>> WQ[0].tolist(), WK[0].tolist(), WV[0].tolist()
([0.0, 1.0, 6.0, 7.0], [2.0, 3.0, 8.0, 9.0], [4.0, 5.0, 10.0, 11.0])

What changes the computation (anything else present is refused):

* ``config.json``: ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
  ``intermediate_size``, ``hidden_act`` (gelu, gelu_new/gelu_pytorch_tanh, relu, silu),
  ``max_position_embeddings`` (the context), ``layer_norm_eps``, ``use_parallel_residual``,
  ``attention_bias`` (biases of ``query_key_value`` and ``dense``), ``tie_word_embeddings``,
  ``vocab_size``, and the RoPE: ``rope_parameters``/``rope_scaling`` (type ``default`` only;
  ``rope_theta``, ``partial_rotary_factor``) or the legacy ``rotary_emb_base`` and ``rotary_pct``
  (transformers' defaults 10000 and 0.25: they take effect only where ``rope_parameters`` lacks
  the key). A top-level ``rope_theta`` or ``partial_rotary_factor`` that disagrees with that
  reading is refused (transformers ignores it for gpt_neox). Inert: ``attention_dropout``,
  ``hidden_dropout``, ``classifier_dropout``, ``is_decoder`` and :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* Tensors: ``gpt_neox.embed_in``, ``gpt_neox.final_layer_norm.{weight,bias}``, ``embed_out`` (or
  ``lm_head``; when tied, only equal to ``embed_in``), per layer ``input_layernorm``,
  ``post_attention_layernorm`` (weight, bias), ``attention.query_key_value``, ``attention.dense``,
  ``mlp.dense_h_to_4h``, ``mlp.dense_4h_to_h`` (weight, bias); old checkpoints' buffers
  ``attention.bias``, ``attention.masked_bias`` (the causal mask) and ``attention.rotary_emb.inv_freq``
  (recomputed) are ignored.

The reference: ``GPTNeoXForCausalLM`` on the folder in float64 (eager), its float32 islands (the
RoPE angles of the rotary width, the eager softmax) made float64 by
:class:`~symuat.models.reference.Float64Islands`; LayerNorm and GELU already run in float64.
"""

from __future__ import annotations

import numpy as np

from symuat.models import decoder_reader
from symuat.models.causal_lm import DecoderConfig
from symuat.models.family import Family, Fold, resolve
from symuat.models.formats import Fields, ModelError, Tensors, check_folder, folder_tensors, json_tokenizer, \
    read_config
from symuat.models.families.gpt2 import ACTIVATION, check_folded
from symuat.models.lifts import rope_inv_freq
from symuat.models.ln_decoder import EXACT, FROZEN, LNCausalLM, LNDecoderLayer
from symuat.models.partial_rotary import rotary_width

FEATURES = ("parallel residual x + Attn(LN1 x) + MLP(LN2 x) (X9), or sequential (use_parallel_residual false)",
            "partial rotary positions (rotary_pct / partial_rotary_factor), LayerNorm with biases",
            "fused query_key_value in its per-head interleaved layout, split exactly (WP6)",
            "ungated MLP (gelu, gelu_new, relu, silu), biases (attention_bias), untied embed_out")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                 "hidden_act", "max_position_embeddings", "layer_norm_eps", "use_parallel_residual", "attention_bias",
                 "tie_word_embeddings", "vocab_size", "rope_parameters", "rope_scaling", "rotary_emb_base",
                 "rotary_pct", "rope_theta", "partial_rotary_factor")
INERT_FIELDS = decoder_reader.INERT_FIELDS + ("hidden_dropout", "classifier_dropout", "is_decoder")
TENSORS = ("gpt_neox.embed_in.weight", "gpt_neox.final_layer_norm.weight", "gpt_neox.final_layer_norm.bias",
           "embed_out.weight", *(f"gpt_neox.layers.{{k}}.{n}.{w}" for n in (
               "input_layernorm", "post_attention_layernorm", "attention.query_key_value", "attention.dense",
               "mlp.dense_h_to_4h", "mlp.dense_4h_to_h") for w in ("weight", "bias")))

_SUPPORTED = "the fields and tensors symuat's gpt_neox family models are listed in `symuat.models.families.gpt_neox`"


def split_qkv(W: np.ndarray, b: np.ndarray | None, heads: int, d: int):
    """``query_key_value`` ``(3·h·d, M)`` (rows ``[q_0, k_0, v_0, q_1, …]``) → ``W_Q, W_K, W_V`` as ``(M, h·d)``
    (``x @ W``) and their biases."""
    M = W.shape[1]
    R = W.reshape(heads, 3, d, M)
    Ws = [R[:, j].reshape(heads * d, M).T for j in range(3)]
    bs = [None] * 3 if b is None else [b.reshape(heads, 3, d)[:, j].reshape(-1) for j in range(3)]
    return Ws, bs


def _rope(f: Fields, c: dict, d: int) -> tuple[float, float]:
    """(θ, partial_rotary_factor) as transformers' GPTNeoXConfig reads them."""
    if c.get("rope_parameters") is not None and c.get("rope_scaling") is not None and \
            c["rope_parameters"] != c["rope_scaling"]:
        f.fail("rope_scaling", "and rope_parameters are both given and differ; symuat reads one")
    key = "rope_parameters" if c.get("rope_parameters") is not None else "rope_scaling"
    rope = f.raw(key, None) if f.has(key) else None
    f.inert("rope_parameters", "rope_scaling")
    if rope is None:
        rope = {}
    if not isinstance(rope, dict):
        f.fail(key, f"must be an object, not {rope!r}")
    sub = Fields(f.path, rope, what=f"{key} key")
    kind = sub.raw("rope_type", None) or sub.raw("type", None) or "default"
    sub.inert("rope_type", "type")
    if kind != "default":
        f.fail(key, f"has rope_type {kind!r}; symuat's gpt_neox family models the default RoPE")
    theta = sub.number("rope_theta") if sub.has("rope_theta") else f.number("rotary_emb_base", 10000.0)
    factor = sub.number("partial_rotary_factor") if sub.has("partial_rotary_factor") else f.number("rotary_pct", 0.25)
    f.inert("rotary_emb_base", "rotary_pct")
    sub.refuse_unknown("gpt_neox", "rope_type 'default' takes rope_theta, partial_rotary_factor")
    for top, value in (("rope_theta", theta), ("partial_rotary_factor", factor)):
        if f.has(top):
            f.require(top, f.number(top) == value,
                      f"is {c[top]!r} but transformers' gpt_neox reads {value!r} "
                      "(from rope_parameters, rotary_emb_base/rotary_pct or their defaults)")
    if not 0 < factor <= 1:
        f.fail(key, f"has partial_rotary_factor {factor!r}; it must lie in (0, 1]")
    return theta, factor


def load_folder(folder) -> LNCausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="GPT-NeoX checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("gpt_neox",))
    M, L, h = f.int("hidden_size"), f.int("num_hidden_layers"), f.int("num_attention_heads")
    if M % h:
        f.fail("num_attention_heads", f"{h} does not divide hidden_size {M}")
    d = M // h
    F = f.int("intermediate_size")
    act = f.raw("hidden_act", "gelu")
    if act not in ACTIVATION:
        f.fail("hidden_act", f"is {act!r}; symuat's gpt_neox family models {', '.join(ACTIVATION)}")
    theta, factor = _rope(f, c, d)
    r = rotary_width(d, factor)
    if r % 2 or r == 0:
        f.fail("rope_parameters" if "rope_parameters" in c else "rotary_pct",
               f"gives rotary width {r} of head width {d}: not a positive even number (RoPE rotates pairs)")
    parallel = f.flag("use_parallel_residual", True)
    bias = f.flag("attention_bias", True)
    tied = f.flag("tie_word_embeddings", False)
    vocab = f.int("vocab_size", 50432)
    cfg = DecoderConfig(vocab=vocab, M=M, layers=L, heads=h, kv_heads=h, head_dim=d, F=F, rope_theta=theta,
                        eps=f.number("layer_norm_eps", 1e-5), context=f.int("max_position_embeddings", 2048),
                        rope="half", tied=tied, activation=ACTIVATION[act], inv_freq=rope_inv_freq(r, theta),
                        family="gpt_neox",
                        features=(["parallel residual"] if parallel else ["sequential residual"])
                        + [f"partial rotary {r}/{d}"] + ["no attention bias"] * (not bias))
    f.inert(*INERT_FIELDS)
    f.refuse_unknown("gpt_neox", _SUPPORTED)
    t = Tensors(folder_tensors(folder), folder)
    layers = []
    for k in range(L):
        p = f"gpt_neox.layers.{k}."
        for buf in ("attention.bias", "attention.masked_bias", "attention.rotary_emb.inv_freq"):
            if p + buf in t:
                t.ignore(p + buf)
        W = t.take(p + "attention.query_key_value.weight", (3 * M, M))
        b = t.take(p + "attention.query_key_value.bias", (3 * M,)) if bias else None
        (WQ, WK, WV), (bq, bk, bv) = split_qkv(W, b, h, d)
        layers.append(LNDecoderLayer(
            WQ=WQ, WK=WK, WV=WV, bq=bq, bk=bk, bv=bv,
            WO=t.take(p + "attention.dense.weight", (M, M)).T,
            bo=t.take(p + "attention.dense.bias", (M,)) if bias else None,
            Win=t.take(p + "mlp.dense_h_to_4h.weight", (F, M)).T, bin=t.take(p + "mlp.dense_h_to_4h.bias", (F,)),
            Wout=t.take(p + "mlp.dense_4h_to_h.weight", (M, F)).T, bout=t.take(p + "mlp.dense_4h_to_h.bias", (M,)),
            ln1=(t.take(p + "input_layernorm.weight", (M,)), t.take(p + "input_layernorm.bias", (M,))),
            ln2=(t.take(p + "post_attention_layernorm.weight", (M,)),
                 t.take(p + "post_attention_layernorm.bias", (M,))),
            config=cfg, scale=d ** -0.5, parallel=parallel, rotary_dim=r))
    embed = t.take("gpt_neox.embed_in.weight", (vocab, M))
    names = [n for n in ("embed_out.weight", "lm_head.weight") if n in t]
    if len(names) > 1:
        raise ModelError(f"{folder}: tensors 'embed_out.weight' and 'lm_head.weight' are both present; one head")
    head = None
    if tied:
        if names and not np.array_equal(t.take(names[0], (vocab, M)), embed):
            raise ModelError(f"{folder}: tensor {names[0]!r} differs from gpt_neox.embed_in.weight although the "
                             "checkpoint ties them (tie_word_embeddings)")
    else:
        head = t.take(names[0] if names else "embed_out.weight", (vocab, M))
    norm = (t.take("gpt_neox.final_layer_norm.weight", (M,)), t.take("gpt_neox.final_layer_norm.bias", (M,)))
    model = LNCausalLM(cfg, embed, layers, norm, head, source=folder, tokenizer=json_tokenizer(folder, rows=vocab))
    t.refuse_unused("gpt_neox", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


EXACT = EXACT + ("; a parallel layer enters with X9's parameters (W1 = I + A S1, W2 = L_in S2 without W1, "
                 "W3 = L_out: symuat prove X9)")


# --------------------------------------------------------------------------------------------
# `symuat model fold`: WP1 (LayerNorm form), WP4, WP12, WP3 hold — every reader is a LayerNorm
# --------------------------------------------------------------------------------------------


def hf_tensors(model) -> dict[str, np.ndarray]:
    """The tensors of a GPT-NeoX :class:`LNCausalLM` under transformers' names, ``Linear`` ``(out, in)``,
    ``query_key_value`` re-interleaved per head (the inverse of :func:`split_qkv`)."""
    c = model.config
    h, d, M = c.heads, c.head_dim, c.M
    t = {"gpt_neox.embed_in.weight": model.embed_tokens, "gpt_neox.final_layer_norm.weight": model.norm,
         "gpt_neox.final_layer_norm.bias": model.norm_bias}
    if not c.tied:
        t["embed_out.weight"] = model.lm_head
    for k, layer in enumerate(model.layers):
        p = f"gpt_neox.layers.{k}."
        t[p + "attention.query_key_value.weight"] = np.stack(
            [W.T.reshape(h, d, M) for W in (layer.WQ, layer.WK, layer.WV)], axis=1).reshape(3 * h * d, M)
        if layer.bq is not None:
            t[p + "attention.query_key_value.bias"] = np.stack(
                [b.reshape(h, d) for b in (layer.bq, layer.bk, layer.bv)], axis=1).reshape(-1)
        t[p + "attention.dense.weight"] = layer.WO.T
        if layer.bo is not None:
            t[p + "attention.dense.bias"] = layer.bo
        t[p + "mlp.dense_h_to_4h.weight"], t[p + "mlp.dense_h_to_4h.bias"] = layer.Win.T, layer.bin
        t[p + "mlp.dense_4h_to_h.weight"], t[p + "mlp.dense_4h_to_h.bias"] = layer.Wout.T, layer.bout
        t[p + "input_layernorm.weight"], t[p + "input_layernorm.bias"] = layer.ln1
        t[p + "post_attention_layernorm.weight"], t[p + "post_attention_layernorm.bias"] = layer.ln2
    return t


def fold_checkpoint(model: str, asked: dict):
    """``symuat model fold`` for a GPT-NeoX folder (:func:`symuat.models.families.gpt2.fold_ln_checkpoint`). A folded
    WP1 gives Q, K, V the biases β₁W: a checkpoint without them (``attention_bias`` false) gets them, and
    ``attention.dense`` a zero bias beside them (HF's flag covers both)."""
    from symuat.models.families.gpt2 import fold_ln_checkpoint

    path = resolve(model).path
    original = load_folder(path)
    out = list(fold_ln_checkpoint(original, path, asked, hf_tensors))
    folded, tensors, config = out[5], out[1], out[4]
    if any(layer.bq is not None for layer in folded.layers):
        config["attention_bias"] = True
        for k, layer in enumerate(folded.layers):
            p = f"gpt_neox.layers.{k}."
            for name, n in (("attention.query_key_value.bias", 3 * folded.config.M),
                            ("attention.dense.bias", folded.config.M)):
                tensors.setdefault(p + name, np.zeros(n))
    return tuple(out[:5])


#: what stock HF float64 keeps in float32 (the check's "finding" line)
STOCK_ISLANDS = "RoPE angles, softmax"

REFERENCE_NOTE = ("transformers' {cls} built from the checkpoint's own files (from_pretrained{how}) in float64, "
                  "attn_implementation='eager'; its float32 islands made float64 for the call: the RoPE angles of the "
                  "rotary width (HF's own rope_init_fn evaluated in float64; position × inv_freq in float64) and eager "
                  "attention's softmax (dtype=float32); LayerNorm and GELU already run in float64. "
                  "'stock_hf_float64_gap' (on the text's first 'tokens' tokens, at most 1,024) is unpatched HF float64 vs the float64 forward: a finding about HF, not a "
                  "tolerance of symuat. HF's last hidden state is taken after final_layer_norm, so the last state is "
                  "compared after it")


FAMILY = Family(name="gpt_neox", kind="decoder", model_types=("gpt_neox",), features=FEATURES,
                load_folder=load_folder, frozen=FROZEN, exact=EXACT, reference_note=REFERENCE_NOTE,
                stock_islands=STOCK_ISLANDS, fold=Fold(run=fold_checkpoint, check=check_folded), module=__name__)
