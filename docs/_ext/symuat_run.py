"""``.. symuat-run::`` — a Python example executed when the docs are built, shown with its output.

The blocks of one page share one namespace, in page order (a notebook read top to bottom). A block
that raises — an ``assert`` that its sums add up, say — fails the build with the page, the block's
first line and the error; nothing is shown that did not run. ``tests/test_notebook_gallery.py`` executes the
same blocks the same way, so the examples are tested without a docs build.

Options: ``:needs: smollm2 gemma3`` — the packaged models the block loads; when one is not
installed the block is shown with a note instead of its output (a build on a machine without the
models still succeeds; CI installs them, and the test fails there if one is missing).
``:process: own`` — the block runs alone in a fresh Python process (its own imports, none of the
page's names): a model that takes gigabytes is loaded and freed there, never in the build's own
process (which stays resident meanwhile: the build's memory is the sum of the two).
``:process: page`` — the block runs in the page's worker, one fresh Python process shared by the
page's ``page`` blocks in page order (one namespace among them, none of the main one's), ended
right after the page's last ``page`` block: a notebook's model is loaded once, used by several
blocks and freed before the page's next model (and never in the build's process, where glibc
would keep its freed heap).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

BLOCK = re.compile(r"^\.\. symuat-run::[^\n]*\n((?:[ \t]+:[^\n]*\n)*)\n((?:(?:[ \t]+[^\n]*)?\n)+)", re.M)


def blocks(text: str) -> list[tuple[list[str], str, bool | str]]:
    """The ``(needs, code, process)`` of every ``symuat-run`` block of an rst source, in order;
    ``process`` is True for ``:process: own``, ``"page"`` for ``:process: page``, else False."""
    out = []
    for m in BLOCK.finditer(text):
        opts = dict(re.findall(r":(\w+):[ \t]*([^\n]*)", m.group(1)))
        lines = m.group(2).splitlines()
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        mode = opts.get("process", "").strip()
        out.append((opts.get("needs", "").split(), "\n".join(l[indent:] for l in lines).strip() + "\n",
                    "page" if mode == "page" else mode == "own"))
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


#: what a page worker runs: read a block (JSON, one line), execute it in the worker's namespace,
#: answer with what it printed or the error's type and message (JSON, one line)
WORKER = r"""
import contextlib, io, json, sys
proto, namespace = sys.stdout, {"__name__": "__main__"}
sys.stdout = sys.stderr  # only the answers go to the build
for line in sys.stdin:
    block = json.loads(line)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(block["code"], block["where"], "exec"), namespace)
        answer = {"out": buf.getvalue()}
    except BaseException as exc:  # the block's failure, reported to the build
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    proto.write(json.dumps(answer) + "\n")
    proto.flush()
"""


class PageWorker:
    """A page's ``:process: page`` blocks, run in order in one fresh Python process (its namespace
    kept between them); :meth:`close` ends it and frees all it held."""

    def __init__(self):
        self.proc = None

    def run(self, code: str, where: str) -> str:
        """Execute ``code`` in the worker; return what it printed. A failing block raises
        :class:`RuntimeError` naming ``where`` and the error (the worker goes on for the next block)."""
        import json
        import subprocess
        import sys
        import tempfile

        if self.proc is None:
            self.log = tempfile.TemporaryFile(mode="w+")
            self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.proc.stdin.write(json.dumps({"code": code, "where": where}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:  # the worker died (killed, out of memory): its exit code and its last words
            code = self.proc.wait()
            self.log.seek(0)
            last = (self.log.read().strip().splitlines() or ["(no message)"])[-1]
            self.proc = None
            raise RuntimeError(f"{where} (page worker, exit {code}): {last}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{where} (page worker): {answer['error']}")
        return answer["out"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc.stdout.close()
            self.log.close()
            self.proc = None


def run_page(text: str, name: str, namespace: dict | None = None) -> list[str]:
    """Run every block of an rst source as the docs build does (main namespace, own process or the
    page's worker, ended after its last ``page`` block); return what each printed."""
    namespace = {"__name__": "__main__"} if namespace is None else namespace
    found = blocks(text)
    last_page = max((k for k, (_, _, mode) in enumerate(found) if mode == "page"), default=-1)
    worker, out = PageWorker(), []
    try:
        for k, (_, code, mode) in enumerate(found):
            where = f"{name} block {k}"
            if mode == "page":
                out.append(worker.run(code, where))
                if k == last_page:
                    worker.close()
            else:
                out.append(run_alone(code, where) if mode else run(code, namespace, where))
    finally:
        worker.close()
    return out


class RunDirective(Directive):
    has_content = True
    option_spec = {"needs": directives.unchanged, "process": lambda v: directives.choice(v, ("own", "page"))}

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
        mode = self.options.get("process")
        workers = env.temp_data.setdefault("symuat_run_workers", {})
        try:
            if mode == "page":
                worker = workers.setdefault(env.docname, PageWorker())
                out = worker.run(code, where)
                seen = env.temp_data.setdefault("symuat_run_page_blocks", {})
                seen[env.docname] = seen.get(env.docname, 0) + 1
                if seen[env.docname] == page_blocks(env):  # the page's last: free its models now
                    workers.pop(env.docname).close()
            else:
                out = run_alone(code, where) if mode == "own" else run(code, namespace, where)
        except Exception as exc:  # a failing example fails the build, naming it
            if env.docname in workers:
                workers.pop(env.docname).close()
            raise self.error(f"{where}: {type(exc).__name__}: {exc}") from exc
        finally:
            release_memory()
        if out.strip():
            shown.append(nodes.literal_block(out, out, classes=["symuat-output"]))
        return shown


def page_blocks(env) -> int:
    """How many ``:process: page`` blocks the page being read has."""
    text = Path(env.doc2path(env.docname)).read_text(encoding="utf-8")
    return sum(mode == "page" for _, _, mode in blocks(text))


def _close_workers(app, *args) -> None:
    """End every page worker still running (a page read without reaching its last block)."""
    for worker in app.env.temp_data.pop("symuat_run_workers", {}).values():
        worker.close()


def setup(app):
    app.add_directive("symuat-run", RunDirective)
    app.connect("doctree-read", _close_workers)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}


if __name__ == "__main__":  # python docs/_ext/symuat_run.py PAGE.rst: run a page's blocks
    import sys

    for printed in run_page(Path(sys.argv[1]).read_text(encoding="utf-8"), Path(sys.argv[1]).name):
        print(printed, end="")
