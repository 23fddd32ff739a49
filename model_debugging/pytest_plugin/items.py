"""What an item runs: the test function under the wrappers decorators and ``parameterized`` add."""

from __future__ import annotations

import inspect
from typing import Any

import pytest


def item_function(item: pytest.Item) -> Any:
    """The function an item runs, under ``parameterized.expand``'s case and decorators that wrap it
    (for a test method, the one its class has now: a skip run may have replaced it)."""
    cls = getattr(item, "cls", None)
    function = getattr(cls, item.name, None) if cls is not None else None
    if function is None:
        function = getattr(item, "obj", None)
    function = getattr(function, "place_as", function)  # parameterized keeps its test here
    return inspect.unwrap(function) if callable(function) else function
