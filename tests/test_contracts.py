"""Architecture contracts, read off the source with :mod:`ast` (every import counts, also the ones
inside functions):

* **only the kernel decides**: a :class:`~symuat.kernel.status.Verdict` is built, and a status set,
  only in :mod:`symuat.kernel.decide` (the decision procedures) and :mod:`symuat.kernel.status`
  (the result types); a :class:`~symuat.kernel.status.Counterexample` only in the kernel. A claim
  composes verdicts the procedures return; it never types a status or a witness in.
* **layers**, bottom to top — a layer is a package of ``symuat`` (or one of the few modules left at
  its top), and a module imports only from its own layer or below:

  1. ``base``: ``errors`` (what symuat raises) and ``interrupt`` (signals);
  2. ``text``: how statements and values are written (``symuat.text``: LaTeX, Unicode);
  3. ``core``: the kernel (``symuat.kernel``: normal form, evaluation, the decision procedures) and
     the papers' objects as SymPy nodes with their NumPy twins (``symuat.expr``), one layer because a
     node's entry rule is written in the kernel's index calculus and the kernel reads a few nodes
     (those imports are pinned apart, :data:`KERNEL_READS_NODES`);
  4. ``numeric``: the NumPy side (``symuat.numeric``: lazy operators, the reference Transformer, the
     figures) and the real models (``symuat.models`` but its command);
  5. ``catalogue``: the claims (``symuat.claims``);
  6. ``verdicts``: the roll-up (``symuat.verdicts``) and the report's ``cache``;
  7. ``certify``: the Coq tier (``symuat.certify`` but its command);
  8. ``render``: the renderings for people (``symuat.render``);
  9. ``entry``: the commands (``cli``, ``__main__``, ``symuat.certify.cli``,
     ``symuat.models.command``) and the package's root (``symuat/__init__``).

  The kernel imports nothing above ``core`` and lies on no import cycle (strict); across all layers
  an import that climbs fails (:data:`UPWARD_IMPORTS` is 0). A module in no layer fails, and no new
  module sits at the top of ``symuat`` (:data:`TOP_MODULES`): it goes into the package of its layer.
* **cycles**: the modules on an import cycle and the imports inside cycles (strongly connected
  components of the module graph) are pinned (:data:`CYCLES`) and can only go down.
* **lint**: ``ruff check`` (the rule set in ``pyproject.toml``) is clean, when ruff is installed.
* **types**: ``mypy`` on the public API (the files and settings in ``[tool.mypy]``) is clean, when mypy
  is installed; the package ships ``py.typed``.

Each checker is also run on a small planted tree (``tmp_path``), where it must fail.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the package's parent (the src layout)
ROOT = REPO / "src"

#: where a status may be produced (paths relative to the package's parent)
DECIDERS = ("symuat/kernel/decide/", "symuat/kernel/status.py")

#: layer name → the packages (or top-level modules) of ``symuat`` in it, bottom first
LAYERS = (("base", {"errors", "interrupt"}), ("text", {"text"}), ("core", {"kernel", "expr"}),
          ("numeric", {"numeric", "models"}), ("catalogue", {"claims"}), ("verdicts", {"verdicts", "cache"}),
          ("certify", {"certify"}), ("render", {"render"}), ("entry", {"cli", "__main__", ""}))
#: commands living inside a lower package: the entry layer
ENTRY_MODULES = {"symuat.certify.cli", "symuat.models.command"}
#: the only modules at the top of ``symuat`` (besides ``__init__``, ``__main__``); the rest are packages
TOP_MODULES = {"cli", "errors", "interrupt", "cache"}

#: imports that climb a layer (main f323ef3: 5; 91fc551: 1, report → the root's report function,
#: gone with the layer packages of issue 29). A ratchet: it stays 0.
UPWARD_IMPORTS = 0
#: imports from the kernel into the nodes of ``symuat.expr`` (same layer, but the kernel should not
#: special-case a node: Diamond, Sigma, Diag/Hadamard, the head families): 9 at issue 29's move.
#: A ratchet: lower it when a node carries the facet the kernel reads; never raise it.
KERNEL_READS_NODES = 9
#: (modules on an import cycle, imports inside cycles) — main f323ef3: (42, 83); 91fc551: (11, 14); none
#: since issue 29 (models fold ↔ fold_layernorm went with the family record, certify export ↔
#: normal_form with ``certify/coq_terms``). A ratchet, as above: it stays (0, 0).
CYCLES = (0, 0)


# -- the import graph ---------------------------------------------------------------------------


def modules(root: Path, package: str = "symuat") -> dict[str, Path]:
    """``{dotted name: path}`` of every module of ``package`` under ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path, package: str = "symuat") -> dict[str, set[str]]:
    """Module → the package's modules it imports (at any depth of the file: in functions too).
    ``from p import name`` is an import of ``p.name`` when that is a module, else of ``p``."""
    mods = modules(root, package)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in mods.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    parent = parent[:len(parent) - (node.level - 1)]
                    base = ".".join(parent + ([base] if base else []))
                wanted = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            targets |= {r for w in wanted if w.split(".")[0] == package and (r := resolve(w)) and r != name}
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def cycle_size(graph: dict[str, set[str]]) -> tuple[int, int]:
    """(modules on a cycle, imports between modules of one cycle)."""
    comps = cycles(graph)
    return (sum(map(len, comps)), sum(1 for c in comps for v in c for w in graph[v] if w in c))


