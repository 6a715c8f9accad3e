"""The docs' examples are tests: every verdict shown on the gallery (the Matrix Cookbook's
identities) and on the API page is asserted by running the page as a doctest."""

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("page", ["gallery.rst", "api.rst"])
def test_every_example_on_the_page_shows_the_verdict_symuat_gives(page):
    failed, attempted = doctest.testfile(str(DOCS / page), module_relative=False,
                                         optionflags=doctest.ELLIPSIS, verbose=False)
    assert attempted > 10 and failed == 0, f"{failed} of {attempted} examples of docs/{page} fail"
