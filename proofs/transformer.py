#!/usr/bin/env python3
"""A Transformer rewritten into the DUAT form (T1–T13): the general term, the absorption, the
inductive step as printed, the update rules under every reading (T8/T9), the dependence on the input.

Run: ``python proofs/transformer.py``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11", "T12", "T13"]))
