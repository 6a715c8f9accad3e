"""Long context in bounded memory (issue 34): the streamed rewrite, the chunked logits, the trace
that forms each layer's patterns again instead of keeping all layers' — every number bit for bit
what the kept version gives — the ``--max-memory`` plan and its refusal, and progress only on a TTY.

Tiny random decoders (biases, a sliding window, sandwich norms included); a few seconds in all.
"""

import json
import os

import numpy as np
import pytest

from symuat import cli
from symuat.models import attribution as at
from symuat.models import explain_run
from symuat.models.families import llama as ll
from symuat.models import compare
from symuat.models.rewrite import rewrite, rewrite_states


def _model(seed, *, biases=False, window=None, sandwich=False, layers=3):
    m = ll.random_llama(np.random.default_rng(seed), M=12, heads=6, kv_heads=2, F=17, layers=layers, vocab=29,
                        biases=biases)
    rng = np.random.default_rng(seed + 100)
    for layer in m.layers:
        layer.window = window
        if sandwich:
            layer.post_attn, layer.post_ffn = 1 + 0.1 * rng.standard_normal(12), 1 + 0.1 * rng.standard_normal(12)
    return m


@pytest.mark.parametrize("biases,window,sandwich", [(False, None, False), (True, 3, True)])
def test_streamed_states_equal_the_kept_rewrite_bit_for_bit(biases, window, sandwich):
    m = _model(1, biases=biases, window=window, sandwich=sandwich)
    X0 = m.embed(np.array([3, 1, 4, 1, 5, 9, 2]))
    said = []
    streamed = list(rewrite_states(m, X0, progress=said.append))
    kept = rewrite(m, X0).states
    assert len(streamed) == len(kept) == len(m.layers) + 1
    assert all(np.array_equal(a, b) for a, b in zip(streamed, kept))
    assert said == [f"  layer {k + 1}/{len(m.layers)}" for k in range(len(m.layers))]


def test_streamed_states_follow_a_wrong_layer():
    """The stream is the rewrite, not a copy of the forward: a layer changed after the forward shows."""
    m = _model(2)
    ids = np.array([1, 2, 3, 4, 5])
    states = m.hidden_states(ids)
    m.layers[1].Wd = m.layers[1].Wd * 1.001
    streamed = list(rewrite_states(m, states[0]))
    assert compare.row_errors(streamed[1], states[1])[0] <= 1e-12
    assert compare.row_errors(streamed[2], states[2])[0] > 1e-6


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_check_in_chunks_of_rows_passes_and_sees_every_row(chunk, monkeypatch):
    m = _model(3, biases=True, window=4)
    text_ids = np.array([5, 7, 11, 13, 17, 19, 23])
    monkeypatch.setattr(m, "tokenize", lambda text: text_ids)
    rep = compare._check_decoder(m, ["seven tokens"], "tiny", False, lambda msg: None, chunk=chunk)
    rows = rep["texts"][0]["states"]
    assert rows[-1]["state"] == "logits" and rows[-1]["rewrite_vs_forward"] <= 1e-12
    assert compare.verdict(rep, 1e-12)["passed"]
    # a wrong logit in any one row fails, whichever chunk it falls in
    head = m.head

    def bad_head(X):
        op = head(X)

        class Off:
            def __matmul__(self, v):
                out = (op @ v).reshape(X.shape[0], -1).copy()
                out[(X == bad_row).all(axis=1)] *= 1.0 + 1e-6  # one row of one chunk off by 1e-6
                return out.reshape(-1)

        return Off()

    bad_row = list(rewrite_states(m, m.embed(text_ids)))[-1][4]
    monkeypatch.setattr(m, "head", bad_head)
    rep = compare._check_decoder(m, ["seven tokens"], "tiny", False, lambda msg: None, chunk=chunk)
    assert not compare.verdict(rep, 1e-12)["passed"]


