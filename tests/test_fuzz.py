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

    from symuat.expr.vec import Commutation, Vec

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


# ----------------------------------------------------------------------------------------------
# Trust at the edges (issue 17): the standing suite grows with each class of edge — constants,
# hypotheses, real implications against an independent judge (z3), rank bounds, and negations of
# statements no search decides. No false verdict, no crash (a clear error is right for input
# outside the kernel's fragment).
# ----------------------------------------------------------------------------------------------

from sympy import MatrixSymbol, OneMatrix, ZeroMatrix  # noqa: E402

from symuat.expr.algebra import T, dims, mul  # noqa: E402
from symuat.kernel import decide  # noqa: E402
from symuat.kernel.status import Status  # noqa: E402

_TRUE_CONSTANTS = [  # (lhs, rhs): equal, most beyond SymPy's simplify
    (sp.atan(sp.Rational(1, 2)) + sp.atan(sp.Rational(1, 3)), sp.pi / 4),
    (4 * sp.atan(sp.Rational(1, 5)) - sp.atan(sp.Rational(1, 239)), sp.pi / 4),
    (2 * sp.atan(sp.Rational(1, 3)) + sp.atan(sp.Rational(1, 7)), sp.pi / 4),  # Hutton
    (sp.atan(1), sp.pi / 4),
    (sp.sqrt(8), 2 * sp.sqrt(2)),
    (sp.sqrt(2) + sp.sqrt(3), sp.sqrt(5 + 2 * sp.sqrt(6))),
    (sp.cos(sp.pi / 5), (1 + sp.sqrt(5)) / 4),
]


@pytest.mark.parametrize("seed", range(4))
def test_constants_are_never_refuted_when_equal_and_always_when_they_differ(seed):
    rng = random.Random(seed)
    n = dims("n")
    lhs, rhs = _TRUE_CONSTANTS[rng.randrange(len(_TRUE_CONSTANTS))]
    scale = sp.Integer(rng.choice([1, 2, -3]))
    leaf = rng.choice([OneMatrix(1, 1), MatrixSymbol("x", n, 1)])
    true = decide.check_identity(mul(scale * lhs, leaf), mul(scale * rhs, leaf))
    assert true.status is not Status.REFUTED, (lhs, rhs, true.method)
    eps = sp.Rational(1, 10 ** rng.choice([3, 20, 60]))  # below what float64 resolves, mostly
    false = decide.check_identity(mul(scale * lhs, leaf), mul(scale * (rhs + eps), leaf))
    assert false.status is Status.REFUTED, (lhs, rhs, eps)


@pytest.mark.parametrize("seed", range(6))
def test_hypotheses_on_rows_and_columns_against_their_known_consequences(seed):
    """Rows sum to a, columns sum to b (an n×n leaf): consistent iff a = b, then A·1 = a·1 and
    1ᵀA = b·1ᵀ hold and A·1 = (a+1)·1 fails."""
    from symuat.errors import UnsatisfiableHypothesesError
    from symuat.kernel.hypotheses import LineSums

    rng = random.Random(seed)
    n = dims("n")
    A, one = MatrixSymbol("A", n, n), OneMatrix(n, 1)
    a, b = rng.choice([1, 2, -1]), rng.choice([1, 2, -1])
    causal = rng.random() < 0.3
    hyps = [LineSums("A", "rows", value=a, causal=causal), LineSums("A", "columns", value=b, causal=causal)]
    if a != b:
        with pytest.raises(UnsatisfiableHypothesesError):
            decide.check_identity(mul(A, one), mul(a, one), hypotheses=hyps)
        return
    for lhs, rhs, holds in [(mul(A, one), mul(a, one), True), (mul(T(one), A), mul(b, T(one)), True),
                            (mul(A, one), mul(a + 1, one), False), (mul(A, A), mul(T(A), A), None)]:
        try:
            v = decide.check_identity(lhs, rhs, hypotheses=hyps)
        except UnsatisfiableHypothesesError:
            assert causal  # a causal column sum over an empty line (lower triangle, last column: one entry)
            continue
        if holds is True:
            assert v.status is not Status.REFUTED, (hyps, lhs, rhs)
        if holds is False:
            assert v.status is Status.REFUTED
        if v.status is Status.REFUTED and v.counterexample.values:
            assert all(h.holds(v.counterexample.values["A"]) for h in hyps)


