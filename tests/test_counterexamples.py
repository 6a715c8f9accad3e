"""Issue 19: counterexamples a reviewer can read, and one line of why for every refuted check.

Over the whole catalogue: every identity refutation is at sizes no smaller instance refutes
(found by searching the smaller sizes again, with an independent random search), every exact
counterexample has entries |x| ≤ 10 (tests/test_verdict_roles.py), every refuted check prints a
"why:" line in ``symuat show``, and no value is printed as Python syntax (``e**12``) or as a
rational of dozens of digits. Then the pieces on their own: the minimiser on ill-typed statements,
the derived why line, the value printer, and X4.uat's witness with silu itself."""

import itertools
import re
from functools import partial

import numpy as np
from sympy import MatrixSymbol, symbols

from symuat.expr.algebra import T, mul
from symuat.kernel import decide, minimise
from symuat.kernel.status import Status
from symuat.kernel.why import derived_why, why_line
from symuat.render.report import detail
from symuat.text.values import readable, show_array, show_value, value_latex

m, n, p = symbols("m n p", integer=True, positive=True)


def _identity_refutations(registry, all_results):
    """(check, lhs, rhs, verdict) for every check whose procedure is ``check_identity(lhs, rhs)``
    and came back refuted with an exact counterexample."""
    for c in registry.all_checks():
        proc, r = c.procedure, all_results.get(c.key)
        if not (isinstance(proc, partial) and proc.func in (decide.check_identity, decide.check_identity)
                and len(proc.args) == 2 and not proc.keywords.get("hypotheses") and r and r.verdict
                and r.verdict.status is Status.REFUTED and r.verdict.counterexample is not None
                and r.verdict.counterexample.exact_recheck.startswith(minimise.MINIMISABLE)):
            continue
        yield c, proc.args[0], proc.args[1], r.verdict


def test_identity_counterexamples_have_minimal_sizes(registry, all_results):
    """No size with a smaller total (each dimension at most the counterexample's) refutes the
    statement: searched again with decide.find_counterexample (random integer entries, 6 seeds),
    not with the minimiser under test."""
    checked = 0
    for c, lhs, rhs, v in _identity_refutations(registry, all_results):
        sizes = v.counterexample.sizes
        dims = decide.dimension_symbols(lhs, rhs)
        total = sum(sizes.get(d.name, 1) for d in dims)
        smaller = [dict(zip(dims, combo)) for combo in itertools.product(*(range(1, sizes.get(d.name, 1) + 1)
                                                                           for d in dims))
                   if sum(combo) < total]
        if smaller:
            found = decide.find_counterexample(lhs, rhs, grid=smaller, seeds=range(6))
            assert found is None, (c.key, sizes, found.sizes)
        checked += 1
    assert checked >= 30, checked


def test_every_refuted_check_prints_one_why_line(all_results):
    missing = []
    for key, r in all_results.items():
        if r.verdict is None or r.verdict.status is not Status.REFUTED:
            continue
        lines = [ln for ln in detail(r).splitlines() if ln.startswith("  why:")]
        if len(lines) != 1 or len(lines[0].split(":", 1)[1].strip()) < 10:
            missing.append(key)
    assert not missing, missing[:10]


def test_show_prints_no_python_syntax_and_no_long_numbers(all_results):
    """``show`` of every check (its LaTeX lines apart): no ``**`` powers (a closed form in e reads
    288·e¹²/…), no integer of more than 15 digits (a long rational reads ≈ 25.9121 (exact: 47/46
    digits))."""
    bad = []
    for key, r in all_results.items():
        for line in detail(r).splitlines():
            if not line.strip().startswith("LaTeX") and ("**" in line or re.search(r"\d{16,}", line)):
                bad.append((key, line[:120]))
    assert not bad, bad[:10]


