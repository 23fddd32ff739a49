"""The symbolic values the run-time evaluator computes with, beside plain Python literals."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from model_debugging.skips.records.library import LibraryClass

# The comparisons of two plain values (numbers, strings, ...) both evaluators compute directly.
VALUE_COMPARISONS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


@dataclass(frozen=True)
class Unknown:
    """A value only the run knows, produced by the expression ``node`` (or written ``source``).

    ``exists`` says the attribute it was read from is known to exist (``hasattr`` is then True).
    The expression's text is made only when a verdict needs it: unparsing on every step cost more
    than the evaluation itself.
    """

    source: str = ""
    node: ast.AST | None = field(default=None, compare=False)
    exists: bool = False

    @property
    def code(self) -> str:
        return ast.unparse(self.node) if self.node is not None else self.source

    def existing(self) -> Unknown:
        return Unknown(self.source, self.node, exists=True)


@dataclass(frozen=True)
class OfKnownTruth(Unknown):
    """A value only the run knows whose truth is known: ``a or "default"`` with ``a`` unknown is
    ``a`` or the default, true either way."""

    truth: bool = True


def source_expression(value: object) -> ast.expr | None:
    """The expression an unknown value's ``source`` writes (a tester's ``TextConfig(...)``), or None
    for any other value, an unknown without source, or a source that is not one expression."""
    if not isinstance(value, Unknown) or not value.source:
        return None
    try:
        return ast.parse(value.source.strip(), mode="eval").body
    except SyntaxError:
        return None


@dataclass(frozen=True)
class Tensor(Unknown):
    """A tensor a tester builds: its values stay unknown, its shape and zeros may be known.

    ``dims`` holds one size per dimension (None for a size only the run knows); ``dims`` None means
    even the rank is unknown. ``has_zero`` says whether ``0 in tensor`` (None: only the run knows).
    Being an :class:`Unknown`, it is read as unknown everywhere except where these facts are asked.
    """

    dims: tuple[int | None, ...] | None = None
    has_zero: bool | None = None


@dataclass(frozen=True)
class ModelClass:
    """A model class of the library (``model_class`` in ``for model_class in self.all_model_classes``)."""

    info: LibraryClass


@dataclass(frozen=True)
class ModuleName(Unknown):
    """The name ``model.named_modules()`` gives a submodule: its attribute path, never empty (only
    the instance itself is named ``""``), else known only at run time."""


@dataclass(frozen=True)
class ModelInstance:
    """``model_class(config)``: class attributes are known, what ``__init__`` assigns is not."""

    info: LibraryClass
    config: object


@dataclass(frozen=True)
class Method:
    """``model_class.forward`` / ``model.prepare_inputs_for_generation``: its signature can be read."""

    info: LibraryClass
    name: str


@dataclass(frozen=True)
class Parameters:
    """``inspect.signature(f).parameters``: membership is exact on the declared names."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class ConfigClass:
    info: LibraryClass


@dataclass(frozen=True)
class Config:
    """The configuration the tester builds: its class, and values set on it by the test.

    ``sub`` marks a sub-configuration (``config.text_config``): ``"read"`` when the dict the tester
    passes for it was read (its items are the overrides, the class defaults fill the rest),
    ``"unread"`` when it was not (only whether an attribute exists is known).
    """

    info: LibraryClass | None
    overrides: tuple[tuple[str, object], ...] = ()
    sub: Literal["read", "unread"] | None = None

    def with_value(self, name: str, value: object) -> Config:
        kept = [item for item in self.overrides if item[0] != name]
        return Config(self.info, (*kept, (name, value)), self.sub)


# What a call can change in place: a variable holding one, handed to a call nothing models, is
# unknown after it. A configuration handed to a call (``set_config_for_less_flaky_test(config)``)
# is taken as unchanged: what the library's functions write on it is not read.
CHANGEABLE = (dict, list, set)
# Python's own values, on which the interpreter computes as Python does (truth, comparisons, builtins).
PLAIN = (str, int, float, bool, type(None), tuple, list, dict, set, frozenset, range)