@pytest.mark.parametrize("biases,window,sandwich", [(False, None, False), (True, 3, True)])
def test_trace_without_kept_patterns_gives_every_view_bit_for_bit(biases, window, sandwich):
    m = _model(4, biases=biases, window=window, sandwich=sandwich)
    ids = np.array([2, 7, 1, 8, 2, 8, 1])
    kept, lazy = at.trace(m, ids, keep=True), at.trace(m, ids, keep=False)
    assert all(lt.H is None and lt.gate is None and lt.mlp is None for lt in lazy.layers)
    states = m.hidden_states(ids)  # the lazy trace is still the forward pass, bit for bit
    assert all(np.array_equal(lt.X, S) for lt, S in zip(lazy.layers, states)) and np.array_equal(lazy.xL, states[-1])
    assert all(lt.H_last.shape == (6, ids.size) for lt in lazy.layers)
    tg = at.target(kept, None, 3)
    for view in (at.residual_view, at.duat_view):
        a, b = view(kept, tg), view(lazy, tg)
        assert a.passed and b.passed
        for name, value in vars(a).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(b, name)), (view.__name__, name)
            elif isinstance(value, float):
                assert value == getattr(b, name) or (value != value and getattr(b, name) != getattr(b, name))
    assert np.array_equal(at.pattern(kept, 2, 5), at.pattern(lazy, 2, 5))
    if not biases:
        u = np.random.default_rng(0).standard_normal(12)
        assert np.array_equal(at.golden_vjp(kept, u), at.golden_vjp(lazy, u))
        assert np.array_equal(at.golden_apply(kept, kept.x0), at.golden_apply(lazy, lazy.x0))


def test_lazy_trace_still_refutes_a_transposed_pattern():
    """A trace that forms its patterns again reads what it is given: a wrong H fails the DUAT view."""
    from dataclasses import replace

    m = _model(5)
    ids = np.array([3, 3, 9, 1, 4])
    lazy = at.trace(m, ids, keep=False)
    tg = at.target(lazy)
    bad = replace(lazy, layers=[replace(lt, H=lt.patterns().transpose(0, 2, 1)) for lt in lazy.layers])
    assert at.duat_view(lazy, tg).passed
    assert not at.duat_view(bad, tg).passed


def test_default_keeps_only_small_traces(monkeypatch):
    m = _model(6)
    ids = np.array([1, 2, 3])
    assert at.trace(m, ids).layers[0].H is not None
    monkeypatch.setattr(at, "KEEP_BYTES", 0)
    assert at.trace(m, ids).layers[0].H is None


# --------------------------------------------------------------------------------------------
# --max-memory, --text-file, progress
# --------------------------------------------------------------------------------------------


@pytest.fixture
def tiny(tmp_path):
    from test_llama import write_tiny_gguf

    return str(write_tiny_gguf(tmp_path / "tiny.gguf", context=64))


