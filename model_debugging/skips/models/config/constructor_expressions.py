"""The expressions of configuration constructors (see ``constructor.py``): literals, the
frame's variables, ``self.<attribute>``, ``kwargs.pop`` / ``get`` / ``setdefault`` / ``items``,
``getattr`` / ``hasattr`` on ``self``, a few builtins on known values, operators, and the calls a
constructor makes, which go back to the run (``Run``): ``super().__init__(...)``,
``Base.__init__(self, ...)``, ``self.<method>(...)``, a library function. Anything else is unknown;
a call of something else that is handed ``self`` may write any attribute, one handed ``kwargs``
may change what it holds.
"""

from __future__ import annotations

import ast
import operator
from typing import Protocol

from model_debugging.skips.interp.values import ABSENT, Unknown
from model_debugging.skips.models.config.constructor_state import SELF, Items, Keywords, State, known

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_TYPES = {"dict": dict, "list": list, "tuple": tuple, "str": str, "int": int, "float": float, "bool": bool}
_CONVERSIONS = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "len": len,
    "list": list,
    "tuple": tuple,
}
_DICT_METHODS = frozenset({"get", "items", "keys", "values"})
# builtins that neither write the configuration nor keep it
_PURE = frozenset({"isinstance", "len", "str", "int", "float", "bool", "repr", "type", "hasattr", "print"})


class Run(Protocol):
    """What the expressions ask of the run they belong to."""

    def attribute(self, name: str, state: State) -> object: ...

    def call_next(
        self, name: str, start: int, arguments: list[object], keywords: Keywords, state: State
    ) -> object: ...

    def call_base(
        self, base: str, name: str, arguments: list, keywords: Keywords, state: State
    ) -> object: ...

    def call_function(
        self, path: str, name: str, arguments: list[object], keywords: Keywords, state: State
    ) -> object: ...

    def set_attribute(self, name: str, value: object, state: State) -> None: ...


