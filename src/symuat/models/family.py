"""The model families and how a ``--model`` argument finds one.

A family is one module of :mod:`symuat.models.families` that declares ``FAMILY``, a
:class:`Family`: what it reads (``config.json`` ``model_type`` values, GGUF architectures, the
packaged models it ships) and every capability it has, as a typed field — a loader, the
reference's float32 islands, its own check, a fold, or ``None`` where it has none. Callers ask the
:class:`Family`; nothing looks for a module attribute. :func:`families` lists the package, so
adding a family is adding its module and nothing else.

Every field, metadata key and tensor a loader does not model is refused there
(:class:`~symuat.models.formats.Fields`, :class:`~symuat.models.formats.Tensors`). The model a
loader returns has ``family`` (the family's name), ``source``, ``tokenize``, ``embed``, ``layers``
(each with ``duat_step``, see :func:`symuat.numeric.transformer.to_duat`) and ``hidden_states``; a decoder
also ``logits``, ``head``, ``final_norm``, ``readout``, ``decode``
(:class:`~symuat.models.causal_lm.CausalLM`).

>>> fam = named("llama")
>>> fam.kind, fam.model_types, fam.load_gguf is not None, fam.fold is not None
('decoder', ('llama',), True, True)
>>> named("gemma3").fold is None and named("gemma3").fold_refusal.startswith("fold does not write")
True
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, NamedTuple

from symuat.models.formats import ModelError, is_path, open_gguf, read_config

#: the package whose modules are the families (each declares ``FAMILY``)
PACKAGE = "symuat.models.families"

#: the texts ``symuat model fold`` checks a folded checkpoint on when none is given (a family may say its own)
FOLD_TEXTS = ("The cat sat on the mat.", "A transformer is a universal approximator.")


@dataclass(frozen=True, kw_only=True)
class Fold:
    """``symuat model fold`` for a family (:mod:`symuat.models.fold`).

    ``run(model, asked)`` gives ``(original, folded tensors with HF names, log of (WP id, what),
    extra files name → bytes, config.json)`` — ``asked`` empty: every fold §9 allows for the family,
    the others refused (:class:`~symuat.models.fold.FoldRefused`, naming the entry); ``check(original,
    folder, texts)`` reloads the written folder and gives, per text, the errors of every state
    (``None``: :func:`symuat.models.fold.compare_decoder`); ``texts`` what it checks on by default."""

    run: Callable[[str, dict], tuple]
    check: Callable[[Any, Path, list[str]], list[dict]] | None = None
    texts: tuple[str, ...] = FOLD_TEXTS


@dataclass(frozen=True, kw_only=True)
class Family:
    """One family: what it reads and what it can do (``None``: it cannot, or the shared default)."""

    name: str
    kind: str  # "encoder" | "decoder"
    #: a Hugging Face folder (``config.json`` + ``*.safetensors``, or a :class:`~symuat.models.memory.InMemory`)
    load_folder: Callable[[Any], Any]
    model_types: tuple[str, ...] = ()
    #: a ``.gguf`` file of one of ``gguf_architectures``
    load_gguf: Callable[[Path], Any] | None = None
    gguf_architectures: tuple[str, ...] = ()
    #: packaged model name → the function giving its path (installed by ``symuat model install``)
    packaged: Mapping[str, Callable[[], Path]] = field(default_factory=dict)
    #: what it models (README, messages)
    features: tuple[str, ...] = ()
    #: what ``explain`` freezes at the input, and the identity that is then exact
    frozen: tuple[str, ...] = ()
    exact: str = ""
    #: the reference (:mod:`symuat.models.reference`): a context manager making the HF model's float32
    #: islands float64 (``None``: :class:`~symuat.models.reference.Float64Islands`), the HF model of a
    #: checkpoint when transformers' own loader is not faithful (``None``: ``from_pretrained``), the note
    #: describing it (``None``: :data:`~symuat.models.reference.NOTE`; ``{cls}``, ``{how}`` filled in) and
    #: what stock HF float64 keeps in float32 (``None``: the check's default sentence)
    reference_islands: Callable[[Any], ContextManager] | None = None
    reference_model: Callable[[Path], Any] | None = None
    reference_note: str | None = None
    stock_islands: str | None = None
    #: its own ``check(texts, where, *, reference, progress, loaded[, chunk])`` (a memory plan of its own)
    #: in place of :func:`symuat.models.compare.check`'s, and the texts ``model check`` uses by default
    check: Callable[..., dict] | None = None
    default_texts: tuple[str, ...] = ()
    #: ``symuat model fold``, or why it is refused
    fold: Fold | None = None
    fold_refusal: str | None = None
    module: str = ""


class Resolved(NamedTuple):
    """What a ``--model`` argument names: the family, how to read it (``folder`` | ``gguf``) and the path."""

    family: Family
    how: str
    path: Path


def families() -> list[Family]:
    """Every family, one per module of :data:`PACKAGE`, in the order of the modules' names."""
    package = importlib.import_module(PACKAGE)
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))
    out = []
    for name in names:
        fam = importlib.import_module(f"{PACKAGE}.{name}").FAMILY
        if not isinstance(fam, Family):
            raise TypeError(f"{PACKAGE}.{name}.FAMILY is not a Family")
        out.append(fam)
    return out


def named(name: str) -> Family:
    """The family called ``name`` (a loaded model's ``family``)."""
    for fam in families():
        if fam.name == name:
            return fam
    raise ModelError(f"no family {name!r}; known: {', '.join(f.name for f in families())}")


def packaged_names() -> list[str]:
    return sorted(n for fam in families() for n in fam.packaged)


def _supported_types() -> str:
    types = [t for fam in families() for t in fam.model_types]
    return ", ".join(repr(t) for t in types)


def _supported_archs() -> str:
    return ", ".join(repr(a) for fam in families() for a in fam.gguf_architectures)


def resolve(where: str | os.PathLike) -> Resolved:
    """The family of ``where`` (a packaged name, a folder or a ``.gguf`` file), how to read it and its path."""
    text = str(where)
    for fam in families():
        if text in fam.packaged:
            path = fam.packaged[text]()
            return Resolved(fam, "gguf" if path.suffix == ".gguf" else "folder", path)
    if not is_path(text):
        raise ModelError(f"unknown model {text!r}; known: {', '.join(packaged_names())} (or a checkpoint folder or "
                         "a .gguf file)")
    path = Path(text)
    if not path.exists():
        raise ModelError(f"{path}: no such file or folder")
    if not path.is_dir():
        f = open_gguf(path)
        arch = f.fields.get("general.architecture")
        for fam in families():
            if arch in fam.gguf_architectures:
                return Resolved(fam, "gguf", path)
        raise ModelError(f"{path}: architecture {arch!r} is not supported (symuat reads GGUF architectures "
                         f"{_supported_archs()})")
    cfg_path, cfg = read_config(path)
    kind = cfg.get("model_type")
    for fam in families():
        if kind in fam.model_types:
            return Resolved(fam, "folder", path)
    raise ModelError(f"{cfg_path}: model_type {kind!r} is not supported (symuat's families read model_type "
                     f"{_supported_types()})")


def load(where: str | os.PathLike):
    """The model of ``where``: a packaged name (``minilm``, ``smollm2``), a folder or a ``.gguf`` file."""
    fam, how, path = resolve(where)
    if how == "gguf":
        if fam.load_gguf is None:
            raise ModelError(f"{path}: the {fam.name} family reads checkpoint folders, not GGUF files")
        return fam.load_gguf(path)
    return fam.load_folder(path)


def family_of(where: str | os.PathLike) -> Family:
    return resolve(where).family
