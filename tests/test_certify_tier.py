"""The certify tier covers the whole catalogue: its count is certified / *all* symbolic ``proved``
checks, and what it leaves out is decided by a rule on the statement (never a clock) and listed.

Needs ``coqc`` with MathComp for the run (skips without it unless ``CI`` or
``SYMUAT_REQUIRE_COQ`` is set); about 25 s (the library compiled once, one theorem).
"""

from __future__ import annotations

import re

import symuat.claims  # noqa: F401  (registration)
from symuat.certify.run import BUDGET, CORE, TIER, over_budget, selected
from symuat.kernel.registry import REGISTRY


class _Thm:
    def __init__(self, n):
        self.statement = "x" * n


def test_the_default_tier_selects_every_claim_of_the_catalogue():
    checks = list(REGISTRY.all_checks())
    assert all(selected(c, TIER, depth=False) for c in checks)
    groups = {c.id.split(".")[0] for c in checks}
    assert {"L2", "T7", "WP1", "X6", "A3"} <= groups


def test_the_budget_is_a_rule_on_the_statement_and_spares_the_core_and_the_inductions():
    assert over_budget("L2.2.1", [_Thm(BUDGET)]) is None
    assert "over the tier's budget" in over_budget("L2.2.1", [_Thm(BUDGET // 2), _Thm(BUDGET // 2 + 1)])
    assert over_budget("X3.sandwich", [_Thm(10 * BUDGET)]) is None       # a core group
    assert over_budget("H7[std,bidir]", [_Thm(10 * BUDGET)]) is None
    assert over_budget("L2.main.exact[induction]", [_Thm(10 * BUDGET)]) is None   # over every depth
    assert over_budget("L2.8[front=raw]", [_Thm(10 * BUDGET)]) is None            # and its step
    assert over_budget("L2.2.1", [_Thm(10 * BUDGET)], budget=None) is None
    assert re.fullmatch(CORE, "H7") and not re.fullmatch(CORE, "L2")


def test_a_check_over_the_budget_is_excluded_and_listed_with_its_reason(coq_lib, library_compiled_once, tmp_path):
    """``lemma``: the shortest statement (lemma.kron_transpose, 143 characters) is certified under a
    budget of 150; the longer ones are recorded ``excluded``, never sent to Coq, counted in the
    denominator and listed by ``symuat certify`` with the reason."""
    from symuat.certify.cli import summary_lines
    from symuat.certify.run import certify

    rec = certify(pattern=r"lemma", out=tmp_path / "c", jobs=1, budget=150, depth=False)
    checks = rec["checks"]
    assert checks["lemma.kron_transpose"]["status"] == "certified"
    excluded = {k for k, e in checks.items() if e["status"] == "excluded"}
    assert excluded and "lemma.kron_transpose" not in excluded
    assert rec["summary"]["excluded"] == len(excluded)
    assert rec["summary"]["symbolic_proved"] == len(checks)
    assert all(not e["theorems"] and "over the tier's budget of 150" in e["reason"]
               for k, e in checks.items() if k in excluded)
    text = "\n".join(summary_lines(rec, width=400))
    assert f"{len(excluded)} excluded" in text
    assert all(f"excluded {k}: its statements total" in text for k in excluded)
