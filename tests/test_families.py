"""Every checkpoint rewritten exactly or refused (model tier).

Small random checkpoints are built by transformers itself (``XConfig`` → ``XForCausalLM`` /
``BertModel`` → ``save_pretrained``) and GGUF files by ``gguf``'s writer; each feature the
families support is checked against the reference built from those files (≤ 1e-12 per row), each
feature they do not is refused with exit 2 naming it, and every bad input of issue 18 is one line
on stderr with exit 2. In CI SYMUAT_REQUIRE_REFERENCE=1 turns a missing torch/transformers into a
failure instead of a skip.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from symuat import cli
from symuat.models import compare
from symuat.models.formats import ModelError

TOL = 1e-12


def _need(module: str):
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("SYMUAT_REQUIRE_REFERENCE") == "1":
            pytest.fail(f"{module} is required here (SYMUAT_REQUIRE_REFERENCE=1) but not installed")
        pytest.skip(f"{module} not installed")


def _tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(alphabet)}, []))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(folder / "tokenizer.json"))


def _randomise(model, seed: int) -> None:
    """Every parameter random (biases too: transformers initialises them to zero, which would hide them)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "LayerNorm.weight" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif p.ndim == 2:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))


def _save(model, folder: Path) -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(str(folder))
    finally:
        hf_logging.enable_progress_bar()
    _tokenizer(folder)


def hf_decoder(folder: Path, *, kind: str = "llama", seed: int = 0, **overrides) -> Path:
    """A random decoder folder saved by transformers (vocabulary: the 256 byte-level tokens)."""
    _need("torch")
    transformers = _need("transformers")
    base = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=False,
                rms_norm_eps=float(np.float32(1e-5)))  # a float32 value: a GGUF stores eps as float32
    base.update(overrides)
    cfg_cls, model_cls = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
                          "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM)}[kind]
    model = model_cls(cfg_cls(**base))
    _randomise(model, seed)
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    return folder


def hf_bert(folder: Path, *, seed: int = 0, **overrides) -> Path:
    _need("torch")
    transformers = _need("transformers")
    base = dict(vocab_size=256, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=64, type_vocab_size=2)
    base.update(overrides)
    model = transformers.BertModel(transformers.BertConfig(**base))
    _randomise(model, seed)
    folder.mkdir(parents=True, exist_ok=True)
    _save(model, folder)
    return folder


def _edit_config(folder: Path, **changes) -> Path:
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    for k, v in changes.items():
        if v is _DROP:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    path.write_text(json.dumps(cfg))
    return folder


_DROP = object()


def _check(where, reference=True, texts=("Hello there, world",)):
    report = compare.check(list(texts), str(where), reference=reference)
    return report, compare.verdict(report, TOL)


# --------------------------------------------------------------------------------------------
# supported: exact against the reference built from the checkpoint's own files
# --------------------------------------------------------------------------------------------

DECODER_CASES = {
    "plain": {},
    "gelu": {"hidden_act": "gelu"},
    "gelu_new": {"hidden_act": "gelu_new"},
    "gelu_pytorch_tanh": {"hidden_act": "gelu_pytorch_tanh"},
    "relu": {"hidden_act": "relu"},
    "biases": {"attention_bias": True, "mlp_bias": True},
    "head_dim": {"head_dim": 6},
    "tied": {"tie_word_embeddings": True},
    "rope-linear": {"rope_parameters": {"rope_type": "linear", "rope_theta": 500.0, "factor": 4.0}},
    "rope-llama3": {"rope_parameters": {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 8}},
}


@pytest.mark.parametrize("case", sorted(DECODER_CASES))
def test_llama_folder_exact_against_transformers(tmp_path, case):
    folder = hf_decoder(tmp_path / case, **DECODER_CASES[case])
    report, v = _check(folder)
    assert report["reference"] and report["family"] == "llama"
    assert v["passed"], (case, v)
    rows = report["texts"][0]["states"]
    assert rows[-1]["state"] == "logits" and rows[-1]["rewrite_vs_reference"] <= TOL
    assert all(r["forward_vs_reference"] <= TOL for r in rows)