def _z3_judge(variables, hypotheses, conclusion) -> bool:
    """True iff ∀ vars: hypotheses ⇒ conclusion, decided by z3 (an independent judge)."""
    import z3

    zs = {v: z3.Real(v.name) for v in variables}

    def conv(e):
        e = sp.sympify(e)
        if e.is_Rational:
            return z3.RealVal(f"{e.p}/{e.q}")
        if e.is_Symbol:
            return zs[e]
        if isinstance(e, sp.Abs):
            x = conv(e.args[0])
            return z3.If(x >= 0, x, -x)
        if e.is_Add:
            return z3.Sum([conv(a) for a in e.args])
        if e.is_Mul:
            out = conv(e.args[0])
            for a in e.args[1:]:
                out = out * conv(a)
            return out
        if isinstance(e, sp.StrictLessThan):
            return conv(e.lhs) < conv(e.rhs)
        if isinstance(e, sp.LessThan):
            return conv(e.lhs) <= conv(e.rhs)
        if isinstance(e, sp.StrictGreaterThan):
            return conv(e.lhs) > conv(e.rhs)
        if isinstance(e, sp.GreaterThan):
            return conv(e.lhs) >= conv(e.rhs)
        raise TypeError(e)

    s = z3.Solver()
    s.add(*[conv(h) for h in hypotheses], z3.Not(conv(conclusion)))
    return s.check() == z3.unsat


@pytest.mark.parametrize("seed", range(40))
def test_real_implications_agree_with_z3(seed):
    rng = random.Random(seed)
    x, y = sp.symbols("x y", real=True)

    def lin():
        e = rng.randint(-3, 3) * x + rng.randint(-3, 3) * y + sp.Rational(rng.randint(-6, 6), rng.choice([1, 2, 3]))
        return sp.Abs(e) if rng.random() < 0.3 else e

    def atom():
        op = rng.choice([sp.Gt, sp.Ge, sp.Lt, sp.Le])
        return op(lin(), sp.Rational(rng.randint(-4, 4), rng.choice([1, 3])))

    hyps = [a for a in (atom() for _ in range(rng.randint(1, 3))) if a not in (sp.true, sp.false)]
    concl = atom()
    if concl in (sp.true, sp.false):
        concl = x > rng.randint(-3, 3)
    v = decide.check_real_implication([x, y], hyps, concl)
    assert (v.status is Status.PROVED) == _z3_judge([x, y], hyps, concl), (hyps, concl, v.status)
    if v.status is Status.REFUTED:
        model = {sp.Symbol(k, real=True): sp.Rational(str(val)) for k, val in v.counterexample.values.items()}
        assert all(bool(h.xreplace(model)) for h in hyps) and not bool(concl.xreplace(model))


@pytest.mark.parametrize("claim", ["min", "d", "dk", "min3", "4", "min+1", "100", "dk+d"])
@pytest.mark.parametrize("relation", ["=", "≤"])
def test_rank_claims_are_never_decided_wrongly(claim, relation):
    from symuat.claims import attention as att

    d, dk = att._dq, att._dk
    claimed = {"min": sp.Min(d, dk), "d": d, "dk": dk, "min3": sp.Min(d, dk, 3), "4": sp.Integer(4),
               "min+1": sp.Min(d, dk) + 1, "100": sp.Integer(100), "dk+d": d + dk}[claim]
    v = decide.check_rank("rank", claimed, structure=decide.rank_bound_of_product(mul(att._WQ, att._WK.T)),
                          witness=att._h8_rank_witness, grid=att._H8_GRID, relation=relation)
    grid = [(a, b) for a in range(1, 120) for b in range(1, 120, 7)]  # the truth: generic rank min(d, d_k)
    if relation == "=":
        true = all(int(claimed.subs({d: a, dk: b})) == min(a, b) for a, b in grid)
    else:
        true = all(int(claimed.subs({d: a, dk: b})) >= min(a, b) for a, b in grid)
    if v.status in (Status.PROVED, Status.PROVED_AT_SIZES):
        assert true, (claim, relation)
    if v.status is Status.REFUTED:
        assert not true, (claim, relation)
        sizes = {d: v.counterexample.sizes["d"], dk: v.counterexample.sizes["d_k"]}
        c, m = int(claimed.subs(sizes)), min(sizes.values())
        assert (c != m) if relation == "=" else (c < m)


