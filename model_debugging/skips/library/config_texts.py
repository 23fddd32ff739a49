"""What a configuration class's own source says where the records keep no fact, each read as a
:meth:`~model_debugging.skips.library.index.Library.fact` (so that an evaluation depends on the
answer, not on the whole file's text): whether the class defines its own constructor, and the
model type its ``__post_init__`` gives a part passed without one.

Here, not beside their callers in ``runtime/``: a rescan computes a fact again from its function,
found by module, and loading the library's modules costs less than loading the evaluator.
"""

from __future__ import annotations

import ast
from typing import Literal

from model_debugging.skips.library.index import Library
from model_debugging.skips.library.model_outputs import parsed_file


def own_constructor(library: Library, path: str, name: str) -> ast.FunctionDef | Literal["none"] | None:
    """The ``__post_init__`` the class ``name`` of file ``path`` defines; ``"none"`` when it defines
    neither it nor ``__init__``; None when it defines ``__init__`` or is not found."""
    node = _class_node(library, path, name)
    if node is None:
        return None
    methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    if "__init__" in methods:
        return None
    return methods.get("__post_init__", "none")


def default_model_type(library: Library, path: str, owner: str, name: str) -> str | None:
    """The literal of ``self.<name>.get("model_type", "<type>")`` in the class ``owner`` of file
    ``path`` (None unless exactly one)."""
    node = _class_node(library, path, owner)
    found = set()
    for call in ast.walk(node) if node is not None else ():
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "get"
            and ast.unparse(call.func.value) == f"self.{name}"
            and len(call.args) == 2
            and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in call.args)
            and call.args[0].value == "model_type"
        ):
            found.add(call.args[1].value)
    return found.pop() if len(found) == 1 else None


def _class_node(library: Library, path: str, name: str) -> ast.ClassDef | None:
    """The first top-level class ``name`` of file ``path``."""
    tree = parsed_file(library, path)
    return next(
        (
            item
            for item in (tree.body if tree else ())
            if isinstance(item, ast.ClassDef) and item.name == name
        ),
        None,
    )
