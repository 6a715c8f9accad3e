r"""The GPT-2 family (TransformerLens's default model): learned absolute positions, pre-LayerNorm
with biases, ``Conv1D`` weights, a fused ``c_attn``, biases on every projection, a plain
(ungated) GELU MLP and a tied LM head — :mod:`symuat.models.ln_decoder`'s sequential layer.

``Conv1D`` computes :math:`xW+b` with :math:`W` stored ``(in, out)`` — already symuat's ``x @ W``
convention, so nothing is transposed (a ``Linear`` would store ``(out, in)``). ``c_attn`` is
:math:`[W_Q\,|\,W_K\,|\,W_V]` side by side, ``(M, 3M)``, split at columns :math:`M` and :math:`2M`
(HF: ``.split(M, dim=2)``; WP6, the split identity: the fused product is the concatenation of the
three, so slicing columns is exact); each of :math:`W_Q, W_K, W_V` is then per head
``(M, h, d)`` in that order.

>>> sorted(_prefixed({"wte.weight": 0, "h.0.ln_1.weight": 1, "lm_head.weight": 2}))
['lm_head.weight', 'transformer.h.0.ln_1.weight', 'transformer.wte.weight']

What changes the computation (anything else present is refused):

* ``config.json``: ``n_embd``, ``n_layer``, ``n_head``, ``n_inner`` (null: :math:`4M`),
  ``n_positions`` (the context; the rows of ``wpe``), ``vocab_size``, ``layer_norm_epsilon``,
  ``activation_function`` (gelu_new/gelu_pytorch_tanh, gelu, relu, silu), ``scale_attn_weights``
  (scores times :math:`d^{-1/2}` or 1), ``scale_attn_by_inverse_layer_idx`` (scores divided by the
  layer's number :math:`k+1`), ``reorder_and_upcast_attn`` (the same scores computed in float32
  by HF: the same function, modelled as such; the reference runs it in float64),
  ``tie_word_embeddings``, ``add_cross_attention`` (must be false: an encoder-decoder block);
  inert: the dropouts, ``summary_*`` (GPT2DoubleHeadsModel's classifier head, not the LM),
  ``n_ctx`` (GPT-2's old duplicate of ``n_positions``, unread by transformers), ``output_past`` (the
  cache switch of old configs), ``_num_labels`` (a classifier's), and
  :data:`symuat.models.decoder_reader.INERT_FIELDS`.
* Tensors (with or without the ``transformer.`` prefix): ``wte``, ``wpe``, ``ln_f.{weight,bias}``,
  per layer ``h.{k}.ln_1``, ``ln_2`` (weight, bias), ``attn.c_attn``, ``attn.c_proj``, ``mlp.c_fc``,
  ``mlp.c_proj`` (weight, bias); ``lm_head.weight`` when untied (when tied, only equal to ``wte``);
  old checkpoints' ``attn.bias``/``attn.masked_bias`` buffers (the causal mask, rebuilt) are read
  as what they are and ignored.

``symuat model fold`` applies what TransformerLens's ``from_pretrained`` applies to GPT-2 by default —
``fold_ln`` (WP1 in its LayerNorm form), ``fold_value_biases`` (WP4), ``center_writing_weights``
(WP12: every reader is a LayerNorm), ``center_unembed`` (WP3) — except the final LayerNorm's
:math:`\beta_f`, which TransformerLens moves into an unembedding bias ``b_U`` that
``GPT2LMHeadModel`` does not have (:mod:`symuat.models.fold_layernorm`).

The reference: ``GPT2LMHeadModel`` on the folder in float64 (eager). Its one float32 island is
``reorder_and_upcast_attn``'s score product (``q.float() @ k.float()``), run in float64 for the call.
"""

from __future__ import annotations

import contextlib

import numpy as np

