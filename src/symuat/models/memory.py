"""A model already in memory: :func:`from_hf` reads a transformers ``PreTrainedModel`` (and its
tokenizer) as what its saved folder holds, through the family loaders' own code.

* the ``config.json`` dict is what ``save_pretrained`` writes — ``config.to_json_string(use_diff=True)``
  read back, with the ``dtype`` and ``architectures`` it stamps (both inert);
* the tensors are the ``state_dict()`` (non-persistent buffers are not in it, as not in the
  file; a tensor sharing its storage with an earlier one — a tied head — is left out, as
  ``save_pretrained`` leaves it out), each widened exactly to float64 (bf16, f16, f32, f64 are
  exactly float64 numbers; integer buffers as they are); any other dtype is refused naming the
  tensor, as in a file (:data:`symuat.models.formats.SAFETENSORS_FLOATS`);
* the tokenizer: a ``tokenizers.Tokenizer``, a transformers fast tokenizer (its
  ``backend_tokenizer``: what ``tokenizer.json`` holds) or ``None`` (explaining a text is then
  refused: there is no tokenizer);

then the family of ``config.model_type`` loads a :class:`~symuat.models.formats.InMemory`
checkpoint with its ``load_folder`` — the same fields read, the same refusals, the same model
(its states and logits equal the folder's bit for bit; tested). With ``reference=True`` a float64
copy of the model (eager attention) is kept as the reference for ``check``/``explain`` — the
float32 islands are patched there as for a folder.
"""

from __future__ import annotations

import copy
import json

import numpy as np

from symuat.models.formats import SAFETENSORS_FLOATS, InMemory, ModelError

#: torch dtype names → safetensors dtype names, for the widening rule and the messages
_TORCH = {"bfloat16": "BF16", "float16": "F16", "float32": "F32", "float64": "F64", "bool": "BOOL", "uint8": "U8",
          "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64", "uint16": "U16", "uint32": "U32",
          "uint64": "U64"}


def config_dict(model) -> dict:
    """The ``config.json`` that ``model.save_pretrained`` would write, as a dict."""
    config = json.loads(model.config.to_json_string(use_diff=True))
    config["dtype"] = str(model.dtype).split(".")[1]
    config["architectures"] = [type(model).__name__]
    return config


def state_tensors(model, name: str) -> dict[str, np.ndarray]:
    """The tensors ``save_pretrained`` would write, widened exactly (floats to float64)."""
    import torch

    out, seen = {}, set()
    for key, t in model.state_dict().items():
        if t.device.type == "meta":
            raise ModelError(f"{name}: tensor {key!r} is on the meta device (not loaded); load the weights first")
        ptr = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape)) if t.numel() else None
        if ptr is not None and ptr in seen:  # tied to an earlier tensor: not written by save_pretrained
            continue
        seen.add(ptr)
        kind = _TORCH.get(str(t.dtype).split(".")[1])
        if kind is None:
            raise ModelError(f"{name}: tensor {key!r} has dtype {t.dtype}, which symuat cannot widen exactly to "
                             f"float64 (it reads {', '.join(SAFETENSORS_FLOATS)} and integer tensors)")
        t = t.detach().cpu()
        out[key] = t.to(torch.float64).numpy() if kind in SAFETENSORS_FLOATS else t.numpy().copy()
    return out


def _tokenizer(tokenizer, name: str):
    if tokenizer is None:
        return None
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    if not isinstance(backend, Tokenizer):
        raise ModelError(f"{name}: the tokenizer is a {type(tokenizer).__name__}; symuat reads a tokenizers.Tokenizer "
                         "or a transformers fast tokenizer (backend_tokenizer)")
    tok = Tokenizer.from_str(backend.to_str())  # a copy: the caller's padding/truncation settings stay theirs
    tok.no_padding()
    tok.no_truncation()
    return tok


def from_hf(model, tokenizer=None, *, reference: bool = True):
    """The symuat model of a transformers ``PreTrainedModel`` in memory (any decoder family symuat
    reads from a folder), in float64; the same object as loading its saved folder.

    A field or tensor the family does not model is refused (:class:`ModelError`) as in a folder."""
    from symuat.models.family import families

    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "state_dict") or not hasattr(config, "to_json_string"):
        raise ModelError(f"from_hf takes a transformers PreTrainedModel, not {type(model).__name__}")
    name = f"<in memory {type(model).__name__} {id(model):x}>"
    kind = getattr(config, "model_type", None)
    for fam in families():
        if kind in fam.model_types:
            break
    else:
        types = ", ".join(repr(t) for f in families() for t in f.model_types)
        raise ModelError(f"{name}: model_type {kind!r} is not supported (symuat's families read model_type {types})")
    if fam.kind != "decoder":
        raise ModelError(f"{name}: from_hf reads the decoder families; a {fam.name} model is read from its saved "
                         "folder (save_pretrained, then --model FOLDER)")
    net = fam.load_folder(InMemory(name, config_dict(model), state_tensors(model, name), _tokenizer(tokenizer, name)))
    if reference:
        _keep_reference(model, net)
    return net


def _keep_reference(model, net) -> None:
    """A float64 eager copy of ``model`` as the reference of ``net`` (:func:`symuat.models.reference.hf_model`)."""
    from symuat.models import reference

    if not reference.available():
        return
    import torch

    hf = copy.deepcopy(model).to(torch.float64).eval()
    if hasattr(hf, "set_attn_implementation"):
        hf.set_attn_implementation("eager")
    else:  # pragma: no cover (older transformers)
        hf.config._attn_implementation = "eager"
    reference._CACHE[(str(net.source), True)] = hf
