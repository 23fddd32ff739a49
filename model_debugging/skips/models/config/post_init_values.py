"""Values a configuration's ``__post_init__`` computes from the values it was given.

``self.sliding_window = self.sliding_window if self.use_sliding_window else None`` (Qwen2) and
``kwargs["is_encoder_decoder"] = self.text_config.is_encoder_decoder`` (BLIP-2, handed on to the base
class, which sets it) decide an attribute from others. Such a value is computed here when it is
certain: the name is written once along the MRO, by a statement at the top of a ``__post_init__``
(not under a branch or a loop), as an expression of literals, of ``self.<attr>`` that no
``__post_init__`` writes (or the name itself, read before it is written), of a sub-configuration's
attributes (``self.text_config.x``, the part as the scanner builds it), ``x if c else y``, ``and`` /
``or`` / ``not``, comparisons and Python's other operators on such values (evaluated by the
interpreter's ``Evaluator``). No class on the way may define ``__init__``; the base class may not
write the name. Anything else is left to the run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from model_debugging.skips.interp.expressions import Evaluator
from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.outside_tests import NoTestHelpers, no_helper
from model_debugging.skips.interp.values import UNHANDLED, Config, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS
from model_debugging.skips.models.config.kwargs import sets_remaining_keywords
from model_debugging.skips.models.generation_cache.model_outputs import parsed_file
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

NOT_READ = object()  # the value is left to the run
_PLAIN = (bool, int, float, str, type(None))
# reads a configuration's attribute: (configuration, name, before __post_init__ writes it) -> value
Read = Callable[[Config, str, bool], object]


def post_init_value(library: Library, config: Config, name: str, read: Read) -> object:
    """The value ``name`` takes in ``__post_init__``, or :data:`NOT_READ`."""
    found = _single_write(library, config.info, name) if config.info is not None else None
    if found is None:
        return NOT_READ
    expression, written = found
    parts = library.attribute(config.info, "sub_configs")
    return _value(expression, config, name, written - set(parts if isinstance(parts, dict) else ()), read)


def _single_write(library: Library, info: LibraryClass, name: str) -> tuple[ast.expr, frozenset[str]] | None:
    """The expression of the one write of ``name`` and every name the ``__post_init__`` methods
    along the MRO write (None unless that write is certain and alone). The parts
    (``sub_configs``) they write are those the scanner builds from what the tester passes."""
    mro = library.mro(info)
    base = next((ancestor for ancestor in mro if ancestor.name in BASE_CONFIGS), None)
    if base is None or any("__init__" in ancestor.methods for ancestor in mro if ancestor is not base):
        return None
    methods = []
    for ancestor in mro:
        path = library.path_of(ancestor)
        if path is None:
            return None
        method = library.memoized(
            ("post_init", path, ancestor.name), lambda p=path, a=ancestor.name: _post_init(library, p, a)
        )
        if method is not None:
            methods.append((ancestor is base, method))
    writes, written = [], set()
    for is_base, method in methods:
        for statement, target in _writes(method):
            if is_base and target == "*" and sets_remaining_keywords(method):
                continue  # the base sets the keywords left in kwargs: names no field declares
            written.add(target)
            if target == name:
                if is_base:
                    return None
                writes.append((statement, method))
    if len(writes) != 1:
        return None
    statement, method = writes[0]
    if statement not in method.body or not isinstance(statement, ast.Assign):
        return None  # under a branch or a loop, or not a plain assignment
    return statement.value, frozenset(written)


def _post_init(library: Library, path: str, class_name: str) -> ast.FunctionDef | None:
    tree = parsed_file(library, path)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return next(
                (
                    item
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name == "__post_init__"
                ),
                None,
            )
    return None


def _writes(method: ast.FunctionDef) -> list[tuple[ast.stmt, str]]:
    """``(statement, name)`` for ``self.<name> = ...`` (also augmented, annotated, ``setattr(self,
    "<name>", ...)``) and ``kwargs["<name>"] = ...`` in the method; a name only the run knows is
    written as ``"*"``."""
    keywords = method.args.kwarg.arg if method.args.kwarg else None
    found = []
    for statement in ast.walk(method):
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = [item for target in statement.targets for item in _unpacked(target)]
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            targets = [statement.target]
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            if ast.unparse(call.func) == "setattr" and call.args and ast.unparse(call.args[0]) == "self":
                named = call.args[1] if len(call.args) > 1 else None
                literal = isinstance(named, ast.Constant) and isinstance(named.value, str)
                found.append((statement, named.value if literal else "*"))
            continue
        for target in targets:
            if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
                found.append((statement, target.attr))
            elif isinstance(target, ast.Subscript) and keywords and ast.unparse(target.value) == keywords:
                key = target.slice
                found.append((statement, key.value if isinstance(key, ast.Constant) else "*"))
    return found


def _unpacked(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [item for element in target.elts for item in _unpacked(element)]
    return [target]


class _PostInitSelf:
    """``self`` in a ``__post_init__``: the configuration being read."""


_SELF = _PostInitSelf()


@dataclass(frozen=True)
class _Facts(NoTestHelpers):
    """What the Evaluator is handed for the expression of one write of ``name`` (``written``: the
    names the ``__post_init__`` methods write)."""

    config: Config
    name: str
    written: frozenset[str]
    read: Read

    @property
    def handlers(self) -> Handlers:
        return _POST_INIT


def _value(node: ast.expr, config: Config, name: str, written: frozenset[str], read: Read) -> object:
    """The value of ``node`` when it is a literal, a sub-configuration or one computed from them."""
    if "*" in written:
        return NOT_READ
    facts = _Facts(config, name, written, read)
    value = Evaluator(facts, no_helper).value(node, {"self": _SELF})
    if isinstance(value, Config) and value.sub is not None:
        return value
    return _plain(value)


_POST_INIT = Handlers()


@_POST_INIT.attribute(_PostInitSelf)
def _self_attribute(
    facts: _Facts, owner: _PostInitSelf, name: str, unknown: Unknown, missing: object
) -> object:
    if name in facts.written and name != facts.name:
        return unknown  # computed there too
    value = facts.read(facts.config, name, name == facts.name)
    if isinstance(value, Config) and value.sub is not None:
        return value
    found = _plain(value)
    return unknown if found is NOT_READ else found


@_POST_INIT.attribute(Config)
def _part_attribute(facts: _Facts, owner: Config, name: str, unknown: Unknown, missing: object) -> object:
    """An attribute of a sub-configuration (``self.text_config.x``)."""
    found = _plain(facts.read(owner, name, False)) if owner.sub is not None else NOT_READ
    return unknown if found is NOT_READ else found


@_POST_INIT.comparison
def _identity(facts: _Facts, operator: ast.cmpop, left: object, right: object) -> object:
    """``self.text_config is None``: a sub-configuration is not None, True or False."""
    if not isinstance(operator, (ast.Is, ast.IsNot)):
        return UNHANDLED
    parts = [side for side in (left, right) if isinstance(side, Config)]
    singletons = [side for side in (left, right) if side is None or isinstance(side, bool)]
    if len(parts) == 1 and len(singletons) == 1:
        return isinstance(operator, ast.IsNot)
    return UNHANDLED


def _plain(value: object) -> object:
    return value if isinstance(value, _PLAIN) and not isinstance(value, Unknown) else NOT_READ
