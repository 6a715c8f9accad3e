r"""Decision procedures: the only place where a status is produced.

Every verdict in symuat comes from one of these procedures, each of which returns ``refuted``
for a wrong statement. One module per family, each carrying its own soundness argument, so a
reader checks one procedure at a time:

:mod:`~symuat.kernel.decide.instances`
    what every procedure draws on: the leaves and dimensions of a statement, random instances
    (exact integers, symbolic entries, float64) drawn on its hypotheses, the float64 residual and
    its tolerance, the numeric confirmation.
:mod:`~symuat.kernel.decide.identity`
    :func:`check_identity` (normal form → counterexample search with a degree guarantee →
    explicit expansion), :func:`check_chain`, :func:`check_negation`, :func:`check_explicit`,
    :func:`check_shape`, :func:`define`, :func:`informal`.
:mod:`~symuat.kernel.constants` (used by every exact comparison)
    closed-form scalar constants decided exactly (zero recognition by SymPy and minimal
    polynomials, certified interval arithmetic at rising precision): never a verdict from float
    noise; an undecided difference caps the verdict at ``numeric-only``.
:mod:`~symuat.kernel.decide.quantities`
    :func:`check_quantity` (a formula against exact counts), :func:`exact_rank`
    (:mod:`symuat.kernel.rank`),
    :func:`check_rank` (structural upper bound + exact witnesses).
:mod:`~symuat.kernel.decide.rank_family`
    :func:`rank_lower_bound`: a parametric witness of selector blocks whose rank is known
    structurally, case by case of the sizes — the lower bound of a generic rank for symbolic sizes.
:mod:`~symuat.kernel.decide.token_pattern`
    :func:`~symuat.kernel.decide.token_pattern.check_token_pattern`: which input tokens an output
    token depends on, read off a lift's normal form and compared with a claimed pattern (exact
    Fourier–Motzkin), for symbolic sizes.
:mod:`~symuat.kernel.decide.printed_sums`
    :func:`~symuat.kernel.decide.printed_sums.check_printed_sum`: a printed row
    ``t_1 + t_2 + ⋯ + t_m`` against a definition, for symbolic ``m``.
:mod:`~symuat.kernel.decide.implication`
    :func:`check_real_implication` (sign cases + Fourier–Motzkin, a decision procedure for linear
    real arithmetic with absolute values), :func:`check_vanishing` (limits).
:mod:`~symuat.kernel.decide.dependence`
    :func:`check_dependence` (structural independence or an exact witness of dependence).
:mod:`~symuat.kernel.decide.reference`
    :func:`check_matches_reference` (a formula against a reference computation on listed
    instances), :func:`check_numeric`, :func:`check_instances`.
:mod:`~symuat.kernel.decide.recheck`
    :func:`~symuat.kernel.decide.recheck.recheck`: every counterexample re-evaluated exactly (a fresh
    evaluator) and in float64 before a refutation is returned.
:mod:`~symuat.kernel.decide.steps`
    :func:`~symuat.kernel.decide.steps.check_steps`: a statement proved in named parts by other
    procedures, each required to reach a stated status (the conjunction).
:mod:`~symuat.kernel.decide.witness`
    :func:`~symuat.kernel.decide.witness.refute_with_exact_witness`: a witness found by a claim's
    own evaluation, refuted only when its sides differ exactly and float64 confirms it.
:mod:`~symuat.kernel.decide.mistakes`
    :func:`~symuat.kernel.decide.mistakes.mistakes_refuted`: a shipped mistake must come back
    refuted with an exact witness.
:mod:`~symuat.kernel.decide.rotations`
    RoPE statements on true rotations (rational cos/sin) and the 2×2 block lemma at symbolic angles.
:mod:`~symuat.kernel.decide.softcap`
    logit shifts under (soft-capped) softmax, capped sums and sigmoid witnesses, exact through the
    transcendence of :math:`e` and :math:`e^{1/c}`.
:mod:`~symuat.kernel.decide.bands`
    banded (sliding-window) masks for symbolic sequence length and window.

Bad input is an error, not a verdict: a node the kernel has no rule for
(:class:`~symuat.errors.UnsupportedExpressionError`), two leaves with one name and two shapes
(:class:`~symuat.errors.LeafConflictError`), hypotheses that cannot hold together
(:class:`~symuat.errors.UnsatisfiableHypothesesError`). A disagreement between the kernel's own
methods raises :class:`~symuat.errors.KernelInconsistencyError` (a bug, never a verdict).

Every public name of the procedures is importable from this package (``decide.check_identity``);
the procedures' helpers are private to their modules (``tests/test_kernel_trust.py`` checks that
the package exports none).

A new procedure is one module here — its soundness argument in the module docstring, a doctest or
test that feeds it a false statement and sees ``refuted`` — and one entry in the list above
(a re-export below when callers use it as ``decide.name``). ``tests/test_contracts.py`` checks
that no status is produced anywhere else and that the kernel imports nothing above it.
"""

from __future__ import annotations

from symuat.errors import (  # noqa: F401  (re-exported: callers use decide.KernelInconsistencyError)
    DiamondUndefinedError,
    KernelInconsistencyError,
    LeafConflictError,
    ShapeMismatchError,
    UnsupportedExpressionError,
)
from symuat.kernel.status import Corrected, Counterexample, NumericWitness, Status, Verdict  # noqa: F401
from symuat.kernel.decide.instances import (  # noqa: F401
    SEEDS,
    TOLERANCE,
    TOLERANCE_REASON,
    evaluate_at,
    named_sizes,
    relative_residual,
    shape_at,
    check_supported,
    dimension_symbols,
    leaf_shapes,
    numeric_confirmation,
    random_values,
    scalar_symbols,
    size_grid,
)
from symuat.kernel.decide.identity import (  # noqa: F401
    EXPANSION_BUDGET,
    EXPANSION_LIMIT,
    GRID_BUDGET,
    GRID_MAX,
    SearchPlan,
    search_plan,
    NODE_COST,
    PROBE_BUDGET,
    Statement,
    at_listed_sizes,
    check_chain,
    check_explicit,
    check_identity,
    check_negation,
    check_shape,
    combine_all,
    define,
    degree_bounds,
    explicit_expansion,
    find_counterexample,
    informal,
    probe_sizes,
    timed,
)
from symuat.kernel.decide.recheck import exact_relative, recheck  # noqa: F401
from symuat.kernel.rank import exact_rank  # noqa: F401
from symuat.kernel.decide.quantities import (  # noqa: F401
    RankBound,
    check_quantity,
    check_rank,
    rank_bound_of_product,
)
from symuat.kernel.decide.rank_family import BlockWitness, WitnessCase, nonneg, rank_lower_bound  # noqa: F401
from symuat.kernel.decide.dependence import check_dependence  # noqa: F401
from symuat.kernel.decide.reference import (  # noqa: F401
    Instance,
    check_instances,
    check_matches_reference,
    check_numeric,
)
from symuat.kernel.decide.implication import (  # noqa: F401
    check_real_implication,
    check_vanishing,
    fourier_motzkin,
)
