"""A quantity named in LaTeX, its prose marked as math: the one helper the claim modules share.

:func:`check_quantity` is :func:`symuat.kernel.decide.check_quantity` for a quantity whose name is
LaTeX (``\\operatorname{density}\\,\\mathbf W'_{HVi}``, so a correction names what it measures):
the counterexample's sentence writes the name between ``$…$``, as prose with math is written
everywhere else (the report and the docs typeset it; they never show raw TeX).
"""

from __future__ import annotations

from symuat.kernel import decide


def check_quantity(name: str, *args, **kwargs):
    verdict = decide.check_quantity(name, *args, **kwargs)
    cex = verdict.counterexample
    if cex is not None and "\\" in name and name in cex.reason:
        cex.reason = cex.reason.replace(name, f"${name}$")
    return verdict