def layer_of(module: str) -> int:
    if module in ENTRY_MODULES:
        return len(LAYERS) - 1
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    for i, (_, names) in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} is in no layer: add symuat.{top} to a layer of tests/test_contracts.py")


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module into a higher layer."""
    return sorted((m, t) for m, ts in graph.items() for t in ts if layer_of(t) > layer_of(m))


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def kernel_violations(graph: dict[str, set[str]], package: str = "symuat") -> list[tuple[str, str]]:
    """Imports from the kernel into any layer above its own (``core``)."""
    kernel = f"{package}.kernel"
    return sorted((m, t) for m, ts in graph.items() if _in(m, kernel) for t in ts if layer_of(t) > layer_of(kernel))


def kernel_reads_nodes(graph: dict[str, set[str]], package: str = "symuat") -> list[tuple[str, str]]:
    """Imports from the kernel into the papers' nodes (``symuat.expr``)."""
    return sorted((m, t) for m, ts in graph.items() if _in(m, f"{package}.kernel")
                  for t in ts if _in(t, f"{package}.expr"))


def top_modules(root: Path, package: str = "symuat") -> set[str]:
    """The plain modules at the top of ``package`` (not ``__init__``, ``__main__``)."""
    return {p.stem for p in (root / package).glob("*.py")} - {"__init__", "__main__"}


# -- who produces a status ----------------------------------------------------------------------


