"""The dependency rules of the house, read from the import graph: adapters and the conformance kit import
the core, the core imports neither, and the core's modules import each other without a circle.

Every module of ``core/mastra_memory`` is parsed with :mod:`ast` (nothing is imported). An import is
every ``import`` and ``from ... import`` statement, relative ones resolved against the module's package,
including those under ``if TYPE_CHECKING:`` and in ``try`` blocks, plus every call of
``importlib.import_module``, ``__import__`` or ``importlib.util.find_spec`` with a string literal: a
dependency spelt as a string is still a dependency.

* The core imports neither the conformance kit nor any adapter (``mastra_memory_<name>``) -- anywhere,
  inside functions included.
* The core's module-level imports (class bodies and ``TYPE_CHECKING`` blocks included, function bodies
  not) form no cycle. ``from package import name`` is an edge to ``package.name`` when that is a module,
  else to ``package``; as in import-linter, importing ``a.b.c`` is an edge to ``a.b.c`` alone, not to
  the ``__init__`` of ``a.b``.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "mastra_memory"
KIT = "mastra_memory_conformance"
#: Calls whose first argument, a string literal, names a module.
STRING_IMPORTS = frozenset({"import_module", "__import__", "find_spec"})


@dataclass(frozen=True)
class Import:
    """One import of ``source``: the module it names, where, and whether it runs at import time."""

    source: str
    target: str
    line: int
    module_level: bool

    def where(self, modules: dict[str, Path]) -> str:
        return f"{modules[self.source].relative_to(ROOT)}:{self.line}"


def core_modules() -> dict[str, Path]:
    """Every module of the core by dotted name (a package by the name of its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def imports_of(module: str, source: str, package: str, modules: Collection[str]) -> Iterator[Import]:
    """The imports in the ``source`` of ``module`` (whose package is ``package``), in source order."""

    def resolve_from(node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def visit(node: ast.AST, module_level: bool) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno, module_level)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_from(node)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield Import(module, candidate if candidate in modules else base, node.lineno, module_level)
        elif isinstance(node, ast.Call) and _call_name(node.func) in STRING_IMPORTS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield Import(module, first.value, node.lineno, module_level)
        inside_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, module_level and not inside_function)

    yield from visit(ast.parse(source, filename=module), True)


def all_imports() -> tuple[dict[str, Path], list[Import]]:
    """The core's modules and every import in them."""
    modules = core_modules()
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found += imports_of(name, path.read_text("utf-8"), package, modules)
    return modules, found


def find_cycles(edges: dict[str, dict[str, Import]]) -> list[list[Import]]:
    """One cycle through each strongly connected component with more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan; the core is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in sorted(edges):
        if node not in index:
            connect(node)

    cycles = []
    for component in components:
        start = min(component)
        if len(component) == 1 and start not in edges.get(start, {}):
            continue
        cycles.append(_path_back(start, component, edges))
    return cycles


def _path_back(start: str, component: set[str], edges: dict[str, dict[str, Import]]) -> list[Import]:
    """A shortest cycle from ``start`` back to itself inside ``component`` (breadth first)."""
    came_by: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt, imp in sorted(edges.get(node, {}).items()):
                if nxt not in component or nxt in came_by:
                    continue
                came_by[nxt] = imp
                if nxt == start:
                    path = [imp]
                    while path[0].source != start:
                        path.insert(0, came_by[path[0].source])
                    return path
                following.append(nxt)
        frontier = following
    raise AssertionError(f"{start} is in a cycle that could not be traced")  # pragma: no cover


def describe(cycle: list[Import], modules: dict[str, Path]) -> str:
    steps = [f"{imp.source} -> {imp.target}  ({imp.where(modules)})" for imp in cycle]
    return "\n    ".join(steps)


def test_the_graph_is_read() -> None:
    """The parser sees what the rules need: TYPE_CHECKING imports, relative imports, string imports."""
    modules, imports = all_imports()
    assert {"mastra_memory", "mastra_memory.hookspecs", "mastra_memory.plugins.protocols"} <= set(modules)
    found = {(i.source, i.target) for i in imports if i.module_level}
    assert ("mastra_memory.hookspecs", "mastra_memory.plugins.protocols") in found  # under TYPE_CHECKING
    assert ("mastra_memory.plugins.manager", "mastra_memory.hookspecs") in found  # `from .. import hookspecs`
    source = """
import importlib
if TYPE_CHECKING:
    from .a import b, not_a_module
class C:
    from ..top import x
def f():
    importlib.import_module("x.y")