@pytest.mark.parametrize("overrides", [{}, {"use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1},
                                       {"hidden_act": "gelu", "head_dim": 8}])
def test_qwen2_folder_exact_against_transformers(tmp_path, overrides):
    folder = hf_decoder(tmp_path / "q", kind="qwen2", **overrides)
    report, v = _check(folder, texts=("Hello there, world and more",))
    assert report["reference"] and report["family"] == "qwen2" and v["passed"], v


@pytest.mark.parametrize("act", ["gelu", "relu", "gelu_new", "silu"])
def test_bert_folder_activation_exact_against_transformers(tmp_path, act):
    folder = hf_bert(tmp_path / act, hidden_act=act)
    report, v = _check(folder, texts=("Hello there", "A longer sentence here"))
    assert report["reference"] and report["family"] == "bert" and v["passed"], v


def test_the_reference_sees_what_symuat_would_ignore(tmp_path, monkeypatch):
    """The reference is transformers' own reading of config.json: if symuat dropped hidden_act, the check FAILs."""
    from symuat.models import decoder_reader

    folder = hf_decoder(tmp_path / "g", hidden_act="gelu")
    monkeypatch.setitem(decoder_reader.HIDDEN_ACT, "gelu", "silu")  # symuat misreading the field
    report, v = _check(folder)
    assert not v["passed"] and v["worst"] > 1e-3


# --------------------------------------------------------------------------------------------
# refused: a field, a value or a tensor symuat does not model
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("changes,message", [
    ({"hidden_act": "tanh"}, r"hidden_act is 'tanh'; symuat's llama family models silu"),
    ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 2.0}},
     r"rope_type 'yarn'; symuat supports 'default', 'linear' and 'llama3'"),
    ({"some_new_switch": True}, r"'some_new_switch' is not modelled by symuat's llama family"),
    ({"num_key_value_heads": 0}, r"num_key_value_heads must be a positive integer, not 0"),
    ({"num_key_value_heads": "3"}, r"num_key_value_heads must be a positive integer, not '3'"),
    ({"rope_theta": "abc"}, r"rope_theta must be a positive finite number, not 'abc'"),
    ({"rms_norm_eps": -1}, r"rms_norm_eps must be a positive finite number, not -1"),
    ({"num_attention_heads": 7, "head_dim": _DROP, "num_key_value_heads": 7},
     r"num_attention_heads 7 does not divide hidden_size 16"),
    ({"num_attention_heads": 4, "num_key_value_heads": 3}, r"4 is not a multiple of num_key_value_heads 3"),
])
def test_llama_config_refused_naming_the_field(tmp_path, capsys, changes, message):
    assert_config_refused(_edit_config(hf_decoder(tmp_path / "c"), **changes), message, capsys)


def assert_config_refused(folder: Path, message: str, capsys) -> None:
    """``folder``'s config.json is refused naming ``message``: by the API (a ModelError) and by
    ``symuat model check`` (exit 2, one line on stderr naming config.json, no traceback)."""
    with pytest.raises(ModelError, match=r"config\.json: .*" + message):
        compare.check(["Hi"], str(folder), reference=False)
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.json" in err and "Traceback" not in err


def test_unknown_tensor_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = hf_decoder(tmp_path / "t")
    t = load_file(str(folder / "model.safetensors"))
    t["model.layers.0.self_attn.q_norm.weight"] = np.ones(4, dtype=np.float32)
    save_file(t, str(folder / "model.safetensors"))
    with pytest.raises(ModelError, match=r"tensor 'model.layers.0.self_attn.q_norm.weight' is not part of the llama"):
        compare.check(["Hi"], str(folder), reference=False)