def status_productions(root: Path, package: str = "symuat") -> list[str]:
    """``path:line what`` for every place outside :data:`DECIDERS` that builds a ``Verdict``, calls
    ``Status(…)``, assigns ``….status`` or passes ``status=`` to ``replace``; and every place outside
    the kernel that builds a ``Counterexample`` (the witness a refutation rests on)."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(DECIDERS):
            continue
        in_kernel = rel.startswith(f"{package}/kernel/")
        tree = ast.parse(path.read_text(), rel)
        produced = ("Verdict", "Status") + (() if in_kernel else ("Counterexample",))
        names = {n: n for n in produced}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name in produced and a.asname:
                        names[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if called in names:
                    found.append(f"{rel}:{node.lineno} {names[called]}(…)")
                elif called == "replace" and any(k.arg == "status" for k in node.keywords):
                    found.append(f"{rel}:{node.lineno} replace(…, status=…)")
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Attribute) and t.attr == "status" for t in targets):
                    found.append(f"{rel}:{node.lineno} ….status = …")
    return found


# -- the contracts on symuat ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph():
    return import_graph(ROOT)


def test_only_the_decision_procedures_produce_a_status():
    assert status_productions(ROOT) == []


def test_the_kernel_imports_nothing_above_it(graph):
    assert kernel_violations(graph) == []


def test_every_module_is_in_a_layer_and_upward_imports_only_go_down(graph):
    up = upward_imports(graph)
    assert len(up) <= UPWARD_IMPORTS, "imports that climb a layer:\n" + "\n".join(f"{a} -> {b}" for a, b in up)


def test_the_kernel_reads_the_nodes_only_as_often_as_pinned(graph):
    reads = kernel_reads_nodes(graph)
    assert len(reads) <= KERNEL_READS_NODES, "the kernel imports nodes:\n" + "\n".join(f"{a} -> {b}" for a, b in reads)


def test_the_top_of_the_package_holds_only_the_entry_points_and_the_base():
    assert top_modules(ROOT) == TOP_MODULES, "a module at the top of symuat: move it into its layer's package"


def test_the_kernel_has_no_import_cycle(graph):
    assert [sorted(c) for c in cycles(graph) if any(m.startswith("symuat.kernel") for m in c)] == []


def test_import_cycles_only_go_down(graph):
    size = cycle_size(graph)
    comps = "\n".join(str(sorted(c)) for c in cycles(graph))
    assert size[0] <= CYCLES[0] and size[1] <= CYCLES[1], f"cycles grew to {size} from {CYCLES}:\n{comps}"


def _ruff() -> str:
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e .[test] installs it)")
    return ruff


def test_ruff_is_clean():
    run = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def _mypy(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e .[test] installs it)")
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                           "--cache-dir", str(cache), "--no-error-summary", *args],
                          cwd=cwd, capture_output=True, text=True)


def test_mypy_is_clean_on_the_public_api(tmp_path):
    run = _mypy(cwd=REPO, cache=tmp_path / "cache")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_package_ships_its_types():
    assert (ROOT / "symuat" / "py.typed").is_file()
    assert '"py.typed"' in (REPO / "pyproject.toml").read_text()


# -- each checker fails on a planted violation ----------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel in ("symuat", "symuat/kernel", "symuat/kernel/decide", "symuat/claims"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "__init__.py").touch()
    return tmp_path


def test_a_status_or_a_witness_built_outside_the_kernel_is_caught(tmp_path):
    root = _tree(tmp_path, {
        "symuat/claims/bad.py": "from symuat.kernel.status import Status, Verdict as V\n"
                                "def f(v):\n    v.status = Status.PROVED\n    return V(Status.PROVED, 'typed in')\n",
        "symuat/claims/also_bad.py": "from dataclasses import replace\ndef g(v):\n    return replace(v, status='proved')\n",
        "symuat/claims/witness.py": "from symuat.kernel import status\ndef w(v):\n"
                                    "    v.counterexample = status.Counterexample({}, {}, reason='typed in')\n",
        "symuat/kernel/minimise.py": "from symuat.kernel.status import Counterexample\nC = Counterexample({}, {})\n",
        "symuat/kernel/decide/fine.py": "from symuat.kernel.status import Status, Verdict\n"
                                        "def h():\n    return Verdict(Status.PROVED, 'decided')\n",
    })
    found = status_productions(root)
    assert found == ["symuat/claims/also_bad.py:3 replace(…, status=…)", "symuat/claims/bad.py:3 ….status = …",
                     "symuat/claims/bad.py:4 Verdict(…)", "symuat/claims/witness.py:3 Counterexample(…)"]


def test_a_kernel_import_that_climbs_a_layer_is_caught_even_inside_a_function(tmp_path):
    root = _tree(tmp_path, {
        "symuat/render/report.py": "X = 1\n",
        "symuat/kernel/why.py": "from symuat import errors\ndef f():\n    from symuat.render.report import X\n    return X\n",
        "symuat/errors.py": "",
    })
    graph = import_graph(root)
    assert kernel_violations(graph) == [("symuat.kernel.why", "symuat.render.report")]
    assert upward_imports(graph) == [("symuat.kernel.why", "symuat.render.report")]


def test_a_module_in_no_layer_is_an_error(tmp_path):
    root = _tree(tmp_path, {"symuat/newthing.py": "", "symuat/kernel/a.py": "from symuat import newthing\n"})
    with pytest.raises(AssertionError, match="symuat.newthing is in no layer"):
        upward_imports(import_graph(root))
    assert top_modules(root) == {"newthing"}


def test_a_kernel_import_of_a_node_is_counted(tmp_path):
    root = _tree(tmp_path, {"symuat/expr/diamond.py": "class Diamond: ...\n",
                            "symuat/kernel/decide/identity.py": "def f():\n    from symuat.expr.diamond import Diamond\n",
                            "symuat/expr/vec.py": "from symuat.kernel import decide\n"})
    graph = import_graph(root)
    assert kernel_reads_nodes(graph) == [("symuat.kernel.decide.identity", "symuat.expr.diamond")]
    assert kernel_violations(graph) == [] and upward_imports(graph) == []


def test_a_new_cycle_is_caught(tmp_path):
    files = {"symuat/kernel/a.py": "from symuat.kernel import b\n", "symuat/kernel/b.py": "X = 1\n"}
    assert cycle_size(import_graph(_tree(tmp_path, files))) == (0, 0)
    (tmp_path / "symuat/kernel/b.py").write_text("def f():\n    from symuat.kernel.a import b\n")
    assert cycle_size(import_graph(tmp_path)) == (2, 2)
    assert cycles(import_graph(tmp_path)) == [{"symuat.kernel.a", "symuat.kernel.b"}]
    size = cycle_size(import_graph(tmp_path))
    assert not (size[0] <= CYCLES[0] and size[1] <= CYCLES[1])  # the ratchet rejects it


def test_ruff_with_the_project_rules_fails_on_an_unused_import_and_a_stale_noqa(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys  # noqa: E731\n\nprint(sys.argv)\n")
    run = subprocess.run([_ruff(), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"),
                          "--output-format", "concise", str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and "F401" in run.stdout and "RUF100" in run.stdout, run.stdout + run.stderr


def test_mypy_with_the_project_settings_fails_on_an_ill_typed_file(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def half(n: int) -> int:\n    return n / 2\n\n\nhalf('4')\n")
    run = _mypy(str(bad), cwd=tmp_path, cache=tmp_path / "cache")
    assert run.returncode == 1 and "[return-value]" in run.stdout and "[arg-type]" in run.stdout, \
        run.stdout + run.stderr
