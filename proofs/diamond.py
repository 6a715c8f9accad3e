#!/usr/bin/env python3
"""The diamond product (D4, D5) and its properties P1–P6, step by step.

Run: ``python proofs/diamond.py`` — prints every printed step of Eq. 4, 13 and 14 under every
reading, with the method that decided it, counterexamples and corrected statements.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import main

if __name__ == "__main__":
    sys.exit(main(["D4", "D5", "P1", "P2", "P3", "P4", "P5", "P6"]))
