"""A tester's ``get_config`` that starts from its parent tester's: ``config = super().get_config()``
(or ``Base.get_config(self)``, or ``return super().get_config(key=value)``) and sets values on it.

The parent's ``get_config`` is found along the tester's MRO, possibly in another file
(``tests/causal_lm_tester.py``); what the override sets or hands on goes on top of what the parent
passes. A parent that cannot be read leaves the rest unknown, never the configuration's defaults.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from model_debugging.skips.models.test_class.context import KeywordsRest
from model_debugging.skips.models.tester.config import forwards_keywords
from model_debugging.skips.models.tester.config_locals import built_then_set
from model_debugging.skips.parse.signatures import signature


def followed_keywords(
    definitions: Sequence[tuple[str, ast.FunctionDef | None]],
    read: Callable[[ast.FunctionDef], dict[str, object] | None],
) -> tuple[dict[str, object] | None, KeywordsRest]:
    """The keywords of the tester's ``get_config`` (``definitions``: each class of its MRO defining
    one, as ``(class name, definition)``, None for a class not read; ``read``: :func:`config_keywords`),
    following overrides that start from the parent's configuration and set values on it. A parent
    read only as the conventional loop over the tester's attributes leaves the rest to those
    attributes; a parent not read, or not found, leaves the rest unknown. ``(None, TESTER)`` when
    the definition that runs is itself not read (the tester's attributes stand for its keywords)."""
    remaining = list(definitions)
    while remaining and remaining[0][1] is None:  # as method_along: the first definition read runs
        remaining.pop(0)
    if not remaining:
        return None, KeywordsRest.TESTER
    on_top: dict[str, object] = {}
    first = True
    while remaining and (function := remaining[0][1]) is not None:
        parent = _parent_call(function)
        own = read(function)
        if parent is None:
            if own is not None and not _calls_parent(function):
                return {**own, **on_top}, KeywordsRest.DEFAULT
            if first and own is None and not _calls_parent(function):
                return None, KeywordsRest.TESTER
            rest = KeywordsRest.TESTER if passes_tester_attributes(function) else KeywordsRest.UNKNOWN
            return on_top, rest
        on_top, first = {**(own or {}), **on_top}, False
        owners = [name for name, _ in remaining[1:]]
        if parent != "super" and parent not in owners:
            break
        remaining = remaining[1:] if parent == "super" else remaining[1 + owners.index(parent) :]
        given = remaining[0][1] if remaining else None
        handed = _handed_keywords(function)
        if handed and (given is None or not forwards_keywords(given) or handed & _parameters(given)):
            break  # keywords handed to a parent that does not pass them all on as they are
    return on_top, KeywordsRest.UNKNOWN


def passes_tester_attributes(function: ast.FunctionDef | None) -> bool:
    """A ``get_config`` gathering its keywords in the conventional loop
    ``for k in self.config_args + self.forced_config_args`` (``CausalLMModelTester``, ``VLMModelTester``)."""
    loops = [node.iter for node in ast.walk(function) if isinstance(node, ast.For)] if function else []
    return [ast.unparse(node) for node in loops] == ["self.config_args + self.forced_config_args"]


def _parent_call(function: ast.FunctionDef) -> str | None:
    """``"super"`` for a ``get_config`` whose configuration is ``super().get_config()`` (its one
    return, or bound and then only set), the class name for ``Base.get_config(self)``; None for
    anything else."""
    returns = [node.value for node in ast.walk(function) if isinstance(node, ast.Return)]
    built = built_then_set(function)
    call = built[0] if built is not None else returns[0] if len(returns) == 1 else None
    if not isinstance(call, ast.Call) or not _reaches_parent(call):
        return None
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    owner = call.func.value
    if isinstance(owner, ast.Call):
        return None if call.args else "super"
    return owner.id if len(call.args) == 1 else None


def _handed_keywords(function: ast.FunctionDef) -> frozenset[str]:
    """The keywords ``function``'s parent call hands on (``super().get_config(key=value)``)."""
    return frozenset(
        keyword.arg or "**"
        for node in ast.walk(function)
        if _reaches_parent(node)
        for keyword in node.keywords
    )


def _parameters(function: ast.FunctionDef) -> frozenset[str]:
    """The names a keyword given to ``function`` may bind before its ``**kwargs``."""
    return frozenset(signature(function, method=False).names)


def _reaches_parent(node: ast.AST) -> bool:
    """``super().get_config(...)`` or ``Name.get_config(self, ...)``: a call of a parent's ``get_config``."""
    if not (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_config"
    ):
        return False
    owner = node.func.value
    if isinstance(owner, ast.Call):
        return isinstance(owner.func, ast.Name) and owner.func.id == "super"
    first = node.args[0] if node.args else None
    return isinstance(owner, ast.Name) and isinstance(first, ast.Name) and first.id == "self"


def _calls_parent(function: ast.FunctionDef) -> bool:
    return any(_reaches_parent(node) for node in ast.walk(function))