def test_bias_tensors_without_the_flag_refused(tmp_path):
    """Bias tensors the config does not announce: refused (transformers would drop them)."""
    folder = _edit_config(hf_decoder(tmp_path / "b", attention_bias=True), attention_bias=False)
    with pytest.raises(ModelError, match=r"tensor 'model.layers.\d+.self_attn.[qkvo]_proj.bias' is not part of"):
        compare.check(["Hi"], str(folder), reference=False)


def test_missing_embeddings_without_vocab_size(tmp_path, capsys):
    from safetensors.numpy import load_file, save_file

    folder = _edit_config(hf_decoder(tmp_path / "e"), vocab_size=_DROP)
    t = load_file(str(folder / "model.safetensors"))
    del t["model.embed_tokens.weight"]
    save_file(t, str(folder / "model.safetensors"))
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    assert "tensor 'model.embed_tokens.weight' is missing (and config.json gives no vocab_size)" in \
        capsys.readouterr().err


def test_bert_config_refused(tmp_path):
    folder = _edit_config(hf_bert(tmp_path / "b"), position_embedding_type="relative_key")
    with pytest.raises(ModelError, match=r"position_embedding_type is 'relative_key'; symuat models 'absolute'"):
        compare.check(["Hi"], str(folder), reference=False)
    folder = _edit_config(hf_bert(tmp_path / "c"), hidden_act="mish")
    with pytest.raises(ModelError, match=r"hidden_act is 'mish'"):
        compare.check(["Hi"], str(folder), reference=False)


# --------------------------------------------------------------------------------------------
# GGUF: modelled exactly (llama.cpp semantics), refused against transformers' GGUF path that drops it
# --------------------------------------------------------------------------------------------


