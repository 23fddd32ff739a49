"""YAML loading and validation shared by both tools.

Files are read with ``yaml.safe_load``. Problems raise :class:`ConfigError`, whose message names
the file, the key (dotted path) and the offending value. Unknown keys are a warning, not an error,
so an older tool can read a newer config.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

logger = logging.getLogger(__name__)


class ConfigError(ValueError):
    """A configuration file is unreadable or holds a bad value."""

    def __init__(
        self, path: str | os.PathLike | None, message: str, *, key: str | None = None, line: int | None = None
    ):
        self.path = None if path is None else str(path)
        self.key = key
        self.line = line
        where = self.path or "<config>"
        if line is not None:
            where += f":{line}"
        prefix = f"{where}: " + (f"key '{key}': " if key else "")
        super().__init__(prefix + message)


@dataclass(frozen=True)
class Field:
    """One expected key: its type(s), whether it is required, and its default."""

    types: type | tuple[type, ...]
    required: bool = False
    default: Any = None
    item_types: type | tuple[type, ...] | None = None  # for lists and dicts: type of items / values


def load_yaml(path: str | os.PathLike) -> Any:
    """Parse a YAML file safely; syntax errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(path, "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(path, f"cannot read file: {error}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(path, f"invalid YAML: {problem}", line=line) from None


def _type_names(types: type | tuple[type, ...]) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in types)


def _check_type(value: Any, types: type | tuple[type, ...], path: Any, key: str) -> None:
    # bool is an int subclass; never accept it where a number is expected.
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise ConfigError(path, f"expected {_type_names(types)}, got {value!r}", key=key)
    if not isinstance(value, types):
        raise ConfigError(
            path, f"expected {_type_names(types)}, got {type(value).__name__} {value!r}", key=key
        )


def validate_mapping(
    data: Any, fields: Mapping[str, Field], *, path: str | os.PathLike | None = None, prefix: str = ""
) -> dict[str, Any]:
    """Check ``data`` against ``fields``; return a new dict with defaults filled in."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            path, f"expected a mapping, got {type(data).__name__}", key=prefix.rstrip(".") or None
        )
    result: dict[str, Any] = {}
    for name, field in fields.items():
        key = prefix + name
        if name not in data:
            if field.required:
                raise ConfigError(path, "missing required key", key=key)
            result[name] = field.default
            continue
        value = data[name]
        _check_type(value, field.types, path, key)
        if field.item_types is not None:
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for item_key, item in items:
                _check_type(
                    item,
                    field.item_types,
                    path,
                    f"{key}.{item_key}" if isinstance(value, Mapping) else f"{key}[{item_key}]",
                )
        result[name] = value
    for name in data:
        if name not in fields:
            close = difflib.get_close_matches(str(name), list(fields), n=1)
            hint = f" (did you mean '{prefix}{close[0]}'?)" if close else ""
            logger.warning("%s: unknown key '%s%s' ignored%s", path or "<config>", prefix, name, hint)
    return result
