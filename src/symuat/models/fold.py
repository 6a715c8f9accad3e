r"""Fold a checkpoint: the weight-processing identities of spec §9 applied to real weights.

Weights in, weights out: a decoder is folded on its :class:`~symuat.models.causal_lm.CausalLM`
(weights ``x @ W``; :func:`hf_tensors` gives the HF tensors to write), an encoder on its raw tensor
dict with Hugging Face names (:class:`~symuat.models.families.bert.BertWeights`):

* :func:`fold_llama` — a Llama decoder (SmolLM2): every RMSNorm scale into the maps that read it
  (WP1: Q, K, V; gate *and* up; the final norm into an untied LM head), the unembedding centred
  over the vocabulary (WP3), the GGUF's interleaved W_Q/W_K rows back to the HF half-split layout
  (WP7, llama.cpp's ``permute`` inverted with h and g heads). Refuses centring the residual
  writers (WP12: RMSNorm readers see the mean).
* :func:`fold_bert` — a post-LN BERT encoder (all-MiniLM-L6-v2): the value biases into the output
  bias (WP4), every writer to the residual stream centred (WP12: each sum is read only by a
  LayerNorm). Refuses folding the LayerNorm scales (WP2: they are post-norms).
* :func:`naive_post_norm_fold` — the mistake of WP2 done on purpose (each post-LN's affine folded
  into the next readers, the skip path left without it), for the model tier to measure the failure.
* :func:`compare_states` — per-row relative errors of every state (and of the logits after removing
  each row's mean: the shift WP3 allows).

Each fold returns the folded model and a list of ``(WP id, what was done)`` lines.

>>> import numpy as np
>>> centred(np.array([[1.0, 2.0, 6.0]])).tolist()
[[-2.0, -1.0, 3.0]]
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from symuat.models.formats import ModelError, json_safe

if TYPE_CHECKING:  # annotations only: the module imports CausalLM where it builds one
    from symuat.models.causal_lm import CausalLM
    from symuat.models.family import Family


class FoldRefused(ModelError):
    """A fold that would change the model: the message names the WP entry that says why."""


REFUSE_WP12 = ("WP12: centring the weights that write to the residual stream needs every reader to remove the mean "
               "(LayerNorm); a Llama decoder's readers are RMSNorms, which see the mean (WP12.mutant[rms] is "
               "refuted) — not folded")
REFUSE_WP2 = ("WP2: the LayerNorms of a BERT block are post-norms — their output is read by the next maps *and* by "
              "the skip connection, so folding γ, β into the next Q/K/V changes the model (WP2.bert is refuted; on "
              "MiniLM the folded model is off by O(1)) — not folded")
REFUSE_WP3_BERT = "WP3: a BERT encoder has no unembedding (no LM head) — nothing to centre"
REFUSE_WP4_LLAMA = "WP4: a Llama decoder has no value biases — nothing to fold"


# --------------------------------------------------------------------------------------------
# the Llama family: folds on the decoder itself (weights ``x @ W``, :mod:`symuat.models.causal_lm`)
# --------------------------------------------------------------------------------------------


def _decoder(model) -> CausalLM:
    """``model`` itself, refused unless it is a :class:`CausalLM`."""
    from symuat.models.causal_lm import CausalLM  # here, not at the top: `symuat --help` stays light
    if not isinstance(model, CausalLM):
        raise ModelError(f"expected a decoder (CausalLM), not {type(model).__name__}")
    return model


def _rebuild(model: CausalLM, cfg, layers, *, embed=None, norm=None, lm_head=None) -> CausalLM:
    """A new :class:`CausalLM` with ``cfg`` and ``layers`` (and the other parts of ``model`` unless given)."""
    from symuat.models.causal_lm import CausalLM
    out = CausalLM(cfg, model.embed_tokens if embed is None else embed, layers,
                   model.norm if norm is None else norm, None if cfg.tied else (model.lm_head if lm_head is None
                                                                               else lm_head),
                   source=model.source, tokenizer=model.tokenizer, embed_scale=model.embed_scale,
                   quant_types=dict(model.quant_types))
    out.reference_blind = list(model.reference_blind)
    return out


def unpermute_rope_rows(model) -> CausalLM:
    """GGUF's interleaved RoPE rows of every :math:`W_Q`/:math:`W_K` (and their biases) back to HF's
    half-split (WP7): the inverse of llama.cpp's ``permute``, with ``heads`` for Q and ``kv_heads``
    for K. Returns the decoder in the ``half`` layout (the same scores, X2)."""
    from symuat.kernel.head_maps import llama_cpp_unpermute

    m = _decoder(model)
    c = m.config
    cfg = replace(c, rope="half")
    un = lambda W, n: None if W is None else llama_cpp_unpermute(W, n)  # rows of (out, in); a bias is a column
    layers = [replace(layer, config=cfg, WQ=un(layer.WQ.T, c.heads).T, WK=un(layer.WK.T, c.kv_heads).T,
                      bq=un(layer.bq, c.heads), bk=un(layer.bk, c.kv_heads)) for layer in m.layers]
    return _rebuild(m, cfg, layers)


def fold_llama(model, *, norms: bool = True, centre_unembedding: bool = True, centre_writers: bool = False,
               layout: str = "half"):
    """Fold a Llama :class:`~symuat.models.causal_lm.CausalLM`; returns ``(CausalLM, log)``.

    ``layout="half"`` puts W_Q/W_K in the HF half-split order (what a safetensors folder holds).
    A norm scale γ multiplies the rows of each reader: ``(x ⊙ γ) W = x (diag(γ) W)``.
    """
    if centre_writers:
        raise FoldRefused(REFUSE_WP12)
    m = _decoder(model)
    c = m.config
    log: list[tuple[str, str]] = []
    if layout == "half" and c.rope == "interleaved":
        m = unpermute_rope_rows(m)
        log.append(("WP7", f"W_Q rows un-permuted per head with h={c.heads}, W_K with g={c.kv_heads} "
                           "(GGUF interleaved pairs → HF half-split)"))
    cfg = replace(m.config)
    layers = [replace(layer, config=cfg) for layer in m.layers]
    norm, head = m.norm, m.lm_head
    if norms:
        for layer in layers:
            g1, g2 = layer.g1[:, None], layer.g2[:, None]
            layer.WQ, layer.WK, layer.WV = g1 * layer.WQ, g1 * layer.WK, g1 * layer.WV
            layer.Wg, layer.Wu = g2 * layer.Wg, g2 * layer.Wu
            layer.g1, layer.g2 = np.ones_like(layer.g1), np.ones_like(layer.g2)
        head = m.lm_head * m.norm[None, :]  # rows of the head are (vocab, M): x (diag γ) Hᵀ = x (H diag γ)ᵀ
        norm = np.ones_like(m.norm)
        cfg.tied = False
        log.append(("WP1", f"{2 * c.layers} RMSNorm scales folded into Q, K, V and into gate and up; the final norm "
                           "into the LM head (now untied)"))
    if centre_unembedding:
        cfg.tied = False
        head = head - head.mean(axis=0, keepdims=True)
        log.append(("WP3", "unembedding centred over the vocabulary: each row of logits moves by its mean; "
                           "the probabilities do not change (no soft-capping)"))
    return _rebuild(m, cfg, layers, norm=norm, lm_head=head), log


#: the HF names of a Llama layer's projections (``(out, in)`` as stored) and their DecoderLayer fields
_PROJ = (("self_attn.q_proj", "WQ", "bq"), ("self_attn.k_proj", "WK", "bk"), ("self_attn.v_proj", "WV", "bv"),
         ("self_attn.o_proj", "WO", "bo"), ("mlp.gate_proj", "Wg", "bg"), ("mlp.up_proj", "Wu", "bu"),
         ("mlp.down_proj", "Wd", "bd"))


def hf_tensors(model) -> dict[str, np.ndarray]:
    """The tensors of a Llama decoder under their HF names, ``(out, in)`` as a safetensors file stores
    them (the inverse of :func:`symuat.models.decoder_reader.build`)."""
    m = _decoder(model)
    t = {"model.embed_tokens.weight": m.embed_tokens, "model.norm.weight": m.norm}
    if not m.config.tied:
        t["lm_head.weight"] = m.lm_head
    for k, layer in enumerate(m.layers):
        p = f"model.layers.{k}."
        for name, w, b in _PROJ:
            t[p + name + ".weight"] = getattr(layer, w).T
            if getattr(layer, b) is not None:
                t[p + name + ".bias"] = getattr(layer, b)
        t[p + "input_layernorm.weight"], t[p + "post_attention_layernorm.weight"] = layer.g1, layer.g2
    return t


# --------------------------------------------------------------------------------------------
# the BERT family (post-LN)
# --------------------------------------------------------------------------------------------


def fold_bert(weights, *, norms: bool = False, value_biases: bool = True, centre_writers: bool = True):
    """Fold a :class:`~symuat.models.families.bert.BertWeights`; returns ``(BertWeights, log)``."""
    if norms:
        raise FoldRefused(REFUSE_WP2)
    cfg = weights.config
    L = cfg["num_hidden_layers"]
    t = {k: np.asarray(v, dtype=np.float64) for k, v in weights.tensors.items()}
    log: list[tuple[str, str]] = []
    if value_biases:
        for k in range(L):
            p = f"encoder.layer.{k}.attention."
            bV = t[p + "self.value.bias"]
            t[p + "output.dense.bias"] = t[p + "output.dense.bias"] + t[p + "output.dense.weight"] @ bV
            t[p + "self.value.bias"] = np.zeros_like(bV)
        log.append(("WP4", f"{L} value biases folded into the attention output biases (softmax rows sum to 1)"))
    if centre_writers:
        for name in ("word_embeddings", "position_embeddings", "token_type_embeddings"):
            key = f"embeddings.{name}.weight"
            t[key] = t[key] - t[key].mean(axis=1, keepdims=True)
        for k in range(L):
            for p in (f"encoder.layer.{k}.attention.output.dense.", f"encoder.layer.{k}.output.dense."):
                t[p + "weight"] = t[p + "weight"] - t[p + "weight"].mean(axis=0, keepdims=True)
                t[p + "bias"] = t[p + "bias"] - t[p + "bias"].mean()
        log.append(("WP12", f"the 3 embedding tables and the {2 * L} residual writers (attention output, FFN output; "
                            "weights and biases) centred: every sum is read only by a LayerNorm"))
    return type(weights)(dict(cfg), t, weights.source), log  # a BertWeights


def naive_post_norm_fold(weights):
    """WP2's mistake on purpose: every post-LN's γ, β folded into the maps that read its output next
    (the FFN's first map; the next layer's Q/K/V), the LayerNorm set to (1, 0) — the skip path then
    carries the un-scaled stream. Returns BertWeights (a *different* model)."""
    cfg = weights.config
    L = cfg["num_hidden_layers"]
    t = {k: np.asarray(v, dtype=np.float64) for k, v in weights.tensors.items()}

    def fold_into(ln: str, readers: list[str]):
        g, b = t[ln + "weight"], t[ln + "bias"]
        for r in readers:
            W = t[r + "weight"]
            t[r + "bias"] = t[r + "bias"] + W @ b
            t[r + "weight"] = W * g[None, :]
        t[ln + "weight"], t[ln + "bias"] = np.ones_like(g), np.zeros_like(b)

    qkv = lambda k: [f"encoder.layer.{k}.attention.self.{n}." for n in ("query", "key", "value")]
    fold_into("embeddings.LayerNorm.", qkv(0))
    for k in range(L):
        fold_into(f"encoder.layer.{k}.attention.output.LayerNorm.", [f"encoder.layer.{k}.intermediate.dense."])
        if k + 1 < L:
            fold_into(f"encoder.layer.{k}.output.LayerNorm.", qkv(k + 1))
    return type(weights)(dict(cfg), t, weights.source)  # a BertWeights


# --------------------------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------------------------


def row_errors(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-row relative error ``max|a−b| / max(1, max|b|)`` (``inf`` where a value is not finite)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    err = np.abs(a - b).max(axis=-1) / np.maximum(1.0, np.abs(b).max(axis=-1))
    finite = np.isfinite(a).all(axis=-1) & np.isfinite(b).all(axis=-1)
    return np.where(finite, err, np.inf)


def compare_states(original: list[np.ndarray], folded: list[np.ndarray]) -> list[float]:
    """The worst per-row relative error of each state."""
    if len(original) != len(folded):
        raise ModelError(f"the folded model has {len(folded)} states, the original {len(original)}")
    return [float(row_errors(f, o).max()) for o, f in zip(original, folded)]


def centred(logits: np.ndarray) -> np.ndarray:
    """Logits minus each row's mean: the shift WP3 allows (a softmax does not see it)."""
    return logits - logits.mean(axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------------
# writing a folded checkpoint (a Hugging Face folder)
# --------------------------------------------------------------------------------------------


def llama_config_json(model, source_config: dict | None = None) -> dict:
    """The ``config.json`` of the folded Llama checkpoint ``model`` (HF names).

    A folder's own ``config.json`` (``source_config``) is kept, every field as it was (RoPE scaling,
    activation, biases …) but the head's tying and the dtype; a GGUF's is written from the parsed
    config, refusing what a Llama ``config.json`` cannot say (per-projection biases, llama.cpp's
    ``rope_freqs``/linear scaling)."""
    m = _decoder(model)
    c = m.config
    if source_config is not None:
        out = dict(source_config)
        out["tie_word_embeddings"] = bool(c.tied)
        out["torch_dtype"] = "float64"
        if "dtype" in out:
            out["dtype"] = "float64"
        return out
    from symuat.models.lifts import rope_inv_freq

    if not np.array_equal(c.frequencies(), rope_inv_freq(c.head_dim, c.rope_theta)):
        raise ModelError(f"{m.source}: the RoPE frequencies are not rope.freq_base's (rope_freqs or rope scaling); "
                         "a Llama config.json written from a GGUF cannot say that — not folded")
    has = {b: any(getattr(layer, b) is not None for layer in m.layers) for _, _, b in _PROJ}
    attention, mlp = [has[b] for b in ("bq", "bk", "bv", "bo")], [has[b] for b in ("bg", "bu", "bd")]
    for group, name in ((attention, "attention_bias (q, k, v, o)"), (mlp, "mlp_bias (gate, up, down)")):
        if any(group) and not all(group):
            raise ModelError(f"{m.source}: biases on some projections only; a Llama config.json's {name} is all or "
                             "none — not folded")
    act = {"silu": "silu", "gelu": "gelu", "gelu_tanh": "gelu_pytorch_tanh", "relu": "relu"}[c.activation]
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": c.M,
            "num_attention_heads": c.heads, "num_key_value_heads": c.kv_heads,
            "num_hidden_layers": c.layers, "intermediate_size": c.F, "head_dim": c.head_dim,
            "rms_norm_eps": c.eps, "rope_theta": c.rope_theta, "vocab_size": c.vocab,
            "max_position_embeddings": c.context, "tie_word_embeddings": bool(c.tied),
            "hidden_act": act, "torch_dtype": "float64", "attention_bias": all(attention), "mlp_bias": all(mlp)}


