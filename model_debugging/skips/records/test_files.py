"""Plain frozen records produced by parsing one file; they are what the cache stores.

Nothing here refers to libcst, so a warm scan never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Literal, Union

from model_debugging.skips.records.literals import LiteralValue


class SkipKind(str, Enum):
    """How a skip is written; the value is what the result's ``skips[].kind`` holds."""

    DECORATOR = "decorator"  # @unittest.skip / @pytest.mark.skip / skipIf(<literal>) on the test
    BODY = "body"  # self.skipTest / pytest.skip / raise SkipTest at the top of the test's body
    NOOP_OVERRIDE = "noop_override"  # the test is overridden by a body that does nothing
    CLASS_DECORATOR = "class_decorator"  # a skip decorator on the test class or a base
    FLAG_GUARD = "flag_guard"  # `if not self.<flag>: self.skipTest(...)` with the flag false
    PYTESTMARK = "pytestmark"  # `pytestmark = pytest.mark.skip(...)` in the module or a class of the MRO
    SETUP = "setup"  # setUp / setUpClass skips before the test runs
    RUNTIME = "runtime"  # a skip the common test reaches at run time, decided from the library's sources
    MODULE = "module"  # the test file (or one it imports) skips itself when pytest imports it


UNCONDITIONAL_REASON = "unconditional skip"  # the reason of a skip written without one


@dataclass(frozen=True)
class Skip:
    """An unconditional skip written in the source (without a reason: :data:`UNCONDITIONAL_REASON`)."""

    kind: SkipKind
    reason: str
    line: int


@dataclass(frozen=True)
class Flag:
    """``self.<path>`` (e.g. ``("has_attentions",)`` or ``("model_tester", "is_training")``).

    ``default`` is the third argument of ``getattr(self.model_tester, "x", default)`` when written.
    """

    path: tuple[str, ...]
    default: LiteralValue = None
    has_default: bool = False


@dataclass(frozen=True)
class Not:
    operand: FlagExpression


@dataclass(frozen=True)
class BoolOp:
    """``and`` / ``or`` over operands."""

    operator: Literal["and", "or"]
    operands: tuple[FlagExpression, ...]


@dataclass(frozen=True)
class Equals:
    """``<flag> == <literal>`` / ``is`` (``negated`` for ``!=`` / ``is not``)."""

    operand: FlagExpression
    value: LiteralValue
    negated: bool = False


# A condition over class flags, as a guard tests it.
FlagExpression = Union[Flag, Not, BoolOp, Equals]  # noqa: UP007 (a runtime alias; `|` needs 3.10 classes)


@dataclass(frozen=True)
class Guard:
    """``if <condition>: <skip>`` at the top level of a test body; ``condition`` uses only class flags."""

    condition: FlagExpression
    reason: str
    line: int
    code: str


@dataclass(frozen=True)
class Condition:
    """An environment-dependent guard (``@require_torch_gpu``, ``@slow``, ``skipIf(<runtime>)``, ...)."""

    text: str
    line: int


@dataclass(frozen=True)
class NameSkip:
    """A skip taken only by the tests named one of ``names`` (or starting with one, ``prefix``)."""

    names: tuple[str, ...]
    prefix: bool
    reason: str
    line: int

    def matches(self, test_name: str) -> bool:
        return test_name.startswith(self.names) if self.prefix else test_name in self.names


@dataclass(frozen=True)
class Expansion:
    """``@parameterized.expand`` on a test: the methods it adds to the class, one per parameter,
    each running the body under the decorators below ``expand``, and what is left under the test's
    own name (``expand`` returns None): nothing, unless decorators above it wrap that None.

    ``cases``: the added methods' names, in order (None when a parameter's name part is not a
    literal); ``base_runs``: only ``pytest.mark`` decorators above it, which leave a callable that
    pytest collects and that passes doing nothing; ``base_skip``: a skip decorator above it, which
    leaves a function that always skips."""

    cases: tuple[str, ...] | None
    base_runs: bool = False
    base_skip: Skip | None = None


@dataclass(frozen=True)
class Method:
    name: str
    line: int
    skip: Skip | None = None  # for an expanded test: of the decorators below ``expand`` (the cases')
    guards: tuple[Guard, ...] = ()
    conditions: tuple[Condition, ...] = ()
    # ("self" | "super" | "module", name) for `self.name(...)` / `super().name(...)` / `name(...)`
    # statements the body always reaches
    calls: tuple[tuple[str, str], ...] = ()
    name_skips: tuple[NameSkip, ...] = ()  # in setUp and the helpers it calls
    expansion: Expansion | None = None
    unread: str | None = None  # why the test's body cannot be read (it is bound to something unknown)


