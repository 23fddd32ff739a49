"""What a configuration class's own source says where the records keep no fact, each read as a
:meth:`~model_debugging.skips.resolve.library.Library.fact` (so that an evaluation depends on the
answer, not on the whole file's text): whether the class defines its own constructor, and the
model type its ``__post_init__`` gives a part passed without one.

A rescan computes a fact again from its function, found by module: this module imports only the
library index and the forward trees, which cost less to load than the evaluator.
"""

from __future__ import annotations

import ast
from typing import Literal

from model_debugging.skips.models.generation_cache.model_outputs import parsed_file
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.resolve.library import Library


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
    ``path``, or of ``<name>.get(...)`` on the parameter of that name in its own ``__init__`` (a
    configuration written before dataclass fields); None unless exactly one."""
    node = _class_node(library, path, owner)
    found = set()
    for call in ast.walk(node) if node is not None else ():
        if _model_type_default(call, f"self.{name}"):
            found.add(call.args[1].value)
    init = next((item for item in node.body if _is_init_with(item, name)), None) if node is not None else None
    for call in ast.walk(init) if init is not None else ():
        if _model_type_default(call, name):
            found.add(call.args[1].value)
    return found.pop() if len(found) == 1 else None


def _model_type_default(node: ast.AST, subject: str) -> bool:
    """``<subject>.get("model_type", "<literal>")``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and ast.unparse(node.func.value) == subject
        and len(node.args) == 2
        and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.args)
        and node.args[0].value == "model_type"
    )


def _is_init_with(node: ast.AST, parameter: str) -> bool:
    """An ``__init__`` with a parameter named ``parameter``."""
    if not isinstance(node, ast.FunctionDef) or node.name != "__init__":
        return False
    return parameter in signature(node, method=False).names


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
