"""The import graph of ``fastchat_tui``: no cycles, and a core that never reaches into the TUI.

Every module under ``src/fastchat_tui`` is parsed with :mod:`ast` (nothing is imported), and every
import counts wherever it is written: at the top, inside a function, or under ``if TYPE_CHECKING:``.
``importlib.import_module("fastchat_tui.…")`` counts too; an f-string name counts as every module
under its constant prefix.

- A function-level import is still a dependency: it only moves the cycle from import time to call
  time. A type-only import is one as well: the code is written against that module's types and
  mypy follows it. So both count for cycles (``TYPE_ONLY_IMPORTS_COUNT_FOR_CYCLES``), and neither
  can be used to hide one.
- The shell is ``fastchat_tui.ui``, ``fastchat_tui.commands``, ``fastchat_tui.cli`` (the entry
  point: it only parses arguments and dispatches to a command) and ``fastchat_tui.__main__``.
  Everything else is the core, which must import neither the shell nor ``textual`` / ``rich``
  (only the UI draws; the commands print plain text).
- Importing ``a.b.c`` also runs ``a/b/__init__.py``; that implicit edge is not counted (every
  submodule would otherwise form a cycle with a package that imports it lazily). An explicit
  ``from fastchat_tui.sources import X`` does count, as an edge to the package.

``python tests/test_architecture.py [PACKAGE_DIR]`` prints the graph summary, the core's forbidden
imports and every cycle, and exits 1 if there is any (``PACKAGE_DIR``, default ``src/fastchat_tui``,
can point at another checkout, e.g. ``git archive`` of an older commit, to compare).
"""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "fastchat_tui"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / PACKAGE

SHELL = (f"{PACKAGE}.ui", f"{PACKAGE}.commands", f"{PACKAGE}.cli", f"{PACKAGE}.__main__")
"""The modules (and packages) that may import the TUI toolkit and each other; nothing else may import them."""

CORE_MUST_NOT_IMPORT = ("textual", "rich", *SHELL)

TYPE_ONLY_IMPORTS_COUNT_FOR_CYCLES = True

ROUTING = f"{PACKAGE}.routing"
MAX_CYCLES = 200


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # a fastchat_tui module, or the dotted name of anything else (``textual.widgets``)
    line: int
    in_function: bool
    type_only: bool

    @property
    def where(self) -> str:
        return "type-only" if self.type_only else "in a function" if self.in_function else "top level"


def within(name: str, prefix: str) -> bool:
    """Whether ``name`` is the module or package ``prefix`` or inside it."""
    return name == prefix or name.startswith(prefix + ".")


def is_shell(module: str) -> bool:
    return any(within(module, shell) for shell in SHELL)


def short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


# -- reading the source -------------------------------------------------------------------------

def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """``{module name: file}``. A package wins over a same-named module, as in Python's import system."""
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        if name not in found or is_package:
            found[name] = path
    return found


