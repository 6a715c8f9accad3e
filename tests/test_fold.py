"""`symuat model fold` and symuat.models.fold: the weight-processing identities of spec §9 on
real weights (the model tier).

A tiny GGUF decoder (written on the fly) runs everywhere; SmolLM2-135M and all-MiniLM-L6-v2 are
skipped when their packages are absent and fail instead under SYMUAT_REQUIRE_MODEL=1 (CI).
Each real-weight test also runs the cited mistake and asserts that it *fails* (O(1) errors):
the check can fail. Errors are per row, max|a − b| / max(1, max|b|), against 1e-12.
"""

import json
import os

import numpy as np
import pytest

from symuat.models import fold as fo
from symuat.models.formats import ModelError

TOL = 1e-12


def _require(loader):
    try:
        return loader()
    except ModelError:
        if os.environ.get("SYMUAT_REQUIRE_MODEL") == "1":
            pytest.fail("the packaged model is required here (SYMUAT_REQUIRE_MODEL=1): symuat model install")
        pytest.skip("packaged model not installed (symuat model install)")


@pytest.fixture(scope="module")
def smollm2_weights():
    from symuat.models.family import load

    return _require(lambda: load("smollm2"))


@pytest.fixture(scope="module")
def minilm_weights():
    from symuat.models.families.bert import load_bert

    return _require(lambda: load_bert("minilm"))


# --------------------------------------------------------------------------------------------
# the tiny decoder: the CLI round trip
# --------------------------------------------------------------------------------------------