"""
    parsed = list(imports_of("pkg.sub.mod", source, "pkg.sub", {"pkg.sub.a", "pkg.sub.a.b"}))
    assert [(i.target, i.module_level) for i in parsed] == [
        ("importlib", True),
        ("pkg.sub.a.b", True),
        ("pkg.sub.a", True),
        ("pkg.top", True),
        ("x.y", False),
    ]


def test_the_core_imports_neither_the_kit_nor_an_adapter() -> None:
    modules, imports = all_imports()
    forbidden = [
        f"{imp.where(modules)}: {imp.source} imports {imp.target}"
        for imp in imports
        if imp.target.split(".")[0] == KIT or imp.target.split(".")[0].startswith("mastra_memory_")
    ]
    assert not forbidden, "the core must not depend on the conformance kit or an adapter:\n" + "\n".join(
        forbidden
    )


def test_the_cores_module_level_imports_form_no_cycle() -> None:
    modules, imports = all_imports()
    edges: dict[str, dict[str, Import]] = {}
    for imp in imports:
        if imp.module_level and imp.target in modules:
            edges.setdefault(imp.source, {}).setdefault(imp.target, imp)
    cycles = find_cycles(edges)
    report = "\n".join(f"  cycle {n}:\n    {describe(c, modules)}" for n, c in enumerate(cycles, 1))
    assert not cycles, f"the core's module-level imports form {len(cycles)} cycle(s):\n{report}"


# --- every distribution's runtime code, the module sizes, the map -------------------------------------

#: Where runtime code lives: the core, the kit, and each adapter's and integration's ``src`` package.
DISTRIBUTIONS = [CORE, *sorted(ROOT.glob("conformance/src/mastra_memory_*"))]
DISTRIBUTIONS += sorted(ROOT.glob("adapters/*/src/mastra_memory_*"))
DISTRIBUTIONS += sorted(ROOT.glob("integrations/*/src/mastra_memory_*"))
DISTRIBUTIONS += sorted(ROOT.glob("examples/*/src/mastra_memory_*"))
#: A module longer than this says why in its docstring, in a sentence that starts with ``LONG_REASON``.
MAX_LINES = 600
LONG_REASON = "Why this module is long:"


def package_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package in ``package_dir`` by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def is_testing(module: str) -> bool:
    """A module of a ``testing`` subpackage: test furniture (targets, test servers, emulators)."""
    return "testing" in module.split(".")[1:]


@pytest.mark.parametrize("package_dir", DISTRIBUTIONS, ids=lambda p: p.name)
def test_runtime_code_imports_neither_testing_nor_the_kit(package_dir: Path) -> None:
    """Runtime modules never import test furniture: no ``testing`` subpackage (their own or another's)
    and, outside the kit itself, not the kit (docs/architecture.md)."""
    modules = package_modules(package_dir)
    if package_dir.name == KIT:
        return  # the kit is test furniture as a whole; its own rule is that the core never imports it
    forbidden = []
    for name, path in modules.items():
        if is_testing(name):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for imp in imports_of(name, path.read_text("utf-8"), package, modules):
            if imp.target.split(".")[0] == KIT or is_testing(imp.target):
                forbidden.append(f"{path.relative_to(ROOT)}:{imp.line}: {name} imports {imp.target}")
    assert not forbidden, "runtime code imports test furniture:\n" + "\n".join(forbidden)


def test_long_modules_say_why() -> None:
    """No runtime module over 600 lines without the reason in its docstring."""
    unexplained = []
    for package_dir in DISTRIBUTIONS:
        for path in package_modules(package_dir).values():
            source = path.read_text("utf-8")
            if source.count("\n") <= MAX_LINES:
                continue
            if LONG_REASON not in (ast.get_docstring(ast.parse(source)) or ""):
                unexplained.append(f"{path.relative_to(ROOT)}: {source.count(chr(10))} lines")
    assert not unexplained, (
        f"modules over {MAX_LINES} lines must split, or say '{LONG_REASON} ...' in their docstring:\n"
        + "\n".join(unexplained)
    )


def test_the_architecture_page_names_every_module() -> None:
    """docs/architecture.md names every runtime module: a table row per folder, its modules in backticks."""
    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    rows: dict[str, str] = {}
    for line in page.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and cells[0].startswith("`") and cells[0].endswith("/`"):
            rows[cells[0].strip("`")] = "|".join(cells[1:])
    missing = []
    for package_dir in DISTRIBUTIONS:
        for path in package_modules(package_dir).values():
            if path.name == "__init__.py":
                continue
            folder = path.parent.relative_to(ROOT).as_posix() + "/"
            if f"`{path.name}`" not in rows.get(folder, ""):
                missing.append(f"{path.relative_to(ROOT)} (no `{path.name}` in the row for `{folder}`)")
    assert not missing, "docs/architecture.md does not name:\n" + "\n".join(missing)
