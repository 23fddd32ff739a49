"""Evaluate one expression of a test on symbolic values; what cannot be known is ``Unknown``.

Python itself (literals, operators, comprehensions, builtins on plain values, calls of the test's
helpers) is evaluated here; what a value of an API does is asked of the
:class:`~model_debugging.skips.interp.handlers.Handlers` table the test's ``facts`` carry.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Protocol

from model_debugging.skips.interp.builtins import BUILTIN_NAMES, python_builtin
from model_debugging.skips.interp.comprehensions import comprehension
from model_debugging.skips.interp.effects import passes_self, super_method
from model_debugging.skips.interp.formatting import formatted
from model_debugging.skips.interp.handed import HandedBack, after_helper, forget_passed
from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.truth import Truth, comparable, known, text, truth_of, wholly_known
from model_debugging.skips.interp.values import (
    ABSENT,
    PLAIN,
    UNHANDLED,
    VALUE_COMPARISONS,
    Builtin,
    Helper,
    OfKnownTruth,
    Returns,
    Skipped,
    TestSelf,
    Unknown,
    python_result,
)


class TestCode(Protocol):
    """What the interpreter reads of the test class it runs a test for (the models' facts)."""

    handlers: Handlers
    # the ``ast`` definitions ``self.<name>``, ``super().<name>`` and ``<name>(self, ...)`` run
    definition: Callable[[str], ast.FunctionDef | None]
    inherited_definition: Callable[[str], ast.FunctionDef | None] | None
    module_function: Callable[[str], ast.FunctionDef | None] | None


_DECIDING = {True: Truth.ALWAYS_TRUE, False: Truth.ALWAYS_FALSE}
_COMPARE = {**VALUE_COMPARISONS, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_BINARY = {
    ast.BitOr: operator.or_, ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}  # fmt: skip
_OPERANDS = (int, float, str, tuple, list)  # the values binary operators are computed on


def augmented(node: ast.AugAssign, value: Callable[[ast.expr], object]) -> object:
    """What ``name op= v`` makes of the value ``name`` holds (``value`` gives an expression's value):
    Python's result for a number, a string or a tuple (a new object) and for a list extended by a
    known list or tuple (the same list changed in place: the runner gives the result to every
    variable holding it); unknown otherwise."""
    unknown = Unknown(node=node.target)
    operation = _BINARY.get(type(node.op))
    if operation is None or not isinstance(node.target, ast.Name):
        return unknown
    current = value(node.target)
    if isinstance(current, (dict, set)) or not isinstance(current, _OPERANDS):
        return unknown
    right = value(node.value)
    if isinstance(current, list):
        return (
            [*current, *right]
            if isinstance(node.op, ast.Add) and isinstance(right, (list, tuple))
            else unknown
        )
    return python_result(unknown, operation, current, right) if isinstance(right, _OPERANDS) else unknown


# Calls a helper statement evaluates, or raises Skipped: (name, arguments (None: a ``*`` argument not
# a known sequence), keywords, inherited=False, module=False, node=<the ast.Call>) -> value
CallHelper = Callable[..., object]
# Told of a call the evaluator does not make (a ``*`` argument not a known sequence): (node, variables)
NotMade = Callable[[ast.Call, dict[str, object]], None]


class Evaluator:
    """Evaluates expressions of one test for one test class (``facts``) with local ``variables``."""

    def __init__(
        self,
        facts: TestCode,
        call_helper: CallHelper,
        not_made: NotMade | None = None,
        handed_back: HandedBack | None = None,
    ):
        self.facts, self.call_helper, self.handlers = facts, call_helper, facts.handlers
        self.handed_back = handed_back
        self.not_made = not_made

    def value(self, node: ast.expr, variables: dict[str, object]) -> object:
        kind = type(node)  # one look-up per node: the commonest kinds first, the others by table
        if kind is ast.Constant:
            return node.value
        if kind is ast.Name:
            return self._name(node, variables)
        if kind is ast.Attribute:
            return self._attribute(self.value(node.value, variables), node)
        unknown = Unknown(node=node)  # made after the commonest nodes, which need none
        read = _READERS.get(kind)
        return unknown if read is None else read(self, node, variables, unknown)

    def _dict(self, node: ast.Dict, variables: dict[str, object], unknown: Unknown) -> object:
        if not all(key is not None for key in node.keys):  # ``{**other}``
            return unknown
        keys = [self.value(key, variables) for key in node.keys]
        if not all(isinstance(key, (str, int)) for key in keys):
            return unknown
        return {key: self.value(value, variables) for key, value in zip(keys, node.values, strict=True)}

    def _display(
        self, node: ast.Tuple | ast.List | ast.Set, variables: dict[str, object], unknown: Unknown
    ) -> object:
        items = self._arguments(node.elts, variables)  # ``(*parts, last)`` unpacks as a call does
        kind = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
        if items is None or (kind is set and any(isinstance(item, Unknown) for item in items)):
            return unknown
        return python_result(unknown, kind, items)

    def _joined(self, node: ast.JoinedStr, variables: dict[str, object], unknown: Unknown) -> object:
        return "".join(
            part.value if isinstance(part, ast.Constant) else self._placeholder(part, variables)
            for part in node.values
        )

    def _placeholder(self, part: ast.FormattedValue, variables: dict[str, object]) -> str:
        """One ``{...}`` of an f-string (see :func:`~model_debugging.skips.interp.formatting.formatted`)."""
        value = self.value(part.value, variables)
        spec = None if part.format_spec is None else self.value(part.format_spec, variables)
        return formatted(value, part.conversion, spec, Unknown(node=part.value))

    def _unary(self, node: ast.UnaryOp, variables: dict[str, object], unknown: Unknown) -> object:
        if isinstance(node.op, ast.USub):
            operand = self.value(node.operand, variables)
            return -operand if isinstance(operand, (int, float)) else unknown
        if not isinstance(node.op, ast.Not):
            return unknown
        found = truth_of(self.value(node.operand, variables))
        return unknown if found is Truth.TRUTH_VALUE_UNKNOWN else found is Truth.ALWAYS_FALSE

    def _named(self, node: ast.NamedExpr, variables: dict[str, object], unknown: Unknown) -> object:
        result = self.value(node.value, variables)
        variables[node.target.id] = result
        return result

    def _binary(self, node: ast.BinOp, variables: dict[str, object], unknown: Unknown) -> object:
        left, right = self.value(node.left, variables), self.value(node.right, variables)
        operation = _BINARY.get(type(node.op))
        if operation is not None and isinstance(left, _OPERANDS) and isinstance(right, _OPERANDS):
            return python_result(unknown, operation, left, right)
        found = self.handlers.operated(self.facts, node.op, left, right)
        return unknown if found is UNHANDLED else found

    def _if_expression(self, node: ast.IfExp, variables: dict[str, object], unknown: Unknown) -> object:
        found = truth_of(self.value(node.test, variables))
        if found is Truth.TRUTH_VALUE_UNKNOWN:
            return unknown
        return self.value(node.body if found is Truth.ALWAYS_TRUE else node.orelse, variables)

    def _subscript(self, node: ast.Subscript, variables: dict[str, object], unknown: Unknown) -> object:
        container, key = self.value(node.value, variables), self.value(node.slice, variables)
        found = self.handlers.subscripted(self.facts, container, key, unknown)
        if found is not UNHANDLED:
            return found
        if isinstance(container, (list, tuple, dict, str)) and known(key):
            return python_result(unknown, operator.getitem, container, key)
        return unknown

    def _name(self, node: ast.Name, variables: dict[str, object]) -> object:
        name = node.id
        if name in variables:
            return variables[name]
        if name == "self":
            return TestSelf()
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        found = self.handlers.global_name(self.facts, name, Unknown(node=node))
        if found is not UNHANDLED:
            return found
        return Builtin(name) if name in BUILTIN_NAMES else Unknown(node=node)

    def _bool_op(self, node: ast.BoolOp, variables: dict[str, object], unknown: Unknown) -> object:
        decisive = isinstance(node.op, ast.Or)  # a true operand decides an `or`, a false one an `and`
        undecided = False
        result: object = None
        for operand in node.values:
            result = self.value(operand, variables)
            if truth_of(result) is Truth.TRUTH_VALUE_UNKNOWN:
                undecided = True
                continue
            if truth_of(result) is _DECIDING[decisive]:
                # an unknown operand before it may be the result: only the truth is known then
                return OfKnownTruth(node=node, truth=decisive) if undecided else result
        return unknown if undecided else result

    def _compare(self, node: ast.Compare, variables: dict[str, object], unknown: Unknown) -> object:
        left = self.value(node.left, variables)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.value(right_node, variables)
            decided = self.handlers.compared(self.facts, op, left, right)
            if decided is not UNHANDLED and not isinstance(decided, bool):
                return decided if len(node.ops) == 1 else unknown  # an element-wise comparison's value
            if decided is not UNHANDLED:
                outcome = decided
            elif isinstance(op, (ast.In, ast.NotIn)):
                found = self.handlers.contained(self.facts, right, left)
                if found is None:
                    return unknown
                outcome = found if isinstance(op, ast.In) else not found
            elif isinstance(left, PLAIN) and isinstance(right, PLAIN) and type(op) in _COMPARE:
                if isinstance(op, (ast.Is, ast.IsNot)):  # None, True and False: one object each
                    singleton = left is None or right is None or type(left) is bool or type(right) is bool
                    outcome = left is right if singleton else left == right
                    outcome = outcome if isinstance(op, ast.Is) else not outcome
                elif not (wholly_known(left) and wholly_known(right)):
                    return unknown  # a container holding a value only the run knows
                else:
                    outcome = python_result(unknown, _COMPARE[type(op)], left, right)
                    if outcome is unknown:
                        return unknown
            elif isinstance(op, (ast.Eq, ast.NotEq)) and comparable(left) and comparable(right):
                outcome = (left == right) == isinstance(op, ast.Eq)
            else:
                return unknown
            if not outcome:
                return False
            left = right
        return True

    def _comprehension(self, node: ast.expr, variables: dict[str, object], unknown: Unknown) -> object:
        return comprehension(self.value, node, variables, unknown)

    def _call(self, node: ast.Call, variables: dict[str, object], unknown: Unknown) -> object:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "skip"
            and isinstance(func.value, ast.Name)
            and func.value.id == "pytest"
        ):
            reason = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "reason"), None)
            )
            raise Skipped(text(self.value(reason, variables)) if reason is not None else "", node.lineno)
        inherited = super_method(node)
        # super().helper(...) in a model's override of a common helper; handlers that give the name
        # ``super`` a value of their own (a configuration's constructor run) evaluate it as any call
        if inherited is not None and self.handlers.global_name(self.facts, "super", unknown) is UNHANDLED:
            arguments = [self.value(argument, variables) for argument in node.args]
            keywords = {item.arg: self.value(item.value, variables) for item in node.keywords if item.arg}
            result = self.call_helper(inherited, arguments, keywords, inherited=True, node=node)
            after_helper(node, self.facts.inherited_definition, inherited, variables, self.handed_back)
            return result
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "copy":
            return self.value(node.args[0], variables) if node.args else unknown  # a copy reads the same
        find = self.facts.module_function
        if (
            isinstance(func, ast.Name)
            and func.id not in variables
            and passes_self(node)
            and find is not None
            and find(func.id) is not None
        ):
            # a module-level function of a common file, handed the test: run like a helper
            keywords = {item.arg: self.value(item.value, variables) for item in node.keywords if item.arg}
            result = self.call_helper(
                func.id, self._arguments(node.args[1:], variables), keywords, module=True, node=node
            )
            after_helper(node, find, func.id, variables, self.handed_back, method=False)
            return result
        # the owner of a method is evaluated once: ``self.value(node.func)`` would evaluate it again
        owner = self.value(func.value, variables) if isinstance(func, ast.Attribute) else None
        function = (
            self._attribute(owner, func) if isinstance(func, ast.Attribute) else self.value(func, variables)
        )
        arguments = self._arguments(node.args, variables)
        if arguments is None:
            if self.not_made is not None:
                self.not_made(node, variables)
            return unknown
        keywords = {
            keyword.arg: self.value(keyword.value, variables) for keyword in node.keywords if keyword.arg
        }
        if isinstance(function, Helper):
            if function.name == "skipTest":
                reason = arguments[0] if arguments else keywords.get("reason", "")
                raise Skipped(text(reason), node.lineno)
            result = self.call_helper(function.name, arguments, keywords)
            after_helper(node, self.facts.definition, function.name, variables, self.handed_back)
            return result
        if isinstance(function, Builtin):
            return self._builtin(function.name, arguments, unknown)

        def unpacked() -> list[object]:  # the ``**`` arguments, evaluated only when a handler asks
            return [self.value(keyword.value, variables) for keyword in node.keywords if keyword.arg is None]

        called = self.handlers.value_call(self.facts, function, arguments, keywords, unpacked, unknown)
        if called is not UNHANDLED:
            return called
        if isinstance(func, ast.Attribute):
            result = self.handlers.method_call(self.facts, owner, func.attr, arguments, keywords, unknown)
            if isinstance(result, Returns):  # a method whose body is one expression: run it
                return self.value(result.expression, dict(result.bindings))
            if result is not unknown:
                return result
        forget_passed(node, variables)  # nothing models the call: it may change what it is handed
        return unknown

    def _attribute(self, owner: object, node: ast.Attribute) -> object:
        """``owner.<attribute>`` as :meth:`value` gives it when ``owner`` is the value of ``node.value``."""
        return self.handlers.attribute_of(self.facts, owner, node.attr, Unknown(node=node))

    def _builtin(self, name: str, arguments: list[object], unknown: Unknown) -> object:
        """A builtin function, one of ``inspect`` or ``re``, or one an API handler knows by name."""
        if name in ("hasattr", "getattr"):
            if len(arguments) < 2 or not isinstance(arguments[1], str):
                return unknown
            value = self.handlers.attribute_of(
                self.facts, arguments[0], arguments[1], unknown, missing=ABSENT
            )
            if name == "hasattr":
                return unknown if isinstance(value, Unknown) and not value.exists else value is not ABSENT
            if value is ABSENT:
                return arguments[2] if len(arguments) > 2 else unknown
            return value
        found = self.handlers.builtin_call(self.facts, name, arguments, unknown)
        return python_builtin(name, arguments, unknown) if found is UNHANDLED else found

    def _arguments(self, nodes: list[ast.expr], variables: dict[str, object]) -> list[object] | None:
        """Positional arguments, ``*items`` unpacked; None when an unpacked value is not a known sequence."""
        arguments: list[object] = []
        for node in nodes:
            if isinstance(node, ast.Starred):
                items = self.value(node.value, variables)
                if not isinstance(items, (list, tuple)):
                    return None
                arguments += items
            else:
                arguments.append(self.value(node, variables))
        return arguments


# How :meth:`Evaluator.value` reads each kind of node past a constant, a name and an attribute;
# a kind not listed is unknown.
_READERS: dict[type, Callable[[Evaluator, ast.expr, dict[str, object], Unknown], object]] = {
    ast.Dict: Evaluator._dict,
    ast.Tuple: Evaluator._display,
    ast.List: Evaluator._display,
    ast.Set: Evaluator._display,
    ast.JoinedStr: Evaluator._joined,
    ast.UnaryOp: Evaluator._unary,
    ast.BoolOp: Evaluator._bool_op,
    ast.Compare: Evaluator._compare,
    ast.Call: Evaluator._call,
    ast.NamedExpr: Evaluator._named,
    ast.BinOp: Evaluator._binary,
    ast.IfExp: Evaluator._if_expression,
    ast.GeneratorExp: Evaluator._comprehension,
    ast.ListComp: Evaluator._comprehension,
    ast.SetComp: Evaluator._comprehension,
    ast.DictComp: Evaluator._comprehension,
    ast.Subscript: Evaluator._subscript,
}
