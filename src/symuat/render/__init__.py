"""Rendering results for people: the verdict table for the terminal, JSON, Markdown, LaTeX and the
derivation text of ``proofs/`` (:mod:`~symuat.render.report`). The top layer under the commands: it
reads the kernel's results and the roll-up (:mod:`symuat.verdicts`) and decides nothing.

The bottom lines as objects are :func:`symuat.report` (a function of the package's root)."""
