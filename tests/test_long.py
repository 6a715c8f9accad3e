"""Long context in bounded memory (issue 34): the streamed rewrite, the chunked logits, the trace
that forms each layer's patterns again instead of keeping all layers' — every number bit for bit
what the kept version gives — the ``--max-memory`` plan and its refusal, and progress only on a TTY.

Tiny random decoders (biases, a sliding window, sandwich norms included); a few seconds in all.
"""

import json

import numpy as np
import pytest

from symuat import cli
from symuat.models import attribution as at
from symuat.models import llama as ll
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
    assert all(lt.H is None and lt.gate is None for lt in lazy.layers)
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
