"""The shared HF reference's GGUF loader (symuat.models.reference._from_gguf) on a tiny Llama:
every tensor copied into the float64 model exactly (float32 widened, one tensor at a time), and a
missing, unexpected or misshapen tensor refused by name, never left at random."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from symuat.models import ModelError, reference  # noqa: E402


def _tiny_config():
    return transformers.LlamaConfig(vocab_size=32, hidden_size=8, intermediate_size=12, num_hidden_layers=2,
                                    num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=False)


def _checkpoint(edit=None):
    """float32 tensors of a random tiny Llama, as transformers' GGUF reader returns them, optionally edited."""
    torch.manual_seed(0)
    src = transformers.LlamaForCausalLM(_tiny_config()).to(torch.float32)
    tensors = {k: v.detach().clone() for k, v in src.state_dict().items()}
    if edit:
        edit(tensors)
    return tensors


@pytest.fixture
def fake_gguf(monkeypatch):
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    state = {}
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", lambda *a, **k: _tiny_config())
    monkeypatch.setattr(gguf_utils, "load_gguf_checkpoint",
                        lambda *a, **k: {"config": {}, "tensors": dict(state["tensors"])})

    def load(edit=None, name="tiny"):
        state["tensors"] = _checkpoint(edit)
        source = Path(f"/nonexistent/{name}.gguf")
        reference._CACHE.pop((str(source), True), None)
        try:
            return reference.hf_model(source, decoder=True), state["tensors"]
        finally:
            reference._CACHE.pop((str(source), True), None)

    return load


def test_every_tensor_is_copied_exactly_in_float64(fake_gguf):
    model, given = fake_gguf()
    own = model.state_dict()
    for k, v in given.items():
        assert own[k].dtype is torch.float64
        assert torch.equal(own[k], v.to(torch.float64)), k
    assert all(p.dtype is torch.float64 for p in model.parameters())


@pytest.mark.parametrize("edit, what", [
    (lambda t: t.pop("model.layers.1.mlp.up_proj.weight"), "missing"),
    (lambda t: t.__setitem__("model.layers.0.extra.weight", torch.zeros(2)), "not used by transformers"),
    (lambda t: t.__setitem__("model.norm.weight", torch.zeros(9)), "of a shape transformers does not expect"),
])
def test_a_missing_unexpected_or_misshapen_tensor_is_refused_by_name(fake_gguf, edit, what):
    with pytest.raises(ModelError, match=what) as err:
        fake_gguf(edit, name=what.split()[0])
    assert any(k in str(err.value) for k in ("up_proj", "extra", "model.norm.weight"))
