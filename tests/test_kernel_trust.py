"""Trust at the edges (issue 17): no verdict from a crash, from float noise or from a search that
stopped early. Each test here failed on main (f19ab6c)."""

import ast
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sympy import MatrixSymbol, OneMatrix

from symuat.expr.algebra import add, dims, mul
from symuat.kernel import decide
from symuat.kernel.status import Status

ROOT = Path(__file__).resolve().parents[1] / "src"  # the package's parent

# -- structure ------------------------------------------------------------------------------------


def test_decide_is_a_package_exporting_public_names_only():
    assert (ROOT / "symuat/kernel/decide/__init__.py").exists()
    assert not (ROOT / "symuat/kernel/decide.py").exists()
    private = [name for name in vars(decide) if name.startswith("_") and not name.startswith("__")]
    assert not private, private
    assert all(hasattr(decide, name) for name in ("check_identity", "TOLERANCE", "evaluate_at", "relative_residual"))


def test_every_procedure_module_states_its_soundness():
    for path in (ROOT / "symuat/kernel/decide").glob("*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and len(doc) > 200, path.name
        assert len(path.read_text().splitlines()) < 900, path.name


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_hypotheses_and_index_calculus_do_not_import_each_other():
    kernel = ROOT / "symuat/kernel"
    assert "symuat.kernel.hypotheses" not in _imports(kernel / "index_calculus.py")
    assert "symuat.kernel.index_calculus" in _imports(kernel / "hypotheses.py")


# -- fresh install: the catalogue needs only the core dependencies ---------------------------------

_ONLY_CORE = r'''
import sys, tomllib, importlib.abc
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
allowed = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in deps}
allowed |= {"symuat", "mpmath"}  # mpmath: sympy's own dependency
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top.startswith("_") or top.lower() in allowed:
            return None
        raise ImportError(f"No module named {top!r} (not a core dependency)")
sys.meta_path.insert(0, Block())
import symuat.claims
from symuat.kernel.registry import REGISTRY
from symuat.kernel.runner import run_checks
crashed = [f"{r.check.key}: {r.error}" for r in run_checks(REGISTRY.all_checks(), jobs=2) if r.error]
print(len(crashed), crashed[:3])
'''


def test_every_catalogue_check_runs_with_only_the_core_dependencies():
    """`pip install -e . && symuat report` on a fresh machine: no check needs an extra (main: 48 A2
    checks crashed with No module named 'scipy')."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _ONLY_CORE], cwd=ROOT.parent, capture_output=True, text=True,
                         timeout=600, env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("0 "), out.stdout


# -- a crash is a status of its own ----------------------------------------------------------------


def _crashing_registry():
    from symuat.kernel.registry import Registry

    fake = Registry()
    claim = fake.claim("X1", "a broken claim", where="-", statement="-", group="-")
    claim.check("a", None, "1=1", lambda: decide.informal("nothing to check"))
    claim.check("b", None, "1=1", lambda: 1 / 0)
    claim.check("c", None, "1=1", lambda: [][1])
    ok = fake.claim("X2", "a sound claim", where="-", statement="-", group="-")
    A = MatrixSymbol("A", 2, 2)
    ok.check(None, None, "A=A", lambda: decide.check_identity(A, A))
    return fake


def test_a_crashed_check_makes_the_claim_error_in_roll_up_totals_json_and_exit_status(monkeypatch, capsys):
    import json

    import symuat.claims  # noqa: F401  (registered before the fake registry replaces the real one)
    import symuat.kernel.registry as reg
    from symuat import cli
    from symuat.kernel.runner import run_checks
    from symuat.verdicts.headline import headline
    from symuat.verdicts.roll_up import claim_verdicts

    fake = _crashing_registry()
    results = list(run_checks(fake.all_checks(), jobs=1))
    broken, sound = claim_verdicts(results, fake)
    assert broken.verdict == "error" and broken.strength is None
    assert broken.bottom_line == "error: 2 checks crashed"
    assert sound.verdict == "holds"
    assert headline([broken, sound]).lines()[0].startswith("error: 1 claim with crashed checks (2 crashed)")
    assert [r.as_dict()["status"] for r in results] == ["informal", "error", "error", "proved"]
    monkeypatch.setattr(reg, "REGISTRY", fake)
    assert cli.main(["report", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["claims"][0]["verdict"] == "error" and out["claims"][0]["errors"] == ["X1.b", "X1.c"]
    assert out["headline"]["lines"][0].startswith("error: 1 claim")
    assert cli.main(["report"]) == 1
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("error: 1 claim")
    assert "X1     ! error" in table


# -- constants decided exactly, never refuted on float noise ----------------------------------------

_HALF, _THIRD = sp.Rational(1, 2), sp.Rational(1, 3)
EULER = (sp.atan(_HALF) + sp.atan(_THIRD), sp.pi / 4)
MACHIN = (4 * sp.atan(sp.Rational(1, 5)) - sp.atan(sp.Rational(1, 239)), sp.pi / 4)


@pytest.mark.parametrize("pair", [EULER, MACHIN], ids=["euler", "machin"])
@pytest.mark.parametrize("leaf", ["1x1", "x"])
def test_true_constant_identities_are_never_refuted(pair, leaf):
    n = dims("n")
    L = OneMatrix(1, 1) if leaf == "1x1" else MatrixSymbol("x", n, 1)
    v = decide.check_identity(mul(pair[0], L), mul(pair[1], L))
    assert v.status is Status.NUMERIC_ONLY, v.method
    assert "undecided" in v.method and "bits" in v.method  # the precision is stated


@pytest.mark.parametrize("leaf", ["1x1", "x"])
def test_constant_differences_below_float64_are_certified_and_refuted(leaf):
    n = dims("n")
    L = OneMatrix(1, 1) if leaf == "1x1" else MatrixSymbol("x", n, 1)
    for lhs, rhs in [(EULER[0], EULER[1] + sp.Rational(1, 10**40)),
                     (sp.exp(sp.pi * sp.sqrt(163)), sp.Integer(640320**3 + 744))]:
        v = decide.check_identity(mul(lhs, L), mul(rhs, L))
        assert v.status is Status.REFUTED
        assert "certified nonzero" in v.counterexample.exact_recheck


def test_zero_status_is_three_valued():
    from symuat.kernel.constants import zero_status

    assert zero_status(sp.sqrt(2) + sp.sqrt(3) - sp.sqrt(5 + 2 * sp.sqrt(6)))[0] is True
    assert zero_status(sp.pi - sp.Rational(355, 113))[0] is False
    assert zero_status(EULER[0] - EULER[1])[0] is None
    assert zero_status(sp.I * sp.sqrt(2) - sp.sqrt(-2))[0] is True


# -- a counterexample search with a guarantee -------------------------------------------------------


def test_search_goes_through_every_size_up_to_the_degree_bound():
    """(n−1)(n−2)(n−3)(n−4)(n−P)·A = 0 with P main's only probe: false at n = 5 (main: numeric-only,
    and its negation refuted)."""
    from sympy import ZeroMatrix

    n = dims("n")
    A = MatrixSymbol("A", n, n)
    P = decide.degree_bounds(mul((n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 10), A), ZeroMatrix(n, n))[n] + 1
    c = (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - P)
    v = decide.check_identity(mul(c, A), ZeroMatrix(n, n))
    assert v.status is Status.REFUTED and v.counterexample.sizes == {"n": 5}
    assert decide.check_negation(mul(c, A), ZeroMatrix(n, n)).status is Status.PROVED


def test_search_is_joint_over_several_dimensions():
    """Zero on the small grid, at each dimension's probe and on the diagonal; not at (6, 5)."""
    from sympy import ZeroMatrix

    n, m = dims("n m")
    B = MatrixSymbol("B", n, m)
    c = (n - 1) * (n - 2) * (n - 3) * (n - 4) * (m - 1) * (m - 2) * (m - 3) * (m - 4) * (n - m) * (m - 2)
    v = decide.check_identity(mul(c, B), ZeroMatrix(n, m))
    assert v.status is Status.REFUTED


