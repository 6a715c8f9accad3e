r"""Fold a checkpoint: the weight-processing identities of spec §9 applied to real weights.

Weights in, weights out (``tensors`` dicts with Hugging Face names), so the module does not
depend on how a family is run:

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

Each fold returns the new tensors and a list of ``(WP id, what was done)`` lines.

>>> import numpy as np
>>> centred(np.array([[1.0, 2.0, 6.0]])).tolist()
[[-2.0, -1.0, 3.0]]
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from symuat.models.checkpoint import ModelError


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
# the Llama family
# --------------------------------------------------------------------------------------------


def unpermute_rope_rows(tensors: dict, config) -> dict:
    """GGUF's interleaved RoPE rows of every ``q_proj``/``k_proj`` back to HF's half-split (WP7):
    the inverse of llama.cpp's ``permute``, with ``heads`` for Q and ``kv_heads`` for K."""
    from symuat.kernel.head_maps import llama_cpp_unpermute

    out = dict(tensors)
    for k in range(config.layers):
        p = f"model.layers.{k}.self_attn."
        out[p + "q_proj.weight"] = llama_cpp_unpermute(tensors[p + "q_proj.weight"], config.heads)
        out[p + "k_proj.weight"] = llama_cpp_unpermute(tensors[p + "k_proj.weight"], config.kv_heads)
    return out


def fold_llama(weights, *, norms: bool = True, centre_unembedding: bool = True, centre_writers: bool = False,
               layout: str = "half"):
    """Fold a :class:`~symuat.models.llama.LlamaWeights`; returns ``(LlamaWeights, log)``.

    ``layout="half"`` writes W_Q/W_K in the HF half-split order (what a safetensors folder holds).
    """
    if centre_writers:
        raise FoldRefused(REFUSE_WP12)
    c = weights.config
    t = {k: np.asarray(v, dtype=np.float64) for k, v in weights.tensors.items()}
    log: list[tuple[str, str]] = []
    cfg = copy.copy(c)
    if layout == "half" and c.rope == "interleaved":
        t = unpermute_rope_rows(t, c)
        cfg.rope = "half"
        log.append(("WP7", f"W_Q rows un-permuted per head with h={c.heads}, W_K with g={c.kv_heads} "
                           "(GGUF interleaved pairs → HF half-split)"))
    if norms:
        for k in range(c.layers):
            p = f"model.layers.{k}."
            g1 = t[p + "input_layernorm.weight"]
            for name in ("q_proj", "k_proj", "v_proj"):
                t[p + f"self_attn.{name}.weight"] = t[p + f"self_attn.{name}.weight"] * g1[None, :]
            g2 = t[p + "post_attention_layernorm.weight"]
            for name in ("gate_proj", "up_proj"):
                t[p + f"mlp.{name}.weight"] = t[p + f"mlp.{name}.weight"] * g2[None, :]
            t[p + "input_layernorm.weight"] = np.ones_like(g1)
            t[p + "post_attention_layernorm.weight"] = np.ones_like(g2)
        head = t["lm_head.weight"] if not c.tied else t["model.embed_tokens.weight"]
        t["lm_head.weight"] = head * t["model.norm.weight"][None, :]
        t["model.norm.weight"] = np.ones_like(t["model.norm.weight"])
        cfg.tied = False
        log.append(("WP1", f"{2 * c.layers} RMSNorm scales folded into Q, K, V and into gate and up; the final norm "
                           "into the LM head (now untied)"))
    if centre_unembedding:
        if c.tied and not norms:
            t["lm_head.weight"] = t["model.embed_tokens.weight"].copy()
            cfg.tied = False
        t["lm_head.weight"] = t["lm_head.weight"] - t["lm_head.weight"].mean(axis=0, keepdims=True)
        log.append(("WP3", "unembedding centred over the vocabulary: each row of logits moves by its mean; "
                           "the probabilities do not change (no soft-capping)"))
    from symuat.models.llama import LlamaWeights

    return LlamaWeights(cfg, t, weights.source, weights.tokenizer, dict(weights.quant_types)), log


# --------------------------------------------------------------------------------------------
# the BERT family (post-LN)
# --------------------------------------------------------------------------------------------


def fold_bert(weights, *, norms: bool = False, value_biases: bool = True, centre_writers: bool = True):
    """Fold a :class:`~symuat.models.bert.BertWeights`; returns ``(BertWeights, log)``."""
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
    from symuat.models.bert import BertWeights

    return BertWeights(dict(cfg), t, weights.source), log


def naive_post_norm_fold(weights):
    """WP2's mistake on purpose: every post-LN's γ, β folded into the maps that read its output next
    (the FFN's first map; the next layer's Q/K/V), the LayerNorm set to (1, 0) — the skip path then
    carries the un-scaled stream. Returns BertWeights (a *different* model)."""
    from symuat.models.bert import BertWeights

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
    return BertWeights(dict(cfg), t, weights.source)


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


