"""Real pretrained models: file formats, one module per family, one DUAT rewrite, the reference
and the comparisons.

* :mod:`symuat.models.formats` — ``config.json`` (typed fields), ``*.safetensors``, GGUF, tokenizers;
* :mod:`symuat.models.family` — the typed :class:`~symuat.models.family.Family` record (what a family
  reads and can do) and how ``--model`` finds a family;
* :mod:`symuat.models.families` — one module per family, each declaring its ``FAMILY``:
  :mod:`symuat.models.families.bert` (BERT encoders, all-MiniLM-L6-v2), :mod:`symuat.models.families.llama`
  (Llama decoders, SmolLM2-135M), :mod:`symuat.models.families.qwen2`, :mod:`symuat.models.families.gemma3`
  (Gemma 3 decoders, Gemma-3-270M), … — adding a family is adding a module there;
* :mod:`symuat.models.lifts` and :mod:`symuat.models.causal_lm` — the decoder's matrix-free lifts
  and the pre-norm decoder layer every decoder family builds;
* :mod:`symuat.models.rewrite` — the DUAT rewrite of any family (``transformer.to_duat``) and the
  exact logit decomposition;
* :mod:`symuat.models.reference` — transformers from the checkpoint's own files, float64 throughout;
* :mod:`symuat.models.compare` — ``check`` and ``explain`` with the per-row error measure;
* :mod:`symuat.models.command` — the ``symuat model …`` sub-commands;
* :mod:`symuat.models.memory` — :func:`from_hf`, a transformers model already in memory;
* :mod:`symuat.models.api` — the notebook API: ``load``, ``explain``, ``explain_many``, ``lenses``,
  ``attention_pattern`` (re-exported here), with :mod:`symuat.models.terms` (an attribution as a
  table with TransformerLens's hook names) and :mod:`symuat.models.lens` (the logit and Jacobian lenses).
"""

#: the names importable from here, loaded on first use, so that ``symuat --help`` (which imports
#: :mod:`symuat.models.command`) does not load NumPy, SymPy and the DUAT code
_NAMES = {"relative_error": "symuat.models.compare", "row_errors": "symuat.models.compare",
          "ModelError": "symuat.models.formats", "from_hf": "symuat.models.memory",
          # the notebook API (symuat.models.api)
          **{n: "symuat.models.api" for n in ("load", "explain", "explain_many", "lenses", "attention_pattern")}}
__all__ = list(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'symuat.models' has no attribute {name!r}")
