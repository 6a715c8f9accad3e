"""The Gemma-3 safetensors folder layout (``model_type`` gemma3_text): tiny random checkpoints saved by
transformers (f32 and bf16), exact against HF ``Gemma3ForCausalLM`` in float64 with its float32
islands made float64; every config field modelled or refused by name; a multimodal ``gemma3`` folder
refused naming its vision part."""

import json

import pytest

from symuat import cli
from symuat.models import compare
from test_families import _need, _randomise, _save

TOL = 1e-12
TEXT = "the quick brown fox jumps over it"  # 33 byte tokens > the window of 4: local and global layers differ


def gemma3_folder(folder, *, seed=0, dtype=None, **overrides):
    """A random Gemma-3 text decoder saved by transformers: sandwich norms, QK-norm, GQA, head width ≠ M/h,
    local layers (window 4) and a global one, two RoPE bases."""
    _need("torch")
    transformers = _need("transformers")
    base = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, head_dim=8, max_position_embeddings=64, sliding_window=4,
                layer_types=["sliding_attention", "full_attention", "sliding_attention"], query_pre_attn_scalar=12,
                rms_norm_eps=1e-6)
    base.update(overrides)
    model = transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(**base))
    _randomise(model, seed)
    if dtype is not None:
        model = model.to(dtype)
    _save(model, folder)
    return folder


def _worst(report):
    return max(max(s["rewrite_vs_reference"], s["rewrite_vs_forward"]) for t in report["texts"] for s in t["states"])


@pytest.mark.parametrize("caps", [{}, {"final_logit_softcapping": 3.0}])
def test_gemma3_folder_exact_against_hf_float64(tmp_path, caps):
    folder = gemma3_folder(tmp_path / "g3", **caps)
    report = compare.check([TEXT], str(folder))
    assert report["family"] == "gemma3" and report["reference"]
    assert _worst(report) <= TOL
    rep, dec, _ = compare.explain(str(folder), TEXT, None, reference=True)
    assert rep["passed"]


def test_gemma3_folder_bf16_saved_and_linear_rope(tmp_path):
    torch = _need("torch")
    folder = gemma3_folder(tmp_path / "g3", dtype=torch.bfloat16,
                           rope_parameters={"full_attention": {"rope_type": "linear", "factor": 4.0,
                                                               "rope_theta": 50000.0},
                                            "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}})
    assert "BF16" in (folder / "model.safetensors").read_bytes()[:2000].decode("latin-1")
    report = compare.check([TEXT], str(folder))
    assert _worst(report) <= TOL


def test_gemma3_folder_legacy_rope_fields(tmp_path):
    """A transformers-4 config.json (rope_theta, rope_local_base_freq, rope_scaling; no rope_parameters, no
    layer_types but sliding_window_pattern), read by transformers' own conversion rule."""
    folder = gemma3_folder(tmp_path / "g3", num_hidden_layers=4, layer_types=None)
    cfg = json.loads((folder / "config.json").read_text())
    for key in ("rope_parameters", "layer_types", "_sliding_window_pattern"):
        cfg.pop(key, None)
    cfg.update(rope_theta=20000.0, rope_local_base_freq=300.0, rope_scaling={"rope_type": "linear", "factor": 2.0},
               sliding_window_pattern=2)
    (folder / "config.json").write_text(json.dumps(cfg))
    from symuat.models.families import gemma3

    m = gemma3.load_folder(folder)
    assert m.layer_types == ["local", "global", "local", "global"]
    assert _worst(compare.check([TEXT], str(folder))) <= TOL


def test_gemma3_folder_mutants_fail(tmp_path):
    from symuat.models.families import gemma3

    folder = gemma3_folder(tmp_path / "g3")
    m = gemma3.load_folder(folder)
    for layer in m.layers:
        layer.scale = 256 ** -0.5  # the hard-coded constant instead of the file's query_pre_attn_scalar
    assert _worst(compare.check([TEXT], str(folder), loaded=m)) > 1e-6
    m = gemma3.load_folder(folder)
    m.norm = m.norm - 1.0  # WP10: the stored w instead of 1 + w
    assert _worst(compare.check([TEXT], str(folder), loaded=m)) > 1e-6


@pytest.mark.parametrize("field,value", [("attention_bias", True), ("use_bidirectional_attention", True),
                                         ("attn_logit_softcapping", 50.0),
                                         ("hidden_activation", "gelu_fast"), ("flux_capacitor", 1)])
def test_gemma3_folder_refuses_what_it_does_not_model(tmp_path, capsys, field, value):
    folder = gemma3_folder(tmp_path / "g3")
    cfg = json.loads((folder / "config.json").read_text())
    cfg[field] = value
    (folder / "config.json").write_text(json.dumps(cfg))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert field in capsys.readouterr().err


def test_multimodal_gemma3_folder_refused_naming_the_vision_part(tmp_path, capsys):
    folder = gemma3_folder(tmp_path / "g3")
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({"model_type": "gemma3", "text_config": cfg,
                                                    "vision_config": {"model_type": "siglip_vision_model"}}))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert "vision" in capsys.readouterr().err


def test_gemma3_folder_fold_refused_naming_the_identities(tmp_path, capsys):
    folder = gemma3_folder(tmp_path / "g3")
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert "WP2.sandwich" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_gemma3_folder_explain_lists_the_secant_slope(tmp_path, capsys):
    folder = gemma3_folder(tmp_path / "g3", final_logit_softcapping=3.0)
    assert cli.main(["model", "explain", "--model", str(folder), "--text", TEXT, "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["passed"] and any("secant slope" in f for f in rep["views"]["residual"]["frozen"])
