"""The GPT-2 family: learned positions, Conv1D weights, the fused c_attn, LayerNorm with biases,
the score scalings — exact against transformers' GPT2LMHeadModel in float64, or refused naming the
field (model tier)."""

import json

import numpy as np
import pytest

from symuat import cli
from symuat.models import compare
from symuat.models.formats import ModelError
from test_families import assert_config_refused, _edit_config, _need, _randomise, _save

TOL = 1e-12


def hf_gpt2(folder, *, seed=0, dtype="float32", **overrides):
    """A random GPT-2 folder saved by transformers (byte-level vocabulary of 256)."""
    _need("torch")
    transformers = _need("transformers")
    import torch

    base = dict(vocab_size=256, n_embd=16, n_layer=2, n_head=4, n_positions=64, bos_token_id=1, eos_token_id=2)
    base.update(overrides)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**base))
    _randomise(model, seed)
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    return folder


CASES = {
    "plain": {},
    "bf16": {"dtype": "bfloat16"},
    "scalings": {"scale_attn_by_inverse_layer_idx": True, "reorder_and_upcast_attn": True},
    "unscaled-untied-gelu": {"scale_attn_weights": False, "tie_word_embeddings": False, "activation_function": "gelu",
                             "n_inner": 24},
}


def _check(folder, text="Hello there, world and more"):
    report = compare.check([text], str(folder), reference=True)
    return report, compare.verdict(report, TOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gpt2_folder_exact_against_transformers(tmp_path, case):
    report, v = _check(hf_gpt2(tmp_path / case, **CASES[case]))
    assert report["reference"] and report["family"] == "gpt2" and v["passed"], (case, v)
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_gpt2_reorder_and_upcast_is_a_float32_island_of_stock_hf(tmp_path):
    """Stock HF float64 raises on reorder_and_upcast_attn (its float32 scores meet a float64 mask): recorded as
    a finding; the island made float64 is the reference and symuat agrees with it."""
    report, v = _check(hf_gpt2(tmp_path / "u", reorder_and_upcast_attn=True))
    assert v["passed"] and "float32" in report["texts"][0]["stock_hf_float64_error"]


@pytest.mark.parametrize("mutant", ["layer-scaling-dropped", "qkv-split-swapped", "position-embeddings-dropped"])
def test_gpt2_misreadings_fail_the_check(tmp_path, monkeypatch, mutant):
    """The check can fail: each misreading of the checkpoint is caught by the reference."""
    from symuat.models.families import gpt2
    from symuat.models import ln_decoder

    folder = hf_gpt2(tmp_path / "m", scale_attn_by_inverse_layer_idx=True)
    if mutant == "layer-scaling-dropped":
        real = gpt2.LNDecoderLayer

        def layer(**kw):
            kw["scale"] = 0.5  # 1/sqrt(d) for every layer: the inverse layer index forgotten
            return real(**kw)

        monkeypatch.setattr(gpt2, "LNDecoderLayer", layer)
    elif mutant == "qkv-split-swapped":
        real = gpt2.LNDecoderLayer

        def layer(**kw):
            kw["WQ"], kw["WK"] = kw["WK"], kw["WQ"]
            kw["bq"], kw["bk"] = kw["bk"], kw["bq"]
            kw["WV"] = kw["WV"][:, ::-1].copy()
            return real(**kw)

        monkeypatch.setattr(gpt2, "LNDecoderLayer", layer)
    else:
        monkeypatch.setattr(ln_decoder.LNCausalLM, "embed", lambda self, ids: self.embed_tokens[self.check_ids(ids)])
    report, v = _check(folder)
    assert not v["passed"] and v["worst"] > 1e-6, (mutant, v)


def test_gpt2_explain_adds_up_with_the_final_layernorm_bias(tmp_path, capsys):
    folder = hf_gpt2(tmp_path / "x")
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["reference"] and len(report["checks"]) == 4
    assert report["terms"][-1]["value"] != 0.0  # the biases, ln_f's beta among them


def test_gpt2_explain_fails_without_the_head_constant(tmp_path, capsys, monkeypatch):
    """explain checks itself: dropping ln_f's beta·w_t from the terms is a FAIL."""
    from symuat.models import ln_decoder

    folder = hf_gpt2(tmp_path / "x")
    monkeypatch.setattr(ln_decoder.LNCausalLM, "readout_bias", lambda self, n, t: 0.0)
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--no-reference"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_gpt2_attribution_views_refused_in_one_line(tmp_path, capsys):
    folder = hf_gpt2(tmp_path / "a")
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--by", "head"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "LNCausalLM" in err and "Traceback" not in err


@pytest.mark.parametrize("changes,message", [
    ({"add_cross_attention": True}, r"add_cross_attention is true"),
    ({"activation_function": "quick_gelu"}, r"activation_function is 'quick_gelu'"),
    ({"n_head": 3}, r"n_head 3 does not divide n_embd 16"),
    ({"scale_attn_weights": "yes"}, r"scale_attn_weights"),
    ({"some_new_switch": True}, r"'some_new_switch' is not modelled by symuat's gpt2 family"),
])
def test_gpt2_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    assert_config_refused(_edit_config(hf_gpt2(tmp_path / "c"), **changes), message, capsys)


def test_gpt2_unknown_tensor_refused_and_old_names_read(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = hf_gpt2(tmp_path / "t")
    t = load_file(str(folder / "model.safetensors"))
    old = {k.removeprefix("transformer."): v for k, v in t.items()}  # GPT-2's original files: no prefix
    old["h.0.attn.bias"] = np.tril(np.ones((64, 64), dtype=np.float32))[None, None]  # the old mask buffer
    save_file(old, str(folder / "model.safetensors"))
    assert compare.verdict(compare.check(["Hi there"], str(folder), reference=False), TOL)["passed"]
    old["h.0.attn.q_attn.weight"] = np.ones((16, 16), dtype=np.float32)
    save_file(old, str(folder / "model.safetensors"))
    with pytest.raises(ModelError, match=r"tensor 'transformer.h.0.attn.q_attn.weight' is not part of the gpt2"):
        compare.check(["Hi"], str(folder), reference=False)


def test_gpt2_declared_fields_are_what_the_loader_reads(tmp_path):
    from symuat.models.families import gpt2
    from symuat.models.family import load

    read = set(load(hf_gpt2(tmp_path / "f", n_inner=24)).fields_read)
    assert read <= set(gpt2.CONFIG_FIELDS) | set(gpt2.INERT_FIELDS), read - set(gpt2.CONFIG_FIELDS)
    assert set(gpt2.CONFIG_FIELDS) <= read


def test_gpt2_fold_writes_a_checkpoint_transformers_reads_exactly(tmp_path, capsys):
    """WP1 (LayerNorm form), WP4, WP12, WP3 on a GPT-2 folder: the folded checkpoint reproduces every
    state (centred: WP12) and the logits (centred: WP3), and transformers reads it as symuat does."""
    folder = hf_gpt2(tmp_path / "f")
    out = tmp_path / "folded"
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and [f["entry"] for f in report["folds"]] == ["WP1", "WP4", "WP12", "WP3"]
    _, v = _check(out)
    assert v["passed"], v


def test_gpt2_wrong_fold_fails(tmp_path, capsys, monkeypatch):
    """The fold's check can fail: γ folded on the wrong side (W diag γ, WP1's mutant) is caught, nothing written."""
    from symuat.models import fold_layernorm

    folder = hf_gpt2(tmp_path / "f", n_inner=16)
    real = fold_layernorm.fold_layer

    def wrong(layer, **kw):
        new = real(layer, **kw)
        new.Win = layer.Win * layer.ln2[0][None, :]  # columns, not rows
        return new

    monkeypatch.setattr(fold_layernorm, "fold_layer", wrong)
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "o"), "--norms"]) == 1
    assert "FAIL" in capsys.readouterr().out and not (tmp_path / "o").exists()
