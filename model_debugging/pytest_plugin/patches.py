"""Attributes the plugin replaces for one run, put back when the run ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Patches:
    """Replaced attributes (of classes and modules) and how to put each back."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        """``owner.name = value``; a class's own attribute is what is put back (not an inherited one)."""
        before = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, before))

    def undo(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
