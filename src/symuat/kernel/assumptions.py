"""The hypotheses of the statement being decided, as a context (no dependencies).

The normal form (:mod:`symuat.kernel.index_calculus`) reads the active hypotheses to apply
their rewrite rules; the hypotheses (:mod:`symuat.kernel.hypotheses`) use the normal form's
index bookkeeping. Both depend on this module, neither on the other's caller: the import graph
is ``hypotheses → index_calculus → assumptions`` with no cycle.

>>> with assuming(["h"]):
...     active()
('h',)
>>> active()
()
"""

from __future__ import annotations

import contextlib
import contextvars

_ACTIVE: contextvars.ContextVar[tuple] = contextvars.ContextVar("symuat_hypotheses", default=())


def active() -> tuple:
    """The hypotheses of the statement being decided (empty outside ``assuming``)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def assuming(hypotheses):
    """Decide under ``hypotheses`` inside the ``with`` block."""
    token = _ACTIVE.set(tuple(hypotheses or ()))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
