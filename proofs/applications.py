#!/usr/bin/env python3
"""The applications (A1–A6): the pruning inequalities decided in real arithmetic with absolute
values, "small parameters ⇒ small contribution" per reading and σ, LoRA's lift and rank, Eq. 18
under every reading against the fine-tuned network, the token blocks that attention connects (ICL),
and the multi-function claims.

Run: ``python proofs/applications.py``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["A1", "A2", "A3", "A4", "A5", "A6"]))
