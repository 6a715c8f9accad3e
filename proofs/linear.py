#!/usr/bin/env python3
"""Linear, FFN and convolution layers in matrix-vector form (M1–M5), with the vec lemmas.

Run: ``python proofs/linear.py``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["lemma", "M1", "M2", "M3", "M4", "M5"]))