def test_search_plan_says_whether_it_is_complete_in_degree():
    from sympy import ZeroMatrix

    n, m = dims("n m")
    B = MatrixSymbol("B", n, m)
    plan = decide.search_plan(mul((n - 1) * (m - 1), B), ZeroMatrix(n, m))
    assert plan.complete and plan.needed == len(plan.grid) == (plan.bounds[n] + 1) * (plan.bounds[m] + 1)
    big = decide.search_plan(mul((n - 1) ** 40 * (m - 1) ** 40, B), ZeroMatrix(n, m), budget=1e5)
    assert not big.complete and "bounded, not complete in degree" in big.describe()


def test_negation_of_a_numeric_only_identity_is_not_refuted(monkeypatch):
    from symuat.kernel.decide import identity
    from symuat.kernel.status import Verdict

    A = MatrixSymbol("A", 2, 2)
    monkeypatch.setattr(identity, "check_identity", lambda l, r, **k: Verdict(Status.NUMERIC_ONLY, "holds where tried"))
    v = identity.check_negation(A, A)
    assert v.status is Status.NUMERIC_ONLY and "undecided" in v.method


def test_listed_sizes_are_all_checked_or_the_call_fails():
    from symuat.errors import KernelInputError

    n = dims("n")
    A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", n, n)
    lhs, rhs = add(mul(A, B), B), add(B, mul(A, B))
    v = decide.check_identity(lhs, rhs, explicit_sizes=[{n: 2}, {n: 6}], symbolic=False)
    assert v.status is Status.PROVED_AT_SIZES and v.sizes == [{"n": 2}, {"n": 6}]  # main: [{n: 2}]
    for sizes in ([{n: 2}, {n: 400}], [{n: 400}, {n: 2}]):
        with pytest.raises(KernelInputError, match="n': 400"):
            decide.check_identity(lhs, rhs, explicit_sizes=sizes, symbolic=False)


