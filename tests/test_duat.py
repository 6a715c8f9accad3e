"""Lemma 2 / Transformer→DUAT: mutants of the recursion are refuted; to_duat reproduces the forward
pass for random depths and widths, with and without LayerNorm and biases."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Identity, ZeroMatrix

from symuat.expr.algebra import add, mul
from symuat.claims.lemmas import ALG, D, X0, raw
from symuat.errors import ShapeMismatchError
from symuat.kernel import decide
from symuat.kernel.status import Status
from symuat.expr.residual import Unrolled, forward, numpy_algebra, paper_rules, random_instance, unroll
from symuat.numeric.transformer import Block, forward as tf_forward, to_duat


def _mutant_unroll(layers, kind):
    """symuat's recursion with one deliberate slip."""
    A, c, U, V, e = Identity(D), ZeroMatrix(D, 1), [], [], []
    for L in layers:
        R = ALG.sum([mul(Uj, ALG.sigma(add(mul(Vj, X0), ej))) for Uj, Vj, ej in zip(U, V, e)], c)
        A_next = mul(A, L.W1) if kind == "wrong order" else mul(L.W1, A)
        V.append(mul(L.W2, A_next) if kind == "off-by-one layer" else mul(L.W2, A))
        e.append(add(mul(L.W2, c), L.b2) if kind == "dropped remainder" else add(mul(L.W2, add(c, R)), L.b2))
        U = ([Uj for Uj in U] if kind == "earlier W3 not multiplied" else [mul(L.W1, Uj) for Uj in U]) + [L.W3]
        A = A_next
        c = add(mul(L.W1, c), L.b3)
    return Unrolled(A, c, U, V, e, X0)


@pytest.mark.parametrize("kind", ["wrong order", "off-by-one layer", "dropped remainder", "earlier W3 not multiplied"])
def test_recursion_mutants_are_refuted(kind):
    layers = [raw(k) for k in (1, 2, 3)]
    verdict = decide.check_identity(forward(ALG, layers, X0), _mutant_unroll(layers, kind).evaluate(ALG))
    assert verdict.status is Status.REFUTED, kind


def test_recursion_is_proved_at_depth_3():
    layers = [raw(k) for k in (1, 2, 3)]
    u = unroll(ALG, layers, X0, Identity(D), ZeroMatrix(D, 1))
    assert decide.check_identity(forward(ALG, layers, X0), u.evaluate(ALG)).status is Status.PROVED


def test_dropped_identity_is_refuted(all_results):
    assert all_results["T3.1[B-both,W1=mha]"].verdict.status is Status.REFUTED
    assert all_results["T3.1[B-both,W1=id+mha]"].verdict.status is Status.PROVED


def test_printed_order_of_the_rules_fails_and_the_right_reading_holds():
    alg = numpy_algebra(exact=True)
    printed = {"W1rhs": "acc", "unprimed": "acc", "abs": "j1", "W3": "once", "W2in34": "final",
               "W3in34": "final", "b3in34": "acc"}
    right = {"W1rhs": "raw", "unprimed": "acc", "abs": "all", "W3": "all", "W2in34": "layer",
             "W3in34": "stage", "b3in34": "acc"}
    inst = random_instance(3, 3, 2, seed=5, exact=True, form="eq30")
    net = [type(l)(l.W1, l.W2 @ l.W1, l.b2, l.W3, l.b3) for l in inst.layers]
    want = forward(alg, net, inst.x0)
    assert np.array_equal(paper_rules(alg, inst.layers, inst.x0, right, inst.x0 * 0).evaluate(alg), want)
    assert not np.array_equal(paper_rules(alg, inst.layers, inst.x0, printed, inst.x0 * 0).evaluate(alg), want)


WIDTHS = st.sampled_from([(4, 2), (6, 3), (4, 1), (3, 3), (8, 4)])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), WIDTHS, st.sampled_from(["none", "pre", "post"]),
       st.sampled_from(["split", "std"]), st.booleans(), st.integers(0, 2**16))
def test_to_duat_reproduces_the_forward_pass(L, N, mh, ln, projection, biases, seed):
    """Relative agreement 1e-12 in float64. Widths M ≥ 3: LayerNorm over 2 features is degenerate
    (its 1/std blows up when the two are close, and any two evaluation orders of such a network
    then differ by far more than rounding); test_two_feature_layer_norm checks M = 2 without it."""
    M, h = mh
    rng = np.random.default_rng(seed)
    blocks = [Block.random(rng, M=M, heads=h, F=2 * M, ln=ln, biases=biases, projection=projection) for _ in range(L)]
    X0 = rng.standard_normal((N, M))
    states = tf_forward(blocks, X0)
    duat = to_duat(blocks, X0)
    assert decide.relative_residual(duat.evaluate(), states[-1]) <= 1e-12
    assert all(decide.relative_residual(mine, want) <= 1e-12 for mine, want in zip(duat.states(), states))


def test_two_feature_layer_norm():
    """M = 2 and no LayerNorm: the rewrite is as exact as for any width."""
    rng = np.random.default_rng(3)
    blocks = [Block.random(rng, M=2, heads=1, F=4, ln="none", projection="std") for _ in range(5)]
    X0 = rng.standard_normal((3, 2))
    assert decide.relative_residual(to_duat(blocks, X0).evaluate(), tf_forward(blocks, X0)[-1]) <= 1e-12


def test_causal_and_ffn_only_blocks():
    rng = np.random.default_rng(0)
    blocks = [Block.random(rng, M=4, heads=2, F=8, mask="causal"), Block.random(rng, M=4, heads=2, F=8, residual="ffn")]
    X0 = rng.standard_normal((5, 4))
    assert decide.relative_residual(to_duat(blocks, X0).evaluate(), tf_forward(blocks, X0)[-1]) <= 1e-12


def test_bad_input():
    rng = np.random.default_rng(0)
    blk = Block.random(rng, M=4, heads=2, F=8)
    with pytest.raises(ValueError, match="at least one block"):
        to_duat([], np.ones((2, 4)))
    with pytest.raises(ShapeMismatchError, match=r"X has shape \(2, 5\)"):
        blk.forward(np.ones((2, 5)))
    with pytest.raises(ValueError, match="ln must be"):
        Block.random(rng, M=4, heads=2, F=8, ln="mid")
    with pytest.raises(ValueError, match="B-ffn"):
        Block.random(rng, M=4, heads=2, F=8, ln="pre", residual="ffn")
