"""The model families and how a ``--model`` argument finds one.

A family is one module (``symuat.models.bert``, ``.llama``, ``.qwen2``, …) that defines

* ``FAMILY`` — a :class:`Family`: its name, the ``config.json`` ``model_type`` values and GGUF
  architectures it reads, the packaged models it ships (name → path function), ``kind``
  (``encoder`` | ``decoder``) and ``features``, the list of what it models (README, messages);
* ``load_folder(folder) -> model`` — a Hugging Face folder (``config.json`` + ``*.safetensors``);
* ``load_gguf(f: GGUFFile) -> model`` — optional, a GGUF file (``formats.open_gguf``);
* ``reference_islands(hf_model)`` — optional, a context manager making the HF model's float32
  islands float64 for the reference (:mod:`symuat.models.reference`), and ``REFERENCE_NOTE``.
* ``fold_checkpoint(model, asked)`` — optional, ``symuat model fold`` for the family
  (:mod:`symuat.models.fold_decoders`).

Every field, metadata key and tensor a loader does not model is refused there
(:class:`~symuat.models.formats.Fields`, :class:`~symuat.models.formats.Tensors`). The model a
loader returns has ``family``, ``source``, ``tokenize``, ``embed``, ``layers`` (each with
``duat_step``, see :func:`symuat.numeric.transformer.to_duat`) and ``hidden_states``; a decoder also
``logits``, ``head``, ``final_norm``, ``readout``, ``decode`` (:class:`~symuat.models.causal_lm.CausalLM`).

To add a family: write its module and add its name to :data:`FAMILY_MODULES`.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from symuat.models.formats import ModelError, is_path, open_gguf, read_config

#: the family modules, in the order they are tried
FAMILY_MODULES = ["symuat.models.bert", "symuat.models.llama", "symuat.models.qwen2", "symuat.models.gemma3"]
FAMILY_MODULES.append("symuat.models.mistral")
FAMILY_MODULES.append("symuat.models.qwen3")
FAMILY_MODULES.append("symuat.models.olmo2")
FAMILY_MODULES.append("symuat.models.phi3")
FAMILY_MODULES.append("symuat.models.gpt2")
FAMILY_MODULES.append("symuat.models.gpt_neox")
FAMILY_MODULES.append("symuat.models.gemma2")


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # "encoder" | "decoder"
    model_types: tuple[str, ...] = ()
    gguf_architectures: tuple[str, ...] = ()
    packaged: dict[str, Callable[[], Path]] = field(default_factory=dict)
    features: tuple[str, ...] = ()
    module: str = ""


def families() -> list[tuple[Family, object]]:
    """Every registered family and its module."""
    out = []
    for name in FAMILY_MODULES:
        mod = importlib.import_module(name)
        out.append((mod.FAMILY, mod))
    return out


def packaged_names() -> list[str]:
    return sorted(n for fam, _ in families() for n in fam.packaged)


def _supported_types() -> str:
    types = [t for fam, _ in families() for t in fam.model_types]
    return ", ".join(repr(t) for t in types)


def _supported_archs() -> str:
    return ", ".join(repr(a) for fam, _ in families() for a in fam.gguf_architectures)


def resolve(where: str | os.PathLike) -> tuple[Family, object, str, Path]:
    """(family, its module, how to read — ``packaged`` | ``folder`` | ``gguf`` — and the path)."""
    text = str(where)
    for fam, mod in families():
        if text in fam.packaged:
            path = fam.packaged[text]()
            return fam, mod, ("gguf" if path.suffix == ".gguf" else "folder"), path
    if not is_path(text):
        raise ModelError(f"unknown model {text!r}; known: {', '.join(packaged_names())} (or a checkpoint folder or "
                         "a .gguf file)")
    path = Path(text)
    if not path.exists():
        raise ModelError(f"{path}: no such file or folder")
    if not path.is_dir():
        f = open_gguf(path)
        arch = f.fields.get("general.architecture")
        for fam, mod in families():
            if arch in fam.gguf_architectures:
                return fam, mod, "gguf", path
        raise ModelError(f"{path}: architecture {arch!r} is not supported (symuat reads GGUF architectures "
                         f"{_supported_archs()})")
    cfg_path, cfg = read_config(path)
    kind = cfg.get("model_type")
    for fam, mod in families():
        if kind in fam.model_types:
            return fam, mod, "folder", path
    raise ModelError(f"{cfg_path}: model_type {kind!r} is not supported (symuat's families read model_type "
                     f"{_supported_types()})")


def load(where: str | os.PathLike):
    """The model of ``where``: a packaged name (``minilm``, ``smollm2``), a folder or a ``.gguf`` file."""
    fam, mod, how, path = resolve(where)
    if how == "gguf":
        loader = getattr(mod, "load_gguf_file", None)
        if loader is None:
            raise ModelError(f"{path}: the {fam.name} family reads checkpoint folders, not GGUF files")
        return loader(path)
    return mod.load_folder(path)


def family_of(where: str | os.PathLike) -> Family:
    return resolve(where)[0]
