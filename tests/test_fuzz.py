"""The standing soundness fuzz, bounded for CI: random expressions over every node the kernel
accepts, equal pairs (known-true rewrites) and unequal pairs (mutants), judged by the evaluator in
``tools/fuzz.py`` (written from the definitions, independent of the kernel's). No false positive
status, no false refutation, no crash. The long run (5,000+ pairs) is
``python tools/fuzz.py --out benchmarks/results/fuzz.md``."""

import importlib.util
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]


def _fuzz():
    spec = importlib.util.spec_from_file_location("symuat_fuzz", ROOT / "tools" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = _fuzz()


def test_fixed_seed_fuzz_has_no_false_verdict_and_no_crash():
    res = fuzz.fuzz(20, seed=2, max_depth=2)
    assert not res["problems"], res["problems"]
    counts = res["counts"]
    assert sum(counts["equal"].values()) == 10 and sum(counts["unequal"].values()) == 10
    assert counts["unequal"]["refuted"] >= 7  # the mutants are mostly real changes, and refuted


def test_the_judge_is_independent_and_agrees_with_the_definitions():
    """The judge's own rules on small cases whose values are known by hand."""
    from sympy import MatrixSymbol

    from symuat.vec import Commutation, Vec

    n, m = fuzz.n, fuzz.m
    X = MatrixSymbol("X", n, m)
    values = {"X": np.array([[Fraction(1), Fraction(2), Fraction(3)], [Fraction(4), Fraction(5), Fraction(6)]], dtype=object)}
    J = fuzz.Judge({n: 2, m: 3}, values, {})
    assert [int(v) for v in J(Vec(X, "row")).flat] == [1, 2, 3, 4, 5, 6]
    assert [int(v) for v in J(Vec(X, "col")).flat] == [1, 4, 2, 5, 3, 6]
    K = J(Commutation(n, m))
    assert [int(v) for v in (fuzz._matmul(K, J(Vec(X, "col")))).flat] == [1, 2, 3, 4, 5, 6]
    assert fuzz.judge_equal(Vec(X, "row"), Vec(X, "col")) is False


@pytest.mark.parametrize("seed", range(6))
def test_true_rewrites_are_true_for_the_judge(seed):
    rng = random.Random(seed)
    lhs, rhs, rule = fuzz.make_pair(rng, True, 2)
    assert fuzz.judge_equal(lhs, rhs, seed) is not False, rule