# -- hypotheses: every one holds on every instance, or an error names them ---------------------------


def _causal_family():
    from symuat.expr.algebra import T
    from symuat.expr.attention import HEAD, CausalHeadMatrix
    from symuat.expr.heads import HeadSum

    N, h = dims("N h")
    one = OneMatrix(N, 1)
    Hc = CausalHeadMatrix("H", HEAD, h, N, N)
    return HeadSum(HEAD, h, mul(T(one), Hc)), mul(h, T(one))


def test_causal_column_sums_draw_the_lower_triangle_and_a_true_statement_is_not_refuted():
    from symuat.kernel.assumptions import assuming
    from symuat.kernel.hypotheses import LineSums, impose_all

    hyp = LineSums("H", "columns", causal=True)
    rng = np.random.default_rng(0)
    with assuming([hyp]):
        H = impose_all({"H": rng.integers(-3, 4, (3, 4, 4)).astype(object)}, "exact")["H"]
    assert hyp.holds(H)
    assert all(H[k][a, b] == 0 for k in range(3) for a in range(4) for b in range(4) if a < b)
    assert [sum(H[0][a, b] for a in range(4)) for b in range(4)] == [1, 1, 1, 1]
    lhs, rhs = _causal_family()  # 1ᵀH_i = 1ᵀ for every head, summed: true under the hypothesis
    assert decide.check_identity(lhs, rhs, hypotheses=[hyp]).status is not Status.REFUTED


