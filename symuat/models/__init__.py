"""Real pretrained models, one module per family, and the check of their DUAT rewrite.

* :mod:`symuat.models.bert` — BERT-style encoders (all-MiniLM-L6-v2): loader, NumPy forward,
  :func:`~symuat.models.bert.check_rewrite`;
* :mod:`symuat.models.llama` — Llama-family decoders (SmolLM2-135M from its GGUF): loaders, float64
  forward, the DUAT rewrite with the decoder lifts (X1–X6), the exact logit decomposition;
* :mod:`symuat.models.command` — the ``symuat model …`` sub-commands.

The names of the BERT family are re-exported here for the existing API.
"""

from symuat.models.bert import (  # noqa: F401
    MAX_TOKENS,
    MODELS,
    BertNumpy,
    BertWeights,
    LayerReport,
    ModelError,
    check_rewrite,
    hf_hidden_states,
    load_bert,
    model_path,
    relative_error,
    tokenize,
)
