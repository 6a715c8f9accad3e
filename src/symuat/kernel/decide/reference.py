r"""Statements decided on listed instances: a formula against a reference computation, and
properties without a symbolic formalisation.

:func:`check_matches_reference`
    an ill-typed formula is ``refuted`` as such; an exact instance that differs is a
    counterexample re-checked (recomputed); a float64 instance whose relative residual exceeds
    :data:`~symuat.kernel.decide.instances.TOLERANCE` is a numeric counterexample. All agree:
    ``proved-at-sizes`` if every instance is exact, else ``numeric-only`` with every residual.
:func:`check_numeric`
    a property tried on float64 instances: ``refuted`` by an instance where it fails, else
    ``numeric-only`` — recording what ``trial`` measured (each instance's residual when it
    reports one), never a residual nobody measured.
:func:`check_instances`
    "for all" / "exists" decided on exact rational instances: a failing instance refutes a
    "for all", a holding one proves an "exists"; otherwise ``numeric-only``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from symuat.errors import (
    KernelInconsistencyError,
    ShapeMismatchError,
)
from symuat.kernel import certificates
from symuat.kernel.status import (
    Corrected,
    Counterexample,
    NumericWitness,
    Status,
    Verdict,
)

from symuat.kernel.decide.instances import (
    SEEDS,
    TOLERANCE,
    TOLERANCE_REASON,
    named_sizes,
    relative_residual,
)


def check_numeric(trial: Callable, sizes_list: list[dict], *, seeds=SEEDS, what: str = "") -> Verdict:
    """A property with no symbolic formalisation here, tried on random float64 instances.

    ``trial(sizes, seed)`` returns ``(holds, description, values)``. The status is
    ``numeric-only`` when it holds on every instance, ``refuted`` (with the instance) otherwise.
    What was measured is recorded, instance by instance (``quantities["instances"]``: sizes,
    seed, outcome, and the residual when the trial reports one as ``values["residual"]``); the
    numeric witness carries the maximum residual only when every instance measured one — a
    property without a residual (a pattern, a sign) has no numeric witness, never "0 ≤ 0".
    """
    instances = []
    values = description = None
    for sizes in sizes_list:
        for seed in seeds:
            holds, description, values = trial(sizes, seed)
            res = values.get("residual") if isinstance(values, dict) else None
            res = float(res) if isinstance(res, (int, float, np.floating, np.integer)) else None
            instances.append({"sizes": {str(k): v for k, v in sizes.items()}, "seed": int(seed),
                              "holds": bool(holds), "outcome": description,
                              **({"residual": res} if res is not None else {})})
            if not holds:
                cex = Counterexample(
                    {str(k): v for k, v in sizes.items()}, values, reason=f"fails: {description}",
                    numeric_recheck=f"float64 instance, seed {seed}",
                )
                return Verdict(Status.REFUTED, f"float64 instance ({what})", counterexample=cex,
                               quantities={"instances": instances})
    residuals = [i["residual"] for i in instances if "residual" in i]
    numeric = None
    if instances and len(residuals) == len(instances):
        worst = max(residuals, key=lambda r: (np.isnan(r), r))
        numeric = NumericWitness([{str(k): v for k, v in s.items()} for s in sizes_list], list(seeds), worst,
                                 TOLERANCE, "the residual each trial reports, relative; " + TOLERANCE_REASON,
                                 instances=[{k: i[k] for k in ("sizes", "seed", "residual")} for i in instances])
    worst_case = max(instances, key=lambda i: i.get("residual", 0.0)) if residuals else instances[-1]
    return Verdict(
        Status.NUMERIC_ONLY,
        f"{what}; holds on every instance ({len(instances)}: {len(sizes_list)} sizes × seeds {list(seeds)})",
        numeric=numeric,
        detail=(f"worst instance ({worst_case['sizes']}, seed {worst_case['seed']}): " if residuals else
                f"last instance ({worst_case['sizes']}, seed {worst_case['seed']}): ") + worst_case["outcome"],
        # the instances live in the numeric witness when each measured a residual
        quantities={"last_instance": values, **({} if numeric else {"instances": instances})},
    )


def check_instances(kind: str, trial: Callable, sizes_list: list[dict], *, seeds=range(8), what: str = "") -> Verdict:
    """A statement about all instances (``kind="forall"``) or some instance (``"exists"``), decided
    on exact instances.

    ``trial(sizes, seed)`` evaluates the property exactly (rationals; no rounding) and returns
    ``(holds, description, values, numeric_recheck)`` — ``numeric_recheck`` the same instance in
    float64, a string, which must agree. ``forall``: an instance where it fails refutes it (the
    counterexample is exact), else ``numeric-only`` (no proof for all instances). ``exists``: an
    instance where it holds proves it (an exact witness), else ``numeric-only``.
    """
    if kind not in ("forall", "exists"):
        raise ValueError(f"kind must be 'forall' or 'exists', not {kind!r}")
    for sizes in sizes_list:
        for seed in seeds:
            holds, description, values, numeric = trial(sizes, seed)
            decisive = (not holds) if kind == "forall" else holds
            if not decisive:
                continue
            cex = Counterexample(named_sizes(sizes), values, reason=description,
                                 exact_recheck=f"exact rational arithmetic, seed {seed}",
                                 numeric_recheck=numeric)
            if kind == "forall":
                return Verdict(Status.REFUTED, f"exact instance ({what})", counterexample=cex)
            return Verdict(Status.PROVED, f"exact witness ({what})", quantities={"witness": cex.as_dict()})
    return Verdict(Status.NUMERIC_ONLY, f"{what}: not decided on the exact instances tried",
                   sizes=[named_sizes(s) for s in sizes_list])

# --------------------------------------------------------------------------------------------
# a formula against a reference computation on listed instances (A4)
# --------------------------------------------------------------------------------------------


@dataclass
class Instance:
    """One instance of "``formula`` reproduces ``reference``": ``compute()`` returns the pair
    ``(formula value, reference value)`` (object arrays of ints/fractions when ``exact``, else
    float64) or raises :class:`~symuat.errors.ShapeMismatchError` when the formula is ill-typed."""

    name: str
    sizes: dict
    exact: bool
    compute: Callable[[], tuple]
    values: dict | None = None


def check_matches_reference(instances: list[Instance], *, what: str, corrected: tuple[str, Callable[[], Verdict]] | None = None,
                    stop_at_exact_failure: bool = True) -> Verdict:
    """Decide "the formula equals the reference on every listed instance".

    An ill-typed formula (the computation raises a shape error) is ``refuted`` as such; an exact
    instance that differs is a counterexample re-checked exactly (recomputed) and in float64; a
    float64 instance whose relative residual exceeds :data:`TOLERANCE` is a numeric
    counterexample. When every instance agrees: ``proved-at-sizes`` if every instance is exact,
    else ``numeric-only``. The relative error of every instance is reported (``quantities``).
    """
    errors: dict[str, str] = {}
    measured: list[dict] = []  # float64 instances: their residuals, as measured
    failure = float_failure = None
    def values_of(inst):
        return (inst.values() if callable(inst.values) else inst.values) or {}

    for inst in sorted(instances, key=lambda i: i.exact):  # float64 first: their errors are all reported
        try:
            got, want = inst.compute()
        except ShapeMismatchError as exc:
            # what the check concludes, for the certify tier: the operation and its operands' shapes
            certificates.record("ill_typed", operation=exc.operation, operands=exc.operands, sizes=dict(inst.sizes))
            cex = Counterexample(inst.sizes, values_of(inst), reason=f"ill-typed: {exc}",
                                 exact_recheck="exact: the shapes are not conformable (no value exists)",
                                 numeric_recheck="float64: the same shapes")
            return Verdict(Status.REFUTED, f"{what}: the formula is ill-typed", counterexample=cex,
                           corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
        if inst.exact:
            diff = [(idx, x - y) for (idx, x), y in zip(np.ndenumerate(got), np.asarray(want).flat) if x != y]
            err = relative_residual(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
            errors[inst.name] = "0 (exact)" if not diff else (
                f"{err:.3g} (relative; exact: max |Δ| = {float(max(abs(d) for _, d in diff)):.6g}, a nonzero rational)")
            if diff and failure is None:
                again, want2 = inst.compute()  # re-check: recomputed from scratch
                if not any(x != y for x, y in zip(np.asarray(again).flat, np.asarray(want2).flat)):
                    raise KernelInconsistencyError(f"{inst.name}: exact difference not reproduced")
                idx, d = diff[0]
                exact_rel = float(max(abs(x) for _, x in diff)) / max(
                    [1.0] + [abs(float(v)) for v in np.asarray(got).flat] + [abs(float(v)) for v in np.asarray(want).flat])
                if err <= TOLERANCE and exact_rel > 1e-6:  # float64 would see it: the evaluators disagree
                    raise KernelInconsistencyError(f"{inst.name}: exact difference not seen in float64")
                failure = Counterexample(
                    inst.sizes, values_of(inst), lhs=got, rhs=want,
                    reason=f"{inst.name}: the formula differs from the reference",
                    exact_recheck=f"exact: entry {idx} differs by {d} ({len(diff)} of {np.asarray(got).size} entries differ)",
                    numeric_recheck=(f"float64 of the same values: relative residual {err:.3g} > tolerance {TOLERANCE}"
                                     if err > TOLERANCE else
                                     f"float64 does not resolve the difference (exact relative size {exact_rel:.3g}, "
                                     f"residual {err:.3g}); the exact re-check stands"))
                if stop_at_exact_failure:
                    break
        else:
            got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
            if not (np.all(np.isfinite(got)) and np.all(np.isfinite(want))):
                raise KernelInconsistencyError(f"{inst.name}: non-finite value")
            err = relative_residual(got, want)
            measured.append({"instance": inst.name, "sizes": inst.sizes, "residual": err})
            errors[inst.name] = f"{err:.3g} (float64, relative)"
            if err > TOLERANCE and float_failure is None:
                float_failure = Counterexample(inst.sizes, values_of(inst), lhs=got, rhs=want,
                                         reason=f"{inst.name}: the formula differs from the reference",
                                         exact_recheck="none (float64 instance)",
                                         numeric_recheck=f"float64: relative residual {err:.3g} > tolerance {TOLERANCE}")
    quantities = {"relative error per instance": errors,
                  "reproduced on": [k for k, v in errors.items() if v.startswith("0 (exact)")
                                    or ("float64" in v and float(v.split()[0]) <= TOLERANCE)]}
    failure = failure or float_failure
    if failure is not None:
        return Verdict(Status.REFUTED, f"{what}: an instance differs from the reference", counterexample=failure,
                       quantities=quantities, corrected=Corrected(corrected[0], corrected[1]()) if corrected else None)
    if all(i.exact for i in instances):
        return Verdict(Status.PROVED_AT_SIZES, f"{what}: exact (rational) evaluation equals the reference on every instance",
                       sizes=[i.sizes for i in instances], quantities=quantities)
    return Verdict(Status.NUMERIC_ONLY, f"{what}: equal to the reference on every instance "
                   f"({sum(i.exact for i in instances)} exact, {sum(not i.exact for i in instances)} float64)",
                   sizes=[i.sizes for i in instances], quantities=quantities,
                   numeric=NumericWitness([i.sizes for i in instances if not i.exact], [],
                                          max((m["residual"] for m in measured), default=0.0), TOLERANCE,
                                          TOLERANCE_REASON, instances=measured))