@pytest.mark.parametrize("seed", range(8))
def test_polynomials_in_a_size_are_refuted_and_their_negations_proved(seed):
    """p(n)·A = 0 with p a nonzero polynomial whose roots are sizes: false, whatever the roots —
    the search goes through D+1 distinct sizes; its negation is proved, never refuted."""
    rng = random.Random(seed)
    n, m = dims("n m")
    roots = [rng.randint(1, 9) for _ in range(rng.randint(1, 6))]
    p = sp.Mul(*[(n - r) for r in roots])
    if rng.random() < 0.5:
        p = p * sp.Mul(*[(m - rng.randint(1, 6)) for _ in range(rng.randint(1, 3))]) * (n - m)
    A = MatrixSymbol("A", n, m)
    v = decide.check_identity(mul(p, A), ZeroMatrix(n, m))
    assert v.status is Status.REFUTED, (p, v.method)
    assert decide.check_negation(mul(p, A), ZeroMatrix(n, m)).status is Status.PROVED


@pytest.mark.parametrize("pair", _TRUE_CONSTANTS[:2])
def test_negations_of_numeric_only_statements_stay_undecided(pair):
    n = dims("n")
    x = MatrixSymbol("x", n, 1)
    inner = decide.check_identity(mul(pair[0], x), mul(pair[1], x))
    assert inner.status is Status.NUMERIC_ONLY
    assert decide.check_negation(mul(pair[0], x), mul(pair[1], x)).status is Status.NUMERIC_ONLY


# -- spec §9's kernel nodes (head maps, blocks of one axis, RoPE pair rotations, diagonal scalings),
#    banded masks and soft-capping: the fuzz generates them and the judge evaluates them -------------


def test_structured_pairs_cover_every_new_node_with_no_false_verdict():
    res = fuzz.fuzz_structured(30, seed=3)
    assert not res["problems"], res["problems"]
    assert set(res["kinds"]) == set(fuzz.STRUCTURED)
    assert res["counts"]["unequal"]["refuted"] == 15 and res["counts"]["equal"]["proved"] == 15


def test_the_main_stream_draws_structured_pairs():
    rng = random.Random(0)
    names = set()
    for _ in range(40):
        lhs, rhs, _ = fuzz.make_pair(rng, False, 2)
        names |= {type(x).__name__ for e in (lhs, rhs) for x in sp.preorder_traversal(e)}
    assert {"AxisBlock", "PairRotation", "Diag"} <= names


def test_the_judge_evaluates_the_new_nodes_from_their_definitions():
    from symuat.expr.decoder import Diag
    from symuat.kernel.head_maps import AxisBlock
    from symuat.kernel.rotary import PairRotation
    from sympy import MatrixSymbol

    n, m = fuzz.n, fuzz.m
    J = fuzz.Judge({n: 2, m: 3}, {"rho": np.array([[Fraction(k + 2 * t) for t in range(2)] for k in range(4)], dtype=object),
                                  "v": np.array([[Fraction(5)], [Fraction(7)]], dtype=object)}, {})
    assert [int(x) for x in J(AxisBlock(n + 2, n, 1)).flat] == [0, 0, 1, 0]
    R = J(PairRotation("rho", n, "half"))  # pair k on coordinates (k, k+2): block k = rows 2k, 2k+1 of the leaf
    assert [int(R[0, 0]), int(R[0, 2]), int(R[2, 0]), int(R[2, 2])] == [0, 2, 1, 3]
    Ri = J(PairRotation("rho", n, "interleaved"))
    assert [int(Ri[2, 2]), int(Ri[2, 3]), int(Ri[3, 2])] == [2, 4, 3]
    assert [int(x) for x in J(Diag(MatrixSymbol("v", n, 1))).flat] == [5, 0, 0, 7]


