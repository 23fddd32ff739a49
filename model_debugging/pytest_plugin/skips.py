"""``--observed_ignore_skips``: run the tests an unconditional skip decorator written in a test
file turns off, to see which skips are stale.

``@unittest.skip`` called from a test module leaves the test as it is (marked with the reason);
called elsewhere (a library's ``require_*`` helper deciding on the machine), and through
``skipIf``/``skipUnless``, it skips as before. ``pytest.mark.skip`` marks (on the test, its class,
``pytestmark``) are removed. A skipped override whose body does nothing (``pass``, a docstring)
exists only to carry the skip: the run takes the definition it overrides instead, as it would run
without the override.
"""

from __future__ import annotations

import ast
import fnmatch
import inspect
import sys
import textwrap
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from model_debugging.pytest_plugin.items import item_function
from model_debugging.pytest_plugin.patches import Patches

IGNORED = "_model_debugging_skip_ignored"  # set on a test or class whose skip decorator was ignored


def ignore_skip_decorators(patches: Patches, config: pytest.Config) -> None:
    """Patch ``unittest.skip`` and its conditional forms before the test modules are imported."""
    original = unittest.case.skip
    patterns = config.getini("python_files")

    def skip(reason: str) -> Callable:
        caller = Path(sys._getframe(1).f_code.co_filename).name
        if not any(fnmatch.fnmatch(caller, pattern) for pattern in patterns):
            return original(reason)

        def keep(test_item: Any) -> Any:
            setattr(test_item, IGNORED, str(reason))
            return test_item

        return keep

    def skip_if(condition: object, reason: str) -> Callable:
        return original(reason) if condition else (lambda test_item: test_item)

    def skip_unless(condition: object, reason: str) -> Callable:
        return skip_if(not condition, reason)

    for module in (unittest, unittest.case):
        patches.set(module, "skip", skip)
        patches.set(module, "skipIf", skip_if)
        patches.set(module, "skipUnless", skip_unless)


def remove_skip_marks(items: list[pytest.Item]) -> dict[str, str]:
    """Remove every ``skip`` mark of the items' nodes; node id -> the reason of the mark removed."""
    removed: dict[int, str] = {}  # node (a class or module is shared by its items) -> reason
    found = {}
    for item in items:
        for node in item.listchain():
            for mark in [mark for mark in node.own_markers if mark.name == "skip"]:
                node.own_markers.remove(mark)
                removed[id(node)] = str(mark.kwargs.get("reason", mark.args[0] if mark.args else ""))
            if id(node) in removed:
                found[item.nodeid] = removed[id(node)]
    return found


def run_overridden(items: list[pytest.Item], patches: Patches) -> dict[str, str]:
    """For a skipped override that does nothing, let its class run the definition it overrides;
    node id -> the ignored skip's reason, for the items that now run an overridden definition."""
    replaced = {}
    for item in items:
        cls = getattr(item, "cls", None)
        function = getattr(cls, item.name, None) if cls is not None else None
        if function is None or getattr(function, IGNORED, None) is None or not _does_nothing(function):
            continue
        owners = [klass for klass in cls.__mro__ if item.name in vars(klass)]
        if len(owners) > 1:
            if vars(owners[0])[item.name] is function:
                patches.set(owners[0], item.name, vars(owners[1])[item.name])
            item.obj = getattr(item.instance, item.name)  # pytest bound the override when it collected it
            replaced[item.nodeid] = getattr(function, IGNORED)
    return replaced


def _does_nothing(function: Any) -> bool:
    """Whether the function's body is only ``pass``, a docstring, ``...`` or a bare ``return``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    return all(
        isinstance(statement, ast.Pass)
        or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
        or (isinstance(statement, ast.Return) and statement.value is None)
        for statement in getattr(tree, "body", [None])
    )


def ignored_reason(item: pytest.Item) -> str | None:
    """The reason of the skip decorator ignored on the item's test or class, if any."""
    for owner in (item_function(item), getattr(item, "cls", None)):
        reason = getattr(owner, IGNORED, None)
        if reason is not None:
            return reason
    return None