def _permute(W, heads):
    rows = W.shape[0]
    d = rows // heads
    return W.reshape(heads, 2, d // 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


_GNAMES = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q",
           "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
           "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def gguf_from_folder(folder: Path, path: Path, *, arch="llama", rope_linear=None, rope_freqs=None, extra_kv=None):
    """The folder's weights as a GGUF (llama: Q/K rows permuted for the interleaved RoPE, as llama.cpp's converter)."""
    gguf = pytest.importorskip("gguf")
    from safetensors.numpy import load_file
    from tokenizers import pre_tokenizers

    cfg = json.loads((folder / "config.json").read_text())
    t = load_file(str(folder / "model.safetensors"))
    h, g = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or cfg["hidden_size"] // h
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(h)
    w.add_head_count_kv(g)
    w.add_rope_freq_base((cfg.get("rope_parameters") or {}).get("rope_theta", 10000.0))
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    if arch == "llama":
        w.add_rope_dimension_count(d)
    w.add_vocab_size(cfg["vocab_size"])
    if rope_linear:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rope_linear)
    for k, v in (extra_kv or {}).items():
        w.add_float32(k, v)
    tokens = sorted(pre_tokenizers.ByteLevel.alphabet())
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_merges([])
    w.add_token_types([1] * len(tokens))
    for name, value in t.items():
        if name == "model.embed_tokens.weight":
            gname = "token_embd.weight"
        elif name == "model.norm.weight":
            gname = "output_norm.weight"
        elif name == "lm_head.weight":
            gname = "output.weight"
        else:
            _, _, k, *rest = name.split(".")
            gname = f"blk.{k}.{_GNAMES['.'.join(rest[:-1])]}.{rest[-1]}"
        if arch == "llama" and ".attn_q." in gname:
            value = _permute(value, h)
        elif arch == "llama" and ".attn_k." in gname:
            value = _permute(value, g)
        w.add_tensor(gname, np.ascontiguousarray(value, dtype=np.float32))
    if rope_freqs is not None:
        w.add_tensor("rope_freqs.weight", np.asarray(rope_freqs, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _logits(where, text="Hello there, world"):
    from symuat.models.family import load

    m = load(where)
    ids = m.tokenize(text)
    return m.logits(m.hidden_states(ids)[-1]), ids


def _hf_logits(folder, ids):
    from symuat.models import reference
    from symuat.models.family import load

    return reference.decoder_reference(load(folder), ids)["logits"]


def test_gguf_plain_exact_against_transformers_gguf_path(tmp_path):
    folder = hf_decoder(tmp_path / "f")
    path = gguf_from_folder(folder, tmp_path / "m.gguf")
    report, v = _check(path)
    assert report["reference"] and v["passed"], v


def test_qwen2_gguf_with_its_biases_exact_against_transformers(tmp_path):
    folder = hf_decoder(tmp_path / "q", kind="qwen2")
    path = gguf_from_folder(folder, tmp_path / "q.gguf", arch="qwen2")
    report, v = _check(path)
    assert report["reference"] and report["family"] == "qwen2" and v["passed"], v


@pytest.mark.parametrize("case", ["rope-linear", "rope_freqs", "biases"])
def test_gguf_features_transformers_drops(tmp_path, capsys, case):
    """Modelled exactly (against the same model read by transformers from an HF folder, where it
    does read the feature), and refused with the reference, which would share the blind spot."""
    if case == "rope-linear":
        folder = hf_decoder(tmp_path / "f", rope_parameters={"rope_type": "linear", "rope_theta": 10000.0,
                                                             "factor": 4.0})
        path = gguf_from_folder(folder, tmp_path / "m.gguf", rope_linear=4.0)
        tol, named = TOL, "rope.scaling.type"
    elif case == "rope_freqs":
        rope = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": 8}
        folder = hf_decoder(tmp_path / "f", rope_parameters=rope)
        from symuat.models.decoder_reader import scaled_inv_freq
        from symuat.models.lifts import rope_inv_freq

        ratio = rope_inv_freq(4, 10000.0) / scaled_inv_freq(4, 10000.0, "llama3", rope)
        path = gguf_from_folder(folder, tmp_path / "m.gguf", rope_freqs=ratio)
        tol, named = 1e-6, "rope_freqs.weight"  # the factors are stored in float32
    else:
        folder = hf_decoder(tmp_path / "f", attention_bias=True, mlp_bias=True)
        path = gguf_from_folder(folder, tmp_path / "m.gguf")
        tol, named = TOL, ".bias"
    mine, ids = _logits(path)
    assert compare.relative_error(mine, _hf_logits(folder, ids)) <= tol
    report, v = _check(path, reference=False)
    assert v["passed"]
    assert cli.main(["model", "check", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert named in err and "transformers' GGUF loader drops it" in err and err.count("\n") == 1
    assert cli.main(["model", "explain", "--model", str(path), "--text", "Hi"]) == 2


def test_gguf_unknown_metadata_refused(tmp_path):
    folder = hf_decoder(tmp_path / "f")
    path = gguf_from_folder(folder, tmp_path / "m.gguf", extra_kv={"llama.attention.logit_softcapping": 30.0})
    with pytest.raises(ModelError, match=r"GGUF metadata key 'llama.attention.logit_softcapping' is not modelled"):
        compare.check(["Hi"], str(path), reference=False)


# --------------------------------------------------------------------------------------------
# explain checks itself
# --------------------------------------------------------------------------------------------


def test_explain_checks_against_forward_and_reference(tmp_path, capsys, monkeypatch):
    folder = hf_decoder(tmp_path / "x", attention_bias=True, mlp_bias=True, hidden_act="gelu")
    args = ["model", "explain", "--model", str(folder), "--text", "Hello", "--view", "both", "--format", "json"]
    assert cli.main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and len(report["checks"]) == 3  # the rewrite's sum, its logit, the reference
    assert report["terms"][-1]["value"] != 0.0  # the bias terms are there
    # symuat misreading hidden_act: the forward no longer reproduces the checkpoint → FAIL
    from symuat.models import decoder_reader

    monkeypatch.setitem(decoder_reader.HIDDEN_ACT, "gelu", "silu")
    assert cli.main(args) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["passed"]
    assert [c["passed"] for c in report["checks"]] == [True, True, False]


def test_explain_fails_when_the_terms_do_not_sum_to_the_forward(tmp_path, capsys, monkeypatch):
    from symuat.models import rewrite

    folder = hf_decoder(tmp_path / "x")
    monkeypatch.setattr(rewrite, "_rmatvec", lambda op, v: op @ v)  # a wrong (forward) chain
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--view", "duat",
                     "--no-reference"]) == 1
    assert "FAIL" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# the error measure, bad input
# --------------------------------------------------------------------------------------------


def test_row_error_sees_an_error_next_to_a_huge_row():
    b = np.ones((3, 4))
    b[0, 0] = 1e8  # one huge row (SmolLM2's first token is ~7600× the median)
    a = b.copy()
    a[2, 1] *= 1.01
    rel, ab = compare.row_errors(a, b)
    assert rel == pytest.approx(0.01) and ab == pytest.approx(0.01)
    assert np.isnan(compare.row_errors(a * np.nan, b)[0])


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1e-9", "abc"])
def test_tolerance_validated(tmp_path, capsys, value):
    folder = hf_decoder(tmp_path / "f")
    for cmd in ("check", "explain"):
        assert cli.main(["model", cmd, "--model", str(folder), "--no-reference", f"--tolerance={value}"]) == 2
        assert "--tolerance must be a positive finite number" in capsys.readouterr().err


def test_figure_existing_folder_refused_nothing_written(tmp_path, capsys):
    folder = hf_decoder(tmp_path / "f")
    target = tmp_path / "figs"
    target.mkdir()
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hi", "--no-reference",
                     "--figure", str(target)]) == 2
    assert "names an existing folder" in capsys.readouterr().err
    assert list(target.iterdir()) == [] and not (tmp_path / "figs.png").exists()