def test_every_hypothesis_holds_at_once():
    from symuat.expr.algebra import T
    from symuat.kernel.hypotheses import LineSums

    n = dims("n")
    A, one = MatrixSymbol("A", n, n), OneMatrix(n, 1)
    both = [LineSums("A"), LineSums("A", "columns")]  # doubly stochastic (main: only the last held)
    assert decide.check_identity(mul(T(one), A), T(one), hypotheses=both).status is Status.PROVED
    assert decide.check_identity(mul(A, one), one, hypotheses=both).status is Status.PROVED
    assert decide.check_identity(mul(A, one), mul(2, one), hypotheses=both).status is Status.REFUTED


@pytest.mark.parametrize("statement", ["vacuous", "false", "proved-by-rule"])
def test_jointly_unsatisfiable_hypotheses_are_an_error_naming_them(statement):
    from symuat.errors import UnsatisfiableHypothesesError
    from symuat.kernel.hypotheses import LineSums

    n = dims("n")
    A, one = MatrixSymbol("A", n, n), OneMatrix(n, 1)
    lhs, rhs = {"vacuous": (mul(A, A), mul(A, A)), "false": (mul(A, A), A),
                "proved-by-rule": (mul(A, one), mul(2, one))}[statement]
    with pytest.raises(UnsatisfiableHypothesesError, match=r"=1.*=2"):
        decide.check_identity(lhs, rhs, hypotheses=[LineSums("A"), LineSums("A", value=2)])


def test_a_counterexample_is_rechecked_against_the_hypotheses(monkeypatch):
    from symuat.errors import KernelInconsistencyError
    from symuat.kernel import hypotheses
    from symuat.kernel.hypotheses import LineSums

    n = dims("n")
    A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", n, n)
    monkeypatch.setattr(hypotheses.LineSums, "impose", lambda self, array, mode: array)  # a broken draw
    with pytest.raises(KernelInconsistencyError, match="violates the hypotheses"):
        decide.check_identity(mul(A, B), mul(B, A), hypotheses=[LineSums("A")])


def test_a_non_numeric_line_sum_is_a_clear_error():
    from symuat.errors import KernelInputError
    from symuat.kernel.hypotheses import LineSums

    with pytest.raises(KernelInputError, match="rational"):
        LineSums("H", value="one")
    with pytest.raises(KernelInputError, match="rational"):
        LineSums("H", value=sp.Symbol("c"))


# -- every procedure returns a verdict or a clear error ----------------------------------------------

_x, _y = sp.symbols("x y", real=True)


def test_real_implication_refutes_on_a_boundary_model_float64_cannot_confirm():
    v = decide.check_real_implication([_x], [_x / 3 - sp.Rational(1, 3) >= 2], _x > 7)
    assert v.status is Status.REFUTED and v.counterexample.values == {"x": 7}
    assert "boundary" in v.counterexample.numeric_recheck
    assert decide.check_real_implication([_x], [_x / 3 - sp.Rational(1, 3) >= 2], _x >= 7).status is Status.PROVED


@pytest.mark.parametrize("hyps, concl, status", [
    ([sp.GreaterThan(1, 0, evaluate=False), _x > 1], _x > 0, Status.PROVED),
    ([sp.Integer(2) > 1, _x > 1], _x > 0, Status.PROVED),  # a hypothesis SymPy evaluates to True
    ([_x > 1], sp.StrictGreaterThan(2, 1, evaluate=False), Status.PROVED),
    ([_x > 1], sp.StrictGreaterThan(1, 2, evaluate=False), Status.REFUTED),
    ([sp.GreaterThan(0, 1, evaluate=False)], _x > 0, Status.PROVED),  # vacuous
])
def test_real_implication_accepts_evaluated_and_unevaluated_constant_atoms(hyps, concl, status):
    v = decide.check_real_implication([_x, _y], hyps, concl, sample=lambda rng: rng.normal(size=2) * 5)
    assert v.status is status


