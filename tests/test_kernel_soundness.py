"""The index-level normal form is sound: whenever it says two expressions are equal, exact
evaluation agrees on random integer instances. And it is complete for the rewrite rules the
claims rely on (transpose of a product, Kronecker mixed product, identities)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Identity, MatrixSymbol

from symuat.algebra import T, add, dims, kron, mul
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.index_calculus import compare_entries

n, k = dims("n k")
LEAVES = [MatrixSymbol("A", n, n), MatrixSymbol("B", n, n), MatrixSymbol("C", n, n), Identity(n)]


def expressions(depth=3):
    leaf = st.sampled_from(LEAVES)
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            st.builds(T, sub),
            st.builds(lambda a, b: mul(a, b), sub, sub),
            st.builds(lambda a, b: add(a, b), sub, sub),
            st.builds(lambda a, c: mul(a, c), sub, st.sampled_from([2, -1, 3])),
        ),
        max_leaves=6,
    )


def _exact_equal(lhs, rhs, size, seed):
    rng = np.random.default_rng(seed)
    values = {name: rng.integers(-4, 5, (size, size)).astype(object) for name in "ABC"}
    left = Evaluator({n: size}, values, "exact")(lhs)
    right = Evaluator({n: size}, values, "exact")(rhs)
    return all(a == b for a, b in zip(left.flat, right.flat))


@settings(max_examples=150, deadline=None)
@given(expressions(), expressions(), st.integers(0, 10_000))
def test_equal_normal_forms_imply_equal_values(lhs, rhs, seed):
    if compare_entries(lhs, rhs).equal:
        for size in (1, 2, 3):
            assert _exact_equal(lhs, rhs, size, seed)


@settings(max_examples=100, deadline=None)
@given(expressions(), st.integers(0, 10_000))
def test_normal_form_sees_transpose_of_transpose_and_products(expr, seed):
    assert compare_entries(expr, T(T(expr))).equal
    assert compare_entries(T(mul(expr, LEAVES[0])), mul(T(LEAVES[0]), T(expr))).equal


def test_kronecker_rules_are_recognised():
    A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", k, k)
    C, D = MatrixSymbol("C", n, n), MatrixSymbol("D", k, k)
    assert compare_entries(mul(kron(A, B), kron(C, D)), kron(mul(A, C), mul(B, D))).equal
    assert compare_entries(T(kron(A, B)), kron(T(A), T(B))).equal
    # SymPy's constructor itself merges I_n ⊗ I_k into I_{nk} (a true rewrite)
    assert compare_entries(kron(Identity(n), Identity(k)), Identity(n * k)).equal
    assert not compare_entries(kron(A, B), kron(T(A), B)).equal


def test_sum_over_an_unused_index_counts_its_range():
    from sympy import OneMatrix

    # 1ᵀ1 = n (a 1×1 matrix whose entry is a sum of n ones)
    ones = OneMatrix(n, 1)
    from symuat.kernel.index_calculus import entry_normal_form

    form, _, _ = entry_normal_form(mul(T(ones), ones))
    assert form.key[0][0] == n
