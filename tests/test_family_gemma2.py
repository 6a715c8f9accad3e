"""The Gemma 2 family: tiny random checkpoints saved by transformers (f32 and bf16) — sandwich norms,
GQA, alternating local/global layers, attention and final-logit soft-capping — exact against HF
``Gemma2ForCausalLM`` in float64 (float32 islands made float64); explain adds up to the *capped* logit
(the frozen secant slope); mutants fail; every unmodelled field exits 2 naming it; fold refuses."""

import json

import numpy as np
import pytest

from symuat import cli
from symuat.models import compare
from test_families import _need, _randomise, _save

TOL = 1e-12
TEXT = "the quick brown fox jumps over it"  # 33 byte tokens > the window of 4


def gemma2_folder(folder, *, seed=0, dtype=None, **overrides):
    _need("torch")
    transformers = _need("transformers")
    base = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, head_dim=8, max_position_embeddings=64, sliding_window=4,
                query_pre_attn_scalar=12, rms_norm_eps=1e-6, final_logit_softcapping=3.0, attn_logit_softcapping=2.0)
    base.update(overrides)
    model = transformers.Gemma2ForCausalLM(transformers.Gemma2Config(**base))
    _randomise(model, seed)
    if dtype is not None:
        model = model.to(dtype)
    _save(model, folder)
    return folder


def _worst(report):
    return max(max(s["rewrite_vs_reference"], s["rewrite_vs_forward"]) for t in report["texts"] for s in t["states"])


@pytest.fixture(scope="module")
def g2(tmp_path_factory):
    return gemma2_folder(tmp_path_factory.mktemp("gemma2") / "g2")


def test_gemma2_exact_against_hf_float64_with_both_soft_caps(g2):
    from symuat.models.families import gemma2

    m = gemma2.load_folder(g2)
    assert m.layer_types == ["local", "global", "local"] and m.final_softcap == 3.0
    assert all(layer.attn_softcap == 2.0 for layer in m.layers)
    report = compare.check([TEXT], str(g2))
    assert report["family"] == "gemma2" and report["reference"] and _worst(report) <= TOL
    assert report["texts"][0]["stock_hf_float64_gap"]["worst_state"] > 0


def test_gemma2_bf16_saved_and_no_caps(tmp_path):
    torch = _need("torch")
    folder = gemma2_folder(tmp_path / "g2", dtype=torch.bfloat16, final_logit_softcapping=None,
                           attn_logit_softcapping=None, tie_word_embeddings=False)
    assert _worst(compare.check([TEXT], str(folder))) <= TOL


def test_gemma2_explain_adds_up_to_the_capped_logit(g2, capsys):
    rep, dec, _ = compare.explain(str(g2), TEXT, None, reference=True)
    assert rep["passed"] and abs(dec.total - dec.logit) <= 1e-12 * max(1.0, abs(dec.logit))
    assert abs(dec.logit) < 3.0  # capped: |c tanh(l/c)| < c
    args = ["model", "explain", "--model", str(g2), "--text", TEXT, "--token", "e", "--vs", "t", "--format", "json"]
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and any("secant slope" in f for f in out["views"]["duat"]["frozen"])
    assert any("post-MLP" in f for f in out["views"]["duat"]["frozen"])


def test_gemma2_mutants_fail(g2):
    """Each modelled feature left out (or off) moves the logits away from the HF reference (one reference run)."""
    from symuat.models.families import gemma2
    from symuat.models import reference as ref_mod
    from symuat.models.compare import row_errors

    good = gemma2.load_folder(g2)
    ids = good.tokenize(TEXT)
    ref = ref_mod.decoder_reference(good, ids)["logits"]
    assert row_errors(good.logits(good.hidden_states(ids)[-1]), ref)[0] <= TOL
    for mutate in (lambda m: [setattr(layer, "attn_softcap", None) for layer in m.layers],  # no attention cap
                   lambda m: setattr(m, "final_softcap", None),  # no final cap
                   lambda m: [setattr(layer, "scale", layer.config.head_dim ** -0.5) for layer in m.layers],
                   lambda m: setattr(m, "embed_scale", m.embed_scale * (1 + 1e-6))):  # embedding scale off
        m = gemma2.load_folder(g2)
        mutate(m)
        assert row_errors(m.logits(m.hidden_states(ids)[-1]), ref)[0] > 1e-9


@pytest.mark.parametrize("field,value", [("attention_bias", True), ("use_bidirectional_attention", True),
                                         ("final_logit_softcapping", 0), ("hidden_activation", "gelu_fast"),
                                         ("layer_types", ["full_attention"]), ("flux_capacitor", 1)])
def test_gemma2_refuses_what_it_does_not_model(g2, tmp_path, capsys, field, value):
    import shutil

    folder = tmp_path / "g2"
    shutil.copytree(g2, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg[field] = value
    (folder / "config.json").write_text(json.dumps(cfg))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert field in capsys.readouterr().err


def test_gemma2_fold_refused_naming_the_identities(g2, tmp_path, capsys):
    assert cli.main(["model", "fold", "--model", str(g2), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "WP2" in err and "X10" in err and not (tmp_path / "out").exists()


def test_gemma2_refuses_a_tensor_it_does_not_model(g2, tmp_path, capsys):
    """A q_norm (Gemma 3's QK-norm) in a Gemma 2 checkpoint is not part of its computation: exit 2 naming it."""
    import shutil

    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "g2"
    shutil.copytree(g2, folder)
    tensors = load_file(str(folder / "model.safetensors"))
    tensors["model.layers.0.self_attn.q_norm.weight"] = np.zeros(8, dtype=np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert "model.layers.0.self_attn.q_norm.weight" in capsys.readouterr().err


def test_gemma2_hub_style_config_json(g2, tmp_path):
    """A config.json as the Hub's Gemma 2 checkpoints carry it (transformers 4.42: hidden_act beside
    hidden_activation, rope_theta, cache_implementation, no layer_types, no rope_parameters): every field read
    or known inert, and exact against transformers' own reading of it."""
    import shutil

    folder = tmp_path / "g2"
    shutil.copytree(g2, folder)
    cfg = json.loads((folder / "config.json").read_text())
    theta = cfg.pop("rope_parameters")["rope_theta"]
    cfg.pop("layer_types")
    cfg.update(rope_theta=theta, hidden_act="gelu_pytorch_tanh", cache_implementation="hybrid",
               torch_dtype="float32", architectures=["Gemma2ForCausalLM"])
    (folder / "config.json").write_text(json.dumps(cfg))
    assert _worst(compare.check([TEXT], str(folder))) <= TOL


def test_gemma2_golden_map_agrees_with_jacrev_through_the_gemma_islands(g2):
    from symuat.models import attribution as at
    from symuat.models.families import gemma2
    from symuat.models.compare import relative_error

    m = gemma2.load_folder(g2)
    ids = m.tokenize("the fox jumps")
    tr = at.trace(m, ids)
    ref = at.golden_reference(m, ids)
    assert relative_error(at.golden_apply(tr, tr.x0), ref["y"]) <= TOL
    assert relative_error(np.stack([at.golden_vjp(tr, e) for e in np.eye(m.config.M)]), ref["J"]) <= TOL