def test_real_implication_outside_the_fragment_is_a_clear_error():
    from symuat.errors import KernelInputError

    with pytest.raises(KernelInputError, match="not linear"):
        decide.check_real_implication([_x, _y], [_x * _y > 1], _x > 0)
    with pytest.raises(KernelInputError, match="one inequality"):
        decide.check_real_implication([_x], [_x > 1], sp.Eq(_x, 2))


def test_check_rank_refutes_false_bounds_that_agree_on_the_grid():
    from symuat.claims import attention as att

    d, dk = att._dq, att._dk
    v = att.h8_rank(claimed=sp.Min(d, dk, 3))  # main: KernelInconsistencyError
    assert v.status is Status.REFUTED and v.counterexample.sizes == {"d": 4, "d_k": 4}
    structure = decide.rank_bound_of_product(mul(att._WQ, att._WK.T))
    kw = dict(structure=structure, witness=att._h8_rank_witness, grid=att._H8_GRID, relation="≤")
    assert decide.check_rank("rank", 4, **kw).status is Status.REFUTED  # main: crash
    assert decide.check_rank("rank", dk, **kw).status is Status.PROVED
    assert decide.check_rank("rank", 100, **kw).status is Status.NUMERIC_ONLY  # false for d, d_k > 100


def test_check_rank_needs_a_statement_about_the_rank():
    from symuat.claims import attention as att
    from symuat.errors import KernelInputError

    shape_proof = decide.check_shape(att._WQK, (att._dq, att._dq))
    with pytest.raises(KernelInputError, match="statement about the rank"):
        decide.check_rank("rank", sp.Min(att._dq, att._dk), sp.Min(att._dq, att._dk), structure=shape_proof,
                          structure_reason="a shape", witness=att._h8_rank_witness, grid=att._H8_GRID)
    assert decide.rank_bound_of_product(mul(att._WQ, att._WK.T)).bound == sp.Min(att._dq, att._dk)


@pytest.mark.parametrize("bad, error", [(np.nan, "NonFiniteError"), (np.inf, "NonFiniteError"),
                                        (1j, "KernelInputError"), ("a", "KernelInputError")])
def test_exact_rank_names_a_bad_entry(bad, error):
    from symuat import errors

    with pytest.raises(getattr(errors, error), match=r"entry \(0, 1\)"):
        decide.exact_rank(np.array([[1, bad]], dtype=object))


def test_a_shift_whose_r_occurs_in_no_shape_is_decided():
    from symuat.expr.heads import HeadSum
    from symuat.expr.linear import ShiftMatrix

    N, M, r = dims("N M r")
    t = sp.Symbol("t", integer=True)
    X = MatrixSymbol("X", N, M)
    conv = HeadSum(t, 2 * r + 1, mul(ShiftMatrix(N, t, r), X))
    assert decide.check_identity(conv, conv).status is Status.PROVED  # main: ValueError
    assert decide.check_identity(conv, mul(2 * r + 1, X)).status is Status.REFUTED


def test_an_unbound_tap_is_a_clear_error():
    from symuat.errors import KernelInputError
    from symuat.expr.linear import ShiftMatrix

    N, M, r = dims("N M r")
    X = MatrixSymbol("X", N, M)
    with pytest.raises(KernelInputError, match="tap t outside a sum"):
        decide.check_identity(mul(ShiftMatrix(N, sp.Symbol("t", integer=True), r), X), X)


# -- numeric confirmations record what was measured --------------------------------------------------


def test_check_numeric_records_every_residual_and_their_max():
    residuals = {(2, 0): 1.5e-16, (2, 1): 2.7e-16, (3, 0): 0.0, (3, 1): 1.9e-16}

    def trial(sizes, seed):
        r = residuals[(sizes["n"], seed)]
        return True, f"residual {r:.2e}", {"residual": r}

    v = decide.check_numeric(trial, [{"n": 2}, {"n": 3}], seeds=(0, 1), what="t")
    assert v.numeric.max_residual == 2.7e-16
    assert [(i["sizes"]["n"], i["seed"], i["residual"]) for i in v.numeric.instances] == \
        [(n, s, r) for (n, s), r in residuals.items()]
    assert "2.70e-16" in v.detail  # the worst instance, not the last one
    assert v.as_dict()["numeric"]["instances"][1]["residual"] == 2.7e-16


