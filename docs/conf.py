"""Sphinx configuration for symuat. Claim pages are generated from the registry at build time.

Math: MathJax 3 shipped with the pages (``sphinx-mathjax-offline`` copies it into ``_static``),
so formulas render opened from disk with no network. ``\\diamond`` is MathJax's own binary
operator (U+22C4); no macro redefines it.
"""

import os
import sys

sys.path.insert(0, os.path.abspath("../src"))
sys.path.insert(0, os.path.abspath("_ext"))

project = "symuat"
author = "the symuat developers"
copyright = "2026, the symuat developers"
extensions = ["sphinx.ext.mathjax", "sphinx-mathjax-offline", "sphinx.ext.autodoc", "symuat_claims", "symuat_run"]
exclude_patterns = ["_build", "claims/*.inc"]
html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["symuat.css"]
html_js_files = ["symuat.js"]
html_title = "symuat"
html_theme_options = {
    "page_width": "1180px",
    "sidebar_width": "250px",
    "fixed_sidebar": False,
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
autodoc_member_order = "bysource"
# primes in H'_i stay primes: no typographic quotes anywhere
smartquotes = False
mathjax3_config = {
    "tex": {"packages": {"[+]": ["ams"]}},
    "options": {"enableMenu": False},
}


def _run_page_examples(app):
    """The gallery's and the API page's examples run at every build (as the test suite runs them,
    ``tests/test_gallery.py``): a verdict that changed fails the build."""
    import doctest

    for page in ("gallery.rst", "api.rst"):
        failed, attempted = doctest.testfile(os.path.join(app.srcdir, page), module_relative=False,
                                             optionflags=doctest.ELLIPSIS)
        if failed:
            raise RuntimeError(f"docs/{page}: {failed} of {attempted} examples do not show the verdict symuat gives")


def setup(app):
    app.connect("builder-inited", _run_page_examples)
