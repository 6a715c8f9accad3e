"""Regressions for the kernel's soundness defects (issue 8): each test failed before the fix.

A verdict must never be wrong in either direction: no ``refuted`` for a true identity, no
positive status for a statement that fails at a larger size, no crash where a verdict or a
clear error is due.
"""

import numpy as np
import pytest
import sympy as sp
from sympy import Identity, MatrixSymbol, Symbol, Trace, ZeroMatrix, sqrt

from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.diamond import Diamond
from symuat.expr.elementwise import Sigma
from symuat.errors import LeafConflictError, UnsupportedExpressionError
from symuat.kernel import decide
from symuat.kernel.evaluate import Evaluator
from symuat.kernel.status import Status
from symuat.expr.vec import Commutation, Vec

n, m, k, d, p = dims("n m k d p")
POSITIVE = (Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY)


# (a) matrix ⋄ matrix follows the node's declared reading at every size -------------------------
def test_diamond_c_col_is_a_transpose_product_even_when_a_dimension_is_one():
    A, B = MatrixSymbol("A", 3, n), MatrixSymbol("B", 3, m)
    verdict = decide.check_identity(Diamond(A, B, "C-col"), mul(T(A), B), symbolic=False)
    assert verdict.status is not Status.REFUTED
    # evaluated directly at n = 1: AᵀB has shape (1, m), not (m, 1)
    rng = np.random.default_rng(0)
    values = {"A": rng.standard_normal((3, 1)), "B": rng.standard_normal((3, 2))}
    out = Evaluator({n: 1, m: 2}, values, "float")(Diamond(A, B, "C-col"))
    assert np.allclose(out, values["A"].T @ values["B"])


def test_diamond_inside_kronecker_product_is_not_refuted():
    A, B = MatrixSymbol("A", 2, n), MatrixSymbol("B", 2, m)
    C, P = MatrixSymbol("C", m, m), MatrixSymbol("P", n, n * m)
    verdict = decide.check_identity(mul(P, kron(Diamond(A, B, "C-col"), C)), mul(P, kron(mul(T(A), B), C)),
                                    symbolic=False)
    assert verdict.status is not Status.REFUTED


# (b) no positive status for a statement false at a larger size ---------------------------------
def test_polynomial_in_a_dimension_vanishing_at_small_sizes_is_refuted():
    X = MatrixSymbol("X", n, n)
    verdict = decide.check_identity(mul((n - 1) * (n - 2) * (n - 3) * (n - 4), X), ZeroMatrix(n, n))
    assert verdict.status is Status.REFUTED
    assert verdict.counterexample.sizes["n"] >= 5


def _tr(E):
    """tr(E) as the 1×1 matrix vec(I)ᵀ vec(E)."""
    return mul(T(Vec(Identity(n), "row")), Vec(E, "row"))


def test_degree_four_cayley_hamilton_is_refuted_at_n_five():
    A = MatrixSymbol("A", n, n)
    A2, A3, A4 = mul(A, A), mul(A, A, A), mul(A, A, A, A)
    t1, t2, t3, t4 = _tr(A), _tr(A2), _tr(A3), _tr(A4)
    # e1..e4 from Newton's identities, as 1×1 matrices
    e1 = t1
    e2 = mul(sp.Rational(1, 2), add(mul(t1, t1), mul(-1, t2)))
    e3 = mul(sp.Rational(1, 6), add(mul(t1, t1, t1), mul(-3, t1, t2), mul(2, t3)))
    e4 = mul(sp.Rational(1, 24), add(mul(t1, t1, t1, t1), mul(-6, t1, t1, t2), mul(3, t2, t2),
                                     mul(8, t1, t3), mul(-6, t4)))
    ch = add(A4, mul(-1, kron(e1, A3)), kron(e2, A2), mul(-1, kron(e3, A)), kron(e4, Identity(n)))
    verdict = decide.check_identity(ch, ZeroMatrix(n, n))
    assert verdict.status is Status.REFUTED
    assert verdict.counterexample.sizes["n"] >= 5


def _typed_only_on_the_diagonal():
    """⋄ (C-col) of an n×n and an m×m matrix: defined only where n = m, and equal to PᵀQ there;
    the normal form cannot decide it (its index spaces differ)."""
    P, Q = MatrixSymbol("P", n, n), MatrixSymbol("Q", m, m)
    return Diamond(P, Q, "C-col"), mul(T(P), Q)


def test_statement_the_normal_form_cannot_decide_is_never_proved_at_sizes():
    lhs, rhs = _typed_only_on_the_diagonal()
    verdict = decide.check_identity(lhs, rhs)
    assert verdict.status is Status.NUMERIC_ONLY
    at = decide.check_identity(lhs, rhs, explicit_sizes=[{n: 2, m: 2}, {n: 3, m: 3}])
    assert at.status is Status.PROVED_AT_SIZES  # sizes that are part of the claim