def test_check_numeric_without_a_measured_residual_has_no_numeric_witness():
    v = decide.check_numeric(lambda sizes, seed: (True, "a pattern", {"pattern": [1, 0]}), [{"n": 2}], what="t")
    assert v.numeric is None  # main: "max residual 0 ≤ 0 … exact zero test"
    assert v.quantities["instances"] == [{"sizes": {"n": 2}, "seed": 0, "holds": True, "outcome": "a pattern"},
                                         {"sizes": {"n": 2}, "seed": 1, "holds": True, "outcome": "a pattern"}]


def test_numeric_confirmation_of_an_identity_lists_each_instance():
    n = dims("n")
    A, B = MatrixSymbol("A", n, n), MatrixSymbol("B", n, n)
    w = decide.check_identity(mul(A, add(A, B)), add(mul(A, A), mul(A, B))).numeric
    assert len(w.instances) == len(w.sizes) * len(w.seeds)
    assert w.max_residual == max(i["residual"] for i in w.instances)


# -- SIGINT ------------------------------------------------------------------------------------------


def test_sigint_during_prove_all_exits_130_with_one_line_and_ends_the_workers(tmp_path):
    """Deterministic under load: the run is signalled at its pause point (tests/_signals.py)."""
    import signal

    from _signals import alive, signal_at, workers_run as _workers_run

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    done, info = signal_at(["prove", "--all", "--jobs", "2"], "runner", signal.SIGINT, tmp_path, before=_workers_run)
    assert done.returncode == 130
    assert done.stderr.strip().splitlines() == ["symuat: interrupted"], done.stderr[-2000:]
    assert len(info["workers"]) == 2
    assert not [w for w in info["workers"] if alive(w)]


# -- a difference below float64 is reported, not a kernel error ----------------------------------------


def test_differences_below_float64_refute_with_the_exact_recheck_standing():
    from fractions import Fraction

    x = sp.Symbol("x")

    def tiny(sizes):
        return (np.array([[x * (1 + sp.Rational(1, 10**30))]], dtype=object), np.array([[x]], dtype=object))

    v = decide.check_explicit(tiny, [{}])  # main: KernelInconsistencyError
    assert v.status is Status.REFUTED and "exact re-check stands" in v.counterexample.numeric_recheck

    def euler(sizes):
        return (np.array([[EULER[0]]], dtype=object), np.array([[EULER[1]]], dtype=object))

    assert decide.check_explicit(euler, [{}]).status is Status.NUMERIC_ONLY  # main: refuted
    inst = decide.Instance("tiny", {}, True, lambda: (np.array([Fraction(1) + Fraction(1, 10**30)], dtype=object),
                                                      np.array([Fraction(1)], dtype=object)))
    v = decide.check_matches_reference([inst], what="t")  # main: KernelInconsistencyError
    assert v.status is Status.REFUTED and "exact re-check stands" in v.counterexample.numeric_recheck


def test_a_statement_with_no_instance_at_the_listed_sizes_is_a_clear_error():
    from symuat.errors import KernelInputError

    n, m = dims("n m")
    A = MatrixSymbol("A", n, m)
    with pytest.raises(KernelInputError, match="undefined at every listed size"):  # main: KernelInconsistencyError
        decide.check_identity(mul(A, A), mul(A, A), explicit_sizes=[{n: 2, m: 3}])
    with pytest.raises(KernelInputError, match="witness family or a bound"):
        decide.check_vanishing(sp.Symbol("delta"), what="A2")
