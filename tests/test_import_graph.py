"""The package's import graph: no module imports itself back through others, and the analyzer's
floors import only floors below them (and their own).

Every import counts, at the top of a module or inside a function, under ``TYPE_CHECKING`` or not:
an import placed in a function to break a circle is still a circle. ``from package import name``
counts as an import of ``package.name`` when that is a module, else of ``package``; a package's
``__init__`` is not imported by importing one of its modules (the edge goes to the module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import model_debugging

PACKAGE_ROOT = Path(model_debugging.__file__).parent
PACKAGE = PACKAGE_ROOT.name

# The analyzer's floors, top first: a module may import its own floor and those after it.
SKIPS_FLOORS = (
    ("command", "scan", "report"),
    ("observed",),
    ("inert",),
    ("incremental",),
    ("decide",),
    ("results",),
    ("models",),
    ("interp",),
    ("resolve",),
    ("parse",),
    ("source",),
    ("records", "work"),
)


def _module_names() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {name for name in found if name in modules and name != module}


def _graph() -> dict[str, set[str]]:
    modules = _module_names()
    return {module: _imports(module, path, modules) for module, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_back():
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_an_import_inside_a_function_or_for_type_checking_is_an_edge(tmp_path):
    # an import moved into a function to break a circle would still close it
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import b\n"
        "def f():\n    from pkg.c import name\n    import pkg.d\n"
    )
    path = tmp_path / "a.py"
    path.write_text(source, encoding="utf-8")
    modules = {name: tmp_path for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d")}
    assert _imports("pkg.a", path, modules) == {"pkg.b", "pkg.c", "pkg.d"}


def _floor(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != [PACKAGE, "skips"] or len(parts) < 3:
        return None
    return next((number for number, names in enumerate(SKIPS_FLOORS) if parts[2] in names), None)


def test_the_analyzer_floors_import_only_downwards():
    upward = []
    for module, targets in _graph().items():
        floor = _floor(module)
        if floor is None:
            continue
        upward += [(module, target) for target in sorted(targets) if (_floor(target) or floor) < floor]
    assert upward == []


def test_every_analyzer_folder_has_a_floor():
    folders = {
        path.name
        for path in (PACKAGE_ROOT / "skips").iterdir()
        if path.is_dir() and any(path.rglob("*.py"))  # a folder a pull emptied keeps only __pycache__
    }
    folders |= {path.stem for path in (PACKAGE_ROOT / "skips").glob("*.py") if path.stem != "__init__"}
    floored = {name for names in SKIPS_FLOORS for name in names}
    assert folders - {"defaults"} <= floored
