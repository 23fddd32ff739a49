"""Rename rules that align module paths of two implementations before they are compared.

A rule is a regular expression and its replacement, written ``'REGEX=REPLACEMENT'`` on the
command line (split at the last ``=``, so lookarounds like ``(?=...)`` stay usable) or listed in a
YAML file::

    renames:
      - pattern: 'transformer\\.h\\.(\\d+)'
        replacement: 'model.layers.\\1'

Rules apply in order with ``re.sub`` to module paths relative to the model (without the leading
class name), on both traces.

Where rules are given in Python (``compare_traces(rename=...)``), a string or an ``os.PathLike``
ending in ``.yaml`` or ``.yml`` is a rules file, read whether it is a ``str`` or a ``Path``; every
other string is one ``REGEX=REPLACEMENT`` rule. The suffix alone decides, never whether a file of
that name exists: a rule whose replacement itself ends in ``.yaml`` is given as a mapping or a
:class:`RenameRule`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from model_debugging.config import ConfigError, Field, load_yaml, validate_mapping

_FILE_FIELDS = {"renames": Field(list, required=True, item_types=dict)}
_RULE_FIELDS = {"pattern": Field(str, required=True), "replacement": Field(str, required=True)}


class RenameRuleError(ValueError):
    """A rename rule is malformed; ``part`` says which: "rule", "pattern" or "replacement"."""

    def __init__(self, message: str, *, part: str = "rule"):
        self.part = part
        super().__init__(message)


@dataclass(frozen=True)
class RenameRule:
    """Replace every match of ``pattern`` in a module path by ``replacement`` (``re.sub`` syntax)."""

    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def compile(cls, pattern: str, replacement: str) -> RenameRule:
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            raise RenameRuleError(
                f"invalid regular expression {pattern!r}: {error}", part="pattern"
            ) from None
        try:  # substituting parses the template: a group reference the pattern lacks fails here
            compiled.sub(replacement, "")
        except (re.error, IndexError) as error:
            raise RenameRuleError(
                f"invalid replacement {replacement!r} for {pattern!r}: {error}", part="replacement"
            ) from None
        return cls(compiled, replacement)

    def apply(self, path: str) -> str:
        return self.pattern.sub(self.replacement, path)

    def __str__(self) -> str:
        return f"{self.pattern.pattern}={self.replacement}"


def parse_rename_rule(text: str) -> RenameRule:
    """Parse ``'REGEX=REPLACEMENT'``."""
    pattern, separator, replacement = text.rpartition("=")
    if not separator or not pattern:
        raise RenameRuleError(f"rename rule {text!r} is not of the form 'REGEX=REPLACEMENT'")
    try:
        return RenameRule.compile(pattern, replacement)
    except RenameRuleError as error:
        raise RenameRuleError(f"rename rule {text!r}: {error}", part=error.part) from None


def load_rename_rules(path: str | os.PathLike) -> tuple[RenameRule, ...]:
    """Read the ``renames`` list of a YAML file; errors name the file, the key and the value."""
    data = validate_mapping(load_yaml(path), _FILE_FIELDS, path=path)
    rules = []
    for index, item in enumerate(data["renames"]):
        prefix = f"renames[{index}]."
        entry = validate_mapping(item, _RULE_FIELDS, path=path, prefix=prefix)
        try:
            rules.append(RenameRule.compile(entry["pattern"], entry["replacement"]))
        except RenameRuleError as error:
            raise ConfigError(path, str(error), key=prefix + error.part) from None
    return tuple(rules)


RULES_FILE_SUFFIXES = (".yaml", ".yml")


def is_rules_file(value: str | os.PathLike) -> bool:
    """Whether ``value`` names a rules file rather than being a rule: its name ends in .yaml or .yml."""
    return os.fspath(value).lower().endswith(RULES_FILE_SUFFIXES)


def command_line_rules(config: str | os.PathLike | None, rules: Iterable[str]) -> tuple[RenameRule, ...]:
    """The rules a command line gives: those of its ``--config`` file first, then each ``--rename``."""
    from_file = load_rename_rules(config) if config else ()
    for text in rules:
        if is_rules_file(text):
            raise RenameRuleError(f"--rename {text!r} names a rules file: give rules files with --config")
    return from_file + tuple(parse_rename_rule(text) for text in rules)


RenameSpec = None | str | os.PathLike | Mapping[str, str] | Iterable[str | os.PathLike | RenameRule]


def coerce_rename_rules(rename: RenameSpec) -> tuple[RenameRule, ...]:
    """Rules from what ``compare_traces(rename=...)`` accepts.

    None (no rules); a mapping ``{regex: replacement}``; a rules file or a ``'REGEX=REPLACEMENT'``
    string (see the module docstring for which is which); or an iterable of rules files, rule
    strings and :class:`RenameRule`, applied in order.
    """
    if rename is None:
        return ()
    if isinstance(rename, (str, os.PathLike)):
        rename = [rename]
    if isinstance(rename, Mapping):
        return tuple(RenameRule.compile(pattern, replacement) for pattern, replacement in rename.items())
    rules: list[RenameRule] = []
    for item in rename:
        if isinstance(item, RenameRule):
            rules.append(item)
        elif isinstance(item, os.PathLike) or is_rules_file(item):
            rules.extend(load_rename_rules(item))
        else:
            rules.append(parse_rename_rule(item))
    return tuple(rules)


def apply_rename_rules(rules: Iterable[RenameRule], path: str) -> str:
    for rule in rules:
        path = rule.apply(path)
    return path