def test_cli_fold_tiny_gguf_round_trip(tmp_path, capsys):
    from symuat.cli import main
    from test_llama import write_tiny_gguf

    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    out = tmp_path / "folded"
    assert main(["model", "fold", "--model", str(path), "--out", str(out), "--format", "json",
                 "--text", "hello world"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["worst"] <= TOL
    assert [f["entry"] for f in report["folds"]] == ["WP7", "WP1", "WP3"]
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    from symuat.models.formats import read_safetensors
    from symuat.models.families.llama import load_folder

    w = load_folder(out)
    assert w.config.rope == "half" and not w.config.tied
    assert np.all(read_safetensors(out / "model.safetensors")["model.layers.0.input_layernorm.weight"] == 1.0)
    # an existing --out is bad input; nothing is overwritten
    assert main(["model", "fold", "--model", str(path), "--out", str(out)]) == 2
    assert "not an empty folder" in capsys.readouterr().err


def test_cli_fold_of_an_hf_folder_needs_no_layout_change(tmp_path, capsys):
    from symuat.cli import main
    from test_llama import write_tiny_folder

    folder = write_tiny_folder(tmp_path / "hf")
    out = tmp_path / "folded"
    assert main(["model", "fold", "--model", str(folder), "--out", str(out), "--format", "json",
                 "--text", "hello"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and [f["entry"] for f in report["folds"]] == ["WP1", "WP3"]


def test_cli_refusals_name_the_entry_and_write_nothing(tmp_path, capsys):
    from symuat.cli import main
    from test_llama import write_tiny_gguf

    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    for args, entry in ((["--center-writers"], "WP12"), (["--value-biases"], "WP4")):
        assert main(["model", "fold", "--model", str(path), "--out", str(tmp_path / "x")] + args) == 2
        assert capsys.readouterr().err.startswith(f"symuat: {entry}:")
    assert main(["model", "fold", "--model", "minilm", "--out", str(tmp_path / "y"), "--norms"]) == 2
    err = capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.gguf"]
    if err.startswith("symuat: model 'minilm' needs the package") and os.environ.get("SYMUAT_REQUIRE_MODEL") != "1":
        pytest.skip("packaged model not installed (symuat model install): WP2's refusal not reached")
    assert err.startswith("symuat: WP2:"), err


def test_fold_of_a_random_decoder_and_its_mistakes():
    from test_llama import _to_gguf_layout

    from symuat.models.families import llama as ll

    m = ll.random_llama(np.random.default_rng(3), M=32, heads=4, kv_heads=2, F=10, layers=2, vocab=30)
    gg = _to_gguf_layout(m)
    ids = np.array([1, 4, 9, 2, 7])
    base = gg.hidden_states(ids)
    folded, _ = fo.fold_llama(gg)
    assert max(fo.compare_states(base, folded.hidden_states(ids))) <= TOL
    # WP7's mistake: W_K un-permuted with h instead of g
    from symuat.kernel.head_maps import llama_cpp_unpermute

    wrong = fo.unpermute_rope_rows(gg)
    for layer, stored in zip(wrong.layers, gg.layers):
        layer.WK = llama_cpp_unpermute(stored.WK.T, gg.config.heads).T
    assert wrong.config.rope == "half"
    assert max(fo.compare_states(base, wrong.hidden_states(ids))) > 1e-3


def test_fold_of_a_decoder_with_biases_round_trips_through_the_written_folder(tmp_path):
    """WP7 also moves the Q/K biases (their rows are permuted like W's); the written config.json says
    attention_bias/mlp_bias and the reloaded folder gives every state. What a Llama config.json cannot
    say (biases on some projections only, GGUF rope_freqs) is refused, not written wrong."""
    import dataclasses

    from symuat.kernel.head_maps import llama_cpp_permute
    from symuat.models.families import llama as ll

    m = ll.random_llama(np.random.default_rng(4), M=16, heads=4, kv_heads=2, F=10, layers=2, vocab=30,
                        rope="half", biases=True)
    cfg = dataclasses.replace(m.config, rope="interleaved")
    gg = fo._rebuild(m, cfg, [dataclasses.replace(
        layer, config=cfg, WQ=llama_cpp_permute(layer.WQ.T, 4).T, WK=llama_cpp_permute(layer.WK.T, 2).T,
        bq=llama_cpp_permute(layer.bq, 4), bk=llama_cpp_permute(layer.bk, 2)) for layer in m.layers])
    ids = np.array([3, 1, 4, 1, 5, 9])
    base = gg.hidden_states(ids)
    folded, log = fo.fold_llama(gg)
    assert [wp for wp, _ in log] == ["WP7", "WP1", "WP3"]
    config = fo.llama_config_json(folded)
    assert config["attention_bias"] and config["mlp_bias"] and not config["tie_word_embeddings"]
    fo.write_checkpoint(tmp_path / "f", config, fo.hf_tensors(folded))
    back = ll.load_folder(tmp_path / "f")
    sb = back.hidden_states(ids)
    assert max(fo.compare_states(base, sb)) <= TOL
    assert fo.row_errors(fo.centred(back.logits(sb[-1])), fo.centred(gg.logits(base[-1]))).max() <= TOL
    # the biases left in the GGUF order: the check fails
    wrong = fo.unpermute_rope_rows(gg)
    for layer, stored in zip(wrong.layers, gg.layers):
        layer.bq = stored.bq
    assert max(fo.compare_states(base, wrong.hidden_states(ids))) > 1e-3
    # refused: biases on some projections only; frequencies that are not rope_theta's
    part = fo._rebuild(folded, folded.config, [dataclasses.replace(layer, bo=None) for layer in folded.layers])
    with pytest.raises(ModelError, match="attention_bias"):
        fo.llama_config_json(part)
    freq = fo._rebuild(folded, dataclasses.replace(folded.config, inv_freq=folded.config.frequencies() / 2),
                       folded.layers)
    with pytest.raises(ModelError, match="RoPE frequencies"):
        fo.llama_config_json(freq)


# --------------------------------------------------------------------------------------------
# SmolLM2-135M: WP1, WP3, WP7 on real weights
# --------------------------------------------------------------------------------------------


def test_smollm2_fold_reproduces_every_state_and_the_logits(smollm2_weights):
    m = smollm2_weights
    folded, log = fo.fold_llama(smollm2_weights)
    assert [wp for wp, _ in log] == ["WP7", "WP1", "WP3"]
    f = folded
    ids = m.tokenize("The capital of France is")
    a, b = m.hidden_states(ids), f.hidden_states(ids)
    errs = fo.compare_states(a, b)
    assert len(errs) == 31 and max(errs) <= TOL, max(errs)
    la, lb = m.logits(a[-1]), f.logits(b[-1])
    assert fo.row_errors(fo.centred(lb), fo.centred(la)).max() <= TOL
    assert np.abs(lb.mean(axis=-1)).max() < 1e-9  # centred: every row of logits has mean 0
    assert int(lb[-1].argmax()) == int(la[-1].argmax())
    # the check can fail: the gate left unfolded (WP1's cited mistake) is off by O(1); the good
    # fold is freed first (each float64 copy of SmolLM2 is 1.1 GB: the suite's peak stays ≤ 3 GB)
    del f, folded, b, lb
    bad, _ = fo.fold_llama(smollm2_weights)
    for layer, stored in zip(bad.layers, smollm2_weights.layers):
        layer.Wg = layer.Wg / stored.g2[:, None]  # (in, out): the scale γ₂ sits on the rows
    assert max(fo.compare_states(a, bad.hidden_states(ids))) > 1e-2


def test_smollm2_hf_layout_with_p_reproduces_the_gguf_layout(smollm2_weights):
    """WP7: the HF half-split layout (W_Q, W_K un-permuted by P, rotate-half RoPE) gives the GGUF's states."""
    m = smollm2_weights
    hf, log = fo.fold_llama(smollm2_weights, norms=False, centre_unembedding=False)
    assert [wp for wp, _ in log] == ["WP7"] and hf.config.rope == "half"
    ids = m.tokenize("The capital of France is")
    assert max(fo.compare_states(m.hidden_states(ids), hf.hidden_states(ids))) <= TOL


# --------------------------------------------------------------------------------------------
# all-MiniLM-L6-v2: WP4, WP12 hold; WP2's fold fails
# --------------------------------------------------------------------------------------------


def _ids(text):
    from symuat.models.families.bert import model_path, tokenize

    return tokenize(text, model_path("minilm"))


def test_minilm_fold_reproduces_every_state(minilm_weights):
    from symuat.models.families.bert import BertNumpy

    folded, log = fo.fold_bert(minilm_weights)
    assert [wp for wp, _ in log] == ["WP4", "WP12"]
    assert np.abs(folded.tensors["encoder.layer.0.output.dense.weight"].mean(axis=0)).max() < 1e-15
    ids = _ids("The cat sat on the mat.")
    errs = fo.compare_states(BertNumpy(minilm_weights).hidden_states(ids), BertNumpy(folded).hidden_states(ids))
    assert len(errs) == 7 and max(errs) <= TOL, errs
    # with a key-padding mask the patterns' rows still sum to 1: WP4's hypothesis holds, the fold too
    keep = np.ones(ids.size, dtype=bool)
    keep[-3:] = False
    a = BertNumpy(minilm_weights).hidden_states(ids, keep)
    b = BertNumpy(folded).hidden_states(ids, keep)
    assert max(fo.compare_states([x[keep] for x in a], [x[keep] for x in b])) <= TOL


def test_minilm_post_norm_fold_fails_exactly_where_wp2_says(minilm_weights):
    from symuat.models.families.bert import BertNumpy

    ids = _ids("The cat sat on the mat.")
    a = BertNumpy(minilm_weights).hidden_states(ids)
    b = BertNumpy(fo.naive_post_norm_fold(minilm_weights)).hidden_states(ids)
    errs = fo.compare_states(a, b)
    assert min(errs) > 0.1 and errs[-1] > 0.1, errs  # every state off by O(1), the output included
    with pytest.raises(fo.FoldRefused, match="^WP2:"):
        fo.fold_bert(minilm_weights, norms=True)


def test_cli_fold_minilm_round_trip(tmp_path, capsys, minilm_weights):
    from symuat.cli import main

    out = tmp_path / "minilm-folded"
    assert main(["model", "fold", "--model", "minilm", "--out", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["worst"] <= TOL and len(report["texts"][0]["states"]) == 7
    assert (out / "vocab.txt").is_file() and (out / "config.json").is_file()


# --------------------------------------------------------------------------------------------
# reference tier: transformers' own readers agree with the folded layout (WP7)
# --------------------------------------------------------------------------------------------


def _transformers():
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        if os.environ.get("SYMUAT_REQUIRE_REFERENCE") == "1":
            pytest.fail("transformers/torch are required here (SYMUAT_REQUIRE_REFERENCE=1)")
        pytest.skip("transformers/torch not installed (pip install -e '.[reference]')")


def _hf_gguf_tensors(weights):
    """W_Q, W_K as transformers' GGUF reader un-permutes them (``LlamaTensorProcessor``, the code path
    ``from_pretrained(gguf_file=…)`` takes), applied to the GGUF's stored rows (``W.T`` of the loaded
    decoder's ``x @ W`` weights, exactly)."""
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    c = weights.config
    proc = LlamaTensorProcessor(config={"num_attention_heads": c.heads, "num_key_value_heads": c.kv_heads})
    out = {}
    for k in range(c.layers):
        for name, gname in (("q_proj", "attn_q"), ("k_proj", "attn_k")):
            key = f"model.layers.{k}.self_attn.{name}.weight"
            stored = getattr(weights.layers[k], "WQ" if name == "q_proj" else "WK").T
            out[key] = proc.process(stored, f"blk.{k}.{gname}.weight").weights
    return out


def _assert_same_qk_layout(weights, hf):
    mine = fo.hf_tensors(fo.unpermute_rope_rows(weights))
    for k in range(weights.config.layers):
        for name in ("q_proj", "k_proj"):
            key = f"model.layers.{k}.self_attn.{name}.weight"
            assert np.array_equal(mine[key], hf[key]), key  # bit for bit


def test_folded_tiny_checkpoint_loads_in_transformers_and_matches(tmp_path):
    """The written folder is a real HF checkpoint: LlamaForCausalLM.from_pretrained reads it (its own
    files, not symuat's parse) and, with its float32 islands made float64, gives the GGUF model's states."""
    _transformers()
    import torch
    from transformers import LlamaForCausalLM
    from test_llama import write_tiny_gguf

    from symuat.cli import main
    from symuat.models.families import llama as ll
    from symuat.models.reference import Float64Islands

    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    out = tmp_path / "folded"
    assert main(["model", "fold", "--model", str(path), "--out", str(out), "--text", "hello world"]) == 0
    original = ll.load_gguf_file(path)
    _assert_same_qk_layout(original, _hf_gguf_tensors(original))
    ids = original.tokenize("hello world")
    model = LlamaForCausalLM.from_pretrained(str(out), dtype=torch.float64, attn_implementation="eager").eval()
    with Float64Islands(model), torch.no_grad():
        res = model(input_ids=torch.tensor(ids[None]), output_hidden_states=True)
    states = original.hidden_states(ids)
    hs = [h[0].numpy() for h in res.hidden_states]
    assert max(fo.compare_states(states[:-1], hs[:-1])) <= 1e-12  # HF's last entry is after the final norm
    la, lb = original.logits(states[-1]), res.logits[0].numpy()
    assert fo.row_errors(fo.centred(lb), fo.centred(la)).max() <= 1e-12


def test_smollm2_unpermute_is_transformers_gguf_layout(smollm2_weights):
    """WP7 on SmolLM2: symuat's un-permutation (h for W_Q, g for W_K) equals transformers' GGUF reader's,
    bit for bit, in all 30 layers."""
    _transformers()
    _assert_same_qk_layout(smollm2_weights, _hf_gguf_tensors(smollm2_weights))


# --------------------------------------------------------------------------------------------
# signals, full disks and bytes that are not text: one line, the right exit status, nothing left
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("signame, status, line", [("SIGTERM", 143, "symuat: terminated"),
                                                   ("SIGINT", 130, "symuat: interrupted")])
def test_a_signal_during_fold_leaves_no_temporary_folder(tmp_path, signame, status, line):
    """Main died of SIGTERM at once and left the staged checkpoint (174 MB for SmolLM2) beside --out.
    The run is signalled at its pause point, the staged checkpoint written (tests/_signals.py)."""
    import signal

    from _signals import signal_at
    from test_llama import write_tiny_folder

    folder = write_tiny_folder(tmp_path / "hf")
    outs = tmp_path / "outs"
    outs.mkdir()
    staged = []

    def the_stage_is_there(info):
        staged.extend(p.name for p in outs.iterdir())
        assert os.path.isfile(os.path.join(info["stage"], "model.safetensors"))

    done, info = signal_at(["model", "fold", "--model", str(folder), "--out", str(outs / "folded"),
                            "--text", "hello"], "fold", getattr(signal, signame), tmp_path,
                           before=the_stage_is_there)
    assert len(staged) == 1 and staged[0].startswith(".folded.")  # there when the signal came
    assert done.returncode == status, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [line]
    assert list(outs.iterdir()) == []


def _full_disk_after(limit: int):
    """A ``safetensors`` writer that writes ``limit`` bytes and then reports a full disk, as the real
    one does on ENOSPC (a SafetensorError, not an OSError: main crashed with its traceback)."""
    from safetensors import SafetensorError

    def save_file(tensors, path, metadata=None):
        with open(path, "wb") as f:
            f.write(b"\0" * limit)
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    return save_file


def test_fold_onto_a_full_disk_is_one_line_exit_2_and_nothing_half_written(tmp_path, capsys, monkeypatch):
    import errno
    import pathlib

    import safetensors.numpy

    from symuat.cli import main
    from test_llama import write_tiny_folder

    folder = write_tiny_folder(tmp_path / "hf")
    outs = tmp_path / "outs"
    outs.mkdir()
    args = ["model", "fold", "--model", str(folder), "--out", str(outs / "folded"), "--text", "hello"]
    monkeypatch.setattr(safetensors.numpy, "save_file", _full_disk_after(1000))
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "nothing written" in err[0], err
    assert list(outs.iterdir()) == []
    monkeypatch.undo()
    real_write_text = pathlib.Path.write_text

    def config_fills_the_disk(self, data, *a, **kw):
        if self.name == "config.json":
            real_write_text(self, data[:10], *a, **kw)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, data, *a, **kw)

    monkeypatch.setattr(pathlib.Path, "write_text", config_fills_the_disk)
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert list(outs.iterdir()) == []


@pytest.mark.parametrize("option", ["--text", "--token", "--vs"])
def test_a_text_given_as_bytes_that_are_not_utf8_is_one_line_and_exit_2(tmp_path, option):
    """``--text $'\\xff\\xfe'``: Python hands the bytes on as lone surrogates; main crashed in the
    tokenizer with a traceback. Run as a process, so argv is really decoded with surrogateescape."""
    import subprocess
    import sys

    from test_llama import write_tiny_folder

    folder = write_tiny_folder(tmp_path / "hf")
    command = (["model", "fold", "--model", str(folder), "--out", str(tmp_path / "o")] if option == "--text" else
               ["model", "explain", "--model", str(folder)])
    done = subprocess.run([sys.executable.encode(), b"-m", b"symuat.cli", *map(os.fsencode, command),
                           option.encode(), b"\xff\xfe"], capture_output=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.decode().strip().splitlines() == \
        [f"symuat: {option}: not valid UTF-8 (b'\\xff\\xfe'); give the text in UTF-8"]
    assert not (tmp_path / "o").exists()