def write_checkpoint(out, config: dict, tensors: dict, extra_files: dict | None = None) -> None:
    """Write ``config.json`` + ``model.safetensors`` (+ ``extra_files``: name → bytes) into the new
    folder ``out`` atomically: everything goes to a temporary sibling first, renamed at the end."""
    import json
    import shutil
    import tempfile
    from pathlib import Path

    from safetensors.numpy import save_file

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ModelError(f"{out}: exists and is not an empty folder (choose a new --out)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        try:
            save_file({k: np.ascontiguousarray(v, dtype=np.float64) for k, v in tensors.items()},
                      str(tmp / "model.safetensors"), metadata={"format": "pt", "symuat": "folded (spec §9)"})
        except Exception as exc:  # safetensors reports a failed write as its own error, not OSError
            raise _as_os_error(exc) from exc
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _as_os_error(exc: Exception) -> Exception:
    """safetensors' ``SafetensorError: … I/O error: No space left on device (os error 28)`` as the
    ``OSError`` it reports (so a full disk is a full disk to the caller); other errors unchanged.

    >>> e = _as_os_error(RuntimeError("Error while serializing: I/O error: No space left on device (os error 28)"))
    >>> type(e).__name__, e.errno, e.strerror
    ('OSError', 28, 'No space left on device')
    """
    import os
    import re

    m = re.search(r"os error (\d+)\)", str(exc))
    if m is None:
        return exc
    code = int(m.group(1))
    return OSError(code, os.strerror(code))


# --------------------------------------------------------------------------------------------
# `symuat model fold`
# --------------------------------------------------------------------------------------------

#: the folds a user can ask for by name, and the WP entry each one rests on
FOLDS = {"norms": "WP1", "center-unembedding": "WP3", "center-writers": "WP12", "value-biases": "WP4"}


def add_fold_parser(msub) -> None:
    fold = msub.add_parser("fold", help="write a folded checkpoint (spec §9: norm scales WP1, centring WP3/WP12, "
                                        "value biases WP4) and check that it reproduces the model")
    fold.add_argument("--model", default="smollm2", help="smollm2, minilm, a .gguf file or a checkpoint folder")
    fold.add_argument("--out", required=True, help="a new folder for the folded checkpoint (HF layout, float64)")
    for name, wp in FOLDS.items():
        fold.add_argument(f"--{name}", action="store_true",
                          help=f"ask for this fold ({wp}); refused, naming the entry, where it would change the model")
    fold.add_argument("--text", action="append", help="a sentence to check on (repeatable)")
    fold.add_argument("--format", choices=("table", "json"), default="table")
    fold.add_argument("--tolerance", type=float, default=1e-12,
                      help="per-row relative error max|a−b|/max(1,max|b|) allowed for every state and the logits")


def _asked(args) -> dict:
    asked = {name: getattr(args, name.replace("-", "_")) for name in FOLDS}
    return asked if any(asked.values()) else {}


def fold_model(model: str, asked: dict) -> tuple:
    """``(family, original, folded tensors, log, extra files, config.json)`` for ``model``: its family's
    :class:`~symuat.models.family.Fold` (``asked`` empty: every fold that is valid for the family), or
    :class:`ModelError` saying why the family has none."""
    from symuat.models.family import families, family_of

    fam = family_of(model)
    if fam.fold is None:
        folding = ", ".join(f.name for f in families() if f.fold is not None)
        raise ModelError(f"{model}: {fam.fold_refusal or f'model_type {fam.name!r} is not supported ({folding})'}")
    return (fam, *fam.fold.run(model, asked))


def fold_llama_checkpoint(model: str, asked: dict):
    """``(original, folded tensors, log, extra files, config.json)`` of a Llama folder or GGUF: WP7, WP1, WP3
    (:func:`fold_llama`); centring the writers (WP12) and WP4 refused."""
    import json

    from symuat.models.family import load, resolve

    _, how, path = resolve(model)
    source_config = json.loads((path / "config.json").read_text()) if how == "folder" else None
    if asked.get("center-writers"):  # refused before anything is loaded
        raise FoldRefused(REFUSE_WP12)
    if asked.get("value-biases"):
        raise FoldRefused(REFUSE_WP4_LLAMA)
    original = load(path)
    opts = dict(norms=True, centre_unembedding=True, centre_writers=False) if not asked else \
        dict(norms=asked["norms"], centre_unembedding=asked["center-unembedding"],
             centre_writers=asked["center-writers"])
    folded, log = fold_llama(original, **opts)
    config = llama_config_json(folded, source_config)
    extra = {"tokenizer.json": original.tokenizer.to_str().encode()} if original.tokenizer is not None else {}
    return original, hf_tensors(folded), log, extra, config


def check_folded(family: Family, original, folder, texts: list[str]) -> list[dict]:
    """Reload the written checkpoint from ``folder`` and compare every state (and the logits, centred)
    with the original model on ``texts``: the family's own check, else :func:`compare_decoder`."""
    check = family.fold.check if family.fold is not None and family.fold.check is not None else compare_decoder
    return check(original, folder, texts)


def compare_decoder(original, folder, texts: list[str], *, centre_states: bool = False) -> list[dict]:
    """A folded decoder reloaded from ``folder`` by its family's loader against ``original``
    (:func:`compare_folded`)."""
    from symuat.models.family import load

    return compare_folded(_decoder(original), load(folder), texts, centre_states=centre_states)


def compare_folded(a, b, texts: list[str], *, centre_states: bool) -> list[dict]:
    """Every state of the original ``a`` and the folded ``b`` (each row's mean removed when ``centre_states``:
    WP12 moves it) and the logits after removing each row's mean (WP3)."""
    from symuat.models.fold_layernorm import centred_rows

    out = []
    for text in texts:
        ids = a.tokenize(text)
        sa, sb = a.hidden_states(ids), b.hidden_states(ids)
        logit = float(row_errors(centred(b.logits(sb[-1])), centred(a.logits(sa[-1]))).max())
        if centre_states:
            sa, sb = [centred_rows(s) for s in sa], [centred_rows(s) for s in sb]
        errs = compare_states(sa, sb)
        out.append({"text": text, "tokens": int(ids.size), "states": errs, "logits_centred": logit})
    return out


def run_fold(args) -> int:
    import json
    import math
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    out = Path(args.out)
    show = sys.stderr.isatty()

    def progress(msg: str) -> None:  # one line on a terminal, overwritten; nothing in a pipe
        if show:
            print(f"\r\033[K{msg}", end="" if msg else "", file=sys.stderr, flush=True)

    try:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ModelError(f"{out}: exists and is not an empty folder (choose a new --out)")
        if not (args.tolerance > 0 and math.isfinite(args.tolerance)):
            raise ModelError(f"--tolerance must be a positive number, not {args.tolerance}")
        progress(f"loading and folding {args.model} …")
        fam, original, tensors, log, extra, config = fold_model(args.model, _asked(args))
        family = fam.name
    except ModelError as exc:
        progress("")
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    from symuat.interrupt import deferred, pause_point

    stage = None
    try:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            with deferred():  # a signal cannot come between creating the folder and naming it
                stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent)) / "checkpoint"
        except OSError as exc:
            print(f"symuat: {out}: cannot write there ({exc.strerror or exc})", file=sys.stderr)
            return 2
        try:
            progress(f"writing the folded checkpoint ({sum(v.size for v in tensors.values()) * 8 / 1e6:.0f} MB) …")
            write_checkpoint(stage, config, tensors, extra)
        except OSError as exc:  # disk full, permissions: nothing is left behind (the stage is removed)
            progress("")
            print(f"symuat: {out}: writing the checkpoint failed ({exc.strerror or exc}); nothing written",
                  file=sys.stderr)
            return 2
        pause_point("fold", stage=str(stage))  # for tests: a signal here must leave no temporary folder
        texts = args.text or list(fam.fold.texts)
        progress("reloading it and checking every state …")
        try:
            results = check_folded(fam, original, stage, texts)
        except ModelError as exc:
            progress("")
            print(f"symuat: {exc}", file=sys.stderr)
            return 2
        progress("")
        worst = max([e for r in results for e in r["states"]]
                    + [r["logits_centred"] for r in results if r["logits_centred"] is not None])
        passed = math.isfinite(worst) and worst <= args.tolerance
        if passed:
            if out.exists():
                out.rmdir()
            stage.rename(out)
            out.chmod(0o755)
            for f in out.iterdir():
                f.chmod(0o644)
    finally:  # also on Ctrl-C and SIGTERM (symuat.interrupt): no temporary folder is left
        if stage is not None:
            shutil.rmtree(stage.parent, ignore_errors=True)
    report = {"model": args.model, "family": family, "out": str(out) if passed else None,
              "folds": [{"entry": wp, "what": what} for wp, what in log], "tolerance": args.tolerance,
              "error_definition": "per row: max|folded − original| / max(1, max|original|); logits after "
                                  "removing each row's mean (WP3's allowed shift)",
              "texts": results, "worst": worst if math.isfinite(worst) else None, "passed": passed}
    if args.format == "json":
        print(json.dumps(json_safe(report), indent=2, allow_nan=False))
    else:
        print(f"model {args.model} ({family}): folded")
        for wp, what in log:
            print(f"  {wp:<5} {what}")
        print(f"check: {report['error_definition']}; tolerance {args.tolerance:g}")
        for r in results:
            extra_l = f", logits (centred) {r['logits_centred']:.2e}" if r["logits_centred"] is not None else ""
            print(f"  {r['text']!r} ({r['tokens']} tokens): {len(r['states'])} states, worst "
                  f"{max(r['states']):.2e}{extra_l}")
        print(f"{'PASS' if passed else 'FAIL'}: worst {worst:.2e}; "
              + (f"written to {out}" if passed else "nothing written"))
    return 0 if passed else 1