def llama_config_json(config) -> dict:
    """The ``config.json`` of a Llama checkpoint (HF names) for ``config``."""
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": config.M,
            "num_attention_heads": config.heads, "num_key_value_heads": config.kv_heads,
            "num_hidden_layers": config.layers, "intermediate_size": config.F, "head_dim": config.head_dim,
            "rms_norm_eps": config.eps, "rope_theta": config.rope_theta, "vocab_size": config.vocab,
            "max_position_embeddings": config.context, "tie_word_embeddings": bool(config.tied),
            "hidden_act": "silu", "torch_dtype": "float64", "attention_bias": False, "mlp_bias": False}


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
        save_file({k: np.ascontiguousarray(v, dtype=np.float64) for k, v in tensors.items()},
                  str(tmp / "model.safetensors"), metadata={"format": "pt", "symuat": "folded (spec §9)"})
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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


def fold_model(model: str, asked: dict):
    """``(family, original weights, folded weights, log, extra files)`` for ``model``; an empty
    ``asked`` means every fold that is valid for the family."""
    from symuat.models.command import _family

    family = _family(model)
    if family.startswith("unsupported"):
        raise ModelError(f"{model}: model_type {family.split(':', 1)[1]!r} is not supported (llama, bert)")
    if family == "llama":
        from symuat.models.llama import load_llama

        if asked.get("center-writers"):  # refused before anything is loaded
            raise FoldRefused(REFUSE_WP12)
        if asked.get("value-biases"):
            raise FoldRefused(REFUSE_WP4_LLAMA)
        weights = load_llama(model)
        opts = dict(norms=True, centre_unembedding=True, centre_writers=False) if not asked else \
            dict(norms=asked["norms"], centre_unembedding=asked["center-unembedding"],
                 centre_writers=asked["center-writers"])
        folded, log = fold_llama(weights, **opts)
        extra = {"tokenizer.json": weights.tokenizer.to_str().encode()} if weights.tokenizer is not None else {}
        return family, weights, folded, log, extra, llama_config_json(folded.config)
    from symuat.models.bert import _folder, load_bert

    if asked.get("norms"):
        raise FoldRefused(REFUSE_WP2)
    if asked.get("center-unembedding"):
        raise FoldRefused(REFUSE_WP3_BERT)
    weights = load_bert(model)
    opts = dict(norms=False, value_biases=True, centre_writers=True) if not asked else \
        dict(norms=asked["norms"], value_biases=asked["value-biases"], centre_writers=asked["center-writers"])
    folded, log = fold_bert(weights, **opts)
    src = _folder(model)
    extra = {f: (src / f).read_bytes() for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                                 "special_tokens_map.json") if (src / f).is_file()}
    return family, weights, folded, log, extra, dict(weights.config)


def check_folded(family: str, original, folder, texts: list[str]) -> list[dict]:
    """Reload the written checkpoint from ``folder`` and compare every state (and the logits, centred)
    with the original model on ``texts``."""
    out = []
    if family == "llama":
        from symuat.models.llama import LlamaNumpy, load_safetensors

        a, b = LlamaNumpy(original), LlamaNumpy(load_safetensors(folder))
        for text in texts:
            ids = a.tokenize(text)
            sa, sb = a.hidden_states(ids), b.hidden_states(ids)
            errs = compare_states(sa, sb)
            logit = float(row_errors(centred(b.logits(sb[-1])), centred(a.logits(sa[-1]))).max())
            out.append({"text": text, "tokens": int(ids.size), "states": errs, "logits_centred": logit})
        return out
    from symuat.models.bert import BertNumpy, load_bert, tokenize

    a, b = BertNumpy(original), BertNumpy(load_bert(folder))
    for text in texts:
        ids = tokenize(text, folder)
        errs = compare_states(a.hidden_states(ids), b.hidden_states(ids))
        out.append({"text": text, "tokens": int(ids.size), "states": errs, "logits_centred": None})
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
        family, original, folded, log, extra, config = fold_model(args.model, _asked(args))
    except ModelError as exc:
        progress("")
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent)) / "checkpoint"
    except OSError as exc:
        print(f"symuat: {out}: cannot write there ({exc.strerror or exc})", file=sys.stderr)
        return 2
    try:
        try:
            progress(f"writing the folded checkpoint ({sum(v.size for v in folded.tensors.values()) * 8 / 1e6:.0f} MB) …")
            write_checkpoint(stage, config, folded.tensors, extra)
        except OSError as exc:  # disk full, permissions: nothing is left behind (the stage is removed)
            print(f"symuat: {out}: writing the checkpoint failed ({exc.strerror or exc}); nothing written",
                  file=sys.stderr)
            return 1
        texts = args.text or (["The capital of France is"] if family == "llama" else
                              ["The cat sat on the mat.", "A transformer is a universal approximator."])
        progress("reloading it and checking every state …")
        try:
            results = check_folded(family, original, stage, texts)
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
    finally:
        shutil.rmtree(stage.parent, ignore_errors=True)
    report = {"model": args.model, "family": family, "out": str(out) if passed else None,
              "folds": [{"entry": wp, "what": what} for wp, what in log], "tolerance": args.tolerance,
              "error_definition": "per row: max|folded − original| / max(1, max|original|); logits after "
                                  "removing each row's mean (WP3's allowed shift)",
              "texts": results, "worst": worst if math.isfinite(worst) else None, "passed": passed}
    if args.format == "json":
        from symuat.models.command import _strict

        print(json.dumps(_strict(report), indent=2, allow_nan=False))
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
