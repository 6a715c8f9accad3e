"""The GPT-NeoX / Pythia family: the parallel residual (X9) and the sequential one, partial rotary
positions, the per-head interleaved query_key_value, LayerNorm with biases — exact against
transformers' GPTNeoXForCausalLM in float64 (float32 islands made float64), or refused naming the
field (model tier)."""

import json

import numpy as np
import pytest

from symuat import cli
from symuat.models import compare
from symuat.models.formats import ModelError
from test_families import assert_config_refused, _DROP, _edit_config, _need, _randomise, _save

TOL = 1e-12


def hf_neox(folder, *, seed=0, dtype="float32", **overrides):
    """A random GPT-NeoX folder saved by transformers (byte-level vocabulary of 256)."""
    _need("torch")
    transformers = _need("transformers")
    import torch

    base = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2,
                max_position_embeddings=64, bos_token_id=1, eos_token_id=2)
    base.update(overrides)
    model = transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(**base))
    _randomise(model, seed)
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    return folder


CASES = {
    "parallel": {},
    "parallel-bf16": {"dtype": "bfloat16"},
    "sequential-half-rotary": {"use_parallel_residual": False, "rotary_pct": 0.5, "rotary_emb_base": 500.0},
    "full-rotary-no-bias-tied": {"rope_parameters": {"rope_type": "default", "rope_theta": 1e4,
                                                     "partial_rotary_factor": 1.0},
                                 "attention_bias": False, "tie_word_embeddings": True, "hidden_act": "gelu_new"},
}


def _check(folder, text="Hello there, world and more"):
    report = compare.check([text], str(folder), reference=True)
    return report, compare.verdict(report, TOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gpt_neox_folder_exact_against_transformers(tmp_path, case):
    report, v = _check(hf_neox(tmp_path / case, **CASES[case]))
    assert report["reference"] and report["family"] == "gpt_neox" and v["passed"], (case, v)
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_split_qkv_is_the_per_head_interleaved_layout():
    from symuat.models.families.gpt_neox import split_qkv

    h, d, M = 2, 3, 4
    W = np.arange(3 * h * d * M, dtype=float).reshape(3 * h * d, M)
    (WQ, WK, WV), _ = split_qkv(W, None, h, d)
    assert np.array_equal(WQ.T, np.concatenate([W[0:3], W[9:12]]))  # head 0 rows 0-2, head 1 rows 9-11
    assert np.array_equal(WK.T, np.concatenate([W[3:6], W[12:15]]))
    assert np.array_equal(WV.T, np.concatenate([W[6:9], W[15:18]]))


@pytest.mark.parametrize("mutant", ["qkv-read-as-gpt2-layout", "parallel-read-as-sequential", "full-rotary",
                                    "freq-over-d"])
def test_gpt_neox_misreadings_fail_the_check(tmp_path, monkeypatch, mutant):
    """The check can fail: each misreading of the checkpoint is caught by the reference."""
    from symuat.models.families import gpt_neox

    folder = hf_neox(tmp_path / "m", rotary_pct=0.5)
    real = gpt_neox.LNDecoderLayer
    if mutant == "qkv-read-as-gpt2-layout":
        def split(W, b, heads, d):
            M = W.shape[1]
            return [W[j * M:(j + 1) * M].T for j in range(3)], [b[j * M:(j + 1) * M] for j in range(3)]

        monkeypatch.setattr(gpt_neox, "split_qkv", split)
    else:
        def layer(**kw):
            if mutant == "parallel-read-as-sequential":
                kw["parallel"] = False
            elif mutant == "freq-over-d":  # WP8's mutant: θ^(-2k/d) instead of θ^(-2k/r)
                from symuat.models.lifts import rope_inv_freq

                kw["config"].inv_freq = rope_inv_freq(8, kw["config"].rope_theta)[:2]
            else:
                from symuat.models.lifts import rope_inv_freq

                kw["config"].inv_freq = rope_inv_freq(8, kw["config"].rope_theta)  # the whole head, not 4 of 8
                kw["rotary_dim"] = 8
            return real(**kw)

        monkeypatch.setattr(gpt_neox, "LNDecoderLayer", layer)
    report, v = _check(folder)
    assert not v["passed"] and v["worst"] > 1e-6, (mutant, v)


def test_gpt_neox_explain_adds_up(tmp_path, capsys):
    folder = hf_neox(tmp_path / "x")
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["reference"] and len(report["checks"]) == 4


def test_gpt_neox_rewrite_uses_the_x9_form(tmp_path):
    """A parallel layer's W2 reads the layer's input (L_in S2), not W1's output: V_j x'_0 = L_in S2 A_{j-1} x'_0."""
    from symuat.models.family import load
    from symuat.models.rewrite import rewrite
    from symuat.numeric.operators import Composed

    m = load(hf_neox(tmp_path / "p"))
    ids = m.tokenize("Hello there")
    r = rewrite(m, m.embed(ids))
    p = r.raw[0]
    assert isinstance(p.W2, Composed) and len(p.W2.ops) == 2 and p.parts["parallel"]
    x = r.x0
    assert np.allclose(p.W2 @ x, p.parts["Lin"] @ (p.parts["S2"] @ x), rtol=0, atol=1e-13)


@pytest.mark.parametrize("changes,message", [
    ({"rope_parameters": {"rope_type": "linear", "rope_theta": 1e4, "factor": 2.0, "partial_rotary_factor": 0.25}},
     r"rope_type 'linear'"),
    ({"rope_theta": 500.0}, r"rope_theta is 500.0 but transformers' gpt_neox reads 10000.0"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.2}},
     r"rotary width 1 of head width 8"),
    ({"hidden_act": "gelu_fast"}, r"hidden_act is 'gelu_fast'"),
    ({"rope_parameters": _DROP, "rotary_pct": 0.5, "some_new_switch": 1},
     r"'some_new_switch' is not modelled by symuat's gpt_neox family"),
])
def test_gpt_neox_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    assert_config_refused(_edit_config(hf_neox(tmp_path / "c"), **changes), message, capsys)


