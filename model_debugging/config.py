"""YAML loading and validation shared by both tools.

Files are read with ``yaml.safe_load``. Problems raise :class:`ConfigError`, whose message names
the file, the line of the key when the file has it, the key (dotted path) and the offending value.
A key given twice in one mapping is an error (YAML would keep the second silently). Unknown keys are
a warning, not an error, so an older tool can read a newer config.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
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
        # the key's line, read again from the file (None for a missing key or a mapping not from a file)
        self.line = line if line is not None or path is None or key is None else key_line(path, key)
        where = self.path or "<config>"
        if self.line is not None:
            where += f":{self.line}"
        prefix = f"{where}: " + (f"key '{key}': " if key else "")
        super().__init__(prefix + message)


@dataclass(frozen=True)
class Field:
    """One expected key: its type(s), whether it is required, and its default."""

    types: type | tuple[type, ...]
    required: bool = False
    default: Any = None
    item_types: type | tuple[type, ...] | None = None  # for lists and dicts: type of items / values


def _key_path(key: str) -> list[str | int]:
    """``"common_test_files[0].path"`` -> ``["common_test_files", 0, "path"]``."""
    return [
        int(part[1:-1]) if part.startswith("[") else part for part in re.findall(r"\[\d+\]|[^.\[\]]+", key)
    ]


def key_line(path: str | os.PathLike, key: str) -> int | None:
    """The line of ``key`` (a dotted path, ``[i]`` for list items) in the YAML file at ``path``; None
    when the file cannot be read again or does not hold the key (a missing required key)."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    line = None
    for part in _key_path(key):
        if isinstance(part, int) and isinstance(node, yaml.SequenceNode) and part < len(node.value):
            node = node.value[part]
        elif isinstance(part, str) and isinstance(node, yaml.MappingNode):
            found = [(name, value) for name, value in node.value if name.value == part]
            if not found:
                return None
            node = found[-1][1]  # the one safe_load keeps
            line = found[-1][0].start_mark.line + 1
            continue
        else:
            return None
        line = node.start_mark.line + 1
    return line


def _check_duplicates(path: Path, node: Any, prefix: str = "") -> None:
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_duplicates(path, item, f"{prefix}[{index}]")
    elif isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for name, value in node.value:
            key = f"{prefix}.{name.value}" if prefix else str(name.value)
            line = name.start_mark.line + 1
            if isinstance(name, yaml.ScalarNode):  # a key that is a list or a mapping fails validation
                if name.value in seen:
                    raise ConfigError(
                        path,
                        f"given twice (lines {seen[name.value]} and {line}); keep one",
                        key=key,
                        line=line,
                    )
                seen[name.value] = line
            _check_duplicates(path, value, key)


def load_yaml(path: str | os.PathLike) -> Any:
    """Parse a YAML file safely; syntax errors name the file and line, and so does a key given twice."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(path, "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(path, f"cannot read file: {error}") from None
    loader = yaml.SafeLoader(text)
    try:  # parsed once: the node tree is checked for keys given twice, then built into values
        node = loader.get_single_node()
        if node is None:  # an empty file
            return None
        _check_duplicates(path, node)
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(path, f"invalid YAML: {problem}", line=line) from None
    finally:
        loader.dispose()


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
                typo = difflib.get_close_matches(
                    name, [str(other) for other in data if other not in fields], n=1
                )
                found = f" (found '{prefix}{typo[0]}': a typo?)" if typo else ""
                line = key_line(path, prefix + typo[0]) if typo and path is not None else None
                raise ConfigError(path, "missing required key" + found, key=key, line=line)
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
            line = key_line(path, f"{prefix}{name}") if path is not None else None
            where = f"{path}:{line}" if line is not None else str(path or "<config>")
            logger.warning("%s: unknown key '%s%s' ignored%s", where, prefix, name, hint)
    return result
