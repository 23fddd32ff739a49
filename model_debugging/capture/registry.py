"""The process-wide registry of class replacements: class name or regex -> replacement module class."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping

from torch import nn

__all__ = [
    "PatchRules",
    "clear_patch_mapping",
    "current_patch_rules",
    "get_patch_mapping",
    "register_patch_mapping",
    "unregister_patch_mapping",
]

_lock = threading.Lock()
# key -> (compiled pattern, replacement); insertion order is the order patterns are tried in
_mapping: dict[str, tuple[re.Pattern, type[nn.Module]]] = {}


def register_patch_mapping(mapping: Mapping[str, type[nn.Module]], overwrite: bool = False) -> None:
    """Register replacements for module classes, applied by `apply_patches` and `patch_output_recorders`.

    A key is an exact class name or a regex tested with `re.search` against class names (so
    ``"Attention$"`` matches every class ending in ``Attention``; anchor with ``^...$`` to match
    whole names). An exact key wins over patterns; among patterns, the first registered wins.
    The whole mapping is validated before anything is registered.

    Args:
        mapping (`Mapping[str, type[nn.Module]]`): class name or pattern -> replacement class.
        overwrite (`bool`, *optional*, defaults to `False`): replace keys that are already registered.

    Raises:
        TypeError: a key is not a string, or a replacement is not an `nn.Module` subclass.
        ValueError: a key is already registered and ``overwrite`` is False, or a key is not a valid regex.
    """
    validated = {}
    for key, replacement in mapping.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"patch mapping keys must be non-empty class names or patterns, got {key!r}")
        if not (isinstance(replacement, type) and issubclass(replacement, nn.Module)):
            kind = replacement.__name__ if isinstance(replacement, type) else type(replacement).__name__
            raise TypeError(
                f"replacement for {key!r} must be an nn.Module subclass, got {replacement!r} ({kind})"
            )
        try:
            validated[key] = (re.compile(key), replacement)
        except re.error as error:
            raise ValueError(
                f"patch mapping key {key!r} is not a valid regular expression: {error}"
            ) from None
    with _lock:
        duplicates = [key for key in validated if key in _mapping]
        if duplicates and not overwrite:
            raise ValueError(
                f"patch mapping already has {duplicates}; pass overwrite=True to replace "
                f"{'it' if len(duplicates) == 1 else 'them'}"
            )
        _mapping.update(validated)


def unregister_patch_mapping(keys: str | Iterable[str]) -> None:
    """Remove registered keys (spelled exactly as registered); unknown keys raise `KeyError`, removing none."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    with _lock:
        unknown = [key for key in keys if key not in _mapping]
        if unknown:
            raise KeyError(f"not in the patch mapping: {unknown}; registered keys: {list(_mapping)}")
        for key in keys:
            del _mapping[key]


def get_patch_mapping() -> dict[str, type[nn.Module]]:
    """A copy of the registered mapping: key -> replacement class."""
    with _lock:
        return {key: replacement for key, (_, replacement) in _mapping.items()}


def clear_patch_mapping() -> None:
    """Remove every registered replacement."""
    with _lock:
        _mapping.clear()


class PatchRules:
    """A snapshot of the registry, so one patching pass sees one consistent mapping."""

    def __init__(self, entries: dict[str, tuple[re.Pattern, type[nn.Module]]]):
        self._entries = entries

    def __bool__(self) -> bool:
        return bool(self._entries)

    def replacement_for(self, class_name: str) -> type[nn.Module] | None:
        """The exact key's replacement if registered, else the first pattern's that `re.search`-matches."""
        if class_name in self._entries:
            return self._entries[class_name][1]
        for pattern, replacement in self._entries.values():
            if pattern.search(class_name):
                return replacement
        return None


def current_patch_rules() -> PatchRules:
    """The registry as it is now."""
    with _lock:
        return PatchRules(dict(_mapping))
