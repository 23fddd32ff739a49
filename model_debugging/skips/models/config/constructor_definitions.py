"""Where the methods and functions a configuration's constructors call are written (see
``constructor.py``): a method along the configuration's MRO, with its role (a property's
getter or setter, a static method), and a module-level function of a library file."""

from __future__ import annotations

import ast
import posixpath

from model_debugging.skips.models.config.constructor_state import Stop
from model_debugging.skips.models.generation_cache.model_outputs import parsed_file
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_MAX_HOPS = 3  # relative imports followed to find a function


def role(function: ast.FunctionDef) -> str:
    """``getter`` (``@property``), ``setter`` (``@x.setter``), ``static`` or ``plain``."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Name) and decorator.id in ("property", "cached_property"):
            return "getter"
        if isinstance(decorator, ast.Attribute) and decorator.attr == "setter":
            return "setter"
        if isinstance(decorator, ast.Name) and decorator.id == "staticmethod":
            return "static"
    return "plain"


def method_of(
    library: Library, mro: tuple[LibraryClass, ...], start: int, name: str, wanted: str = "plain"
) -> tuple[int, str, ast.FunctionDef, str] | None:
    """``(index in the MRO, file, definition, its role)`` of ``name`` as the first class from
    ``start`` defining it writes it, when that is a definition of role ``wanted`` (``plain`` takes a
    static method too); raises :class:`Stop` when that class's source is not found."""
    for index in range(start, len(mro)):
        ancestor = mro[index]
        if name not in ancestor.methods:
            continue
        path = library.path_of(ancestor)
        tree = parsed_file(library, path) if path is not None else None
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ClassDef) and node.name == ancestor.name:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == name:
                        found = role(item)
                        if found == wanted or (wanted == "plain" and found == "static"):
                            return index, path, item, found
                return None
        raise Stop
    return None


def function_of(library: Library, path: str, name: str, hops: int = 0) -> tuple[str, ast.FunctionDef] | None:
    """The module-level function ``name`` of the library file ``path``, or one it imports relatively."""
    tree = parsed_file(library, path) if hops < _MAX_HOPS else None
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return path, node
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    folder = posixpath.dirname(path)
                    for _ in range(node.level - 1):
                        folder = posixpath.dirname(folder)
                    target = posixpath.join(folder, *(node.module or "").split("."))
                    return function_of(library, f"{target}.py", alias.name, hops + 1)
    return None
