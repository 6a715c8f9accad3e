#!/usr/bin/env python3
"""Multi-head attention in matrix-vector form (H0–H9), step by step.

Run: ``python proofs/attention.py``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["H0", "H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9"]))