def test_same_name_leaves_with_different_shapes_are_an_error():
    with pytest.raises(LeafConflictError, match="named A"):
        decide.check_identity(mul(MatrixSymbol("A", n, n), MatrixSymbol("C", n, m)),
                              mul(MatrixSymbol("C", n, m), MatrixSymbol("A", m, m)))


def test_negation_of_an_identity_that_holds_where_checked_is_undecided():
    """Neither proved (no counterexample) nor refuted (no proof of the identity, issue 17): a
    search that found nothing never refutes a negation; the method says it is undecided."""
    lhs, rhs = _typed_only_on_the_diagonal()
    verdict = decide.check_negation(lhs, rhs)
    assert verdict.status is Status.NUMERIC_ONLY and verdict.method.startswith("undecided")


# (c) crashes become verdicts or clear errors ---------------------------------------------------
def test_identity_of_size_one():
    y = MatrixSymbol("y", 1, 1)
    assert decide.check_identity(mul(Identity(1), y), y).status is Status.PROVED
    assert decide.check_identity(mul(Identity(1), y), mul(2, y)).status is Status.REFUTED


def test_scalar_coefficients_that_are_not_dimensions():
    alpha, X, Y = Symbol("alpha"), MatrixSymbol("X", n, n), MatrixSymbol("Y", d, d)
    assert decide.check_identity(mul(alpha, X), mul(X, alpha)).status is Status.PROVED
    wrong = decide.check_identity(mul(alpha, X), X)
    assert wrong.status is Status.REFUTED and "alpha" in wrong.counterexample.values
    assert decide.check_identity(mul(1 / sqrt(d), Y), mul(sqrt(d) / d, Y)).status is Status.PROVED
    assert decide.check_identity(mul(1 / sqrt(d), Y), Y).status is Status.REFUTED
    # a positive symbol that occurs only in a coefficient is a positive scalar (found by the fuzzer)
    C = MatrixSymbol("C", m, m)
    assert decide.check_identity(mul(alpha, 1 / sqrt(n), C), mul(C, 1 / sqrt(n), alpha)).status is Status.PROVED


def test_sympy_trace_as_a_scalar_factor_is_decided_and_exp_of_it_is_a_clear_error():
    # (issue 31: SymPy's Trace is read by kernel.language; before, it was refused here)
    from sympy import exp

    X = MatrixSymbol("X", n, n)
    assert decide.check_identity(mul(Trace(X), X), mul(X, Trace(X))).status is Status.PROVED
    assert decide.check_identity(mul(Trace(X), X), mul(X, X)).status is Status.REFUTED
    with pytest.raises(UnsupportedExpressionError, match="unsupported: exp"):
        decide.check_identity(mul(exp(Trace(X)), X), X)


@pytest.mark.parametrize("lhs,rhs", [
    (Sigma(ZeroMatrix(n, n)), ZeroMatrix(n, n)),
    (Sigma(mul(-1, MatrixSymbol("X", n, n))), mul(-1, Sigma(MatrixSymbol("X", n, n)))),
])
def test_false_sigma_identities_are_refuted_with_the_sigma_named(lhs, rhs):
    verdict = decide.check_identity(lhs, rhs)
    assert verdict.status is Status.REFUTED
    assert "σ(t) = t³ − 2t + 1" in verdict.counterexample.reason
    assert verdict.counterexample.numeric_recheck.startswith("float64")


def test_commutation_with_a_size_one_dimension_is_decided():
    x = MatrixSymbol("x", n, 1)
    assert decide.check_identity(mul(Commutation(n, 1), x), x).status is Status.PROVED
    assert decide.check_identity(mul(Commutation(1, n), x), x).status is Status.PROVED


def test_space_mismatch_message_does_not_crash_on_an_unprintable_operand():
    """SymPy's printer asks nodes for their shape; the message about an ill-typed statement must
    not crash on the node it describes."""
    from symuat.expr.vec import Unvec

    class Unprintable(MatrixSymbol):
        def _sympystr(self, printer):
            raise RuntimeError("this node cannot be printed")

    v = Unprintable("v", n * m, 1)
    verdict = decide.check_identity(Unvec(v, m, m, "row"), Unvec(v, m, m, "row"))
    assert verdict.status in (Status.PROVED, Status.NUMERIC_ONLY, Status.REFUTED)
    from symuat.kernel.index_calculus import compare_entries

    assert "Unprintable" in compare_entries(Unvec(v, m, m, "row"), MatrixSymbol("Z", m, m)).reason