@dataclass(frozen=True)
class Tester:
    """``self.model_tester``."""


@dataclass(frozen=True)
class TestSelf:
    """``self`` in a test method."""


@dataclass(frozen=True)
class Helper:
    """``self.<name>``: a method of the test class; calling it runs its definition when readable."""

    name: str


@dataclass(frozen=True)
class AutoMapping:
    """``MODEL_MAPPING`` and friends: keyed by configuration classes."""

    names: str  # the ``*_NAMES`` mapping behind it


@dataclass(frozen=True)
class SourceFile:
    """``inspect.getfile(cls)`` / ``open(...)`` of a library file: ``.read()`` gives its text."""

    path: str


@dataclass(frozen=True)
class SourceText:
    """What ``.read()`` of a :class:`SourceFile` gives: the file's text, asked only through
    ``x in text`` and ``re.search(pattern, text)``, each a library fact (``models/source_texts.py``)."""

    path: str


@dataclass(frozen=True)
class Builtin:
    """A function the evaluator knows (``len``, ``getattr``, ``get_values``, ``inspect.signature``, ...)."""

    name: str


class _Absent:
    """The type of :data:`ABSENT`."""

    def __repr__(self) -> str:
        return "ABSENT"


# An attribute or name that surely does not exist (``hasattr`` is False): distinct from None, a value.
ABSENT = _Absent()


@dataclass(frozen=True)
class Returns:
    """What calling a method whose body is one ``return <expression>`` gives: the interpreter runs
    ``expression`` with ``bindings`` (``cls`` bound to the class, for a library class method)."""

    expression: ast.expr
    bindings: tuple[tuple[str, object], ...]


class _Unhandled:
    """The type of :data:`UNHANDLED`."""

    def __repr__(self) -> str:
        return "UNHANDLED"


# What a handler gives for a question that is not its own: the interpreter asks on (or decides itself).
UNHANDLED = _Unhandled()


# What Python's own operations raise on known values of the wrong kind or content (a key a dict
# lacks, a string added to a number): the test fails there, through handlers the interpreter does not
# follow, so the value is one only the run knows.
RAISED_BY_PYTHON = (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError, re.error)


def python_result(unknown: Unknown, operation: Callable[..., object], *operands: object) -> object:
    """``operation(*operands)``, Python's own operation on known values, or ``unknown`` when it raises
    one of :data:`RAISED_BY_PYTHON` (any other error is a bug of the interpreter, and propagates)."""
    try:
        return operation(*operands)
    except RAISED_BY_PYTHON:
        return unknown


class Signal(Exception):  # noqa: N818 - control flow, not an error
    """The run of a test changes course (it skips, ends, or cannot be followed): never swallowed."""


class Raised(Signal):  # noqa: N818 - control flow: the library raises, the evaluator follows it
    """A call the library's source shows raising ``name`` (``NotImplementedError``): a ``try`` whose
    handler names it runs that handler; inside ``self.subTest`` it is undecided; anywhere else the
    test ends there, as run."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name

    def handler(self, node: ast.With | ast.Try) -> ast.ExceptHandler | None:
        """The first ``except X`` / ``except (X, Y)`` / bare ``except`` of ``node`` that catches it."""
        names = (self.name, "Exception", "BaseException")
        for handler in getattr(node, "handlers", ()):
            types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if handler.type is None or any(ast.unparse(item).rsplit(".", 1)[-1] in names for item in types):
                return handler
        return None

    @staticmethod
    def in_subtest(node: ast.With | ast.Try) -> bool:
        """``with self.subTest(...)``: unittest records the exception there and the test goes on."""
        return any("subTest" in ast.unparse(item.context_expr) for item in getattr(node, "items", ()))


class Skipped(Signal):  # noqa: N818 - it is a skip, not an error
    """Raised through the evaluator when the test reaches ``self.skipTest`` (``reason``, ``line``)."""

    def __init__(self, reason: str, line: int):
        super().__init__(reason)
        self.reason, self.line = reason, line
