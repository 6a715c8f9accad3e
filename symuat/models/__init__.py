"""Real pretrained models, one module per family, and the check of their DUAT rewrite.

* :mod:`symuat.models.bert` — BERT-style encoders (all-MiniLM-L6-v2): loader, NumPy forward,
  :func:`~symuat.models.bert.check_rewrite`;
* :mod:`symuat.models.llama` — Llama-family decoders (SmolLM2-135M from its GGUF): loaders, float64
  forward, the DUAT rewrite with the decoder lifts (X1–X6), the exact logit decomposition;
* :mod:`symuat.models.command` — the ``symuat model …`` sub-commands.

The names of the BERT family are re-exported here for the existing API.
"""

#: the BERT family's names, importable from here; loaded on first use, so that ``symuat --help``
#: (which imports :mod:`symuat.models.command`) does not load NumPy, SymPy and the DUAT code
_BERT_NAMES = ("MAX_TOKENS", "MODELS", "BertNumpy", "BertWeights", "LayerReport", "ModelError", "check_rewrite",
               "hf_hidden_states", "load_bert", "model_path", "relative_error", "tokenize")
__all__ = list(_BERT_NAMES)


def __getattr__(name):
    if name in _BERT_NAMES:
        from symuat.models import bert

        return getattr(bert, name)
    raise AttributeError(f"module 'symuat.models' has no attribute {name!r}")
