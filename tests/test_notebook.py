"""The notebook API (symuat.models.api, .terms, .lens): strings or ids in, an attribution that
adds up out, TransformerLens's 0-based indices and hook names, the logit lens and the exact
Jacobian lens checked independently against transformers."""

import json
import math

import numpy as np
import pytest

from symuat import cli
from symuat.models import api, lens
from symuat.models.formats import ModelError
from test_families import _need, hf_decoder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return hf_decoder(tmp_path_factory.mktemp("nb") / "llama", num_hidden_layers=3)


@pytest.fixture(scope="module")
def model(folder):
    return api.load(folder)


def test_strings_and_ids_give_the_same_attribution(model):
    ids = model.tokenize("Hello there")
    tok = api.answer_ids(model, "w")
    a, b = api.explain(model, "Hello there", "w", vs="x"), api.explain(model, ids, tok[0], vs=api.answer_ids(model, "x"))
    assert a.passed and a.target.token == b.target.token and a.target.value == b.target.value
    assert np.array_equal(a.residual.heads, b.residual.heads)


def test_every_table_sums_to_the_value_and_top_is_sorted(model):
    att = api.explain(model, "Hello there", vs="x")
    frame = att.to_pandas()
    assert list(frame.columns) == ["view", "layer", "sublayer", "head", "position", "token", "hook", "value"]
    for view in ("residual", "duat"):
        vals = frame[frame.view == view].value.tolist()
        assert abs(math.fsum(vals) - att.target.value) <= 1e-12 * att.target.scale
    top = att.top(5)
    assert [abs(r["value"]) for r in top] == sorted((abs(r["value"]) for r in top), reverse=True)
    assert "adds up" in att._repr_html_() and "adds up" in str(att)
    assert att.predictions(3)[0]["rank"] == 1


def test_a_multi_token_answer_is_explained_position_by_position(model):
    answer = api.answer_ids(model, "abc")
    atts = api.explain(model, "Hello", answer="abc")
    assert [a.target.token for a in atts] == answer
    assert [a.trace.N for a in atts] == [a.trace.N + k for k, a in zip(range(3), [atts[0]] * 3)]
    assert all(a.passed for a in atts)


def test_many_prompts_one_table(model, tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"prompt": "Hello", "token": "w"}) + "\n\n" + json.dumps({"prompt": "Hi there"}) + "\n")
    table = api.explain_many(model, f)
    assert sorted(set(table.prompt)) == [0, 1]
    for k, part in table.groupby("prompt"):
        assert abs(math.fsum(part.value) - part.explained.iloc[0]) <= 1e-12 * max(1.0, abs(part.explained.iloc[0]))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "no prompt"}\n')
    with pytest.raises(ModelError, match=r"bad.jsonl:1: .*'prompt'"):
        api.explain_many(model, bad)


def test_bad_arguments_are_named(model):
    with pytest.raises(ModelError, match="layer 9 is outside"):
        api.attention_pattern(model, "Hello", 9, 0)
    with pytest.raises(ModelError, match="comparison token must be one token"):
        api.explain(model, "Hello", "w", vs="xy")
    with pytest.raises(ModelError, match="token or answer"):
        api.explain(model, "Hello", "w", answer="x")


def test_patterns_are_causal_rows_that_sum_to_one(model, tmp_path):
    H = api.attention_pattern(model, "Hello there", 1, 2)
    assert np.allclose(H.sum(axis=1), 1, atol=1e-14) and np.allclose(np.triu(H, 1), 0)
    pytest.importorskip("matplotlib")
    api.attention_pattern(model, "Hello there", 1, 2, figure=tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0


# --------------------------------------------------------------------------------------------
# against transformers: hook names, the logit lens, the Jacobian lens
# --------------------------------------------------------------------------------------------


def _hf(folder):
    _need("torch")
    transformers = _need("transformers")
    from symuat.models.reference import Float64Islands

    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype="float64",
                                                          attn_implementation="eager").eval()
    return hf, Float64Islands(hf)


def test_terms_match_transformers_modules_by_hook_name(folder, model):
    """Each term labelled blocks.{l}.… is the activation of transformers' model.layers[l] (0-based):
    head h's output z_h W_O,h (TransformerLens's hook_result), the MLP output (hook_mlp_out) and the
    embedding (hook_embed), read through the same frozen readout, agree to 1e-12."""
    import torch

    hf, islands = _hf(folder)
    text = "Hello there"
    att = api.explain(model, text, vs="x")
    ids = torch.tensor(model.tokenize(text)[None])
    tr, n = att.trace, att.trace.N - 1
    r = tr.sf[n] * tr.gf * att.target.w
    got, acts = {}, {}
    layers = hf.model.layers
    cfg = hf.config
    d = cfg.hidden_size // cfg.num_attention_heads
    hooks = []
    for l, layer in enumerate(layers):
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(
            lambda mod, args, l=l: acts.__setitem__(("z", l), args[0][0, n].detach().numpy())))
        hooks.append(layer.mlp.register_forward_hook(
            lambda mod, args, out, l=l: acts.__setitem__(("mlp", l), out[0, n].detach().numpy())))
    hooks.append(hf.model.embed_tokens.register_forward_hook(
        lambda mod, args, out: acts.__setitem__("embed", out[0, n].detach().numpy())))
    with islands, torch.no_grad():
        hf(ids)
    for h_ in hooks:
        h_.remove()
    expected = {"hook_embed": r @ acts["embed"]}
    for l, layer in enumerate(layers):
        WO = layer.self_attn.o_proj.weight.detach().numpy()
        for head in range(cfg.num_attention_heads):
            z = acts[("z", l)][head * d:(head + 1) * d]
            expected[(f"blocks.{l}.attn.hook_result", head)] = r @ (WO[:, head * d:(head + 1) * d] @ z)
        expected[f"blocks.{l}.hook_mlp_out"] = r @ acts[("mlp", l)]
    for row in att.terms("residual"):
        key = row["hook"] if row["head"] is None else (row["hook"], row["head"])
        got[key] = got.get(key, 0.0) + row["value"]
    assert set(got) == set(expected)
    scale = max(abs(v) for v in expected.values())
    assert max(abs(got[k] - expected[k]) for k in expected) <= 1e-12 * scale