from symuat.models import decoder_reader
from symuat.models.causal_lm import DecoderConfig
from symuat.models.family import Family, Fold, resolve
from symuat.models.formats import Fields, ModelError, Tensors, check_folder, folder_tensors, json_tokenizer, \
    read_config
from symuat.models.ln_decoder import EXACT, FROZEN, LNCausalLM, LNDecoderLayer
from symuat.models.reference import Float64Islands

FEATURES = ("learned absolute positions (wpe), pre-LayerNorm with biases, tied LM head",
            "Conv1D weights (in, out), fused c_attn split exactly (WP6), biases on every projection",
            "ungated MLP with gelu_new, gelu, relu or silu",
            "scale_attn_weights, scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = ("model_type", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", "vocab_size",
                 "layer_norm_epsilon", "activation_function", "scale_attn_weights", "scale_attn_by_inverse_layer_idx",
                 "reorder_and_upcast_attn", "tie_word_embeddings", "add_cross_attention")
#: inert in an eval-mode float64 forward of the LM
INERT_FIELDS = decoder_reader.INERT_FIELDS + ("resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_type",
                                              "summary_use_proj", "summary_activation", "summary_proj_to_labels",
                                              "summary_first_dropout", "n_ctx", "output_past", "_num_labels")
#: the tensors (without the ``transformer.`` prefix; {k} a layer); any other is refused
TENSORS = ("wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias", "lm_head.weight",
           *(f"h.{{k}}.{n}.{w}" for n in ("ln_1", "ln_2", "attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
             for w in ("weight", "bias")))

#: activation_function values → symuat's activations (HF's ACT2FN meanings)
ACTIVATION = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu",
              "silu": "silu", "swish": "silu"}

_SUPPORTED = "the fields and tensors symuat's gpt2 family models are listed in `symuat.models.families.gpt2`"


def _prefixed(tensors: dict) -> dict:
    """The tensors under transformers' names: GPT-2's original files have no ``transformer.`` prefix."""
    if any(k.startswith("transformer.") for k in tensors):
        return tensors
    return {k if k == "lm_head.weight" else "transformer." + k: v for k, v in tensors.items()}