def test_llama_folder_without_config(tmp_path, capsys):
    folder = hf_decoder(tmp_path / "f")
    (folder / "config.json").unlink()
    assert cli.main(["model", "check", "--model", str(folder), "--no-reference"]) == 2
    err = capsys.readouterr().err
    assert "config.json: missing" in err and "BERT" not in err


@pytest.mark.parametrize("target", ["config.json", "tokenizer.json", "model.safetensors", "folder", "gguf"])
def test_unreadable_files_are_named(tmp_path, capsys, monkeypatch, target):
    """Permission denied (simulated: the tests may run as root, who reads everything)."""
    import pathlib

    folder = hf_decoder(tmp_path / "f")
    path = gguf_from_folder(folder, tmp_path / "m.gguf") if target == "gguf" else \
        folder if target == "folder" else folder / target
    real_read, real_iter, real_open = pathlib.Path.read_bytes, pathlib.Path.iterdir, pathlib.Path.open

    def open_(self, *args, **kwargs):  # a GGUF is mapped (formats.map_bytes), not read whole
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    def read_bytes(self):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    def iterdir(self):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iter(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    monkeypatch.setattr(pathlib.Path, "iterdir", iterdir)
    monkeypatch.setattr(pathlib.Path, "open", open_)
    where = path if target == "gguf" else folder
    assert cli.main(["model", "check", "--model", str(where), "--no-reference", "--text", "Hi"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cannot read" in err and "permission denied" in err and err.count("\n") == 1


def test_the_declared_field_lists_are_what_the_loaders_read(tmp_path):
    """Each family's CONFIG_FIELDS / GGUF_KEYS (the documented list) covers every field its loader reads."""
    from symuat.models.families import bert, llama, qwen2
    from symuat.models.family import load

    cases = [(llama, hf_decoder(tmp_path / "l", attention_bias=True, mlp_bias=True, head_dim=6,
                                rope_parameters={"rope_type": "linear", "rope_theta": 1e4, "factor": 2.0})),
             (qwen2, hf_decoder(tmp_path / "q", kind="qwen2", use_sliding_window=True, sliding_window=3))]
    for mod, folder in cases:
        read = set(load(folder).fields_read)
        assert read <= set(mod.CONFIG_FIELDS) | set(mod.INERT_FIELDS), read - set(mod.CONFIG_FIELDS)
        assert set(mod.CONFIG_FIELDS) - {"rope_theta", "rope_scaling"} <= read  # (v5 folders: rope_parameters)
    g = load(gguf_from_folder(cases[0][1], tmp_path / "l.gguf", rope_linear=2.0))
    assert set(g.fields_read) <= {f"llama.{k}" for k in llama.GGUF_KEYS} | {"general.architecture"}
    cfg = bert._read_config(hf_bert(tmp_path / "b"))
    assert set(cfg["_fields_read"]) <= set(bert.CONFIG_FIELDS) | set(bert.INERT_FIELDS)
    assert set(bert.CONFIG_FIELDS) <= set(cfg["_fields_read"])


# -- the registry: a family is one module of symuat/models/families declaring its FAMILY -------------


_TOY = '''
from symuat.models.family import Family


def load_folder(folder):
    return ("toy model", folder)


FAMILY = Family(name="toy", kind="decoder", model_types=("toyformer",), load_folder=load_folder,
                stock_islands="the toy's own island", fold_refusal="fold does not write toy checkpoints",
                module=__name__)
'''


def _plant(tmp_path, monkeypatch, text: str, name: str = "toy"):
    """A module ``name`` in a second folder of the families package (as if it were one new file there)."""
    import sys

    from symuat.models import families

    extra = tmp_path / "planted"
    extra.mkdir()
    (extra / f"{name}.py").write_text(text)
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(extra)])
    monkeypatch.setitem(sys.modules, f"symuat.models.families.{name}", None)  # restored (removed) afterwards
    del sys.modules[f"symuat.models.families.{name}"]


def test_a_new_family_is_one_module_in_the_families_folder(tmp_path, monkeypatch, capsys):
    from symuat.models import family
    from symuat.models.command import _stock_islands

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "toyformer"}))
    with pytest.raises(ModelError, match="model_type 'toyformer' is not supported"):  # not yet a family
        family.resolve(folder)
    _plant(tmp_path, monkeypatch, _TOY)
    assert "toy" in [f.name for f in family.families()]
    fam, how, path = family.resolve(folder)
    assert (fam.name, how, path) == ("toy", "folder", folder)
    assert family.load(folder) == ("toy model", folder)  # its own loader
    assert family.named("toy") is fam and _stock_islands("toy", "default") == "the toy's own island"
    assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert "fold does not write toy checkpoints" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_family_module_without_a_family_record_is_an_error(tmp_path, monkeypatch):
    from symuat.models import family

    _plant(tmp_path, monkeypatch, "FAMILY = {'name': 'toy'}\n")
    with pytest.raises(TypeError, match="families.toy.FAMILY is not a Family"):
        family.families()


def test_every_family_declares_its_capabilities_in_its_record():
    """What callers ask a family for is a field of its :class:`Family`, never a module attribute."""
    from symuat.models.family import Family, Fold, families

    fams = families()
    assert {f.name for f in fams} >= {"bert", "llama", "qwen2", "qwen3", "mistral", "olmo2", "phi3", "gpt2",
                                      "gpt_neox", "gemma2", "gemma3"}
    for f in fams:
        assert isinstance(f, Family) and f.module == f"symuat.models.families.{f.name}"
        assert callable(f.load_folder) and (f.load_gguf is None) == (not f.gguf_architectures), f.name
        assert f.fold is None or (isinstance(f.fold, Fold) and f.fold_refusal is None), f.name
        assert f.kind == "encoder" or (f.frozen and f.exact), f.name  # what `explain` freezes, and what is exact
    assert [f.name for f in fams if f.check is not None] == ["gemma3"]  # its own memory plan
    assert [f.name for f in fams if f.fold_refusal] == ["gemma2", "gemma3"]
