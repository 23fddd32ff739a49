"""What the values of a configuration constructor run do, for the interpreter's
:class:`~model_debugging.skips.interp.expressions.Evaluator` (see ``constructor.py``).

The Evaluator computes Python itself; this table says what the constructor's own values do:
``self`` (the configuration being built: its attributes and methods), ``kwargs`` (``pop`` /
``get`` / ``setdefault`` / ``items`` and ``in``), and the calls that go back to the run
(``super().__init__(...)``, ``Base.__init__(self, ...)``, ``self.<method>(...)``, a library
function, ``setattr(self, ...)``). A name the constructor does not bind is only known to the run,
but calling it is followed when the library writes it. A call that is not followed may change what
it is handed: ``self`` (any attribute), ``kwargs`` (what it holds), a list or a dict.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from model_debugging.skips.interp.builtins import BUILTIN_NAMES
from model_debugging.skips.interp.expressions import Evaluator
from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.outside_tests import NoTestHelpers, no_helper
from model_debugging.skips.interp.values import ABSENT, UNHANDLED, Builtin, Unknown, python_result
from model_debugging.skips.models.config.constructor_state import (
    SELF,
    ConfigSelf,
    Items,
    Keywords,
    State,
    known,
)
from model_debugging.skips.records.literals import UNEVALUATED

_TYPES = {"dict": dict, "list": list, "tuple": tuple, "str": str, "int": int, "float": float, "bool": bool}
_DICT_READERS = frozenset({"get", "items", "keys", "values"})
# functions that neither write the configuration nor keep what they are handed
_PURE = frozenset({"float", "repr", "type", "print"})


class Run(Protocol):
    """What the values ask of the constructor run they belong to (``ConstructedConfig``)."""

    def is_method(self, name: str) -> bool: ...

    def attribute(self, name: str, state: State) -> object: ...

    def set_attribute(self, name: str, value: object, state: State) -> None: ...

    def call_next(
        self, name: str, start: int, arguments: list, keywords: Keywords, state: State
    ) -> object: ...

    def call_base(
        self, base: str, name: str, arguments: list, keywords: Keywords, state: State
    ) -> object: ...

    def call_function(
        self, path: str, name: str, arguments: list, keywords: Keywords, state: State
    ) -> object: ...


@dataclass(frozen=True)
class FreeName(Unknown):
    """A name the constructor does not bind (its ``source``): a library class or function, a module."""


@dataclass(frozen=True)
class FreeAttribute(Unknown):
    """``<free name>.<attribute>`` (``PretrainedConfig.__init__``)."""

    owner: str = ""
    attribute: str = ""


@dataclass(frozen=True)
class BoundMethod:
    """``self.<name>`` (``start`` 0) or ``super().<name>`` (``start``: the next class of the MRO)."""

    name: str
    start: int

    def __str__(self) -> str:
        return f"{UNEVALUATED}self.{self.name}>"


@dataclass(frozen=True)
class Super:
    """``super()`` in a method of the class at ``start - 1`` of the MRO."""

    def __str__(self) -> str:
        return f"{UNEVALUATED}super()>"


@dataclass
class Frame(NoTestHelpers):
    """The facts the Evaluator is handed for one expression of a constructor: the run, its state,
    and where the running function is written (its class's index in the MRO, its file)."""

    run: Run
    state: State
    index: int
    path: str

    @property
    def handlers(self) -> Handlers:
        return CONSTRUCTOR_HANDLERS


def evaluate(run: Run, node: ast.expr, state: State, index: int, path: str) -> object:
    """``node``'s value in the function of the class at ``index`` of the MRO, written in ``path``."""
    value = Evaluator(Frame(run, state, index, path), no_helper).value(node, state.variables)
    return Unknown(node=node) if _formats_unknown(value) else value


def _formats_unknown(value: object) -> bool:
    """An f-string (or a container of them) with a part only the run knows: the Evaluator writes
    such a part as a skip reason does, the constructor keeps the string unknown."""
    if isinstance(value, str):
        return UNEVALUATED in value
    if isinstance(value, dict):
        return any(_formats_unknown(item) for item in value.values())
    return isinstance(value, (list, tuple)) and any(_formats_unknown(item) for item in value)


def passed_on(keywords: dict[str, object], unpacked: Callable[[], list[object]]) -> Keywords:
    """The keywords a call hands on: those written, and its ``**`` dicts and ``**kwargs``."""
    handed = Keywords(_none_passed)
    written: dict[str, object] = {}
    for value in unpacked():
        if isinstance(value, Keywords):
            handed = value.merged(handed.written)
        elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
            written.update(value)
        else:
            handed = Keywords(handed.passed, handed.written, opaque=True)
    return handed.merged({**written, **keywords})


def _none_passed(_name: str) -> object:
    return ABSENT


def _not_followed(frame: Frame, handed: list[object], unknown: Unknown) -> Unknown:
    """A call that is not followed: what it is handed it may change."""
    if any(value is SELF for value in handed):
        frame.state.forget()
    for value in handed:
        if isinstance(value, Keywords):
            value.opaque = True
        elif isinstance(value, (list, dict)):
            frame.state.changed(value)
    return unknown


CONSTRUCTOR_HANDLERS = Handlers()


@CONSTRUCTOR_HANDLERS.name
def _free_name(frame: Frame, name: str, unknown: Unknown) -> object:
    return UNHANDLED if name in BUILTIN_NAMES else FreeName(name)


@CONSTRUCTOR_HANDLERS.attribute(ConfigSelf)
def _self_attribute(frame: Frame, owner: ConfigSelf, name: str, unknown: Unknown, missing: object) -> object:
    if frame.run.is_method(name):
        return BoundMethod(name, 0)
    value = frame.run.attribute(name, frame.state)
    return missing if value is ABSENT else value


@CONSTRUCTOR_HANDLERS.attribute(Super)
def _super_attribute(frame: Frame, owner: Super, name: str, unknown: Unknown, missing: object) -> object:
    return BoundMethod(name, frame.index + 1)


@CONSTRUCTOR_HANDLERS.attribute(FreeName)
def _free_attribute(frame: Frame, owner: FreeName, name: str, unknown: Unknown, missing: object) -> object:
    return FreeAttribute(f"{owner.source}.{name}", owner=owner.source, attribute=name)


@CONSTRUCTOR_HANDLERS.call(BoundMethod)
def _call_method(frame: Frame, function: BoundMethod, arguments, keywords, unpacked, unknown) -> object:
    handed = passed_on(keywords, unpacked)
    return frame.run.call_next(function.name, function.start, arguments, handed, frame.state)


@CONSTRUCTOR_HANDLERS.call(FreeAttribute)
def _call_attribute(frame: Frame, function: FreeAttribute, arguments, keywords, unpacked, unknown) -> object:
    if arguments and arguments[0] is SELF:  # ``Base.__init__(self, ...)``
        handed = passed_on(keywords, unpacked)
        return frame.run.call_base(function.owner, function.attribute, arguments[1:], handed, frame.state)
    return _not_followed(frame, [*arguments, *keywords.values()], unknown)


@CONSTRUCTOR_HANDLERS.call(FreeName)
def _call_name(frame: Frame, function: FreeName, arguments, keywords, unpacked, unknown) -> object:
    """``super()``, ``setattr``, ``range``, ``zip``, ``dict``, ``float``, or a library function."""
    name = function.source
    if name == "super" and not arguments and not keywords:
        return Super()
    if name == "setattr" and len(arguments) == 3 and arguments[0] is SELF:
        if isinstance(arguments[1], str):
            frame.run.set_attribute(arguments[1], arguments[2], frame.state)
        else:
            frame.state.forget()
        return None
    if name == "range" and arguments and all(isinstance(item, int) for item in arguments):
        return list(range(*arguments)) if len(arguments) <= 3 else unknown
    if name == "zip" and arguments and all(isinstance(item, (list, tuple)) for item in arguments):
        return list(zip(*arguments, strict=False))
    if name == "dict" and len(arguments) == 1 and isinstance(arguments[0], (list, dict)):
        return python_result(unknown, dict, arguments[0]) if known(arguments[0]) else unknown
    if name == "dict" and not arguments:
        handed = passed_on(keywords, unpacked)
        return unknown if handed.opaque or handed.taken else dict(handed.written)
    if name == "float" and len(arguments) == 1 and known(arguments[0]) and not keywords:
        return python_result(unknown, float, arguments[0])
    if name in _PURE:
        return unknown
    called = frame.run.call_function(frame.path, name, arguments, passed_on(keywords, unpacked), frame.state)
    return _not_followed(frame, [*arguments, *keywords.values()], unknown) if called is ABSENT else called


@CONSTRUCTOR_HANDLERS.call(Unknown)
def _call_unknown(frame: Frame, function: Unknown, arguments, keywords, unpacked, unknown) -> object:
    if isinstance(unknown.node, ast.Call) and isinstance(unknown.node.func, ast.Attribute):
        return UNHANDLED  # ``owner.method(...)``: the method handlers of the owner's kind answer
    return _not_followed(frame, [*arguments, *keywords.values()], unknown)


@CONSTRUCTOR_HANDLERS.builtin("isinstance")
def _isinstance(frame: Frame, name: str, arguments: list[object], unknown: Unknown) -> object:
    if len(arguments) != 2 or not known(arguments[0]):
        return unknown
    kind = arguments[1]
    written = kind.name if isinstance(kind, Builtin) else kind.source if isinstance(kind, FreeName) else None
    return isinstance(arguments[0], _TYPES[written]) if written in _TYPES else unknown


@CONSTRUCTOR_HANDLERS.builtin("str")
def _str(frame: Frame, name: str, arguments: list[object], unknown: Unknown) -> object:
    return UNHANDLED if all(known(argument) for argument in arguments) else unknown


@CONSTRUCTOR_HANDLERS.method(ConfigSelf)
def _self_method(frame: Frame, owner: ConfigSelf, name: str, arguments, keywords, unknown) -> object:
    """``self.<name>(...)`` where no class of the library defines ``name``."""
    handed = Keywords(_none_passed).merged(keywords)
    return frame.run.call_next(name, 0, arguments, handed, frame.state)


@CONSTRUCTOR_HANDLERS.method(Keywords)
def _keywords_method(frame: Frame, owner: Keywords, name: str, arguments, keywords, unknown) -> object:
    key = arguments[0] if arguments else None
    default = arguments[1] if len(arguments) > 1 else None
    if name == "items":
        return Items(owner)
    if name == "copy":
        return owner.copy()
    if name in ("pop", "get", "setdefault") and isinstance(key, str):
        value = owner.look(key, take=name == "pop")
        if value is ABSENT and name == "setdefault":
            owner.written[key] = default
        return default if value is ABSENT else value
    owner.opaque = True
    return Unknown(f"kwargs.{name}(...)")


@CONSTRUCTOR_HANDLERS.method(list, dict)
def _container_method(frame: Frame, owner: list | dict, name: str, arguments, keywords, unknown) -> object:
    """A list's or dict's method the interpreter does not compute: it may change it in place."""
    if not (isinstance(owner, dict) and name in _DICT_READERS):
        frame.state.changed(owner)
    return _not_followed(frame, [*arguments, *keywords.values()], unknown)


@CONSTRUCTOR_HANDLERS.method(object)
def _other_method(frame: Frame, owner: object, name: str, arguments, keywords, unknown) -> object:
    return _not_followed(frame, [*arguments, *keywords.values()], unknown)


@CONSTRUCTOR_HANDLERS.contains(Keywords)
def _holds_keyword(frame: Frame, container: Keywords, item: object) -> bool | None:
    """``"decoder" in kwargs``: known when the keyword is known to be there or not."""
    found = container.look(item) if isinstance(item, str) else Unknown()
    return None if isinstance(found, Unknown) else found is not ABSENT


@CONSTRUCTOR_HANDLERS.comparison
def _identity(frame: Frame, operator: ast.cmpop, left: object, right: object) -> object:
    """``self is None``, ``kwargs is not None``: neither is None, True or False."""
    if not isinstance(operator, (ast.Is, ast.IsNot)):
        return UNHANDLED
    ours = [side for side in (left, right) if side is SELF or isinstance(side, Keywords)]
    singletons = [side for side in (left, right) if side is None or isinstance(side, bool)]
    if len(ours) == 1 and len(singletons) == 1:
        return isinstance(operator, ast.IsNot)
    return UNHANDLED