def test_max_memory_refuses_a_run_that_cannot_fit_before_it_starts(tiny, capsys, monkeypatch):
    from symuat.models import rewrite as rw

    started = []
    monkeypatch.setattr(rw, "rewrite_states", lambda *a, **k: started.append(1) or iter(()))
    for cmd in ("check", "explain"):
        assert cli.main(["model", cmd, "--model", tiny, "--text", "Hello there", "--no-reference",
                         "--max-memory", "1M"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--max-memory 0.00 GiB" in err and "estimated peak" in err
        assert "weights" in err and "Traceback" not in err
    assert not started
    assert cli.main(["model", "check", "--model", tiny, "--text", "Hi", "--max-memory", "eight"]) == 2
    assert "--max-memory 'eight'" in capsys.readouterr().err


def test_max_memory_plans_the_logit_rows(tiny, capsys):
    assert cli.main(["model", "check", "--model", tiny, "--text", "Hello there", "--no-reference", "--max-memory",
                     "4G", "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["passed"] and rep["memory_plan"]["logit_rows"] == 64
    assert rep["memory_plan"]["estimate_bytes"] <= rep["memory_plan"]["budget_bytes"]
    assert cli.main(["model", "explain", "--model", tiny, "--text", "Hello there", "--max-memory", "4G",
                     "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["passed"] and rep["memory_plan"]["patterns_kept"] is True


def test_plan_drops_rows_then_kept_patterns_as_the_budget_shrinks():
    from symuat.models import plan as pl

    m = _model(7)
    big = pl.plan(m, 40, "explain", 2 ** 34, reference=False)
    assert big.keep_patterns and big.rows == pl.MAX_ROWS
    need = pl.estimate(m, 40, "explain", reference=False, keep_patterns=False)
    tight = pl.plan(m, 40, "explain", int(sum(need.values()) / (1 - pl.MARGIN)) + 1, reference=False)
    assert not tight.keep_patterns
    rows = pl.plan(m, 40, "check", int(sum(pl.estimate(m, 40, "check", reference=False, rows=4).values())
                                         / (1 - pl.MARGIN)) + 1, reference=False)
    assert rows.rows == 4
    with pytest.raises(pl.ModelError, match="estimated peak"):
        pl.plan(m, 40, "check", 1000, reference=False)


def test_text_file(tiny, tmp_path, capsys):
    f = tmp_path / "prompt.txt"
    f.write_text("Hello there, owls", encoding="utf-8")
    assert cli.main(["model", "check", "--model", tiny, "--text-file", str(f), "--no-reference",
                     "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["texts"][0]["text"] == "Hello there, owls"
    assert cli.main(["model", "explain", "--model", tiny, "--text-file", str(f), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "Hello there, owls"
    assert cli.main(["model", "check", "--model", tiny, "--text-file", str(tmp_path / "absent.txt")]) == 2
    err = capsys.readouterr().err
    assert "absent.txt" in err and err.count("\n") == 1


def test_progress_only_on_a_terminal_and_never_with_json(monkeypatch):
    from symuat.models import command

    class Args:
        format = "table"

    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert command._progress(Args())[1] is not None
    Args.format = "json"
    assert command._progress(Args()) == (False, None)
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    Args.format = "table"
    assert command._progress(Args()) == (False, None)


# --------------------------------------------------------------------------------------------
# every decoder family: patterns a head at a time, the long trace, an honest plan
# --------------------------------------------------------------------------------------------


def _as(cls, layer, **extra):
    from dataclasses import fields

    return cls(**{f.name: getattr(layer, f.name) for f in fields(layer)}, **extra)


def _variant(kind):
    """A tiny decoder (3 heads of width 4 sharing one key head, biases) whose layers are another family's
    class with the same weights: Gemma 2's soft-capped scores, Phi-3's RoPE on 2 of 4 coordinates,
    OLMo 2's QK-norm over the full projection."""
    from symuat.models.partial_rotary import PartialRotaryLayer
    from symuat.models.postnorm import PostNormLayer
    from symuat.models.softcap import SoftcapLayer

    m = ll.random_llama(np.random.default_rng(8), M=12, heads=3, kv_heads=1, F=17, layers=3, vocab=29, biases=True)
    rng = np.random.default_rng(10)
    if kind == "softcap":
        m.layers = [_as(SoftcapLayer, lt, attn_softcap=0.7) for lt in m.layers]
        for lt in m.layers:
            lt.window = 4
    elif kind == "partial_rotary":
        m.layers = [_as(PartialRotaryLayer, lt, rotary_dim=2) for lt in m.layers]
        for lt in m.layers:
            lt.inv_freq = np.array([0.5])
    else:
        m.layers = [_as(PostNormLayer, lt, qk_width="full") for lt in m.layers]
        for lt in m.layers:
            lt.q_norm, lt.k_norm = 1 + 0.1 * rng.standard_normal(12), 1 + 0.1 * rng.standard_normal(4)
    return m


@pytest.mark.parametrize("kind", ["softcap", "partial_rotary", "postnorm"])
def test_every_layer_class_forms_each_head_as_in_the_whole(kind):
    m = _variant(kind)
    U = np.random.default_rng(9).standard_normal((9, 12))
    for lt in m.layers:
        H, qk = lt.patterns(U), lt.queries_keys(U)
        assert H.shape == (3, 9, 9) and np.allclose(H.sum(axis=-1), 1.0)
        assert all(np.array_equal(lt.patterns(U, [i], qk=qk)[0], H[i]) for i in (2, 0, 1))


def test_the_soft_cap_is_in_every_head_formed_alone():
    """A soft-capped layer's head, formed alone, is capped: without the cap the same head differs."""
    m = _variant("softcap")
    U = np.random.default_rng(11).standard_normal((8, 12)) * 4
    lt = m.layers[0]
    capped = lt.patterns(U, [2])[0]
    lt.attn_softcap = None
    assert not np.allclose(capped, lt.patterns(U, [2])[0])


@pytest.mark.parametrize("kind", ["softcap", "partial_rotary"])
def test_long_trace_of_other_families_gives_every_view_bit_for_bit(kind):
    m = _variant(kind)
    ids = np.array([2, 7, 1, 8, 2, 8, 1])
    kept, lazy = at.trace(m, ids, keep=True), at.trace(m, ids, keep=False)
    states = m.hidden_states(ids)
    assert all(np.array_equal(lt.X, S) for lt, S in zip(lazy.layers, states)) and np.array_equal(lazy.xL, states[-1])
    tg = at.target(kept, None, 3)
    for view in (at.residual_view, at.duat_view):
        a, b = view(kept, tg), view(lazy, tg)
        assert a.passed and b.passed
        for name, value in vars(a).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(b, name)), (view.__name__, name)


def test_layernorm_decoders_form_their_patterns_a_head_at_a_time_bit_for_bit():
    from symuat.models.lifts import softmax_causal
    from symuat.models.ln_decoder import _affine, apply_partial_rope, random_ln_layer, rope_angles

    for rotary in (0, 2):
        lt = random_ln_layer(np.random.default_rng(12), M=16, F=20, heads=4, rotary=rotary)
        U = np.random.default_rng(13).standard_normal((11, 16))
        Q, K = lt._split(_affine(U, lt.WQ, lt.bq)), lt._split(_affine(U, lt.WK, lt.bk))
        if rotary:
            ang = rope_angles(11, rotary, inv_freq=lt.config.inv_freq)
            Q, K = apply_partial_rope(Q, ang, rotary, "half"), apply_partial_rope(K, ang, rotary, "half")
        assert np.array_equal(lt.patterns(U), softmax_causal((Q @ K.transpose(0, 2, 1)) * lt.scale))


def test_plan_counts_a_whole_layers_patterns_where_the_rewrite_holds_them():
    """check and the DUAT decomposition freeze a layer's h patterns at once: the plan counts h N²."""
    from symuat.models import plan as pl

    m, N = _model(7), 200
    h = m.config.heads
    for command, view in (("check", "residual"), ("explain", "duat"), ("explain", "both")):
        assert pl.estimate(m, N, command, reference=False, view=view)["one layer"] >= 8 * h * N * N
    assert pl.estimate(m, N, "explain", reference=False)["one layer"] < 8 * h * N * N  # a head at a time


def test_plan_of_a_family_explained_by_its_duat_terms(monkeypatch):
    """OLMo 2 (no attribution adapter): its explain is planned as the DUAT terms run, and refused."""
    from types import SimpleNamespace

    from symuat.models import plan as pl
    from symuat.models.families.olmo2 import random_olmo2

    m = random_olmo2(np.random.default_rng(14), layers=2)
    assert not pl.views_read(m)
    parts = pl.estimate(m, 300, "explain", reference=False)
    assert parts["DUAT parts"] == 8 * 3 * 3 * 300 * m.config.M and parts["one layer"] >= 8 * m.config.heads * 300 ** 2
    assert not pl.plan(m, 30, "explain", 2 ** 33, reference=False).keep_patterns
    monkeypatch.setattr(m, "tokenize", lambda text: np.arange(5))
    ran = []
    args = SimpleNamespace(model="olmo2", text="five", token=None, vs=None, by=None, view=None, top=None, rows=None,
                           lens=False, figure=None, format="json", tolerance="1e-12", no_reference=True,
                           max_memory="1M")
    assert explain_run.run_explain(args, load=lambda where: m, fallback=lambda net: ran.append(1) or 0) == 2
    assert not ran
    args.max_memory = "8G"
    assert explain_run.run_explain(args, load=lambda where: m, fallback=lambda net: ran.append(1) or 0) == 0 and ran


def test_max_memory_refuses_an_encoder_it_does_not_plan():
    with pytest.raises(compare.ModelError) as refused:
        compare.check(["a cat"], "minilm", reference=False, max_memory=2 ** 33)
    if "needs the package" in str(refused.value) and os.environ.get("SYMUAT_REQUIRE_MODEL") != "1":
        pytest.skip("packaged model not installed (symuat model install)")
    assert "--max-memory plans a decoder's run; minilm is an encoder" in str(refused.value)


@pytest.mark.parametrize("token", [None, 5])
def test_decomposition_without_the_forward_gives_the_same_terms_bit_for_bit(token, monkeypatch):
    """explain's DUAT decomposition skips the plain forward (the trace runs it): every term, the
    rewrite's logit and the token chosen are those of the decomposition with the forward."""
    from symuat.models.rewrite import decompose_logit

    m = _model(15, biases=True, window=3, sandwich=True)
    ids = np.array([4, 8, 15, 16, 23, 4, 2])
    a = decompose_logit(m, ids, token)
    ran = []
    for layer in m.layers:
        monkeypatch.setattr(layer, "forward", lambda X, f=layer.forward: ran.append(1) or f(X))
    b = decompose_logit(m, ids, token, forward=False)
    assert not ran and a.token == b.token and a.rewrite_logit == b.rewrite_logit
    assert (a.linear, a.bias) == (b.linear, b.bias)
    assert np.array_equal(a.layers, b.layers) and np.array_equal(a.linear_per_token, b.linear_per_token)
    assert b.logit == b.rewrite_logit and abs(b.logit - a.logit) <= 1e-12 * abs(a.logit)
    with pytest.raises(compare.ModelError, match="outside the vocabulary"):
        decompose_logit(m, ids, 10 ** 6, forward=False)


# -- long texts: causal and sliding-window patterns formed and applied by their blocks --------------

def _blocked(monkeypatch, on: bool):
    from symuat.models import lifts

    monkeypatch.setattr(lifts, "BAND_BLOCK", 3 if on else 10 ** 9)
    monkeypatch.setattr(lifts, "CAUSAL_BLOCKED", 8 if on else 10 ** 9)


def _views(m, ids):
    tr = at.trace(m, ids, keep=False)
    tg = at.target(tr, None, 3)
    return m.hidden_states(ids), at.residual_view(tr, tg), at.duat_view(tr, tg), list(rewrite_states(m, m.embed(ids)))


@pytest.mark.parametrize("window", [None, 3])
def test_blocked_patterns_give_the_dense_numbers_and_a_wrong_block_is_caught(window, monkeypatch):
    """On a long text the patterns are scored, normalised and applied only on the blocks that hold
    their nonzeros (the causal half; a window's band): every state, pattern and view equals the
    dense computation's to rounding — and a block that misses one key changes the numbers."""
    from symuat.models import lifts

    m, ids = _model(5, biases=True, window=window, sandwich=True), np.arange(14) % 29
    U = np.random.default_rng(3).standard_normal((14, 12))
    _blocked(monkeypatch, False)
    assert not lifts.is_banded(14, window)
    dense, H = _views(m, ids), m.layers[0].patterns(U)
    _blocked(monkeypatch, True)
    assert lifts.is_banded(14, window)
    assert np.allclose(m.layers[0].patterns(U), H, rtol=0, atol=1e-15)
    blocked = _views(m, ids)
    for a, b in zip(dense[0], blocked[0]):
        assert np.allclose(a, b, rtol=1e-13, atol=1e-13)
    for va, vb in zip(dense[1:3], blocked[1:3]):
        assert va.passed and vb.passed
        for name, value in vars(va).items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                assert np.allclose(value, getattr(vb, name), rtol=1e-12, atol=1e-13), name
    assert all(np.allclose(a, b, rtol=1e-13, atol=1e-13) for a, b in zip(dense[3], blocked[3]))
    real = lifts.band_blocks  # a mutant: each block drops the first key it should see
    monkeypatch.setattr(lifts, "band_blocks", lambda N, w, block=None: [(r0, r1, c0 + 1 if r0 else c0)
                                                                         for r0, r1, c0 in real(N, w, block)])
    wrong = m.hidden_states(ids)
    assert not all(np.allclose(a, b, rtol=1e-13, atol=1e-13) for a, b in zip(dense[0], wrong))


@pytest.mark.parametrize("window", [None, 3])
def test_a_band_pattern_reads_as_its_dense_array(window):
    """A long text's pattern kept by blocks: every product and row a view reads equals the dense
    array's, and any other reader gets the dense array itself."""
    from symuat.models.lifts import (BandPattern, pattern_matmul, pattern_rmatmul, pattern_weighted_colsum,
                                     softmax_causal)

    rng = np.random.default_rng(1)
    S, N = rng.standard_normal((2, 11, 11)), 11
    P = BandPattern.from_scores(lambda r0, r1, c0: softmax_causal(S[:, r0:r1, c0:r1], window, r0 - c0), N, window,
                                block=4)
    H = softmax_causal(S, window)
    assert P.shape == (2, N, N) and np.allclose(np.asarray(P), H, rtol=0, atol=1e-15)
    assert P.nbytes < H.nbytes or window is None
    V, G = rng.standard_normal((2, N, 3)), rng.standard_normal((2, N, 3))
    assert np.allclose(pattern_matmul(P, V), H @ V, rtol=1e-14, atol=1e-15)
    assert np.allclose(pattern_rmatmul(P, G), H.transpose(0, 2, 1) @ G, rtol=1e-14, atol=1e-15)
    assert np.allclose(pattern_weighted_colsum(P[1], G[1], V[1]), (H[1] * (G[1] @ V[1].T)).sum(axis=0))
    H = np.asarray(P)  # from here: the very numbers the blocks hold
    assert np.array_equal(P[:, -1, :], H[:, -1, :]) and np.array_equal(P[1][-1], H[1, -1])
    assert np.array_equal(P[0][3:5], H[0, 3:5]) and np.array_equal(P.sum(axis=2), H.sum(axis=2))
