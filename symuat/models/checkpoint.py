"""Reading a Hugging Face checkpoint folder, for every model family: ``config.json`` and
``*.safetensors``, with errors that name the file and what is wrong (:class:`ModelError`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from symuat.errors import SymuatError


class ModelError(SymuatError, ValueError):
    """A model cannot be loaded or used: the message names the file or the input and the problem."""


def read_config(folder: Path, *, kind: str = "checkpoint") -> tuple[Path, dict]:
    """``folder/config.json`` as a dict: present, valid JSON, an object. Returns its path (for
    later messages) and the dict."""
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise ModelError(f"{path}: missing (a {kind} folder needs config.json)")
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelError(f"{path}: not a JSON object")
    return path, config


def require_keys(path: Path, config: dict, required: tuple[str, ...], positive: tuple[str, ...]) -> None:
    """Every ``required`` key is in ``config`` and every ``positive`` key is a positive integer."""
    for key in required:
        if key not in config:
            raise ModelError(f"{path}: missing the key {key!r}")
    for key in positive:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelError(f"{path}: {key} must be a positive integer, not {value!r}")


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of one ``.safetensors`` file (``safetensors`` from the ``model`` extra)."""
    if not path.is_file():
        raise ModelError(f"{path}: missing weights file")
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise ModelError("loading weights needs safetensors: pip install -e '.[model]'") from exc
    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises its own error types for a damaged file
        raise ModelError(f"{path}: not a readable safetensors file ({type(exc).__name__}: {exc}); "
                         "the file is truncated or corrupt") from exc