def test_logit_lens_matches_transformers_hidden_states(folder, model):
    import torch

    hf, islands = _hf(folder)
    ids = model.tokenize("Hello there")
    with islands, torch.no_grad():
        out = hf(torch.tensor(ids[None]), output_hidden_states=True)
        states = out.hidden_states[:-1]  # the input of every layer (the last is after the final norm)
        ref = np.stack([hf.lm_head(hf.model.norm(s[0, -1])).numpy() for s in states] + [out.logits[0, -1].numpy()])
    got = api.lenses(model, ids).logit_lens
    assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max()


def test_jacobian_lens_matches_jacrev_on_the_detached_model(folder, model):
    """W_U J⁽ˡ⁾_n x_l[n] with J by torch.func.jacrev on transformers' model (float64, islands patched,
    Golden's detaches), a perturbation added to layer l's input at the last position."""
    import torch

    from symuat.models.attribution import _GoldenDetached

    hf, islands = _hf(folder)
    ids = model.tokenize("Hello there")
    lz = api.lenses(model, ids)
    base = hf.model
    ids_t = torch.tensor(ids[None])
    W = hf.lm_head.weight.detach().numpy()
    for l in range(len(base.layers)):
        delta = {}

        def pre(mod, args, kwargs):
            x = args[0] if args else kwargs["hidden_states"]
            x = x + torch.nn.functional.pad(delta["v"][None, None], (0, 0, x.shape[1] - 1, 0))
            return ((x,) + tuple(args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": x})

        handle = base.layers[l].register_forward_pre_hook(pre, with_kwargs=True)
        try:
            with _GoldenDetached(hf, islands):
                def f(v):
                    delta["v"] = v
                    return base(ids_t).last_hidden_state[0, -1]

                J = torch.func.jacrev(f)(torch.zeros(hf.config.hidden_size, dtype=torch.float64)).detach().numpy()
                states = base(ids_t, output_hidden_states=True).hidden_states
        finally:
            handle.remove()
        x = states[l][0, -1].detach().numpy()
        ref = W @ (J @ x)
        assert np.abs(lz.jacobian_lens[l] - ref).max() <= 1e-12 * np.abs(ref).max(), l
    assert max(lz.exact_error) <= 1e-12
    assert lz.rows[-1]["kl"] == 0.0 or lz.rows[-1]["kl"] < 1e-12


def test_the_jacobian_lens_is_not_the_logit_lens():
    """A mutant check: at an early layer the two lenses differ (else the comparison would be empty)."""
    from symuat.models.families.llama import random_llama

    m = random_llama(np.random.default_rng(0))
    lz = lens.lenses(m, np.array([1, 5, 7, 2]))
    assert np.abs(lz.logit_lens[0] - lz.jacobian_lens[0]).max() > 1e-3


# --------------------------------------------------------------------------------------------
# the command: 0-based, the residual view by default, --quiet, --lens
# --------------------------------------------------------------------------------------------


def test_default_explain_is_the_residual_view_with_probabilities(folder, capsys):
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--by", "head",
                     "--no-reference"]) == 0
    out = capsys.readouterr().out
    assert "residual view" in out and "DUAT view" not in out and "probability" in out
    assert "L0H0" in out and "frozen:" in out
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--quiet", "--lens",
                     "--no-reference"]) == 0
    out = capsys.readouterr().out
    assert "frozen:" not in out and "blocks.0.hook_resid_pre" in out


def test_explain_json_states_its_indexing(folder, capsys):
    assert cli.main(["model", "explain", "--model", str(folder), "--text", "Hello", "--format", "json",
                     "--view", "both", "--no-reference"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert "0-based" in rep["indexing"] and rep["passed"]
    assert [c["passed"] for c in rep["checks"]] == [True, True]
    assert rep["views"]["residual"]["rows"][1]["term"] == "layer 0"


def test_a_transformers_model_in_memory_is_explained_like_its_folder(folder, model):
    transformers = _need("transformers")
    from tokenizers import Tokenizer

    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder))
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    a = api.explain(api.load(hf, tok), "Hello there", vs="x")
    b = api.explain(model, "Hello there", vs="x")
    assert a.target.value == b.target.value and np.array_equal(a.residual.heads, b.residual.heads)
