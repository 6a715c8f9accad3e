"""Errors symuat raises for bad input and for inconsistencies of its own kernel."""

from __future__ import annotations


def describe(expr, limit: int = 80) -> str:
    """``str(expr)`` for an error message, never raising: SymPy's printer asks a node for its
    shape, and an ill-typed or undefined node (matrix ⋄ matrix without a definition) raises
    there — the message about the problem must not crash on the problem."""
    try:
        text = str(expr)
    except Exception:  # any printer failure falls back to the structure
        try:
            args = ", ".join(describe(a, limit) for a in getattr(expr, "args", ()))
            text = f"{type(expr).__name__}({args})"
        except Exception:
            text = type(expr).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SymuatError(Exception):
    """Base class of every error symuat raises on purpose."""


class ShapeMismatchError(SymuatError, ValueError):
    """Two operands cannot be combined: the message names both and their shapes."""

    def __init__(self, operation: str, left: str, left_shape, right: str, right_shape, need: str):
        self.operation = operation
        self.operands = ((left, tuple(left_shape)), (right, tuple(right_shape)))
        super().__init__(
            f"{operation}: {left} has shape {tuple(left_shape)} and {right} has shape "
            f"{tuple(right_shape)}; {need}"
        )


class DiamondUndefinedError(SymuatError, ValueError):
    """Matrix ⋄ matrix was asked for without choosing one of the D5 candidate definitions."""


class UnsupportedExpressionError(SymuatError, TypeError):
    """An expression uses a node the kernel has no rule for: the message names the node."""


class LeafConflictError(SymuatError, ValueError):
    """Two leaves share a name but not a shape (``A`` n×n and ``A`` m×m): they are not one matrix."""


class NonFiniteError(SymuatError, ValueError):
    """A NaN or an infinity where a finite number is required: the message names the operand."""


class UnknownClaimError(SymuatError, KeyError):
    """A claim ID that the registry does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class KernelInconsistencyError(SymuatError, AssertionError):
    """Two of symuat's independent methods disagree: a bug in symuat, never a verdict."""


class KernelInputError(SymuatError, ValueError):
    """A statement or argument outside what a decision procedure decides (an atom outside the
    fragment, a listed size it cannot check, a value that is not a number): the message names
    the node or argument. A clear error, never a verdict."""


class UnsatisfiableHypothesesError(KernelInputError):
    """Hypotheses that cannot hold together (rows sum to 1 and to 2): a statement under them is
    vacuous, not decided; the message names them."""


class WorkerLostError(SymuatError, RuntimeError):
    """A worker process of :mod:`symuat.kernel.runner` ended before reporting the checks it was
    given (killed from outside, say): the message names the process, how it ended and the checks.
    No verdict is reported for them."""