def test_gpt_neox_unknown_tensor_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = hf_neox(tmp_path / "t")
    t = load_file(str(folder / "model.safetensors"))
    t["gpt_neox.layers.0.attention.q_norm.weight"] = np.ones(8, dtype=np.float32)
    save_file(t, str(folder / "model.safetensors"))
    with pytest.raises(ModelError, match=r"tensor 'gpt_neox.layers.0.attention.q_norm.weight' is not part of the "
                                         r"gpt_neox"):
        compare.check(["Hi"], str(folder), reference=False)


def test_gpt_neox_legacy_rotary_fields_read_as_transformers_does(tmp_path):
    """rotary_pct / rotary_emb_base count only where rope_parameters lacks the key (transformers' setdefault)."""
    from symuat.models.family import load

    folder = _edit_config(hf_neox(tmp_path / "l", rotary_pct=0.5), rotary_pct=1.0)  # rope_parameters says 0.5
    assert load(folder).layers[0].rotary_dim == 4
    folder = _edit_config(folder, rope_parameters=_DROP)
    assert load(folder).layers[0].rotary_dim == 8


def test_gpt_neox_declared_fields_are_what_the_loader_reads(tmp_path):
    from symuat.models.families import gpt_neox
    from symuat.models.family import load

    read = set(load(hf_neox(tmp_path / "f")).fields_read)
    assert read <= set(gpt_neox.CONFIG_FIELDS) | set(gpt_neox.INERT_FIELDS), read - set(gpt_neox.CONFIG_FIELDS)


@pytest.mark.parametrize("overrides", [{}, {"attention_bias": False, "tie_word_embeddings": True}])
def test_gpt_neox_fold_writes_a_checkpoint_transformers_reads_exactly(tmp_path, capsys, overrides):
    """WP1 (LayerNorm form), WP4, WP12, WP3 on a parallel-residual folder; without attention biases the folded
    checkpoint gets them (β₁W) and says so (attention_bias true), and transformers reads it as symuat does."""
    folder = hf_neox(tmp_path / "f", **overrides)
    out = tmp_path / "folded"
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and {f["entry"] for f in report["folds"]} == {"WP1", "WP4", "WP12", "WP3"}
    assert json.loads((out / "config.json").read_text())["attention_bias"] is True
    _, v = _check(out)
    assert v["passed"], v
