"""The independent reference (optional tier): the checkpoint's own files loaded by transformers,
run in float64, never built from symuat's parsed config.

* a folder: ``AutoModelForCausalLM`` / ``BertModel`` ``.from_pretrained(folder)``;
* a ``.gguf`` file: ``AutoModelForCausalLM.from_pretrained(parent, gguf_file=name)`` (transformers'
  own GGUF reader, which also undoes llama.cpp's Q/K row permutation).

transformers must load every tensor of the checkpoint and initialise none (``output_loading_info``):
otherwise the checkpoint is refused, naming the tensors. Where transformers' GGUF loader drops a
feature symuat models (a ``rope_freqs`` tensor, rope-scaling metadata, biases of the ``llama``
architecture: ``model.reference_blind``), symuat refuses to check against it — a reference sharing
the blind spot would agree with anything.

HF's decoders "in float64" keep float32 islands (RMSNorm casts to float32, the RoPE angles are
built in float32, eager attention's softmax runs in float32): :class:`Float64Islands` makes them
float64 for the call, with HF's own formulas (the RoPE frequencies are HF's ``rope_init_fn``
evaluated with ``torch.float`` meaning float64).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import numpy as np

from symuat.models.formats import ModelError

NOTE = ("transformers' {cls} built from the checkpoint's own files (from_pretrained{how}) in float64, "
        "attn_implementation='eager'; its float32 islands made float64 for the call: RMSNorm (casts to float32), "
        "the RoPE angles (HF's own rope_init_fn evaluated in float64; position × inv_freq in float64), eager "
        "attention's softmax (dtype=float32). 'stock_hf_float64_gap' (on the text's first 'tokens' tokens, at most 1,024) is unpatched HF float64 vs the float64 "
        "forward: a finding about HF, not a tolerance of symuat. HF's last hidden state is taken after the final "
        "RMSNorm, so the last state is compared after that norm")


#: the stock-HF gap (a finding about HF, not part of the check) is measured on at most this many
#: first tokens: a causal model's states on a prefix are its states on those rows of the whole
#: text, so the gap is the one of those rows, and a long text does not pay a second whole HF
#: forward (at 2,048 SmolLM2 tokens: 88 s and 0.7 GB more peak)
STOCK_PREFIX = 1024


def stock_prefix(ids: np.ndarray) -> np.ndarray:
    """The first :data:`STOCK_PREFIX` tokens of ``ids``: what the stock-HF gap is measured on.

    >>> stock_prefix(np.arange(3000)).size, stock_prefix(np.arange(7)).size
    (1024, 7)
    """
    return np.asarray(ids)[:STOCK_PREFIX]


def available() -> bool:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def _offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def refuse_blind(model) -> None:
    """Refuse a checkpoint whose features transformers' loader drops (no independent reference)."""
    blind = getattr(model, "reference_blind", None)
    if blind:
        raise ModelError(f"{model.source}: {blind[0]} changes the computation, but transformers' GGUF loader drops "
                         "it, so no independent reference can be built and symuat refuses the file (with "
                         "--no-reference symuat checks the rewrite against its own forward, which models it)")


_CACHE: dict = {}


def _quiet_tqdm():
    """transformers' GGUF reader prints a progress bar on stderr: silence it for the call."""
    try:
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def ctx():
        bar = gguf_utils.tqdm
        gguf_utils.tqdm = lambda it, **kw: it
        try:
            yield
        finally:
            gguf_utils.tqdm = bar

    return ctx()