def shadowed_modules(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """Files Python never imports because a package of the same name sits beside them."""
    return sorted(path for path in package_dir.rglob("*.py")
                  if path.name != "__init__.py" and (path.with_suffix("") / "__init__.py").exists())


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _dynamic_name(call: ast.Call) -> tuple[str, bool] | None:
    """``(name, is_prefix)`` for ``importlib.import_module(...)`` / ``__import__(...)`` with a literal name."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in ("import_module", "__import__") or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value, False
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value, True
    return None


class _Collector(ast.NodeVisitor):
    """Collects every import of one module with where it sits (function body, ``TYPE_CHECKING`` block)."""

    def __init__(self, module: str, is_package: bool, known: Iterable[str]) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = set(known)
        self.imports: list[Import] = []
        self._function_depth = 0
        self._type_only = False

    # where we are

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.visit(node.test)
        outer, self._type_only = self._type_only, True
        for statement in node.body:
            self.visit(statement)
        self._type_only = outer
        for statement in node.orelse:
            self.visit(statement)

    # what is imported

    def _add(self, node: ast.AST, target: str) -> None:
        if within(target, PACKAGE):
            target = self._resolve(target)
        self.imports.append(Import(self.module, target, getattr(node, "lineno", 0), self._function_depth > 0,
                                   self._type_only))

    def _resolve(self, name: str) -> str:
        """The longest prefix of ``name`` that is a module of the package (a missing name keeps its nearest parent)."""
        parts = name.split(".")
        while len(parts) > 1 and ".".join(parts) not in self.known:
            parts.pop()
        return ".".join(parts)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            self._add(node, submodule if alias.name != "*" and submodule in self.known else source)

    def visit_Call(self, node: ast.Call) -> None:
        dynamic = _dynamic_name(node)
        if dynamic is not None:
            name, is_prefix = dynamic
            if not is_prefix:
                self._add(node, name)
            elif within(name.rstrip("."), PACKAGE):
                for known in sorted(self.known):
                    if known.startswith(name):
                        self._add(node, known)
        self.generic_visit(node)


def imports_of(module: str, source: str, *, is_package: bool, known: Iterable[str]) -> list[Import]:
    collector = _Collector(module, is_package, known)
    collector.visit(ast.parse(source))
    return collector.imports


def all_imports(files: dict[str, Path] | None = None) -> list[Import]:
    files = module_files() if files is None else files
    found: list[Import] = []
    for module, path in files.items():
        found += imports_of(module, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py", known=files)
    return found


# -- the graph ---------------------------------------------------------------------------------

def internal_graph(imports: Iterable[Import], *, type_only: bool = TYPE_ONLY_IMPORTS_COUNT_FOR_CYCLES) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if within(imp.target, PACKAGE) and imp.target != imp.importer and (type_only or not imp.type_only):
            graph[imp.importer].add(imp.target)
    return graph


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), each sorted, that hold a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    nodes = sorted(set(graph) | {t for targets in graph.values() for t in targets})
    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(found)


def cycles(graph: dict[str, set[str]], limit: int = MAX_CYCLES) -> list[list[str]]:
    """Every elementary cycle (up to ``limit``), each from its alphabetically first module back to it."""
    found: list[list[str]] = []
    for component in components(graph):
        for i, start in enumerate(component):
            allowed = set(component[i:])  # a cycle is listed once, from its smallest member
            path, on_path = [start], {start}
            todo: list[Iterator[str]] = [iter(sorted(graph[start] & allowed))]
            while todo:
                nxt = next(todo[-1], None)
                if nxt is None:
                    todo.pop()
                    on_path.discard(path.pop())
                elif nxt == start:
                    found.append([*path, start])
                    if len(found) >= limit:
                        return found
                elif nxt not in on_path:
                    path.append(nxt)
                    on_path.add(nxt)
                    todo.append(iter(sorted(graph[nxt] & allowed)))
    return found


def describe_cycle(cycle: list[str], imports: Iterable[Import]) -> str:
    """``router -> session (router.py:12 in a function) -> router (session.py:40 top level)``."""
    by_edge: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for imp in imports:
        by_edge[(imp.importer, imp.target)].append(imp)
    text = short(cycle[0])
    for a, b in itertools.pairwise(cycle):
        where = ", ".join(dict.fromkeys(f"line {imp.line} {imp.where}" for imp in by_edge[(a, b)]))
        text += f" -> {short(b)} ({where})"
    return text


def core_violations(imports: Iterable[Import]) -> list[Import]:
    return [imp for imp in imports if not is_shell(imp.importer)
            and any(within(imp.target, banned) for banned in CORE_MUST_NOT_IMPORT)]


# -- the tests ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def imports() -> list[Import]:
    found = all_imports()
    # A checker that reads nothing passes everything: make sure it saw the package.
    assert len(module_files()) > 20 and any(imp.importer == f"{PACKAGE}.cli" for imp in found)
    return found


def test_no_import_cycle_inside_the_package(imports: list[Import]) -> None:
    found = cycles(internal_graph(imports))
    assert not found, f"{len(found)} import cycle(s):\n" + "\n".join(describe_cycle(c, imports) for c in found)


def test_the_core_never_imports_the_tui_or_the_commands(imports: list[Import]) -> None:
    bad = core_violations(imports)
    assert not bad, "the core imports the shell or a TUI library:\n" + "\n".join(
        f"{short(imp.importer)} line {imp.line} ({imp.where}) imports {imp.target}" for imp in bad)


def test_routing_imports_nothing_of_fastchat(imports: list[Import]) -> None:
    if ROUTING not in module_files():
        pytest.skip(f"{ROUTING} does not exist yet (src/{PACKAGE}/routing.py): nothing to check")
    inner = [imp for imp in imports if imp.importer == ROUTING and within(imp.target, PACKAGE)]
    assert not inner, "routing must stay a leaf: " + ", ".join(f"line {imp.line} imports {imp.target}" for imp in inner)


def test_no_module_file_is_shadowed_by_a_package() -> None:
    assert not shadowed_modules(), f"Python imports the package, never these files: {shadowed_modules()}"


def test_importing_the_core_does_not_load_textual() -> None:
    code = "import fastchat_tui.session, fastchat_tui.router, fastchat_tui.store; import sys; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_the_collector_sees_every_kind_of_import() -> None:
    known = {"fastchat_tui", "fastchat_tui.a", "fastchat_tui.pkg", "fastchat_tui.pkg.b", "fastchat_tui.pkg.c",
             "fastchat_tui.commands", "fastchat_tui.commands.x", "fastchat_tui.commands.y"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import fastchat_tui.a as a\n"                   # 2: plain import
        "from . import c\n"                              # 3: relative, a submodule
        "from .. import a\n"                             # 4: relative, two levels
        "from fastchat_tui.pkg import Thing\n"           # 5: a name from the package itself
        "if TYPE_CHECKING:\n"
        "    from textual.app import App\n"              # 7: type-only
        "else:\n"
        "    import rich\n"                              # 9: the else branch runs
        "def f():\n"
        "    from fastchat_tui.missing import z\n"       # 11: in a function, unknown module: its parent
        "    importlib.import_module(f'fastchat_tui.commands.{name}')\n"  # 12: every command
        "    lambda: __import__('fastchat_tui.pkg.c')\n"  # 13
    )
    found = imports_of("fastchat_tui.pkg.b", source, is_package=False, known=known)
    got = [(imp.line, imp.target, imp.where) for imp in found if imp.target != "typing"]
    assert got == [
        (2, "fastchat_tui.a", "top level"),
        (3, "fastchat_tui.pkg.c", "top level"),
        (4, "fastchat_tui.a", "top level"),
        (5, "fastchat_tui.pkg", "top level"),
        (7, "textual.app", "type-only"),
        (9, "rich", "top level"),
        (11, "fastchat_tui", "in a function"),
        (12, "fastchat_tui.commands.x", "in a function"),
        (12, "fastchat_tui.commands.y", "in a function"),
        (13, "fastchat_tui.pkg.c", "in a function"),
    ]
    package_init = imports_of("fastchat_tui.pkg", "from . import b\nfrom .c import d\n", is_package=True, known=known)
    assert [imp.target for imp in package_init] == ["fastchat_tui.pkg.b", "fastchat_tui.pkg.c"]


def test_cycles_are_listed_once_each_from_their_first_module() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.a", "p.c"}, "p.c": {"p.a"}, "p.d": {"p.d"}, "p.e": {"p.a"}}
    assert components(graph) == [["p.a", "p.b", "p.c"], ["p.d"]]
    assert cycles(graph) == [["p.a", "p.b", "p.a"], ["p.a", "p.b", "p.c", "p.a"], ["p.d", "p.d"]]


# -- python tests/test_architecture.py -----------------------------------------------------------

def main(argv: list[str]) -> int:
    package_dir = Path(argv[0]).resolve() if argv else PACKAGE_DIR
    files = module_files(package_dir)
    found = all_imports(files)
    internal = [imp for imp in found if within(imp.target, PACKAGE) and imp.target != imp.importer]
    graph = internal_graph(found)
    edges = sum(len(targets) for targets in graph.values())
    in_functions = sum(imp.in_function and not imp.type_only for imp in internal)
    type_only = sum(imp.type_only for imp in internal)
    print(f"{len(files)} modules, {sum(len(p.read_text(encoding='utf-8').splitlines()) for p in files.values())} lines; "
          f"{edges} internal import edges from {len(internal)} imports ({in_functions} in functions, {type_only} type-only; "
          f"type-only imports {'count' if TYPE_ONLY_IMPORTS_COUNT_FOR_CYCLES else 'do not count'} for cycles)")
    print()
    for module, path in files.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        layer = "shell" if is_shell(module) else "core"
        targets = ", ".join(short(t) for t in sorted(graph.get(module, ()))) or "-"
        print(f"  {short(module) if module != PACKAGE else PACKAGE:<28} {lines:>5}  {layer:<5}  -> {targets}")
    print()
    for path in shadowed_modules(package_dir):
        print(f"shadowed (never imported, a package of the same name wins): {path.relative_to(package_dir.parent)}")
    bad = core_violations(found)
    print(f"core imports of the shell or a TUI library: {len(bad)}")
    for imp in bad:
        print(f"  {short(imp.importer)} line {imp.line} ({imp.where}) imports {imp.target}")
    if ROUTING in files:
        leaf = [imp for imp in found if imp.importer == ROUTING and within(imp.target, PACKAGE)]
        print(f"{short(ROUTING)} imports of fastchat_tui: {len(leaf)}")
    found_cycles = cycles(graph)
    print(f"import cycles: {len(found_cycles)}{' (first ' + str(MAX_CYCLES) + ')' if len(found_cycles) >= MAX_CYCLES else ''}")
    for component in components(graph):
        print(f"  tangled together: {', '.join(short(m) for m in component)}")
    for cycle in found_cycles:
        print(f"  {describe_cycle(cycle, found)}")
    return 1 if found_cycles or bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