class Expressions:
    """Evaluates the expressions of the run ``run`` on its state."""

    def __init__(self, run: Run):
        self.run = run

    def value(self, node: ast.expr, state: State, index: int, path: str) -> object:
        def of(child: ast.expr) -> object:
            return self.value(child, state, index, path)

        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            found = state.variables.get(node.id, ABSENT)
            return Unknown(node.id) if found is ABSENT else found
        if isinstance(node, ast.Attribute):
            owner = of(node.value)
            if owner is SELF:
                return self.run.attribute(node.attr, state)
            return Unknown(node=node)
        if isinstance(node, ast.Call):
            return self._call(node, state, index, path)
        if isinstance(node, ast.BoolOp):
            return self._boolean(node, of)
        if isinstance(node, ast.UnaryOp):
            operand = of(node.operand)
            if isinstance(node.op, ast.Not) and (known(operand) or operand is SELF):
                return not operand
            if isinstance(node.op, ast.USub) and isinstance(operand, (int, float)):
                return -operand
            return Unknown(node=node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._applied(_BINARY[type(node.op)], [of(node.left), of(node.right)], node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            left, right = of(node.left), of(node.comparators[0])
            if isinstance(node.ops[0], (ast.Is, ast.IsNot)):
                return self._identity(node, left, right)
            if isinstance(node.ops[0], (ast.In, ast.NotIn)) and isinstance(right, Keywords):
                return self._holds_keyword(node, left, right)
            return self._applied(_COMPARE[type(node.ops[0])], [left, right], node)
        if isinstance(node, ast.IfExp):
            test = of(node.test)
            if known(test) or test is SELF:
                return of(node.body if test else node.orelse)
            return Unknown(node=node)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [of(item) for item in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            keys = [of(key) if key is not None else None for key in node.keys]
            if not all(isinstance(key, (str, int, bool, type(None))) for key in keys) or None in node.keys:
                return Unknown(node=node)
            return {key: of(item) for key, item in zip(keys, node.values, strict=True)}
        if isinstance(node, (ast.ListComp, ast.DictComp)):
            return self._comprehension(node, state, index, path)
        if isinstance(node, ast.JoinedStr):
            parts = [
                part.value if isinstance(part, ast.Constant) else of(part.value)
                for part in node.values
                if isinstance(part, ast.Constant) or (part.conversion == -1 and part.format_spec is None)
            ]
            return (
                "".join(map(str, parts))
                if len(parts) == len(node.values) and all(map(known, parts))
                else Unknown(node=node)
            )
        if isinstance(node, ast.Subscript):
            owner, key = of(node.value), of(node.slice)
            if isinstance(owner, (dict, list, tuple)) and known(key) and not isinstance(key, (list, dict)):
                try:
                    return owner[key]
                except (KeyError, IndexError, TypeError):
                    return Unknown(node=node)
            return Unknown(node=node)
        return Unknown(node=node)

    def _comprehension(
        self, node: ast.ListComp | ast.DictComp, state: State, index: int, path: str
    ) -> object:
        """``[x for x in <known list>]`` / ``{k: v for ...}`` with one ``for`` (its ``if``s known)."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return Unknown(node=node)
        generator = node.generators[0]
        items = self.value(generator.iter, state, index, path)
        if not isinstance(items, (list, tuple)) or not isinstance(generator.target, (ast.Name, ast.Tuple)):
            return Unknown(node=node)
        found = []
        for item in items:
            inner = State(state.attributes, state.variables, state.wild, state.rest)
            names = [generator.target] if isinstance(generator.target, ast.Name) else generator.target.elts
            values = [item] if isinstance(generator.target, ast.Name) else item
            if (
                not isinstance(values, (list, tuple))
                or len(values) != len(names)
                or not all(isinstance(name, ast.Name) for name in names)
            ):
                return Unknown(node=node)
            inner.variables.update({name.id: value for name, value in zip(names, values, strict=True)})
            tests = [self.value(test, inner, index, path) for test in generator.ifs]
            if not all(known(test) for test in tests):
                return Unknown(node=node)
            if all(tests):
                parts = [node.elt] if isinstance(node, ast.ListComp) else [node.key, node.value]
                found.append([self.value(part, inner, index, path) for part in parts])
        if isinstance(node, ast.ListComp):
            return [part for (part,) in found]
        if not all(isinstance(key, (str, int, bool, type(None))) for key, _ in found):
            return Unknown(node=node)
        return dict(found)

    @staticmethod
    def _identity(node: ast.Compare, left: object, right: object) -> object:
        """``a is b``: decided only against ``None``, ``True`` or ``False`` (``self`` and ``kwargs``
        are neither); the identity of other equal values is CPython's business."""
        singletons = [side for side in (left, right) if side is None or isinstance(side, bool)]
        other = right if len(singletons) and singletons[0] is left else left
        if not singletons or not (known(other) or other is SELF or isinstance(other, Keywords)):
            return Unknown(node=node)
        same = left is right
        return same if isinstance(node.ops[0], ast.Is) else not same

    @staticmethod
    def _holds_keyword(node: ast.Compare, name: object, keywords: Keywords) -> object:
        """``"decoder" in kwargs``: known when the keyword is known to be there or not."""
        found = keywords.look(name) if isinstance(name, str) else Unknown(node=node)
        if isinstance(found, Unknown):
            return Unknown(node=node)
        return (found is not ABSENT) == isinstance(node.ops[0], ast.In)

    @staticmethod
    def _applied(function, operands: list[object], node: ast.expr) -> object:
        if not all(known(operand) for operand in operands):
            return Unknown(node=node)
        try:
            return function(*operands)
        except (TypeError, ValueError, ZeroDivisionError):
            return Unknown(node=node)

    @staticmethod
    def _boolean(node: ast.BoolOp, of) -> object:
        deciding = isinstance(node.op, ast.Or)
        value: object = None
        for operand in node.values:
            value = of(operand)
            if not (known(value) or value is SELF):
                return Unknown(node=node)
            if bool(value) == deciding:
                return value
        return value

    # -- calls ---------------------------------------------------------------------------------------
    def _arguments(self, node: ast.Call, state: State, index: int, path: str) -> tuple[list, Keywords] | None:
        """The positional values and the keywords of a call (None when a ``*args`` is unknown)."""
        positional = []
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                value = self.value(argument.value, state, index, path)
                if not isinstance(value, (list, tuple)):
                    return None
                positional += list(value)
            else:
                positional.append(self.value(argument, state, index, path))
        keywords = Keywords(lambda name: ABSENT)
        written = {}
        for item in node.keywords:
            value = self.value(item.value, state, index, path)
            if item.arg is not None:
                written[item.arg] = value
            elif isinstance(value, Keywords):
                keywords = value.merged(keywords.written)
            elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
                written.update(value)
            else:
                keywords = Keywords(keywords.passed, keywords.written, opaque=True)
        return positional, keywords.merged(written)

    def _call(self, node: ast.Call, state: State, index: int, path: str) -> object:
        func = node.func
        arguments = self._arguments(node, state, index, path)
        if arguments is None:
            return self._unknown_call(node, [], None, state)
        positional, keywords = arguments
        if isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Call) and ast.unparse(owner) == "super()":
                return self.run.call_next(func.attr, index + 1, positional, keywords, state)
            if (
                isinstance(owner, ast.Name)
                and positional
                and positional[0] is SELF
                and owner.id not in state.variables
            ):
                return self.run.call_base(owner.id, func.attr, positional[1:], keywords, state)
            target = self.value(owner, state, index, path)
            if target is SELF:
                return self.run.call_next(func.attr, 0, positional, keywords, state)
            if isinstance(target, Keywords):
                return self._keywords_method(target, func.attr, positional, state)
            if isinstance(target, dict) and func.attr in _DICT_METHODS:
                return self._dict_method(target, func.attr, positional)
            if isinstance(target, (list, dict)):  # append, update, ...: changed in place
                state.changed(target)
        elif isinstance(func, ast.Name) and func.id not in state.variables:
            if func.id in ("getattr", "hasattr") and positional and positional[0] is SELF:
                return self._getattr(func.id, positional[1:], state, node)
            if func.id == "setattr" and len(positional) == 3 and positional[0] is SELF:
                if isinstance(positional[1], str):
                    self.run.set_attribute(positional[1], positional[2], state)
                else:
                    state.forget()
                return None
            if func.id == "range" and positional and all(isinstance(item, int) for item in positional):
                return list(range(*positional)) if len(positional) <= 3 else Unknown(node=node)
            if (
                func.id == "zip"
                and positional
                and all(isinstance(item, (list, tuple)) for item in positional)
            ):
                return list(zip(*positional, strict=False))
            if func.id == "dict" and len(positional) == 1 and isinstance(positional[0], (list, dict)):
                return self._applied(dict, positional, node)
            if func.id == "isinstance" and len(positional) == 2 and known(positional[0]):
                kind = _TYPES.get(ast.unparse(node.args[1]))
                return isinstance(positional[0], kind) if kind is not None else Unknown(node=node)
            if (
                func.id in _CONVERSIONS
                and len(positional) == 1
                and known(positional[0])
                and not node.keywords
            ):
                return self._applied(_CONVERSIONS[func.id], positional, node)
            if func.id == "dict" and not positional and not keywords.opaque and not keywords.taken:
                return dict(keywords.written)
            if func.id not in _PURE:
                called = self.run.call_function(path, func.id, positional, keywords, state)
                if called is not ABSENT:
                    return called
        return self._unknown_call(node, positional, keywords, state)

    @staticmethod
    def _unknown_call(node: ast.Call, positional: list, keywords: Keywords | None, state: State) -> object:
        """A call that is not followed: what it is handed it may change."""
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        handed = [*positional, *(keywords.written.values() if keywords is not None else ())]
        if name in _PURE:
            return Unknown(node=node)
        if any(value is SELF for value in handed):
            state.forget()
        for value in handed:
            if isinstance(value, Keywords):
                value.opaque = True
            elif isinstance(value, (list, dict)):
                state.changed(value)
        return Unknown(node=node)

    def _getattr(self, name: str, arguments: list[object], state: State, node: ast.Call) -> object:
        attribute = arguments[0] if arguments else None
        if not isinstance(attribute, str):
            return Unknown(node=node)
        value = self.run.attribute(attribute, state)
        if name == "hasattr":
            return (
                Unknown(node=node) if isinstance(value, Unknown) and not value.exists else value is not ABSENT
            )
        if value is ABSENT:
            return arguments[1] if len(arguments) > 1 else Unknown(node=node)
        return value

    @staticmethod
    def _keywords_method(keywords: Keywords, name: str, arguments: list[object], state: State) -> object:
        key = arguments[0] if arguments else None
        default = arguments[1] if len(arguments) > 1 else None
        if name == "items":
            return Items(keywords)
        if name == "copy":
            return keywords.copy()
        if name in ("pop", "get", "setdefault") and isinstance(key, str):
            value = keywords.look(key, take=name == "pop")
            if value is ABSENT and name == "setdefault":
                keywords.written[key] = default
            return default if value is ABSENT else value
        keywords.opaque = True
        return Unknown(f"kwargs.{name}(...)")

    @staticmethod
    def _dict_method(owner: dict, name: str, arguments: list[object]) -> object:
        if name == "get" and arguments and known(arguments[0]):
            return owner.get(arguments[0], arguments[1] if len(arguments) > 1 else None)
        if name == "items" and not arguments:
            return [(key, value) for key, value in owner.items()]
        if name in ("keys", "values") and not arguments:
            return list(owner.keys() if name == "keys" else owner.values())
        return Unknown(f"dict.{name}(...)")
