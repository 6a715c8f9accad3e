"""The claim catalogue: importing this package registers every claim symuat checks.

One module per concept of the papers (``diamond``: D4, D5, P1–P6; ``linear``: M1–M5 and the
vec lemmas), each holding the claims as printed, their readings and the procedures that decide
them, side by side.
"""

from symuat.claims import attention, diamond, lemmas, linear, transformer  # noqa: F401  (registration)
from symuat.claims import decoder  # noqa: F401  (X1–X6, the decoder-LLM extensions)
from symuat.claims import applications  # noqa: F401  (registration: A1–A6)
from symuat.claims import attribution  # noqa: F401  (X7, X8, X6.sigma-split: exact attribution)

from symuat.claims import weight_processing  # noqa: F401  (WP1–WP12, spec §9)
from symuat.claims import parallel_residual  # noqa: F401  (X9, the parallel residual)
from symuat.claims import softcapping  # noqa: F401  (X10: soft-capping)

REGISTRY_LOADED = True