def hf_model(source: Path, *, decoder: bool = True):
    """The transformers model of ``source`` (a folder or a .gguf), float64, eval, cached per source."""
    key = (str(source), decoder)
    if key in _CACHE:
        return _CACHE[key]
    _offline()
    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    source = Path(source)
    kw = dict(dtype=torch.float64, output_loading_info=True)
    if decoder:
        kw["attn_implementation"] = "eager"
    cls = transformers.AutoModelForCausalLM if decoder else transformers.BertModel
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with _quiet_tqdm():
            if source.suffix == ".gguf" or source.is_file():
                model, info = _from_gguf(source, kw)
            else:
                model, info = cls.from_pretrained(str(source), local_files_only=True, **kw)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError, AttributeError) as exc:
        raise ModelError(f"{source}: transformers cannot load the checkpoint for the reference "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from exc
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    tied = getattr(model.config, "tie_word_embeddings", False)
    inert = (lambda k: k.startswith("pooler.")) if not decoder else (lambda k: False)  # not a hidden state
    missing = [k for k in info.get("missing_keys", []) if not (tied and k == "lm_head.weight") and not inert(k)]
    problems = [("missing (it would be initialised at random)", missing),
                ("not used by transformers' model", [k for k in info.get("unexpected_keys", []) if not inert(k)]),
                ("of a shape transformers does not expect", [m[0] if isinstance(m, tuple) else m
                                                               for m in info.get("mismatched_keys", [])])]
    for what, keys in problems:
        if keys:
            raise ModelError(f"{source}: the reference cannot be built from the checkpoint: tensor(s) "
                             f"{', '.join(sorted(map(str, keys))[:4])} {what}")
    model = model.to(torch.float64).eval()
    _CACHE[key] = model
    return model


def _from_gguf(source: Path, kw: dict):
    """transformers' own GGUF path (what ``from_pretrained(gguf_file=…)`` does, without accelerate):
    the config parsed by transformers from the GGUF metadata, the model built from it, the tensors
    read and renamed (Q/K rows un-permuted) by ``load_gguf_checkpoint``."""
    import torch
    import transformers
    from transformers.initialization import no_init_weights
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    config = transformers.AutoConfig.from_pretrained(str(source.parent), gguf_file=source.name)
    with no_init_weights():  # every parameter is loaded below; none may stay random (checked)
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager",
                                                              dtype=torch.float64)
    tensors = load_gguf_checkpoint(str(source), return_tensors=True, model_to_load=model).pop("tensors")
    own = model.state_dict(keep_vars=True)  # what load_state_dict would fill: references, no copies
    unexpected, mismatched = [], []
    with torch.no_grad():
        for k in list(tensors):  # one tensor at a time: never a second float64 copy of the model
            v = tensors.pop(k)  # float32 as dequantized; copy_ widens it exactly into the float64 parameter
            if k not in own:
                unexpected.append(k)
                continue
            target = own.pop(k)  # what is left in ``own`` at the end is missing
            if target.shape != v.shape:
                mismatched.append(k)
            else:
                target.copy_(v)
    if getattr(config, "tie_word_embeddings", False):
        model.tie_weights()
    return model, {"missing_keys": sorted(own), "unexpected_keys": unexpected, "mismatched_keys": mismatched}


class _Torch64:
    """``torch`` with ``torch.float`` meaning float64 (to evaluate HF's RoPE init functions in float64)."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return self._torch.float64 if name == "float" else getattr(self._torch, name)


def _inv_freq64(rot):
    """HF's own inverse frequencies of a rotary module, evaluated in float64."""
    import torch
    import transformers.modeling_rope_utils as mru

    mod = sys.modules[type(rot).__module__]
    saved = (mod.torch, mru.torch)
    mod.torch = mru.torch = _Torch64(torch)
    try:
        kind = getattr(rot, "rope_type", "default")
        if kind == "default":
            inv, scaling = rot.compute_default_rope_parameters(rot.config)
        else:
            inv, scaling = mru.ROPE_INIT_FUNCTIONS[kind](rot.config, None)
    finally:
        mod.torch, mru.torch = saved
    return inv.to(torch.float64), float(scaling)


class Float64Islands:
    """Make a HF decoder's float32 islands float64 for the duration of a ``with`` block.

    * every ``*RMSNorm`` module: ``weight * (x * rsqrt(mean(x²) + eps))`` in the input dtype
      (HF casts to float32); ``offset`` adds a constant to the weight (Gemma: ``1 + weight``);
    * every ``*RotaryEmbedding``: HF's inverse frequencies evaluated in float64, angles in float64;
    * ``torch.nn.functional.softmax`` called with ``dtype=torch.float32``: float64.
    """

    def __init__(self, model, *, norm_offset: float = 0.0):
        self.model, self.offset = model, norm_offset

    def __enter__(self):
        import torch

        self.saved = []
        offset = self.offset
        norms = {type(m) for m in self.model.modules() if type(m).__name__.endswith("RMSNorm")}
        rots = [m for m in self.model.modules() if type(m).__name__.endswith("RotaryEmbedding")]
        table = {id(r): _inv_freq64(r) for r in rots}

        def rms_forward(norm, x):
            var = x.pow(2).mean(-1, keepdim=True)
            eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
            return (norm.weight + offset) * (x * torch.rsqrt(var + eps))

        def rope_forward(rot, x, position_ids, *args, **kw):
            inv, scaling = table[id(rot)]
            freqs = position_ids[..., None].to(torch.float64) * inv
            emb = torch.cat((freqs, freqs), dim=-1)
            return (emb.cos() * scaling).to(x.dtype), (emb.sin() * scaling).to(x.dtype)

        for cls in norms:
            self.saved.append((cls, "forward", cls.forward))
            cls.forward = rms_forward
        for cls in {type(r) for r in rots}:
            self.saved.append((cls, "forward", cls.forward))
            cls.forward = rope_forward
        F = torch.nn.functional
        softmax = F.softmax

        def softmax64(t, dim=None, dtype=None, **kw):
            return softmax(t, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype, **kw)

        self.saved.append((F, "softmax", softmax))
        F.softmax = softmax64
        return self

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        return False


