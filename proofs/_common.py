"""Shared by the proof scripts: print a claim group's derivation, step by step, with verdicts."""

import os
import sys

# run from a clone without installing, too
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))


def main(claim_ids):
    import symuat.claims  # noqa: F401  (registers the catalogue)
    from symuat.render import report

    text, results = report.derivation(claim_ids)
    print(text)
    print("\n" + report.summary_line(results))
    return 1 if any(r.error for r in results) else 0
