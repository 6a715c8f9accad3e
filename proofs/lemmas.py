#!/usr/bin/env python3
"""UAT forms (D1–D3, D6), Lemma 1 and Lemma 2 — the residual unrolling, by induction.

Run: ``python proofs/lemmas.py``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["D1", "D2", "D3", "D6", "L1", "L2"]))