def test_banded_masks_and_softcap_fuzz_have_no_false_verdict():
    assert fuzz.fuzz_bands(80, seed=1) == []
    assert fuzz.fuzz_softcap(80, seed=1) == []


# -- names, caches and tokenizers: the bookkeeping a verdict rests on (issue 30) --------------------


def test_random_keys_get_distinct_coq_names_that_read_back():
    """Certify names are injective: 3,000 random keys over the characters keys use (and some they
    do not), each read back exactly; no two share a name."""
    from symuat.certify.run import coq_name, key_of_coq_name

    rng = random.Random(30)
    alphabet = "Aa0_.[],=-≥≤ k1²é\u0301⋄·xX"
    names = {}
    for _ in range(3000):
        key = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        n = rng.randint(0, 12)
        name = coq_name(key, n)
        assert key_of_coq_name(name) == (key, n)
        assert names.setdefault(name, (key, n)) == (key, n)


@pytest.mark.parametrize("seed", range(3))
def test_a_source_mutation_anywhere_changes_the_cache_key_and_blocks_the_store(seed, tmp_path):
    """Cache-key mutants: one byte changed in a random source file (or a file added) is a new key,
    and an entry taken before the change refuses to store (issue 30: the old code's verdicts were
    filed under the new key)."""
    import shutil

    from symuat import cache
    from symuat.kernel.decide import informal
    from symuat.kernel.registry import Check

    root = tmp_path / "symuat"
    shutil.copytree(cache.PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    rng = random.Random(seed)
    checks = [Check("X0", None, "x=x", lambda: informal("x"))]
    versions = cache.dependency_versions()
    base = cache.key(checks, root, versions)
    entry = cache.Entry(checks, root, directory=tmp_path / "c")
    results = [c.run() for c in checks]
    path = rng.choice(sorted(root.rglob("*.py")))
    data = bytearray(path.read_bytes())
    k = rng.randrange(len(data))
    data[k] = (data[k] + 1) % 256
    path.write_bytes(bytes(data))
    assert cache.key(checks, root, versions) != base, path
    assert entry.store(results) is None


@pytest.mark.parametrize("seed", range(4))
def test_the_tokenizer_fit_is_decided_exactly_by_its_rule(seed):
    """Random table sizes and tokenizers (ids from ``first``, ``n`` of them): refused exactly when
    an id has no row or more than a sixteenth of the rows would be padding."""
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models

    from symuat.models.formats import ModelError, check_tokenizer_fits

    rng = random.Random(seed)
    for _ in range(25):
        rows, n, first = rng.randint(8, 300), rng.randint(1, 320), rng.choice([0, 0, 0, 1, 5])
        tok = Tokenizer(models.WordLevel({f"t{i}": first + i for i in range(n)}, unk_token="t0"))
        fits = first + n - 1 < rows and n >= rows - rows // 16
        try:
            check_tokenizer_fits(tok, rows, "tokenizer.json")
            refused = False
        except ModelError as exc:
            refused = True
            assert str(exc).startswith("tokenizer.json: ")
        assert refused is not fits, (rows, n, first)


# ----------------------------------------------------------------------------------------------
# Issue 30: the classes that crashed or hung — bands that are empty or differ only far out, soft-cap
# gaps below float64, constants that differ below float64 or defeat SymPy's zero recognition, printed
# rows with terms outside their range. Random instances, each judged independently of the kernel.
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_wide_and_empty_bands_get_a_verdict_the_masks_confirm(seed):
    from symuat.kernel.decide import bands

    rng = random.Random(seed)
    w = bands.WINDOW
    pool = [None, 0, 3, -4, 25, -25, w, -w, w - 1, w + 30, -w - 30, 2 * w + 12]

    def own(N, lo, hi, W):  # n attends to n′ iff lo ≤ n − n′ ≤ hi, written out here
        at = lambda b: None if b is None else int(sp.sympify(b).subs(w, W))
        lo, hi = at(lo), at(hi)
        return [[(lo is None or a - b >= lo) and (hi is None or a - b <= hi) for b in range(N)] for a in range(N)]

    for _ in range(5):
        (l1, h1), (l2, h2) = [(rng.choice(pool), rng.choice(pool)) for _ in range(2)]
        v = bands.check_same_mask(bands.Band(l1, h1, "a"), bands.Band(l2, h2, "b"))
        if v.status is Status.PROVED:
            assert all(own(N, l1, h1, W) == own(N, l2, h2, W) for N in (1, 5, 40, 80) for W in (1, 3)), (l1, h1, l2, h2)
        else:
            assert v.status is Status.REFUTED
            N, W = v.counterexample.sizes["N"], v.counterexample.sizes["w"]
            assert own(N, l1, h1, W) != own(N, l2, h2, W) and own(N - 1, l1, h1, W) == own(N - 1, l2, h2, W)


@pytest.mark.parametrize("seed", range(3))
def test_softcap_with_large_logits_is_decided_exactly_and_agrees_with_high_precision(seed):
    import mpmath

    from symuat.kernel.decide import softcap

    rng = random.Random(seed)
    for _ in range(4):
        k, c = rng.choice([1, 2, -3]), rng.choice([1, 2, 7, -5])
        z0 = rng.randint(-2500, 2500)
        z = [z0, rng.choice([z0 + 1, k - z0, rng.randint(-2500, 2500)])]  # near, symmetric, anywhere
        v = softcap.check_capped_shift(z, k, c)
        with mpmath.workdps(4000):
            change = lambda t: c * (mpmath.tanh(mpmath.mpf(t - k) / c) - mpmath.tanh(mpmath.mpf(t) / c))
            differs = change(z[1]) != change(z[0])
        assert (v.status is Status.REFUTED) == differs, (z, k, c, v.status)


@pytest.mark.parametrize("seed", range(3))
def test_constants_differing_below_float64_are_refuted_and_equal_radicals_never_are(seed):
    import time

    rng = random.Random(seed)
    n = dims("n")
    x = MatrixSymbol("x", n, 1)
    a = rng.choice([2, 3, 5, 7, 11])
    e = rng.choice([20, 200, 600])
    start = time.perf_counter()
    false = decide.check_identity(mul(sp.sqrt(a), x), mul(sp.sqrt(a + sp.Rational(1, 10 ** e)), x))
    assert false.status is Status.REFUTED, (a, e)
    cr = lambda t: sp.root(t, 3)
    b = rng.choice([2, 3, 4])
    true = decide.check_identity(mul(cr(b) * cr(b * b), x), mul(b, x))  # ∛b·∛b² = b
    assert true.status is not Status.REFUTED
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("seed", range(3))
def test_printed_rows_with_shifted_positions_are_refuted_exactly_when_the_row_differs(seed):
    from symuat.kernel.decide.printed_sums import check_printed_sum
    from symuat.kernel.status import Verdict

    rng = random.Random(seed)
    k, m = sp.symbols("k m", integer=True, positive=True)
    w = sp.IndexedBase("w")
    general = sp.Lambda(k, w[k])
    for _ in range(4):
        offsets = [rng.choice([0, 0, -1, 1, 5]) for _ in range(3)]
        explicit = [(p + o, w[p + o]) for p, o in zip((1, 2, m), offsets)]

        def row(M):  # the printed row at m = M, written out: every printed term, the ellipsis fills the rest
            at = [int(sp.sympify(p).subs(m, M)) for p, _ in explicit]
            return sorted(at + [j for j in range(1, M + 1) if j not in at])

        differs = any(row(M) != list(range(1, M + 1)) for M in (3, 4))
        v = check_printed_sum(explicit, general, (1, m), {m: 3}, definition=Verdict(Status.PROVED, "definition"),
                              entry=lambda s: sum(w[j] for j in range(1, s[m] + 1)), sizes_list=[{m: 3}, {m: 4}])
        assert (v.status is Status.REFUTED) == differs, (explicit, v.status)
        if differs:
            assert v.counterexample is not None and v.counterexample.exact_recheck
