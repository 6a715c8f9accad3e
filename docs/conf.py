"""Sphinx configuration for symuat. Claim pages are generated from the registry at build time."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))

project = "symuat"
author = "the symuat developers"
copyright = "2026, the symuat developers"
extensions = ["sphinx.ext.mathjax", "sphinx.ext.autodoc", "symuat_claims"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []
autodoc_member_order = "bysource"
mathjax3_config = {"tex": {"macros": {"diamond": r"\mathbin{\diamond}"}}}
