"""Real pretrained models: file formats, one module per family, one DUAT rewrite, the reference
and the comparisons.

* :mod:`symuat.models.formats` — ``config.json`` (typed fields), ``*.safetensors``, GGUF, tokenizers;
* :mod:`symuat.models.family` — the family registry and how ``--model`` finds a family;
* family modules: :mod:`symuat.models.bert` (BERT encoders, all-MiniLM-L6-v2),
  :mod:`symuat.models.llama` (Llama decoders, SmolLM2-135M), :mod:`symuat.models.qwen2`,
  :mod:`symuat.models.gemma3` (Gemma 3 decoders, Gemma-3-270M);
* :mod:`symuat.models.lifts` and :mod:`symuat.models.causal_lm` — the decoder's matrix-free lifts
  and the pre-norm decoder layer every decoder family builds;
* :mod:`symuat.models.rewrite` — the DUAT rewrite of any family (``transformer.to_duat``) and the
  exact logit decomposition;
* :mod:`symuat.models.reference` — transformers from the checkpoint's own files, float64 throughout;
* :mod:`symuat.models.compare` — ``check`` and ``explain`` with the per-row error measure;
* :mod:`symuat.models.command` — the ``symuat model …`` sub-commands.

The names of the BERT family are re-exported here for the existing API.
"""

from symuat.models.bert import (  # noqa: F401
    MAX_TOKENS,
    MODELS,
    BertNumpy,
    BertWeights,
    LayerReport,
    check_rewrite,
    hf_hidden_states,
    load_bert,
    model_path,
    tokenize,
)
from symuat.models.compare import relative_error, row_errors  # noqa: F401
from symuat.models.formats import ModelError  # noqa: F401