#: the transformers classes whose logits are their ``lm_head`` (a bias-free Linear) on the last
#: hidden state and nothing else — for these the logits can be formed a chunk of rows at a time
LM_HEAD_ONLY = ("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM", "Olmo2ForCausalLM",
                "Phi3ForCausalLM", "GPT2LMHeadModel", "GPTNeoXForCausalLM")
#: the classes whose logits are their ``lm_head`` then ``final_logit_softcapping`` (when the config sets
#: one: ``c·tanh(l/c)``, the same three torch operations as their ``forward``)
SOFTCAP_HEAD = ("Gemma2ForCausalLM", "Gemma3ForCausalLM")


def decoder_reference(model, ids, *, faithful: bool = True, logits: bool = True) -> dict | None:
    """Hidden states and logits of the checkpoint through transformers in float64, or None when not installed.

    ``faithful=True`` makes the float32 islands float64 (the family's ``reference_islands``,
    default :class:`Float64Islands`); ``False`` is stock HF float64, kept to measure the gap.

    ``logits=False`` (long texts): the N × vocab logits are not formed; ``logit_rows(idx)`` gives
    HF's own ``lm_head`` on those rows of its last hidden state (what its ``forward`` does, for the
    classes of :data:`LM_HEAD_ONLY`, and with the soft-cap for :data:`SOFTCAP_HEAD`; another class
    runs its whole ``forward`` and the rows are read from its logits)."""
    if not logits and available():
        hf = family_hf_model(model)
        head = hf.get_output_embeddings()
        if type(hf).__name__ in LM_HEAD_ONLY + SOFTCAP_HEAD and getattr(head, "bias", None) is None:
            cap = getattr(hf.config, "final_logit_softcapping", None) if type(hf).__name__ in SOFTCAP_HEAD else None
            return _reference_rows(model, hf, head if cap is None else _capped(head, cap), ids, faithful)
        full = decoder_reference(model, ids, faithful=faithful)
        full["logit_rows"] = lambda idx, L=full["logits"]: L[np.asarray(idx)]
        return full
    if not available():
        return None
    refuse_blind(model)
    import torch

    hf = family_hf_model(model)
    ctx = islands(model, hf) if faithful else contextlib.nullcontext()
    with ctx, torch.no_grad():
        out = hf(input_ids=torch.tensor(np.asarray(ids)[None]), output_hidden_states=True)
    return {"hidden_states": [h[0].numpy() for h in out.hidden_states], "logits": out.logits[0].numpy()}


def family_hf_model(model):
    """The float64 HF model of a decoder's checkpoint: the family's own ``reference_model(source)`` when it
    defines one (Gemma 3 from a GGUF: transformers' loader leaves out a constant the family gives it, and
    says so), else :func:`hf_model`."""
    builder = _family(model).reference_model
    return builder(Path(model.source)) if builder is not None else hf_model(model.source, decoder=True)


def release(model) -> None:
    """Drop the cached transformers model of ``model`` (a float64 copy of the weights): a long run
    frees it once the reference's states are taken (the logit rows keep only its ``lm_head``)."""
    import gc

    _CACHE.pop((str(model.source), True), None)
    gc.collect()


def _capped(head, cap: float):
    """``head`` then the soft-cap of Gemma's ``forward``: ``tanh(l / cap) * cap``."""
    import torch

    return lambda h: torch.tanh(head(h) / cap) * cap


def _reference_rows(model, hf, head, ids, faithful: bool) -> dict:
    import torch

    refuse_blind(model)
    ctx = islands(model, hf) if faithful else contextlib.nullcontext()
    with ctx, torch.no_grad():
        out = hf.get_decoder()(input_ids=torch.tensor(np.asarray(ids)[None]), output_hidden_states=True,
                               use_cache=False)
    hs = [h[0].numpy() for h in out.hidden_states]
    last = out.hidden_states[-1][0]

    def logit_rows(idx):
        with torch.no_grad():
            return head(last[torch.as_tensor(np.asarray(idx))]).numpy()

    return {"hidden_states": hs, "logit_rows": logit_rows}


def encoder_reference(folder: Path, ids_batch: np.ndarray, attention_mask: np.ndarray) -> list[np.ndarray] | None:
    """Hidden states of HF ``BertModel`` in float64, or None when transformers/torch are absent."""
    if not available():
        return None
    import torch

    model = hf_model(folder, decoder=False)
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ids_batch), attention_mask=torch.tensor(attention_mask),
                    output_hidden_states=True)
    return [h.numpy() for h in out.hidden_states]


def _family(model):
    """The :class:`~symuat.models.family.Family` of a loaded ``model``."""
    from symuat.models.family import named

    try:
        return named(model.family)
    except ModelError:
        raise ModelError(f"{model.source}: no family module for {model.family!r}") from None


def islands(model, hf):
    """The context manager making ``hf``'s float32 islands float64: the family's own
    (``reference_islands``), else :class:`Float64Islands`."""
    own = _family(model).reference_islands
    return (own or Float64Islands)(hf)
