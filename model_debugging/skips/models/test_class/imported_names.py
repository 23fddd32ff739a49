"""The library's model classes a model's test file imports, as names of the test methods it overrides.

An override in a model's test file may compare the loop's class with one it imports
(``if model_class == IdeficsModel: self.skipTest(...)``). Those names are the package's own
(``from transformers import IdeficsModel``, also under ``if is_torch_available():``); a name the
common file defines keeps the common file's meaning.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from model_debugging.skips.interp.values import ModelClass
from model_debugging.skips.models.pretrained_model.model_configs import is_model
from model_debugging.skips.resolve.library import Library

_PACKAGE = "transformers"


def imported_models(library: Library, trees: Iterable[ast.Module]) -> dict[str, ModelClass]:
    """``local name -> model class`` for the library's models imported by the files ``trees``."""
    found: dict[str, ModelClass] = {}
    for tree in trees:
        for node in _module_level(tree.body):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
                continue
            if node.module.split(".")[0] != _PACKAGE:
                continue
            for alias in node.names:
                info = library.find(alias.name)
                if info is not None and is_model(library, info):
                    found[alias.asname or alias.name] = ModelClass(info)
    return found


def _module_level(statements: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements run when the module is imported: its body, and the bodies of its ``if`` and
    ``try`` blocks (``if is_torch_available(): from transformers import ...``)."""
    for statement in statements:
        yield statement
        if isinstance(statement, (ast.If, ast.Try)):
            yield from _module_level(statement.body + statement.orelse)
