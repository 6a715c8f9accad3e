"""``symuat.models.from_hf``: a transformers model in memory is the same model as its saved folder.

For every decoder family, in f32 and bf16, with a tied head: the model built from memory and the
one loaded from ``save_pretrained``'s folder have the same fields read and the same states and
logits bit for bit; the same refusals apply (a config field the family does not model, a dtype
that is not exactly float64); the check against transformers passes from memory too.
"""

import numpy as np
import pytest

from symuat.models import compare, family, from_hf
from symuat.models.formats import ModelError

from hf_family import hf_model
from test_families import TOL, _save

IDS = np.array([72, 101, 108, 108, 111, 32, 116, 104, 101, 114, 101, 44, 32, 119])


def _saved(model, folder):
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    from tokenizers import Tokenizer

    return folder, Tokenizer.from_file(str(folder / "tokenizer.json"))


@pytest.mark.parametrize("kind,dtype,case", [
    ("llama", "float32", {"attention_bias": True}), ("qwen2", "bfloat16", {}),
    ("mistral", "bfloat16", {"sliding_window": 3}), ("qwen3", "float32", {"tie_word_embeddings": True}),
    ("qwen3", "bfloat16", {"use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1}),
    ("olmo2", "float32", {"attention_bias": True}), ("olmo2", "bfloat16", {"tie_word_embeddings": True}),
])
def test_from_hf_equals_the_saved_folder_bit_for_bit(tmp_path, kind, dtype, case):
    import torch

    model = hf_model(kind, **case).to(getattr(torch, dtype))
    folder, tok = _saved(model, tmp_path / kind)
    a, b = family.load(folder), from_hf(model, tok)
    assert type(a) is type(b) and a.family == b.family == kind and a.fields_read == b.fields_read
    sa, sb = a.hidden_states(IDS), b.hidden_states(IDS)
    assert all(np.array_equal(x, y) for x, y in zip(sa, sb, strict=True))
    assert np.array_equal(a.logits(sa[-1]), b.logits(sb[-1]))
    assert np.array_equal(a.tokenize("Hello there"), b.tokenize("Hello there"))


def test_from_hf_is_checked_against_transformers_and_a_wrong_model_fails(tmp_path):
    from transformers import PreTrainedTokenizerFast

    model = hf_model("qwen3", attention_bias=True)
    folder, _ = _saved(model, tmp_path / "q")
    net = from_hf(model, PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json")))
    report = compare.check(["Hello there, world"], "in memory", loaded=net)
    assert report["reference"] and compare.verdict(report, TOL)["passed"]
    net.layers[1].q_norm = None  # a model that is not the one in memory: the check must fail
    report = compare.check(["Hello there, world"], "in memory", loaded=net)
    assert not compare.verdict(report, TOL)["passed"]


def test_from_hf_refuses_what_the_folder_refuses(tmp_path):
    model = hf_model("mistral")
    model.config.some_new_switch = True
    with pytest.raises(ModelError, match=r"<in memory MistralForCausalLM \w+>/config\.json: field 'some_new_switch' "
                                         r"is not modelled by symuat's mistral family"):
        from_hf(model, None)
    folder, _ = _saved(model, tmp_path / "m")
    with pytest.raises(ModelError, match=r"config\.json: field 'some_new_switch' is not modelled"):
        family.load(folder)


def test_from_hf_refuses_an_inexact_dtype_and_a_model_without_tokenizer_cannot_read_text():
    import torch

    model = hf_model("llama")
    net = from_hf(model, None, reference=False)
    with pytest.raises(ModelError, match="no tokenizer"):
        net.tokenize("Hello")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("no float8 in this torch")
    with torch.no_grad():
        model.model.layers[0].mlp.up_proj.weight = torch.nn.Parameter(
            model.model.layers[0].mlp.up_proj.weight.to(torch.float8_e4m3fn), requires_grad=False)
    with pytest.raises(ModelError, match=r"tensor 'model\.layers\.0\.mlp\.up_proj\.weight' has dtype "
                                         r"torch\.float8_e4m3fn"):
        from_hf(model, None)


def test_from_hf_refuses_what_is_not_a_decoder_model():
    with pytest.raises(ModelError, match="from_hf takes a transformers PreTrainedModel, not dict"):
        from_hf({}, None)