def load_folder(folder) -> LNCausalLM:
    folder = check_folder(folder)
    path, c = read_config(folder, kind="GPT-2 checkpoint")
    f = Fields(path, c)
    f.choice("model_type", ("gpt2",))
    M, L, h = f.int("n_embd", 768), f.int("n_layer", 12), f.int("n_head", 12)
    if M % h:
        f.fail("n_head", f"{h} does not divide n_embd {M} (GPT-2's heads split the width)")
    d = M // h
    F = f.int("n_inner") if c.get("n_inner") is not None else 4 * M
    f.inert("n_inner")
    P = f.int("n_positions", 1024)
    act = f.raw("activation_function", "gelu_new")
    if act not in ACTIVATION:
        f.fail("activation_function", f"is {act!r}; symuat's gpt2 family models {', '.join(ACTIVATION)}")
    eps = f.number("layer_norm_epsilon", 1e-5)
    scaled = f.flag("scale_attn_weights", True)
    by_layer = f.flag("scale_attn_by_inverse_layer_idx", False)
    upcast = f.flag("reorder_and_upcast_attn", False)
    tied = f.flag("tie_word_embeddings", True)
    if f.flag("add_cross_attention", False):
        f.fail("add_cross_attention", "is true: a cross-attention block reads an encoder; symuat models the "
                                      "decoder-only GPT-2")
    vocab = f.int("vocab_size", 50257)
    f.inert(*INERT_FIELDS)
    f.refuse_unknown("gpt2", _SUPPORTED)
    feats = ["scale_attn_by_inverse_layer_idx"] * by_layer + ["reorder_and_upcast_attn"] * upcast + \
        ["scale_attn_weights false"] * (not scaled) + ["untied head"] * (not tied)
    cfg = DecoderConfig(vocab=vocab, M=M, layers=L, heads=h, kv_heads=h, head_dim=d, F=F, rope_theta=0.0, eps=eps,
                        context=P, rope="none", tied=tied, activation=ACTIVATION[act], family="gpt2", features=feats)
    t = Tensors(_prefixed(folder_tensors(folder)), folder)
    take = lambda k, s: t.take("transformer." + k, s)
    layers = []
    for k in range(L):
        p = f"h.{k}."
        for buf in ("attn.bias", "attn.masked_bias"):  # the causal-mask buffers of old files (transformers rebuilds)
            if "transformer." + p + buf in t and np.ndim(t.tensors["transformer." + p + buf]) != 1:
                t.ignore("transformer." + p + buf)
        W, b = take(p + "attn.c_attn.weight", (M, 3 * M)), take(p + "attn.c_attn.bias", (3 * M,))
        scale = d ** -0.5 if scaled else 1.0  # transformers' own arithmetic: head_dim**-0.5, then / (k + 1)
        if by_layer:
            scale /= float(k + 1)
        layers.append(LNDecoderLayer(
            WQ=W[:, :M], WK=W[:, M:2 * M], WV=W[:, 2 * M:], bq=b[:M], bk=b[M:2 * M], bv=b[2 * M:],
            WO=take(p + "attn.c_proj.weight", (M, M)), bo=take(p + "attn.c_proj.bias", (M,)),
            Win=take(p + "mlp.c_fc.weight", (M, F)), bin=take(p + "mlp.c_fc.bias", (F,)),
            Wout=take(p + "mlp.c_proj.weight", (F, M)), bout=take(p + "mlp.c_proj.bias", (M,)),
            ln1=(take(p + "ln_1.weight", (M,)), take(p + "ln_1.bias", (M,))),
            ln2=(take(p + "ln_2.weight", (M,)), take(p + "ln_2.bias", (M,))),
            config=cfg, scale=scale, parallel=False))
    wte = take("wte.weight", (vocab, M))
    head = None
    if tied:
        if "lm_head.weight" in t and not np.array_equal(t.take("lm_head.weight", (vocab, M)), wte):
            raise ModelError(f"{folder}: tensor 'lm_head.weight' differs from transformer.wte.weight although the "
                             "checkpoint ties them (tie_word_embeddings)")
    else:
        head = t.take("lm_head.weight", (vocab, M))
    model = LNCausalLM(cfg, wte, layers, (take("ln_f.weight", (M,)), take("ln_f.bias", (M,))), head,
                       positions=take("wpe.weight", (P, M)), source=folder, tokenizer=json_tokenizer(folder, rows=vocab))
    t.refuse_unused("gpt2", _SUPPORTED)
    model.fields_read = sorted(f.used)
    return model


@contextlib.contextmanager
def reference_islands(hf):
    """:class:`~symuat.models.reference.Float64Islands` plus GPT-2's own float32 island: with
    ``reorder_and_upcast_attn`` HF computes the scores as ``baddbmm(q.float(), k.float(), alpha=scaling)``
    in float32; for the call it runs the same function (scores × scaling, mask, softmax) in float64."""
    import transformers.models.gpt2.modeling_gpt2 as g

    saved = g.GPT2Attention._upcast_and_reordered_attn

    def upcast64(self, query, key, value, attention_mask=None):
        return g.eager_attention_forward(self, query, key, value, attention_mask, scaling=self.scaling)

    g.GPT2Attention._upcast_and_reordered_attn = upcast64
    try:
        with Float64Islands(hf):
            yield
    finally:
        g.GPT2Attention._upcast_and_reordered_attn = saved


#: what stock HF float64 keeps in float32 (the check's "finding" line)
STOCK_ISLANDS = "the scores of reorder_and_upcast_attn, when set"

