"""Certificates: what a decision procedure rested a ``proved`` on, recorded for the certify tier.

A procedure other than the identity normal form (a quantity formula, an exact witness, a printed
sum, …) calls :func:`record` with a *kind* and the data its conclusion rests on (the expression
whose zero pattern was counted, the witness values, …). Outside the certify tier nobody listens
and :func:`record` does nothing; inside it (:func:`symuat.certify.run.capture`) the records of
the running check are kept in order, and :mod:`symuat.certify.kinds` turns each kind into Coq
theorems stating exactly what the procedure concluded.

>>> seen = []
>>> with listening(lambda kind, data: seen.append((kind, sorted(data)))):
...     record("example", value=1)
>>> seen
[('example', ['value'])]
>>> record("nobody listens", value=2)   # a no-op
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable

SINK: contextvars.ContextVar = contextvars.ContextVar("symuat_certificate_sink", default=None)


def listened() -> bool:
    """Whether a :func:`record` made now is kept (a certificate costly to state is built only then)."""
    return SINK.get() is not None


def record(kind: str, **data) -> None:
    """Record a certificate of ``kind`` for the running check (a no-op when nobody listens)."""
    sink = SINK.get()
    if sink is not None:
        sink(kind, data)


@contextlib.contextmanager
def listening(sink: Callable[[str, dict], None]):
    """Send every :func:`record` made inside the block to ``sink(kind, data)``."""
    token = SINK.set(sink)
    try:
        yield
    finally:
        SINK.reset(token)
