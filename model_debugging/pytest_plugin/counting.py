"""Count the assertions a test reaches while it runs.

Calls of ``unittest.TestCase.assert*`` and of the assertion functions of ``torch.testing``,
``numpy.testing`` and pytest are counted by wrapping them (where test modules bound them too);
``assert`` statements through pytest's ``pytest_assertion_pass`` hook, which pytest calls only for
modules it rewrote while ``enable_assertion_pass_hook`` was on.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
import textwrap
import types
import unittest
from collections.abc import Callable
from typing import Any

from model_debugging import assertions
from model_debugging.pytest_plugin.patches import Patches

# Assertion functions of the libraries tests use, by module; counted where tests bound them.
COUNTED_FUNCTIONS = {
    "torch.testing": ("assert_close", "assert_allclose"),
    "numpy.testing": (
        "assert_allclose",
        "assert_almost_equal",
        "assert_array_almost_equal",
        "assert_array_equal",
        "assert_array_less",
        "assert_equal",
    ),
    "pytest": tuple(sorted(assertions.CALLS)),
}


class Counter:
    """Assertions reached by the test running now (None between tests)."""

    value: int | None = None

    @classmethod
    def hit(cls) -> None:
        if cls.value is not None:
            cls.value += 1


def _counted(function: Callable) -> Callable:
    @functools.wraps(function)
    def counted(*args: Any, **kwargs: Any) -> Any:
        Counter.hit()
        return function(*args, **kwargs)

    return counted


def count_test_case_assertions(patches: Patches) -> None:
    for name, method in list(vars(unittest.TestCase).items()):
        if name.startswith("assert") and callable(method):
            patches.set(unittest.TestCase, name, _counted(method))


def count_library_assertions(patches: Patches) -> None:
    """Once the test modules have imported them (``numpy.testing`` is imported on first use: it is
    imported here when numpy is), wherever a module bound them."""
    for module_name, names in COUNTED_FUNCTIONS.items():
        if module_name.partition(".")[0] not in sys.modules:
            continue
        module = importlib.import_module(module_name)
        for name in names:
            original = getattr(module, name, None)
            if callable(original):
                _rebind(patches, original, _counted(original))


def _rebind(patches: Patches, original: Callable, counted: Callable) -> None:
    """Every module global bound to ``original`` (``from torch.testing import assert_close``)."""
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if value is original:
                patches.set(module, name, counted)


def holds_assertion(function: Any) -> bool | None:
    """Whether ``function``'s own body holds an assertion (None: its source cannot be read)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    return assertions.holds(tree, assertions.is_assertion)


def rewritten_without_pass_hook(module: types.ModuleType) -> bool:
    """Whether pytest's rewritten asserts in ``module`` never call the pass hook: it loaded them
    from a cache written before the hook was enabled."""
    names: set[str] = set()
    stack = [
        value.__code__
        for owner in (module, *(value for value in vars(module).values() if isinstance(value, type)))
        for value in vars(owner).values()
        if isinstance(value, types.FunctionType)
    ]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(constant for constant in code.co_consts if isinstance(constant, types.CodeType))
    return "_format_explanation" in names and "_check_if_assertion_pass_impl" not in names
