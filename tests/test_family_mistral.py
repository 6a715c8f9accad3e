"""The Mistral family (model tier): tiny random checkpoints saved by transformers in f32 and bf16
are exact against transformers' float64 forward (its float32 islands made float64), the sliding
window included; explain adds up; fold folds WP1/WP3 and refuses WP12/WP4; every field Mistral
does not have is refused by name."""

import json

import pytest

from symuat import cli
from symuat.models import compare
from symuat.models.formats import ModelError

from hf_family import hf_family
from test_families import TOL, _check, _edit_config

TEXT = ("Hello there, world and more",)  # 27 byte tokens: longer than the windows below


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", [{}, {"sliding_window": 3, "head_dim": 6}, {"tie_word_embeddings": True,
                                                                            "num_key_value_heads": 1}])
def test_mistral_folder_exact_against_transformers(tmp_path, dtype, case):
    folder = hf_family(tmp_path / "m", "mistral", dtype=dtype, **case)
    report, v = _check(folder, texts=TEXT)
    assert report["reference"] and report["family"] == "mistral" and v["passed"], v
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_a_mistral_window_symuat_ignored_fails_the_check(tmp_path):
    from symuat.models.families import mistral

    folder = hf_family(tmp_path / "m", "mistral", sliding_window=3)
    net = mistral.load_folder(folder)
    for layer in net.layers:
        layer.window = None  # the mistake: full causal attention
    report = compare.check(list(TEXT), str(folder), loaded=net)
    assert not compare.verdict(report, TOL)["passed"]


def test_mistral_explain_adds_up_and_fold_folds_what_wp1_wp3_allow(tmp_path, capsys):
    folder = hf_family(tmp_path / "m", "mistral", sliding_window=4)
    assert cli.main(["model", "check", "--model", str(folder)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello there", "--view", "both",
                     "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and len(report["checks"]) == 3 and "reference" in report["checks"][-1]["check"]
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "f"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and [f["entry"] for f in report["folds"]] == ["WP1", "WP3"]
    for flag, entry in (("--center-writers", "WP12"), ("--value-biases", "WP4")):
        assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "g"), flag]) == 2
        assert f"symuat: {entry}:" in capsys.readouterr().err and not (tmp_path / "g").exists()


@pytest.mark.parametrize("changes,message", [
    ({"attention_bias": True}, r"'attention_bias' is not modelled by symuat's mistral family"),
    ({"layer_types": ["full_attention", "sliding_attention"]}, r"'layer_types' is not modelled"),
    ({"sliding_window": 0}, r"sliding_window must be a positive integer, not 0"),
    ({"hidden_act": "tanh"}, r"hidden_act is 'tanh'; symuat's mistral family models silu"),
])
def test_mistral_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    folder = _edit_config(hf_family(tmp_path / "m", "mistral"), **changes)
    with pytest.raises(ModelError, match=r"config\.json: .*" + message):
        compare.check(["Hi"], str(folder), reference=False)
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_mistral_tensor_it_does_not_model_is_refused(tmp_path, capsys):
    from safetensors.numpy import load_file, save_file

    folder = hf_family(tmp_path / "m", "mistral")
    t = load_file(str(folder / "model.safetensors"))
    t["model.layers.0.self_attn.q_proj.bias"] = t["model.layers.0.self_attn.q_proj.weight"][:, 0].copy()
    save_file(t, str(folder / "model.safetensors"))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert "tensor 'model.layers.0.self_attn.q_proj.bias' is not part of the mistral computation" \
        in capsys.readouterr().err
