"""Tiny random checkpoints of the decoder families, saved by transformers (f32 or bf16), for the
``tests/test_family_*.py`` files: every parameter random (norm weights around 1), the 256
byte-level tokens as vocabulary (the tokenizer of tests/test_families.py)."""

from pathlib import Path

from test_families import _need, _randomise, _save

#: family → (config class, model class) names in transformers
CLASSES = {"mistral": ("MistralConfig", "MistralForCausalLM"), "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
           "olmo2": ("Olmo2Config", "Olmo2ForCausalLM"), "llama": ("LlamaConfig", "LlamaForCausalLM"),
           "qwen2": ("Qwen2Config", "Qwen2ForCausalLM")}

BASE = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=False, rms_norm_eps=1e-5)


def hf_model(kind: str, *, seed: int = 0, **overrides):
    """The random transformers model of ``kind`` (float32, eval)."""
    _need("torch")
    transformers = _need("transformers")
    cfg_name, model_name = CLASSES[kind]
    if kind == "qwen3":
        overrides.setdefault("head_dim", 4)  # Qwen3Config's default is 128, not hidden_size / heads
    model = getattr(transformers, model_name)(getattr(transformers, cfg_name)(**{**BASE, **overrides}))
    _randomise(model, seed)
    return model.eval()


def hf_family(folder: Path, kind: str, *, dtype: str = "float32", seed: int = 0, **overrides) -> Path:
    """A random ``kind`` checkpoint folder saved by transformers in ``dtype`` (``float32``, ``bfloat16``)."""
    import torch

    model = hf_model(kind, seed=seed, **overrides)
    if dtype != "float32":
        model = model.to(getattr(torch, dtype))
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    return folder