@dataclass(frozen=True)
class TesterCall:
    """``self.model_tester = <callee>(self, key=literal, ...)`` in ``setUp``."""

    callee: str
    keywords: tuple[tuple[str, LiteralValue], ...] = ()


@dataclass(frozen=True)
class ClassInfo:
    """One class: bases as written (dotted), class-level literal attributes, test methods.

    ``init_defaults`` holds what ``__init__`` sets on ``self`` when nothing is passed: parameter
    defaults assigned to ``self.<name>``, ``kwargs.setdefault("name", literal)`` and ``self.x = literal``.
    """

    name: str
    line: int
    bases: tuple[str, ...]
    attributes: tuple[tuple[str, LiteralValue], ...] = ()
    methods: tuple[Method, ...] = ()
    skip: Skip | None = None
    conditions: tuple[Condition, ...] = ()
    tester_call: TesterCall | None = None
    init_defaults: tuple[tuple[str, LiteralValue], ...] = ()
    elided: bool = False  # a plain TestCase, or a tester's methods, not parsed (see skips/parse/elide.py)
    skip_by_unittest: bool = False  # ``skip`` is unittest's (a plain pytest class ignores it), not a mark
    # names bound last by something other than a `def` (they shadow an inherited test), or deleted
    shadowing: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    def method(self, name: str) -> Method | None:
        for method in self.methods:
            if method.name == name:
                return method
        return None

    def attribute(self, name: str) -> tuple[bool, LiteralValue]:
        for key, value in self.attributes:
            if key == name:
                return True, value
        return False, None


@dataclass(frozen=True)
class NamedTests:
    """The test names some text mentions other than at their ``def``, and the starts of names it
    builds (``f"test_{name}"``): a test so named may be read by a verdict on another test."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()

    def name(self, test: str) -> bool:
        return test in self.names or test.startswith(self.prefixes)

    def __or__(self, other: NamedTests) -> NamedTests:
        return NamedTests(self.names | other.names, tuple(dict.fromkeys(self.prefixes + other.prefixes)))


STAR = "*"  # Import.local and Import.name of `from module import *`


@dataclass(frozen=True)
class Import:
    """``local`` is bound to ``name`` of ``module`` (``name`` is None for ``import module``).

    ``level`` counts the leading dots of a relative import; ``from module import *`` has both
    ``local`` and ``name`` :data:`STAR`.
    """

    local: str
    module: str
    name: str | None
    level: int = 0


# A file pytest cannot import (a :class:`ParseError`'s message): it collects nothing from it.
CANNOT_IMPORT = "pytest cannot import this file: "
RELATIVE_IMPORT = f"{CANNOT_IMPORT}attempted relative import"  # met at an import, before the rest


def no_module(module: str) -> str:
    """Python's error importing ``module``, which does not exist."""
    return f"No module named '{module}'"


def cannot_import(name: str, module: str) -> str:
    """Python's error for ``from module import name`` when ``module`` ran without binding ``name``."""
    return f"cannot import name '{name}' from '{module}'"


@dataclass(frozen=True)
class ParseError:
    """Why pytest collects nothing from the file ``path``; ``cause`` is the error of another file of
    the checkout when the file's import fails there (a file it imports, directly or not, does not
    parse or cannot be imported)."""

    path: str
    line: int
    message: str
    cause: ParseError | None = None

    def as_dict(self) -> dict:
        found = {"path": self.path, "line": self.line, "message": self.message}
        if self.cause is not None:
            found["cause"] = self.cause.as_dict()
        return found


@dataclass(frozen=True)
class ParsedFile:
    """Everything the resolver needs from one file (``path`` is relative to the repository)."""

    path: str
    imports: tuple[Import, ...] = ()
    classes: tuple[ClassInfo, ...] = ()
    test_functions: tuple[str, ...] = field(default=())
    error: ParseError | None = None
    # module-level `pytestmark`: applies to the tests of the classes this module defines
    module_skip: Skip | None = None
    module_conditions: tuple[Condition, ...] = ()
    functions: tuple[Method, ...] = ()  # the module's functions, read as helpers a test may call
    # what running the module does before pytest collects it: skip (`pytest.skip(...,
    # allow_module_level=True)`, `raise SkipTest`), or fail (`class X(A, A)`: pytest collects nothing)
    import_skip: Skip | None = None
    import_error: ParseError | None = None
    # in a scan of one test (skips/parse/other_tests.py): the test methods whose bodies were not
    # parsed, and the tests the parsed text names (None: a record made for every test)
    tests_left_out: tuple[str, ...] = ()
    tests_named: NamedTests | None = None

    def class_named(self, name: str) -> ClassInfo | None:
        for info in self.classes:
            if info.name == name:
                return info
        return None

    def function_named(self, name: str) -> Method | None:
        for function in self.functions:
            if function.name == name:
                return function
        return None
