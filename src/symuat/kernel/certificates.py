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


def memoised(memo: dict, key, compute: Callable):
    """``compute()`` once per ``key`` of ``memo``, the certificates it records kept with its result
    and recorded again on every later call: a check that reuses a memoised verdict (A1's readings
    that decide the same formula) rests on the same certificates as the one that computed it.

    >>> memo, seen = {}, []
    >>> def compute():
    ...     record("example", value=1)
    ...     return "verdict"
    >>> with listening(lambda kind, data: seen.append(kind)):
    ...     memoised(memo, "k", compute), memoised(memo, "k", compute)
    ('verdict', 'verdict')
    >>> seen
    ['example', 'example']
    """
    if key not in memo:
        kept: list = []
        with listening(lambda kind, data: kept.append((kind, data))):
            out = compute()
        memo[key] = (out, kept)
    out, kept = memo[key]
    for kind, data in kept:
        record(kind, **data)
    return out
