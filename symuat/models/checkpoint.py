"""Reading a Hugging Face checkpoint folder (the earlier module name): see :mod:`symuat.models.formats`."""

from symuat.models.formats import ModelError, read_config, read_safetensors, require_keys  # noqa: F401
