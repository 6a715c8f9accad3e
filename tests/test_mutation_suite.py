"""Mutation suite over every claim group: wrong variants of the identities symuat proves must be
refuted, each with a counterexample that the float64 backend re-checks.

The true statements are taken from the catalogue itself (every check whose procedure is
``check_identity(lhs, rhs)``) and from the constructions of :mod:`symuat.expr.linear`, the ⋄ node and
the DUAT recursion; each mutation is one slip an author or a reader could make: a dropped or an
extra transpose, swapped Kronecker factors, the other flattening, a reversed product, the other
⋄ definition, a dropped identity or bias term, a layer index off by one, a sequential instead of a
simultaneous update. A mutant is kept only when the independent judge of ``tools/fuzz.py`` shows
it differs from the true statement (so a mutation that happens to be an identity is not asked to
be refuted), and the kernel must then refute it.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sympy import Identity, MatrixSymbol, OneMatrix
from sympy.matrices.expressions import KroneckerProduct, MatAdd, MatMul, MatrixExpr, Transpose

import symuat.claims  # noqa: F401  (registers the catalogue)
from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.diamond import Diamond
from symuat.kernel import decide
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status
from symuat.expr.linear import lift_bias_left, lift_left, lift_right
from symuat.expr.vec import Vec

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("symuat_fuzz", ROOT / "tools" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

PER_GROUP = 10  # mutants kept per claim group (runtime: a few seconds per group)

# --------------------------------------------------------------------------------------------
# mutation operators: each returns the mutated expression at the first node (preorder) where it
# applies, or None
# --------------------------------------------------------------------------------------------


def _first(expr, change):
    def walk(e):
        new = change(e)
        if new is not None:
            return new
        if isinstance(e, MatrixExpr):
            for k, a in enumerate(e.args):
                if isinstance(a, MatrixExpr):
                    sub = walk(a)
                    if sub is not None:
                        args = list(e.args)
                        args[k] = sub
                        return e.func(*args)
        return None

    try:
        return walk(expr)
    except Exception:  # an ill-formed rebuild is not a mutant
        return None


def _square(e) -> bool:
    try:
        return sp.simplify(e.shape[0] - e.shape[1]) == 0
    except Exception:
        return False


def _layer_shift(e):
    if isinstance(e, MatrixSymbol):
        m = re.match(r"^(.*?_\{)(\d+)(,.*)$", e.name)
        if m:
            return MatrixSymbol(f"{m.group(1)}{int(m.group(2)) + 1}{m.group(3)}", e.rows, e.cols)
    return None


def _drop_term(e):
    if isinstance(e, MatAdd) and len(e.args) >= 2:
        for k, a in enumerate(e.args):
            if isinstance(a, Identity) or (isinstance(a, MatrixSymbol) and a.name.startswith("b")):
                rest = e.args[:k] + e.args[k + 1:]
                return rest[0] if len(rest) == 1 else MatAdd(*rest)
        rest = e.args[1:]
        return rest[0] if len(rest) == 1 else MatAdd(*rest)
    return None


def _other_diamond(e):
    if isinstance(e, Diamond) and e.mm is not None:
        return Diamond(e.left, e.right, "C-prod" if e.mm == "C-col" else "C-col")
    if isinstance(e, Diamond):
        return MatMul(e.left, e.right) if _square(e.left) else None
    return None


MUTATIONS = {
    "dropped transpose": lambda e: e.arg if isinstance(e, Transpose) else None,
    "extra transpose": lambda e: Transpose(e) if isinstance(e, MatrixSymbol) and _square(e) else None,
    "swapped Kronecker factors": lambda e: KroneckerProduct(*reversed(e.args)) if isinstance(e, KroneckerProduct) else None,
    "other flattening": lambda e: Vec(e.arg, "col" if e.order == "row" else "row") if isinstance(e, Vec) else None,
    "reversed product order": lambda e: (MatMul(*reversed([a for a in e.args if isinstance(a, MatrixExpr)]))
                                         if isinstance(e, MatMul) and len([a for a in e.args if isinstance(a, MatrixExpr)]) >= 2
                                         else None),
    "dropped identity or bias": _drop_term,
    "layer index off by one": _layer_shift,
    "other ⋄ definition": _other_diamond,
}

# --------------------------------------------------------------------------------------------
# true statements: the catalogue's identities, and a few constructions
# --------------------------------------------------------------------------------------------

N, M, F, P, Q, m, n = dims("N M F P Q m n")


def _catalogue_pairs():
    out = defaultdict(list)
    for check in REGISTRY.all_checks():
        proc = check.procedure
        if ".mutant[" in check.key:  # spec §9's shipped mistakes: false already, not a true statement to mutate
            continue
        if isinstance(proc, functools.partial) and proc.func in (decide.check_identity, decide.check_identity) \
                and len(proc.args) == 2:  # decide.check_identity: decide's, counterexample minimised
            group = {"l": "M"}.get(check.key[0], check.key[0])
            out[group].append((check.key, proc.args[0], proc.args[1]))
    return out


def _constructions():
    A, X, B = MatrixSymbol("A", P, N), MatrixSymbol("X", N, M), MatrixSymbol("B", M, Q)
    W = MatrixSymbol("W", N, N)
    W1, b1 = MatrixSymbol("W_1", F, N), MatrixSymbol("b_1", F, 1)
    out = defaultdict(list)
    out["M"] += [
        ("vec_r lemma", Vec(mul(A, X, B), "row"), mul(kron(A, T(B)), Vec(X, "row"))),
        ("vec_c lemma", Vec(mul(A, X, B), "col"), mul(kron(T(B), A), Vec(X, "col"))),
        ("linear lift", Vec(mul(W, X), "row"), mul(lift_left(W, M, "row"), Vec(X, "row"))),
        ("right lift", Vec(mul(X, B), "row"), mul(lift_right(B, N, "row"), Vec(X, "row"))),
        ("bias lift", Vec(add(mul(W1, X), mul(b1, OneMatrix(1, M))), "row"),
         add(mul(lift_left(W1, M, "row"), Vec(X, "row")), lift_bias_left(b1, M, "row"))),
    ]
    Wmn, x = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)
    An, Bn, v = MatrixSymbol("A", n, n), MatrixSymbol("B", n, n), MatrixSymbol("v", n, 1)
    out["P"] += [
        ("P1", Diamond(Wmn, x), mul(T(Wmn), x)),
        ("C-col chain", Diamond(An, Diamond(Bn, v)), Diamond(Diamond(T(Bn), An, "C-col"), v)),
        ("C-prod product", Diamond(An, Bn, "C-prod"), mul(An, Bn)),
        ("C-col product", Diamond(An, Bn, "C-col"), mul(T(An), Bn)),
    ]
    out["D"] += [
        ("D4 (W ⋄ x)", Diamond(Wmn, x), mul(T(Wmn), x)),
        ("D4 (x ⋄ W)", Diamond(x, Wmn), mul(T(Wmn), x)),
        ("⋄ of a sum", Diamond(An, add(v, v)), add(Diamond(An, v), Diamond(An, v))),
    ]
    return out


def _sequential_update_mutants():
    """The DUAT recursion (A, c) ← (W A, W c + b) applied simultaneously, against the slip of
    updating A first and using the new A in the update of c."""
    D = dims("D")
    W = [MatrixSymbol(f"W_{{{k},1}}", D, D) for k in (1, 2, 3)]
    b = [MatrixSymbol(f"b_{{{k},3}}", D, 1) for k in (1, 2, 3)]
    x0 = MatrixSymbol("x_0", D, 1)
    x, A, c = x0, Identity(D), mul(0, b[0])
    A_seq, c_seq = Identity(D), mul(0, b[0])
    for Wk, bk in zip(W, b):
        x = add(mul(Wk, x), bk)
        A, c = mul(Wk, A), add(mul(Wk, c), bk)  # simultaneous
        A_seq = mul(Wk, A_seq)
        c_seq = add(mul(A_seq, c_seq), bk)  # sequential: the new A in the update of c
    true = (x, add(mul(A, x0), c))
    return [("T", "affine unrolling", true[0], true[1], "sequential instead of simultaneous update",
             add(mul(A_seq, x0), c_seq))]


def _judge_differs(lhs, rhs) -> bool:
    try:
        return fuzz.judge_equal(lhs, rhs, seed=0, tries=4) is False
    except (TypeError, KeyError):  # a node the judge has no rule for
        return False


def _build():
    """Per group, mutants taken round-robin over the kinds of slip (so each group sees as many
    kinds as apply), each the first judge-confirmed mutant of the next true statement."""
    pairs = _catalogue_pairs()
    for g, items in _constructions().items():
        pairs[g] = items + pairs[g]
    cases = []
    for group in ("D", "P", "M", "H", "L", "T", "W"):  # W: spec §9 (WP1–WP12)
        items = pairs.get(group, [])
        cursor = {label: 0 for label in MUTATIONS}
        taken = 0
        while taken < PER_GROUP and any(cursor[label] < len(items) for label in MUTATIONS):
            for label, change in MUTATIONS.items():
                while cursor[label] < len(items) and taken < PER_GROUP:
                    key, lhs, rhs = items[cursor[label]]
                    cursor[label] += 1
                    mutant = _first(rhs, change)
                    if mutant is not None and mutant != rhs and _judge_differs(lhs, mutant):
                        cases.append((group, key, label, lhs, mutant))
                        taken += 1
                        break
    for group, key, lhs, rhs, label, mutant in _sequential_update_mutants():
        if _judge_differs(lhs, mutant):
            cases.append((group, key, label, lhs, mutant))
    return cases


CASES = _build()


def test_the_suite_is_large_and_spread_over_every_group():
    groups = defaultdict(int)
    kinds = set()
    for group, _, label, _, _ in CASES:
        groups[group] += 1
        kinds.add(label)
    assert len(CASES) >= 60, len(CASES)
    assert set(groups) >= {"D", "P", "M", "H", "L", "T"}, dict(groups)
    assert kinds >= {"dropped transpose", "swapped Kronecker factors", "other flattening",
                     "reversed product order", "dropped identity or bias", "layer index off by one",
                     "sequential instead of simultaneous update"}, kinds


@pytest.mark.parametrize("group,key,label,lhs,mutant", CASES,
                         ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in CASES])
def test_mutant_is_refuted_and_the_witness_rechecks_in_float64(group, key, label, lhs, mutant):
    verdict = decide.check_identity(lhs, mutant)
    assert verdict.status is Status.REFUTED, f"{key} / {label}: {verdict.status}"
    cex = verdict.counterexample
    assert cex is not None and cex.exact_recheck and cex.numeric_recheck
    sizes = {s: cex.sizes[s.name] for s in decide.dimension_symbols(lhs, mutant)}
    values = {k: np.asarray(v, dtype=float) for k, v in cex.values.items()}
    leaves = {k: v for k, v in values.items() if v.ndim > 0}
    scalars = {k: float(v) for k, v in values.items() if v.ndim == 0}
    try:
        left = Evaluator(sizes, leaves, "float", scalars=scalars)(lhs)
        right = Evaluator(sizes, leaves, "float", scalars=scalars)(mutant)
    except Exception:
        assert "undefined" in cex.reason
        return
    # far above float64's rounding at these magnitudes (a minimised witness of a statement with
    # rational coefficients, a layer norm's 1/N, can differ by exactly 1/2)
    assert left.shape != right.shape or np.max(np.abs(left - right)) >= 0.25


def test_the_sequential_update_statement_itself_is_proved():
    (_, _, lhs, rhs, _, _), = _sequential_update_mutants()
    assert decide.check_identity(lhs, rhs).status is Status.PROVED


# --------------------------------------------------------------------------------------------
# printed sums (issue 30): mutants of D4's printed row 2, w_{1,2}x_1 + w_{2,2}x_2 + ⋯ + w_{m,2}x_m,
# whose printed terms leave the summation range — the row then has a term the sum does not, at
# every m; each must be refuted with an exact counterexample (never dropped, never proved)
# --------------------------------------------------------------------------------------------


def _row2_mutants():
    from symuat.claims import diamond as dm

    m, w, x = dm.m, dm._wi, dm._xi
    term = lambda k: w[k, 2] * x[k]
    return {
        "last term at m+1": [(1, term(1)), (2, term(2)), (m + 1, term(m + 1))],
        "an extra w_{m+1}": [(1, term(1)), (2, term(2)), (m, term(m)), (m + 1, term(m + 1))],
        "a w_0 in front": [(0, term(0)), (1, term(1)), (2, term(2)), (m, term(m))],
        "a trailing w_{m+5}": [(1, term(1)), (2, term(2)), (m, term(m)), (m + 5, term(m + 5))],
        "first term at 0": [(0, term(0)), (2, term(2)), (m, term(m))],
    }


@pytest.mark.parametrize("label", list(_row2_mutants()))
def test_a_printed_row_mutant_outside_the_range_is_refuted_with_a_counterexample(label):
    from symuat.claims import diamond as dm

    v = dm._eq4_row_symbolic("row2", printed=_row2_mutants()[label])
    assert v.status is Status.REFUTED, (label, v.status, v.method)
    cex = v.counterexample
    assert cex is not None and cex.exact_recheck and cex.numeric_recheck
    assert "w" not in cex.values  # entries are named, not the base
