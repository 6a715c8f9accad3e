"""The OLMo2 family (model tier): norms after each sub-layer inside the residual and a QK-norm
over the full projection width. Tiny random checkpoints saved by transformers in f32 and bf16 are
exact against transformers' float64 forward; a per-head QK-norm (the easy misreading) fails the
check; explain adds up; fold folds WP3 and refuses WP1 naming WP2; the attribution views, which
read pre-norms, refuse it; every field and tensor refused by name."""

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
@pytest.mark.parametrize("case", [{}, {"attention_bias": True, "num_key_value_heads": 1, "hidden_act": "gelu"},
                                  {"tie_word_embeddings": True, "num_key_value_heads": 4}])
def test_olmo2_folder_exact_against_transformers(tmp_path, dtype, case):
    folder = hf_family(tmp_path / "o", "olmo2", dtype=dtype, **case)
    report, v = _check(folder, texts=TEXT)
    assert report["reference"] and report["family"] == "olmo2" and v["passed"], v
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_a_per_head_qk_norm_fails_the_olmo2_check(tmp_path, monkeypatch):
    from symuat.models import postnorm
    from symuat.models.lifts import rms_scales

    folder = hf_family(tmp_path / "o", "olmo2")

    def per_head(P, gamma, eps, d=4):  # the misreading: each head normed on its own
        H = P.reshape(P.shape[0], -1, d)
        return (H * rms_scales(H, eps)[..., None]).reshape(P.shape) * gamma

    monkeypatch.setattr(postnorm, "full_width", per_head)
    report, v = _check(folder, texts=TEXT)
    assert not v["passed"] and v["worst"] > 1e-6


def test_olmo2_explain_adds_up_fold_refuses_wp2_and_attribution_refuses(tmp_path, capsys):
    folder = hf_family(tmp_path / "o", "olmo2", attention_bias=True)
    assert cli.main(["model", "check", "--model", str(folder)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello there", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["reference"] and len(report["checks"]) == 4
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "f"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and [f["entry"] for f in report["folds"]] == ["WP2", "WP3"]
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "g"), "--norms"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symuat: WP2: the RMSNorms of each olmo2 layer come after its sub-layers")
    assert not (tmp_path / "g").exists()
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hi", "--by", "layer",
                     "--no-reference"]) == 2
    assert "attribution has no adapter for PostNormLM" in capsys.readouterr().err


@pytest.mark.parametrize("changes,message", [
    ({"mlp_bias": True}, r"'mlp_bias' is not modelled by symuat's olmo2 family"),
    ({"sliding_window": 4}, r"'sliding_window' is not modelled by symuat's olmo2 family"),
    ({"attention_bias": "yes"}, r"attention_bias must be true or false"),
])
def test_olmo2_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    folder = _edit_config(hf_family(tmp_path / "o", "olmo2"), **changes)
    with pytest.raises(ModelError, match=r"config\.json: .*" + message):
        compare.check(["Hi"], str(folder), reference=False)
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("edit,message", [
    ("per-head q_norm", r"tensor 'model.layers.0.self_attn.q_norm.weight' has shape \(4,\), expected \(16,\)"),
    ("pre-norm", r"tensor 'model.layers.0.input_layernorm.weight' is not part of the olmo2 computation"),
])
def test_an_olmo2_tensor_it_does_not_model_is_refused(tmp_path, capsys, edit, message):
    from safetensors.numpy import load_file, save_file

    folder = hf_family(tmp_path / "o", "olmo2")
    t = load_file(str(folder / "model.safetensors"))
    if edit == "per-head q_norm":
        t["model.layers.0.self_attn.q_norm.weight"] = t["model.layers.0.self_attn.q_norm.weight"][:4].copy()
    else:
        t["model.layers.0.input_layernorm.weight"] = np.ones(16, dtype=np.float32)
    save_file(t, str(folder / "model.safetensors"))
    with pytest.raises(ModelError, match=message):
        compare.check(["Hi"], str(folder), reference=False)
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
