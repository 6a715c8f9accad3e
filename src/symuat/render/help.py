"""Command-line help laid out for the terminal: the formatter of ``symuat``'s parsers and of its
subcommands (``symuat model``, ``symuat certify``)."""

from __future__ import annotations

import argparse
import re


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help laid out for the terminal's width (argparse reads ``COLUMNS``): each line of a
    description or epilog is a paragraph, filled to the width with a hanging indent; an option
    with a default its help does not state gets ``(default: …)``.

    >>> import os; os.environ["COLUMNS"] = "40"
    >>> p = argparse.ArgumentParser(prog="x", formatter_class=HelpFormatter, epilog="exit status: 0 ran; 1 a crash; 2 bad input")
    >>> _ = p.add_argument("--jobs", default=2, help="processes")
    >>> text = p.format_help(); del os.environ["COLUMNS"]
    >>> "processes (default: 2)" in text, max(len(line) for line in text.splitlines()) <= 40
    (True, True)
    """

    def _fill_text(self, text, width, indent):
        import textwrap

        out = []
        for line in text.splitlines():
            lead = line[:len(line) - len(line.lstrip())]
            labelled = re.match(r"[\w ]{1,15}: ", line.strip())  # "exit status: 0 …" hangs under its label
            out.append(textwrap.fill(line.strip(), width, initial_indent=indent + lead,
                                     subsequent_indent=indent + lead + ("  " if labelled else ""),
                                     break_on_hyphens=False)
                       if line.strip() else "")
        return "\n".join(out)

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.option_strings and action.default not in (None, False, argparse.SUPPRESS)
                and "default" not in text and "%(default)" not in text):
            text += (" " if text else "") + "(default: %(default)s)"
        return text