REFERENCE_NOTE = ("transformers' {cls} built from the checkpoint's own files (from_pretrained{how}) in float64, "
                  "attn_implementation='eager'; LayerNorm, gelu_new and the softmax already run in float64; the one "
                  "float32 island, reorder_and_upcast_attn's score product (q.float() @ k.float()), is run in float64 "
                  "for the call. 'stock_hf_float64_gap' (on the text's first 'tokens' tokens, at most 1,024) is unpatched HF float64 vs the float64 forward. HF's last "
                  "hidden state is taken after the final LayerNorm (ln_f), so the last state is compared after it")


# --------------------------------------------------------------------------------------------
# `symuat model fold`: WP1 (LayerNorm form), WP4, WP12, WP3 hold — every reader is a LayerNorm
# --------------------------------------------------------------------------------------------


def hf_tensors(model) -> dict[str, np.ndarray]:
    """The tensors of a GPT-2 :class:`LNCausalLM` under transformers' names, ``Conv1D`` ``(in, out)``
    (the inverse of :func:`load_folder`)."""
    t = {"transformer.wte.weight": model.embed_tokens, "transformer.wpe.weight": model.positions,
         "transformer.ln_f.weight": model.norm, "transformer.ln_f.bias": model.norm_bias}
    if not model.config.tied:
        t["lm_head.weight"] = model.lm_head
    for k, layer in enumerate(model.layers):
        p = f"transformer.h.{k}."
        t[p + "attn.c_attn.weight"] = np.concatenate([layer.WQ, layer.WK, layer.WV], axis=1)
        t[p + "attn.c_attn.bias"] = np.concatenate([layer.bq, layer.bk, layer.bv])
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = layer.WO, layer.bo
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = layer.Win, layer.bin
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = layer.Wout, layer.bout
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = layer.ln1
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = layer.ln2
    return t


def fold_checkpoint(model: str, asked: dict):
    """``(original, folded tensors, log, extra files, config.json)`` for ``symuat model fold``
    (:mod:`symuat.models.fold_layernorm`); ``asked`` empty: every valid fold."""
    path = resolve(model).path
    return fold_ln_checkpoint(load_folder(path), path, asked, hf_tensors)[:5]


def fold_ln_checkpoint(original, path, asked: dict, writer):
    """The shared fold of the LayerNorm families (gpt2, gpt_neox): every §9 fold is valid for them.
    Returns ``(original, tensors, log, extra files, config.json, the folded model)``."""
    import json

    from symuat.models.fold_layernorm import fold_ln_decoder

    opts = dict(norms=True, value_biases=True, centre_writers=True, centre_unembedding=True) if not asked else \
        dict(norms=asked["norms"], value_biases=asked["value-biases"], centre_writers=asked["center-writers"],
             centre_unembedding=asked["center-unembedding"])
    folded, log = fold_ln_decoder(original, **opts)
    config = json.loads((path / "config.json").read_text())
    config["tie_word_embeddings"] = bool(folded.config.tied)
    for key in ("torch_dtype", "dtype"):
        if key in config or key == "torch_dtype":
            config[key] = "float64"
    extra = {"tokenizer.json": original.tokenizer.to_str().encode()} if original.tokenizer is not None else {}
    original.fold_compare_centred = opts["centre_writers"]  # WP12 moves each state row's mean: compare without it
    return original, writer(folded), log, extra, config, folded


def check_folded(original: LNCausalLM, folder, texts: list[str]) -> list[dict]:
    """The folded LayerNorm decoder reloaded from ``folder`` against ``original``, each state row's mean
    removed when WP12 centred the writers (:func:`symuat.models.fold.compare_decoder`)."""
    from symuat.models.fold import compare_decoder

    return compare_decoder(original, folder, texts, centre_states=original.fold_compare_centred)


FAMILY = Family(name="gpt2", kind="decoder", model_types=("gpt2",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, reference_islands=reference_islands, reference_note=REFERENCE_NOTE,
                stock_islands=STOCK_ISLANDS, fold=Fold(run=fold_checkpoint, check=check_folded), module=__name__)
