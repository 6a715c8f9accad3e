"""``.. symuat-run::`` — a Python example executed when the docs are built, shown with its output.

The blocks of one page share one namespace, in page order (a notebook read top to bottom). A block
that raises — an ``assert`` that its sums add up, say — fails the build with the page, the block's
first line and the error; nothing is shown that did not run. ``tests/test_notebook_gallery.py`` executes the
same blocks the same way, so the examples are tested without a docs build.

Options: ``:needs: smollm2 gemma3`` — the packaged models the block loads; when one is not
installed the block is shown with a note instead of its output (a build on a machine without the
models still succeeds; CI installs them, and the test fails there if one is missing).
``:process: own`` — the block runs alone in a fresh Python process (its own imports, none of the
page's names): a model that takes gigabytes is loaded and freed there, so the build's memory is
the larger of the two processes', not their sum.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

BLOCK = re.compile(r"^\.\. symuat-run::[^\n]*\n((?:[ \t]+:[^\n]*\n)*)\n((?:(?:[ \t]+[^\n]*)?\n)+)", re.M)


def blocks(text: str) -> list[tuple[list[str], str, bool]]:
    """The ``(needs, code, own_process)`` of every ``symuat-run`` block of an rst source, in order."""
    out = []
    for m in BLOCK.finditer(text):
        opts = dict(re.findall(r":(\w+):[ \t]*([^\n]*)", m.group(1)))
        lines = m.group(2).splitlines()
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        out.append((opts.get("needs", "").split(), "\n".join(l[indent:] for l in lines).strip() + "\n",
                    opts.get("process", "").strip() == "own"))
    return out


def missing(needs: list[str]) -> list[str]:
    """The packaged models of ``needs`` that are not installed."""
    from symuat.models.family import families

    paths = {n: f for fam in families() for n, f in fam.packaged.items()}
    gone = []
    for name in needs:
        try:
            paths[name]()
        except Exception:  # any failure to find the package means "not installed"
            gone.append(name)
    return gone


def release_memory() -> None:
    """Hand the heap that a model run freed back to the system (``gc`` and glibc's
    ``malloc_trim``): a float64 model's weights are freed in pieces of a few MB that glibc keeps
    on its heap, so without this each model run of the build left ~1 GB resident and the next
    one stacked on it (the build peaked at 5.1 GB; each run alone peaks near 3 GB)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def run(code: str, namespace: dict, where: str) -> str:
    """Execute ``code`` in ``namespace``; return what it printed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, where, "exec"), namespace)  # the project's own documented examples
    return buf.getvalue()


def run_alone(code: str, where: str) -> str:
    """Execute ``code`` in a fresh Python process (``:process: own``); return what it printed.
    A failure raises :class:`RuntimeError` with the block's name and the error's last line."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"{where} (own process, exit {proc.returncode}): {last}")
    return proc.stdout


class RunDirective(Directive):
    has_content = True
    option_spec = {"needs": directives.unchanged, "process": lambda v: directives.choice(v, ("own",))}

    def run(self):
        env = self.state.document.settings.env
        code = "\n".join(self.content) + "\n"
        needs = self.options.get("needs", "").split()
        spaces = env.temp_data.setdefault("symuat_run", {})
        namespace = spaces.setdefault(env.docname, {"__name__": f"docs.{env.docname}"})
        shown = [nodes.literal_block(code, code, language="python")]
        gone = missing(needs)
        if gone:
            note = f"(not run in this build: {', '.join(gone)} not installed — symuat model install)"
            return shown + [nodes.paragraph(text=note)]
        where = f"{env.docname}.rst, block '{self.content[0] if self.content else ''}'"
        try:
            out = run_alone(code, where) if "process" in self.options else run(code, namespace, where)
        except Exception as exc:  # a failing example fails the build, naming it
            raise self.error(f"{where}: {type(exc).__name__}: {exc}") from exc
        finally:
            release_memory()
        if out.strip():
            shown.append(nodes.literal_block(out, out, classes=["symuat-output"]))
        return shown


def setup(app):
    app.add_directive("symuat-run", RunDirective)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}


if __name__ == "__main__":  # python docs/_ext/symuat_run.py PAGE.rst: run a page's blocks
    import sys

    ns: dict = {"__name__": "__main__"}
    for k, (needs, code, alone) in enumerate(blocks(Path(sys.argv[1]).read_text(encoding="utf-8"))):
        print(run_alone(code, f"block {k}") if alone else run(code, ns, f"block {k}"), end="")
