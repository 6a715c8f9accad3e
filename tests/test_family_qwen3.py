"""The Qwen3 family (model tier): tiny random checkpoints saved by transformers in f32 and bf16 are
exact against transformers' float64 forward (the per-head QK-norm, sliding-window layers and
biases included); the QK-norm is not decoration (dropping it fails the check); explain adds up
(the attribution views too); fold folds WP1/WP3; every field and tensor refused by name."""

import json

import numpy as np
import pytest

from symuat import cli
from symuat.models import compare
from symuat.models.formats import ModelError

from hf_family import hf_family
from test_families import TOL, _check, _edit_config

TEXT = ("Hello there, world and more",)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", [{}, {"use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1,
                                       "attention_bias": True, "head_dim": 6}, {"hidden_act": "gelu",
                                                                                "tie_word_embeddings": True}])
def test_qwen3_folder_exact_against_transformers(tmp_path, dtype, case):
    folder = hf_family(tmp_path / "q", "qwen3", dtype=dtype, **case)
    report, v = _check(folder, texts=TEXT)
    assert report["reference"] and report["family"] == "qwen3" and v["passed"], v
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_qwen3_qk_norm_symuat_dropped_fails_the_check(tmp_path):
    from symuat.models.families import qwen3

    folder = hf_family(tmp_path / "q", "qwen3")
    net = qwen3.load_folder(folder)
    assert all(layer.q_norm.shape == (4,) and not np.all(layer.q_norm == 1) for layer in net.layers)
    for layer in net.layers:
        layer.q_norm = layer.k_norm = None
    report = compare.check(list(TEXT), str(folder), loaded=net)
    assert not compare.verdict(report, TOL)["passed"]


def test_qwen3_explain_and_attribution_add_up_and_fold(tmp_path, capsys):
    folder = hf_family(tmp_path / "q", "qwen3", attention_bias=True)
    assert cli.main(["model", "check", "--model", str(folder)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello there", "--view", "both",
                     "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and "reference" in report["checks"][-1]["check"] and report["terms"][-1]["value"] != 0.0
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello there", "--by", "layer",
                     "--no-reference"]) == 0
    capsys.readouterr()
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "f"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and [f["entry"] for f in report["folds"]] == ["WP1", "WP3"]
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "g"), "--center-writers"]) == 2
    assert "WP12" in capsys.readouterr().err


@pytest.mark.parametrize("changes,message", [
    ({"mlp_bias": True}, r"'mlp_bias' is not modelled by symuat's qwen3 family"),
    ({"layer_types": ["full_attention"]}, r"layer_types must list 2 entries"),
    ({"use_sliding_window": True, "sliding_window": None, "layer_types": ["full_attention", "sliding_attention"]},
     r"sliding_window is missing although some layers attend through a sliding window"),
    ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 2.0}}, r"rope_type 'yarn'"),
])
def test_qwen3_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    folder = _edit_config(hf_family(tmp_path / "q", "qwen3"), **changes)
    with pytest.raises(ModelError, match=r"config\.json: .*" + message):
        compare.check(["Hi"], str(folder), reference=False)
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_qwen3_checkpoint_without_its_qk_norm_is_refused_naming_the_tensor(tmp_path, capsys):
    from safetensors.numpy import load_file, save_file

    folder = hf_family(tmp_path / "q", "qwen3")
    t = load_file(str(folder / "model.safetensors"))
    del t["model.layers.1.self_attn.k_norm.weight"]
    save_file(t, str(folder / "model.safetensors"))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert "tensor 'model.layers.1.self_attn.k_norm.weight' is missing" in capsys.readouterr().err
