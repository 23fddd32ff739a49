"""Helpers of the common files that a model's test class overrides in its own file.

``prepare_config_and_inputs_for_generate`` and the like are often overridden by a model's test
class (``config, inputs = super().prepare_config_and_inputs_for_generate(); config.is_decoder =
True``). The override is run like a common helper, and ``super().<name>(...)`` in it runs the
next definition along the test class's MRO. Only model test files are searched for overrides
(small, parsed once per model); the next definition's file is parsed only when ``super()`` asks.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

MODEL_FILES = "/models/"  # the test files of one model (under tests/models/)


class HelperOverrides:
    """Definitions of a test class's methods along its MRO: ``definers`` is ``(path, class name)``
    in MRO order; ``sources`` parses a test file (None when unreadable)."""

    def __init__(self, definers: list[tuple[str, str]], sources: Callable[[str], ast.Module | None]) -> None:
        self.definers, self.sources = definers, sources

    def own(self, name: str) -> ast.FunctionDef | None:
        """The override of ``name`` in a model test file, when the first class defining it is there."""
        index = self._first(name)
        return None if index is None else self._method(index, name)

    def parent(self, name: str) -> ast.FunctionDef | None:
        """What ``super().<name>`` runs from the override: the next definition along the MRO."""
        index = self._first(name)
        if index is None:
            return None
        for later in range(index + 1, len(self.definers)):
            found = self._method(later, name)
            if found is not None:
                return found
        return None

    def _first(self, name: str) -> int | None:
        for index, (path, _) in enumerate(self.definers):
            if MODEL_FILES not in path:
                return None  # a class of a shared file comes first: not an override of a model file
            if self._method(index, name) is not None:
                return index
        return None

    def _method(self, index: int, name: str) -> ast.FunctionDef | None:
        path, class_name = self.definers[index]
        tree = self.sources(path)
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == name:
                        return item
        return None
