"""``json.dumps(value, indent=2)``, byte for byte, about twice as fast.

With ``indent`` set, the standard library falls back to its pure-Python encoder, a chain of
generators per container. A trace is mostly short lists of repr lines, so one recursive
function appending to a list does the same job with far less overhead. Strings go through
the standard library's C string encoder, so escaping is the standard library's own.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring_ascii


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def key_as_string(key) -> str:
    """The string ``json.dumps`` writes for a dict key (``1`` -> ``"1"``, ``True`` -> ``"true"``)."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _float_text(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _key_text(key) -> str:
    return encode_basestring_ascii(key if isinstance(key, str) else key_as_string(key))


def dumps_indented(value, indent: int = 2) -> str:
    """Return exactly ``json.dumps(value, indent=indent)`` (ASCII output, like upstream's files)."""
    parts: list[str] = []
    append = parts.append

    def encode(item, level: int) -> None:
        if isinstance(item, str):
            append(encode_basestring_ascii(item))
        elif item is None:
            append("null")
        elif item is True:
            append("true")
        elif item is False:
            append("false")
        elif isinstance(item, int):
            append(int.__repr__(item))
        elif isinstance(item, float):
            append(_float_text(item))
        elif isinstance(item, (dict, list, tuple)):
            is_dict = isinstance(item, dict)
            if not item:
                append("{}" if is_dict else "[]")
                return
            inner = "\n" + " " * (indent * (level + 1))
            append("{" if is_dict else "[")
            separator = inner
            for child in item.items() if is_dict else item:
                append(separator)
                separator = "," + inner
                if is_dict:
                    key, child = child
                    append(_key_text(key))
                    append(": ")
                encode(child, level + 1)
            append("\n" + " " * (indent * level) + ("}" if is_dict else "]"))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")

    encode(value, 0)
    return "".join(parts)
