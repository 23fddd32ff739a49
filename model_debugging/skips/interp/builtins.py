"""Python's own behaviour on plain values: attributes, methods, ``in`` and builtin functions.

What the interpreter answers without asking a model: a number's or a string's attributes, the
methods of strings, dicts and sets, ``item in container`` for literals, ``len`` / ``any`` / ``all`` /
``sorted`` / ``range`` ... of known values, and the modules ``inspect`` and ``re``. Each function gives
:data:`~model_debugging.skips.interp.handlers.UNHANDLED` for a value that is not its own.
"""

from __future__ import annotations

import operator
import re

from model_debugging.skips.interp.truth import known, truth, wholly_known
from model_debugging.skips.interp.values import (
    PLAIN,
    UNHANDLED,
    Builtin,
    ConfigClass,
    ModelClass,
    Parameters,
    Unknown,
    python_result,
)

# Builtin functions and modules the interpreter knows by name.
BUILTIN_NAMES = frozenset(
    {
        "len", "any", "all", "set", "list", "tuple", "hasattr", "getattr", "get_values", "sorted", "str",
        "bool", "int", "open", "isinstance", "inspect", "re", "range",
    }
)  # fmt: skip
_RANGE_LENGTH = 1 << 16  # a longer ``range(...)`` is unknown: it may be made into a list
_STRING_METHODS = {"lower", "upper", "startswith", "endswith", "strip", "split", "replace"}
_PLAIN_FUNCTIONS = {
    "int": int, "len": len, "any": any, "all": all, "set": set, "list": list, "tuple": tuple,
    "sorted": sorted, "str": str, "bool": bool,
}  # fmt: skip


def python_attribute(owner: object, name: str, unknown: Unknown, missing: object) -> object:
    """``owner.name`` of a plain scalar, of ``inspect`` / ``re``, of a signature; else UNHANDLED."""
    if owner is None or isinstance(owner, (bool, int, float, str)):
        return unknown.existing() if hasattr(owner, name) else missing
    if isinstance(owner, Parameters) and name == "parameters":
        return owner
    if isinstance(owner, Builtin) and owner.name == "inspect" and name in ("signature", "getfile"):
        return Builtin(name)
    if isinstance(owner, Builtin) and owner.name == "re":
        return Builtin(name) if name == "search" else getattr(re, name, unknown)
    return UNHANDLED


def python_method(owner: object, name: str, arguments: list[object], unknown: Unknown) -> object:
    """``owner.name(*arguments)`` of a string, a dict, a set or a signature's parameters."""
    if (
        isinstance(owner, str)
        and name in _STRING_METHODS
        and all(isinstance(item, str) for item in arguments)
    ):
        return python_result(unknown, getattr(owner, name), *arguments)
    if isinstance(owner, dict) and name in ("keys", "values", "items") and not arguments:
        return list(getattr(owner, name)())
    if isinstance(owner, dict) and name == "get" and arguments and isinstance(arguments[0], (str, int)):
        return owner.get(arguments[0], arguments[1] if len(arguments) > 1 else None)
    if isinstance(owner, Parameters) and name == "keys":
        return owner
    if isinstance(owner, set) and name == "union":
        if not all(isinstance(argument, (list, tuple, set)) for argument in arguments):
            return unknown
        items = [item for argument in arguments for item in argument]
        if not all(known(item) for item in items):
            return unknown
        return python_result(unknown, owner.union, items)
    return UNHANDLED


def python_contains(container: object, item: object) -> bool | None:
    """``item in container`` for known values, or None when only the run knows."""
    if not wholly_known(item) or not known(container):
        return None
    if isinstance(container, Parameters):
        return item in container.names if isinstance(item, str) else None
    if isinstance(container, (list, tuple, set, frozenset, dict, str, range)):
        if isinstance(container, str) and not isinstance(item, str):
            return None
        if isinstance(item, (ModelClass, ConfigClass)):  # a class is found by identity
            found = any(isinstance(entry, type(item)) and entry.info is item.info for entry in container)
        else:
            found = python_result(None, operator.contains, container, item)  # an unhashable key: unknown
        if found is False and isinstance(container, (list, tuple, set, frozenset)):
            # not found among the known elements: an element only the run knows may be equal to it
            return False if all(map(wholly_known, container)) else None
        return found if isinstance(found, bool) else None
    return None


def python_builtin(name: str, arguments: list[object], unknown: Unknown) -> object:
    """``len``, ``any``, ``all``, ``set``, ``sorted``, ``str``, ... of known plain values, ``re.search``
    of strings; else ``unknown``."""
    if name in ("set", "list", "tuple") and not arguments:
        return {"set": set, "list": list, "tuple": tuple}[name]()
    if name == "search":  # re.search(pattern, text, flags)
        if len(arguments) >= 2 and all(isinstance(item, (str, int)) for item in arguments[:3]):
            return python_result(unknown, re.search, *arguments[:3])
        return unknown
    if arguments and isinstance(arguments[0], Parameters) and name in ("set", "list", "tuple"):
        return {"set": set, "list": list, "tuple": tuple}[name](arguments[0].names)
    if not arguments or not all(known(argument) for argument in arguments):
        return unknown
    if name == "range":
        if 1 <= len(arguments) <= 3 and all(type(argument) is int for argument in arguments):
            found = python_result(unknown, range, *arguments)  # a step of 0 raises
            return found if not isinstance(found, range) or len(found) <= _RANGE_LENGTH else unknown
        return unknown
    if name in ("any", "all") and isinstance(arguments[0], (list, tuple)):
        decisive = name == "any"  # a true item decides any(), a false one all()
        items = arguments[0]
        if any(known(item) and truth(item) == decisive for item in items):
            return decisive
        return unknown if any(not known(item) for item in items) else not decisive
    if name in _PLAIN_FUNCTIONS and all(isinstance(argument, PLAIN) for argument in arguments):
        return python_result(unknown, _PLAIN_FUNCTIONS[name], *arguments)
    return unknown