# (d) a model check cannot pass on NaN/inf ---------------------------------------------------------
def _poison(folder, key, value, index=(0, 0)):
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(folder / "model.safetensors"))
    tensors[key] = tensors[key].copy()
    tensors[key][index] = value
    save_file(tensors, str(folder / "model.safetensors"))


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_weight_is_rejected_at_load_naming_the_tensor(tmp_path, value):
    from test_models import _tiny_bert

    from symuat.models import ModelError
    from symuat.models.families.bert import BertNumpy, load_bert

    folder = _tiny_bert(tmp_path / "t")
    _poison(folder, "encoder.layer.1.intermediate.dense.weight", value, (3, 2))
    with pytest.raises(ModelError, match=r"intermediate.dense.weight' has 1 non-finite value.*\(3, 2\)"):
        BertNumpy(load_bert(folder))


def test_non_finite_hidden_state_fails_and_json_is_strict(tmp_path, monkeypatch, capsys):
    """A hidden state with a NaN (weights are finite, so: a forward pass that broke down) is a
    FAIL with exit 1, and the JSON says null, never a bare NaN."""
    import json

    from symuat import cli
    from symuat.models.families import bert

    monkeypatch.setattr(bert, "tokenize", lambda text, folder: np.array([1, 5, 7, 2]))
    embed = bert.BertNumpy.embed

    def broken(self, ids):
        X = embed(self, ids).copy()
        X[1, 2] = np.nan
        return X

    monkeypatch.setattr(bert.BertNumpy, "embed", broken)
    from test_models import _tiny_bert

    folder = _tiny_bert(tmp_path / "t")
    code = cli.main(["model", "check", "--model", str(folder), "--no-reference", "--format", "json", "--text", "x"])
    out = capsys.readouterr().out
    assert code == 1
    assert "NaN" not in out and "Infinity" not in out
    report = json.loads(out)
    assert report["passed"] is False and report["non_finite"] is True
    code = cli.main(["model", "check", "--model", str(folder), "--no-reference", "--text", "x"])
    assert code == 1 and "FAIL" in capsys.readouterr().out


# (e) bad input: a clear error naming the file or operand ------------------------------------------
def _config(folder, **changes):
    import json

    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    cfg.update(changes)
    path.write_text(json.dumps(cfg))


@pytest.mark.parametrize("changes,message", [
    ({"num_hidden_layers": 0}, "num_hidden_layers must be a positive integer"),
    ({"hidden_size": 385}, "hidden_size 385 is not divisible by num_attention_heads 2"),
    ({"num_attention_heads": 0}, "num_attention_heads must be a positive integer"),
    ({"layer_norm_eps": -1}, "layer_norm_eps must be a positive finite number"),
])
def test_bad_config_is_blamed_on_config_json(tmp_path, changes, message):
    from test_models import _tiny_bert

    from symuat.models import ModelError
    from symuat.models.families.bert import BertNumpy, load_bert

    folder = _tiny_bert(tmp_path / "t")
    _config(folder, **changes)
    with pytest.raises(ModelError, match=r"config\.json: " + message):
        BertNumpy(load_bert(folder))


def test_an_existing_folder_is_a_path_not_a_model_name(tmp_path, monkeypatch, capsys):
    from test_models import _tiny_bert

    from symuat import cli
    from symuat.models.families import bert

    _tiny_bert(tmp_path / "ckpt")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bert, "tokenize", lambda text, folder: np.array([1, 5, 7, 2]))
    assert cli.main(["model", "check", "--model", "ckpt", "--no-reference", "--text", "x"]) == 0
    assert "PASS" in capsys.readouterr().out


def test_numeric_api_rejects_bad_input_with_clear_errors():
    from symuat.expr.attention import mha_forward
    from symuat.errors import NonFiniteError
    from symuat.numeric.transformer import Block, forward

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="M=10 is not divisible by heads=3"):
        Block.random(rng, M=10, heads=3, F=4)
    with pytest.raises(ValueError, match="heads must be a positive integer, not 0"):
        Block.random(rng, M=8, heads=0, F=4)
    with pytest.raises(ValueError, match="heads must be a positive integer, not 0"):
        mha_forward(np.ones((3, 4)), np.ones((1, 4, 2)), np.ones((1, 4, 2)), np.ones((1, 4, 2)),
                    np.ones((2, 4)), heads=0)
    block = Block.random(rng, M=8, heads=2, F=4, ln="post")
    with pytest.raises(ValueError, match="no tokens"):
        forward([block], np.zeros((0, 8)))
    with pytest.raises(NonFiniteError, match="X0 has a non-finite entry"):
        forward([block], np.full((3, 8), np.nan))
    with pytest.raises(NonFiniteError, match="not finite"):
        forward([block], 1e200 * rng.standard_normal((3, 8)))


# (f) the CLI stops quietly when its reader goes away --------------------------------------------
def test_closed_pipe_stops_quietly():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "src"  # the package's parent
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from symuat import cli; sys.exit(cli.main(['list']))"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root,
                            env={**__import__("os").environ, "PYTHONPATH": str(root)})
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err
