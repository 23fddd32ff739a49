"""A library file's text as a test reads it: ``inspect.getfile(cls)`` / ``open(path)``, ``.read()``,
``phrase in text``, ``re.search(pattern, text)`` and its match's ``group()``, each answered as a
library fact (:mod:`~model_debugging.skips.models.source_texts`).

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import (
    UNHANDLED,
    ConfigClass,
    ModelClass,
    SourceFile,
    SourceText,
    Unknown,
)
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.source_texts import TextMatch, text_contains, text_search
from model_debugging.skips.models.test_class.context import TestClassFacts


@HANDLERS.builtin("getfile", "open")
def _source_file(facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown) -> object:
    """``inspect.getfile(cls)`` (the file defining a library class) or ``open(<that file>)``."""
    target = arguments[0] if arguments else None
    if isinstance(target, SourceFile):
        return target
    if isinstance(target, (ModelClass, ConfigClass)):
        path = facts.library.path_of(target.info)
        return unknown if path is None else SourceFile(path)
    return unknown


@HANDLERS.builtin("search")
def _search_text(facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown) -> object:
    """``re.search(pattern, text[, flags])`` on a library file's text: the match, None, or unknown."""
    if len(arguments) < 2 or not isinstance(arguments[1], SourceText):
        return UNHANDLED  # Python's own re.search, on strings
    pattern, text, flags = (*arguments[:3], 0)[:3]
    if not (isinstance(pattern, str) and isinstance(flags, int)):
        return unknown
    found = text_search(facts.library, text.path, pattern, int(flags))
    return found.match if found.readable else unknown


@HANDLERS.method(SourceFile)
def _read(
    facts: TestClassFacts,
    owner: SourceFile,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    return SourceText(owner.path) if name == "read" else unknown


@HANDLERS.method(TextMatch)
def _group(
    facts: TestClassFacts,
    owner: TextMatch,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    if name == "group" and all(isinstance(item, int) for item in arguments):
        return owner.group(*arguments)
    return unknown


@HANDLERS.contains(SourceText)
def _in_text(facts: TestClassFacts, container: SourceText, item: object) -> bool | None:
    return text_contains(facts.library, container.path, item) if isinstance(item, str) else None
