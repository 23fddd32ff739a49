"""Questions a test asks of a library file's text, each answered as a fact.

A common test may read the source of a model's file (``inspect.getfile``, then ``read()``) and
look for a phrase in it or a pattern. Asked as :meth:`~model_debugging.skips.resolve.library.Library.fact`,
the evaluation depends on the answers, not on every character: an edit elsewhere in the file
changes no answer and evaluates nothing again.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from model_debugging.skips.models.generation_cache.model_outputs import method_definition
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library


@dataclass(frozen=True)
class TextMatch:
    """What ``re.search`` found in a file's text: the match and its groups (group 0 first)."""

    groups: tuple[str | None, ...]

    def group(self, *indices: int) -> str | None | tuple[str | None, ...]:
        """``Match.group`` by group numbers (raises IndexError for a group the pattern lacks)."""
        found = tuple(self.groups[index] for index in indices or (0,))
        return found[0] if len(found) == 1 else found


@dataclass(frozen=True)
class TextSearch:
    """The answer to ``re.search(pattern, <text>, flags)``: ``readable`` False when the file cannot be
    read; ``match`` None when the pattern is not found."""

    readable: bool
    match: TextMatch | None = None


def text_contains(library: Library, path: str, part: str) -> bool | None:
    """``part in <the text of path>``; None when the file cannot be read."""
    return library.fact(_contains, path, part)


def text_search(library: Library, path: str, pattern: str, flags: int) -> TextSearch:
    return library.fact(_search, path, pattern, flags)


def attention_interface_used(library: Library, base: LibraryClass, path: str) -> bool | None:
    """Whether the attention modules of file ``path`` dispatch through the attention interface, as
    ``base._can_set_attn_implementation`` (``PreTrainedModel``'s) decides from the file's text.

    The rule is the checkout's own, read from that method: ``if re.search(<pattern>, code): return
    "<phrase>" in code and ...`` else ``return True`` (the phrases changed between releases:
    ``ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]`` in 2025,
    ``ALL_ATTENTION_FUNCTIONS.get_interface(`` in 2026). None when the method is not of that shape
    or the file cannot be read."""
    rule = _attention_rule(method_definition(library, base, "_can_set_attn_implementation"))
    return None if rule is None else library.fact(_attention_interface, path, *rule)


def experts_interface_used(library: Library, base: LibraryClass, path: str) -> bool | None:
    """Whether file ``path`` may set its experts implementation, as ``base._can_set_experts_implementation``
    (``PreTrainedModel``'s) decides from the file's text: the checkout's own rule, read from the
    method's final ``return "<phrase>" in code`` (``@use_experts_implementation`` in 2026). None
    when the method is not of that shape or the file cannot be read."""
    function = method_definition(library, base, "_can_set_experts_implementation")
    last = function.body[-1] if function is not None and function.body else None
    value = last.value if isinstance(last, ast.Return) else None
    first = value.values[0] if isinstance(value, ast.BoolOp) else value
    text = first.comparators[0] if isinstance(first, ast.Compare) and first.comparators else None
    phrases = _phrases_required([last], text.id) if isinstance(text, ast.Name) else None
    return None if phrases is None else library.fact(_contains_all, path, phrases)


def _contains_all(library: Library, path: str, phrases: tuple[str, ...]) -> bool | None:
    text = library.source(path)
    return None if text is None else all(phrase in text for phrase in phrases)


def _attention_rule(function: ast.FunctionDef | None) -> tuple[str, tuple[str, ...]] | None:
    """``(pattern, phrases)`` of the method's ``if re.search(pattern, code):`` test."""
    for node in ast.walk(function) if function is not None else ():
        if not isinstance(node, ast.If):
            continue
        test = node.test
        if not (
            isinstance(test, ast.Call)
            and ast.unparse(test.func) == "re.search"
            and len(test.args) == 2
            and not test.keywords
            and isinstance(test.args[0], ast.Constant)
            and isinstance(test.args[0].value, str)
            and isinstance(test.args[1], ast.Name)
        ):
            continue
        phrases = _phrases_required(node.body, test.args[1].id)
        returns_true = (
            len(node.orelse) == 1
            and isinstance(node.orelse[0], ast.Return)
            and isinstance(node.orelse[0].value, ast.Constant)
            and node.orelse[0].value.value is True
        )
        return (test.args[0].value, phrases) if phrases is not None and returns_true else None
    return None


def _phrases_required(body: list[ast.stmt], text: str) -> tuple[str, ...] | None:
    """The phrases of ``return "a" in <text> and "b" in <text>`` (one or more), else None."""
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value = body[0].value
    tests = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
    phrases = []
    for test in tests:
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Constant)
            and isinstance(test.left.value, str)
            and isinstance(test.comparators[0], ast.Name)
            and test.comparators[0].id == text
        ):
            return None
        phrases.append(test.left.value)
    return tuple(phrases)


def _attention_interface(library: Library, path: str, pattern: str, phrases: tuple[str, ...]) -> bool | None:
    text = library.source(path)
    if text is None:
        return None
    if re.search(pattern, text):
        return all(phrase in text for phrase in phrases)
    return True


def _contains(library: Library, path: str, part: str) -> bool | None:
    text = library.source(path)
    return None if text is None else part in text


def _search(library: Library, path: str, pattern: str, flags: int) -> TextSearch:
    text = library.source(path)
    if text is None:
        return TextSearch(False)
    found = re.search(pattern, text, flags)
    return TextSearch(True, TextMatch((found.group(0), *found.groups())) if found else None)
