"""The layout's numbers for a checkout of symuat (issue 29's note: before and after the layer packages).

``python tools/layout_counts.py [ROOT ...] [--mypy]`` prints, for each checkout ``ROOT`` (default: this
one), one table of

* **import cycles** — modules on a cycle and imports inside cycles, by the checkout's own
  ``tests/test_contracts.py`` (every import counts, also inside functions);
* **upward imports** — imports that climb a layer, by that file's own ``LAYERS`` (so each checkout is
  measured against the layers it declares);
* **imports inside functions** — ``import`` statements nested in a function body (all, and those of
  symuat's own modules);
* **private names across modules** — a ``_name`` (not a dunder) of one symuat module used in another:
  ``from symuat.m import _name`` (each name once) and ``m._name`` through a module bound by an import
  (each use);
* **ruff** — findings with the checkout's rule set (``[tool.ruff.lint]``) and with ruff's defaults;
* **mypy** (with ``--mypy``; a minute or two each) — errors on the public API (the files of the
  checkout's ``[tool.mypy]``) and on the whole package;
* **places to add** an expression node, a decision procedure, an output format — the places that
  name an existing one outside its own module, the claims (its users), tests and doctests: for a node
  (``Diamond``, ``Sigma``, ``Diag``) the code that names its class plus every Coq ``unfold`` list of
  the node definitions (a new node joins each); for a procedure (``check_real_implication``) its module
  and the code that names it; for a format (``markdown``) its renderer and the code that names it. Each is printed with its places.

The numbers in issue 29's closing note were taken with this script on main 91fc551 (``git archive
91fc551 | tar -x -C DIR``) and on the branch; the package may lie at the top or in ``src/``.

>>> private_uses("from symuat.certify.export import _ident, Exported\\nimport symuat.models.llama as llama\\n"
...              "x = llama._rope_from_config(1)\\nfrom symuat.expr import vec\\nvec._delta\\n", "symuat.a")
['symuat.certify.export._ident', 'symuat.expr.vec._delta', 'symuat.models.llama._rope_from_config']
>>> nested_imports("import os\\ndef f():\\n    import sys\\n    from symuat.errors import E\\n")
(2, 1)
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
#: what an extension point is measured by: (label, identifier, module that defines it)
NODES = (("Diamond", "diamond"), ("Sigma", "elementwise"), ("Diag", "decoder"))
PROCEDURE = ("check_real_implication", "implication")
FORMAT = "markdown"


def package_parent(root: Path) -> Path:
    """Where the package ``symuat`` lies in a checkout: ``src/`` (the src layout) or the checkout itself."""
    return root / "src" if (root / "src" / "symuat").is_dir() else root


def contracts(root: Path):
    """The checkout's own ``tests/test_contracts.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"contracts_{abs(hash(root))}", root / "tests" / "test_contracts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def private_uses(text: str, module: str) -> list[str]:
    """``module.name`` for every private name of another symuat module this source uses."""
    tree = ast.parse(text)
    bound: dict[str, str] = {}  # local name → symuat module it is bound to
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("symuat.") and a.asname:
                    bound[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("symuat") and not node.level:
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__") and node.module != module:
                    out.append(f"{node.module}.{a.name}")
                elif not a.name.startswith("_"):
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"  # maybe a module
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            out.append(f"{bound[node.value.id]}.{node.attr}")
    return out


def nested_imports(text: str) -> tuple[int, int]:
    """(imports inside a function body, of which imports of symuat); an import in a function nested in
    a function is counted once."""
    tree = ast.parse(text)
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    inner = {id(m) for f in funcs for m in ast.walk(f) if m is not f and isinstance(m, (ast.FunctionDef,
                                                                                       ast.AsyncFunctionDef))}
    total = own = 0
    for fn in funcs:
        if id(fn) in inner:
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                total += 1
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                own += any(n.split(".")[0] == "symuat" for n in names)
    return total, own


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _code_lines(root: Path, pattern: str, skip: tuple[str, ...]) -> list[str]:
    """``path:line`` of every line of symuat's code (not a doctest, not a comment-only line) matching."""
    rx = re.compile(pattern)
    out = []
    src = package_parent(root)
    for path in sorted((src / "symuat").rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(skip):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            s = line.strip()
            if rx.search(line) and not s.startswith((">>>", "...", "#", ":", "*")) and "`" not in s:
                out.append(f"{rel}:{n}")
    return out


def _unfold_lists(root: Path) -> list[str]:
    """The Coq ``unfold`` lists of the node definitions (those that unfold ``kron``)."""
    out = []
    for path in sorted((root / "coq").glob("*.v")):
        text = path.read_text()
        for m in re.finditer(r"unfold\b[^.]*?\.", text, re.S):
            if re.search(r"\bkron\b", m.group(0)):
                out.append(f"{path.relative_to(root).as_posix()}:{text.count(chr(10), 0, m.start()) + 1}")
    return out


def _where(root: Path, stem: str) -> str:
    src = package_parent(root)
    hits = [p for p in (src / "symuat").rglob(f"{stem}.py") if "claims" not in p.parts]
    return hits[0].relative_to(src).as_posix() if hits else f"symuat/{stem}.py"


def places(root: Path) -> dict[str, list[str]]:
    out = {}
    for cls, stem in NODES:
        own = _where(root, stem)
        out[f"node {cls}"] = [own] + _code_lines(root, rf"\b{cls}\b", (own, "symuat/claims/")) + _unfold_lists(root)
    fn, stem = PROCEDURE
    own = _where(root, stem)
    out[f"procedure {fn}"] = [own] + _code_lines(root, rf"\b{fn}\b", (own, "symuat/claims/"))
    out[f"format {FORMAT}"] = _code_lines(root, rf"\b{FORMAT}\b|def \w+_{FORMAT}\b", ())
    return out


def _ruff(root: Path, *args: str) -> int:
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        return -1
    package = (package_parent(root) / "symuat").relative_to(root).as_posix()
    run = subprocess.run([ruff, "check", "--no-cache", "--exit-zero", "--output-format", "concise", *args, package],
                         cwd=root, capture_output=True, text=True)
    return sum(1 for line in run.stdout.splitlines() if re.match(r"\S+:\d+:\d+: ", line))


def _mypy(root: Path, whole: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        if whole:
            cfg = Path(tmp) / "mypy.ini"
            cfg.write_text("[mypy]\npython_version = 3.11\nignore_missing_imports = True\n")
            args = ["--config-file", str(cfg), "-p", "symuat"]  # found through PYTHONPATH
        else:
            args = ["--config-file", str(root / "pyproject.toml")]
        run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", tmp, "--no-error-summary", *args],
                             cwd=root, capture_output=True, text=True,
                             env={"PYTHONPATH": str(package_parent(root)), "PATH": ""})
    return sum(1 for line in run.stdout.splitlines() if ": error:" in line)


def counts(root: Path, mypy: bool = False) -> dict[str, object]:
    c = contracts(root)
    src = package_parent(root)
    graph = c.import_graph(src)
    comps = c.cycles(graph)
    private: list[str] = []
    for path in sorted((src / "symuat").rglob("*.py")):
        private += private_uses(path.read_text(), _module_name(src, path))
    nested = nested_own = 0
    for path in sorted((src / "symuat").rglob("*.py")):
        a, b = nested_imports(path.read_text())
        nested, nested_own = nested + a, nested_own + b
    out: dict[str, object] = {
        "modules on import cycles": c.cycle_size(graph)[0],
        "imports inside cycles": c.cycle_size(graph)[1],
        "cycles": len(comps),
        "upward imports": len(c.upward_imports(graph)),
        "imports inside functions (all)": nested,
        "imports inside functions (of symuat)": nested_own,
        "private names used across modules (uses)": len(private),
        "private names used across modules (distinct)": len(set(private)),
        "top-level modules of symuat": len([p for p in (src / "symuat").glob("*.py")]),
        "ruff findings (project rules)": _ruff(root),
        "ruff findings (ruff defaults)": _ruff(root, "--isolated"),
    }
    if mypy:
        out["mypy errors (public API)"] = _mypy(root, whole=False)
        out["mypy errors (whole package)"] = _mypy(root, whole=True)
    for name, where in places(root).items():
        out[f"places to add: {name}"] = len(where)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", type=Path, default=[HERE], help="checkouts of symuat (default: this one)")
    ap.add_argument("--mypy", action="store_true", help="also count mypy errors (slow)")
    ap.add_argument("--places", action="store_true", help="list the places behind each 'places to add' count")
    args = ap.parse_args(argv)
    for root in args.roots:
        if not (package_parent(root) / "symuat").is_dir() or not (root / "tests" / "test_contracts.py").is_file():
            print(f"layout_counts: {root} is not a checkout of symuat (no symuat/ or tests/test_contracts.py)",
                  file=sys.stderr)
            return 2
    tables = [counts(r.resolve(), args.mypy) for r in args.roots]
    width = max(len(k) for k in tables[0])
    print(f"{'':{width}}  " + "  ".join(f"{str(r):>12}"[-24:] for r in args.roots))
    for key in tables[0]:
        print(f"{key:{width}}  " + "  ".join(f"{t.get(key, '-')!s:>12}" for t in tables))
    if args.places:
        for root in args.roots:
            print(f"\n{root}:")
            for name, where in places(root.resolve()).items():
                print(f"  {name}: " + ", ".join(where))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