def test_no_check_prints_none_found_and_no_correction_is_a_fragment(all_results):
    """Check by check (the claim-level rule is in tests/test_verdict_roles.py): a corrected
    statement is a whole statement and always carries its own verdict."""
    from symuat.verdicts.roll_up import correction_defects

    for key, r in all_results.items():
        cv = r.verdict.corrected if r.verdict is not None else None
        if cv is None:
            continue
        assert cv.verdict is not None, (key, "correction: none found")
        assert "none found" not in detail(r), key
        if cv.verdict.status is Status.PROVED:
            assert not correction_defects(cv.statement), (key, cv.statement)


# --------------------------------------------------------------------------------------------
# the pieces
# --------------------------------------------------------------------------------------------


def test_minimiser_finds_the_smallest_ill_typed_instance():
    """W₂ (m×n) ⋄ W₁ (n×p) under C-col needs m = n: the smallest instance that shows it."""
    from symuat.expr.diamond import Diamond

    W2, W1, x = MatrixSymbol("W_2", m, n), MatrixSymbol("W_1", n, p), MatrixSymbol("x", m, 1)
    lhs, rhs = mul(T(W1), T(W2), x), Diamond(Diamond(W2, W1, "C-col"), x)
    cex = minimise.minimal_counterexample(lhs, rhs)
    assert sum(cex.sizes.values()) == 4 and cex.sizes["m"] != cex.sizes["n"]
    assert "undefined" in cex.exact_recheck
    assert all(v == 1 for arr in cex.values.values() for v in np.asarray(arr).flat)
    v = decide.check_identity(lhs, rhs)  # minimised by check_identity itself
    assert v.status is Status.REFUTED and sum(v.counterexample.sizes.values()) == 4
    assert minimise.minimal_counterexample(lhs, lhs) is None


def test_derived_why_names_the_entry_and_the_reading():
    from symuat.expr.diamond import Diamond
    from symuat.kernel.registry import Check

    A = MatrixSymbol("A", n, n)
    x = MatrixSymbol("x", n, 1)
    v = decide.check_identity(Diamond(A, x), mul(A, x))  # W ⋄ x is Wᵀx, not Wx
    assert v.sides[1] == "A^{T} x" and v.sides[3] == "A x"
    line = derived_why(v, "C-col")
    assert re.search(r"^under C-col, A ?⋄ ?x = Aᵀ ?x, but A ?x; at n = 2, entry \(\d, 0\): left side \d+, right side \d+",
                     line), line
    check = Check("Z.why", None, "", lambda: v, why="hand-written")
    assert why_line(check, v) == "hand-written"
    assert derived_why(decide.check_identity(A, A)) is None  # only a refutation has a why


def test_values_are_shown_readably():
    assert show_value("288*e**12/((e**4 + 1)*(e**8 - e**4 + 1))") == "288·e¹²/((e⁴ + 1)·(e⁸ − e⁴ + 1))"
    assert show_value("1" * 40 + "/7").startswith("≈ 1.5873e+38 (exact: 40/1 digits)")
    assert show_array([["1/2", -3]]) == "[[1/2, −3]]"
    assert value_latex("e/(e + 1)") == r"\frac{e}{e + 1}"
    assert value_latex("-3/4") == r"-\tfrac{3}{4}"
    assert readable("tends to oo, x**2*y") == "tends to ∞, x²·y"
    assert show_value("values differ") == "values differ"  # words stay words


def test_x4_uat_witness_is_silu_itself_and_a_wrong_statement_is_refuted():
    from symuat.claims import decoder as dec

    v = dec._x4_uat()
    assert v.status is Status.PROVED
    w = v.quantities["witness"]
    assert "logistic" in w["reason"] and w["lhs"] == "e/(e + 1)" and w["rhs"] == "0"
    # frozen at the input itself: the identity holds for every σ, so the negation is refuted
    same = dec.swiglu_form("alpha(x)")[1]  # W'_down diag(W_u'x') silu(W_g'x')
    assert dec._x4_uat(frozen=same).status is Status.REFUTED
