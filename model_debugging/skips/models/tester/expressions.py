"""Expressions of a model tester's methods, read for :mod:`tester_inputs`: values, calls, tensors.

The reader runs a tester's source on symbolic values: literals, tester attributes, the configuration
``self.get_config()`` returned (:class:`TesterConfig`, with what was set on it since), tensors
(:class:`Tensor` facts, built by :mod:`tester_tensors`), and :class:`Unknown` for anything else.
:class:`ExpressionReader` evaluates expressions; its subclass in :mod:`tester_inputs` runs the
statements, follows calls (``call``) and records what a call may change (``_changed``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from model_debugging.skips.interp.values import ABSENT, VALUE_COMPARISONS, Tensor, Unknown
from model_debugging.skips.models.tester import tensors as tester_tensors
from model_debugging.skips.models.tester.parameters import (
    GiveUp,
    bind_parameters,
    named_parameters,
    read_names,
)
from model_debugging.skips.models.tester.self_writes import self_writes

MAX_DEPTH = 6
DICT_READS = frozenset({"get", "keys", "values", "items", "copy"})
# builtins that read their arguments and change none of them
_READING_BUILTINS = frozenset(
    {"getattr", "hasattr", "isinstance", "len", "list", "tuple", "sorted", "str", "int"}
)
_LITERALS = (bool, int, float, str, type(None), tuple, list, dict)
_SELF, _TORCH, _SUPER = object(), object(), object()  # ``self``, ``torch``, ``super()``
_ARITHMETIC = {
    ast.Add: int.__add__,
    ast.Sub: int.__sub__,
    ast.Mult: int.__mul__,
    ast.FloorDiv: int.__floordiv__,
}


class Returned(Exception):  # noqa: N818 - control flow
    def __init__(self, value: object):
        super().__init__("return")
        self.value = value


@dataclass(frozen=True)
class BoundMethod:
    """``self.<name>`` / ``super().<name>``: a method of the tester, looked up after ``after``."""

    name: str
    after: int


@dataclass(frozen=True)
class KnownFunction:
    """A function whose result the reader knows: a tensor factory or a ``torch`` function."""

    name: str
    torch: bool


@dataclass(frozen=True)
class TesterConfig:
    """The configuration ``self.get_config()`` returned, or a ``<built>(key=value, ...)`` call built
    (its keywords first), with what was set on it since."""

    overrides: tuple[tuple[str, object], ...] = ()
    built: str | None = None


@dataclass(frozen=True)
class ConfigPart(Unknown):
    """A value read from the configuration (``config.text_config``): changing it changes the
    configuration."""


@dataclass(frozen=True)
class ModuleFunction:
    name: str


@dataclass(frozen=True)
class TensorMethod:
    tensor: Tensor
    name: str


@dataclass
class Frame:
    variables: dict[str, object]
    owner: int  # the index, along the tester's MRO, of the class defining the running method
    self_values: dict[str, object] = field(default_factory=dict)
    parameters: frozenset[str] = frozenset()  # names bound by the call: the caller holds them too
    loops: int = 0  # loops over known items the method is running (where break / continue go)


class ExpressionReader:
    """Evaluates the expressions of a tester's methods (the statements are run by a subclass)."""

    def __init__(
        self,
        classes: tuple[ast.ClassDef, ...],
        functions: tuple[dict[str, ast.FunctionDef], ...],
        tester_attribute: Callable[[str], object],
    ):
        self.classes, self.functions, self.tester_attribute = classes, functions, tester_attribute
        self.depth, self.escaped = 0, False  # escaped: the configuration reached code not read
        # what a method the reader cannot follow may have set on the tester
        self.self_stores = set().union(*(self_writes(node).stored for node in classes))

    def _find(self, name: str, after: int) -> tuple[int, ast.FunctionDef] | None:
        for index in range(after + 1, len(self.classes)):
            for item in self.classes[index].body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return index, item
        return None

    def value(self, node: ast.expr, frame: Frame) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, frame)
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(item, ast.Starred) for item in node.elts):
                return Unknown(ast.unparse(node))
            items = [self.value(item, frame) for item in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            keys = [self.value(key, frame) if key is not None else None for key in node.keys]
            if not all(isinstance(key, str) for key in keys):
                return Unknown("dict")
            return {key: self.value(item, frame) for key, item in zip(keys, node.values, strict=True)}
        if isinstance(node, ast.Attribute):
            return self._attribute(self.value(node.value, frame), node.attr, frame)
        if isinstance(node, ast.Call):
            return self._call(node, frame)
        if isinstance(node, ast.BoolOp):
            return self._bool_operation(node, frame)
        if isinstance(node, (ast.BinOp, ast.Compare)):
            return self._operation(node, frame)
        if isinstance(node, ast.Subscript):
            container, key = self.value(node.value, frame), self.value(node.slice, frame)
            if isinstance(container, (tuple, list, dict)) and isinstance(key, (int, str)):
                try:
                    return container[key]
                except (IndexError, KeyError, TypeError):
                    raise GiveUp from None  # the tester fails
            return Tensor(ast.unparse(node)) if isinstance(container, Tensor) else Unknown(ast.unparse(node))
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, frame)
            if isinstance(test, Unknown):
                return Unknown(ast.unparse(node))
            return self.value(node.body if test else node.orelse, frame)
        return Unknown(ast.unparse(node))

    def _name(self, name: str, frame: Frame) -> object:
        if name in frame.variables:
            return frame.variables[name]
        if name == "self":
            return _SELF
        if name == "torch":
            return _TORCH
        if name == "super":
            return _SUPER
        if name in tester_tensors.FACTORIES:
            return KnownFunction(name, torch=False)
        if name in self.functions[frame.owner]:
            return ModuleFunction(name)
        return Unknown(name)

    def _attribute(self, owner: object, name: str, frame: Frame) -> object:
        if owner is _SELF:
            if name in frame.self_values:
                return frame.self_values[name]
            found = self._find(name, -1)
            if found is not None:
                return Unknown(f"self.{name}") if found[1].decorator_list else BoundMethod(name, -1)
            value = self.tester_attribute(name)
            return Unknown(f"self.{name}") if value is ABSENT else value
        if owner is _TORCH and name in tester_tensors.TORCH_FUNCTIONS:
            return KnownFunction(name, torch=True)
        if isinstance(owner, Tensor):
            if name == "shape" and owner.dims is not None:
                return tuple(size if size is not None else Unknown("size") for size in owner.dims)
            if name == "ndim" and owner.dims is not None:
                return len(owner.dims)
            return TensorMethod(owner, name)
        if isinstance(owner, TesterConfig):
            return dict(owner.overrides).get(name, ConfigPart(f"config.{name}"))
        if isinstance(owner, ConfigPart):
            return ConfigPart(f"{owner.source}.{name}")
        return Unknown(name)

    def _call(self, node: ast.Call, frame: Frame) -> object:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            if self.value(func.value.func, frame) is _SUPER:  # super().method(...)
                function: object = BoundMethod(func.attr, frame.owner)
            else:
                function = self._attribute(self.value(func.value, frame), func.attr, frame)
        else:
            function = self.value(func, frame)
        if any(isinstance(argument, ast.Starred) for argument in node.args) or any(
            item.arg is None for item in node.keywords
        ):
            function = None  # *args / **kwargs: not followed
        arguments = [self.value(argument, frame) for argument in node.args] if function is not None else []
        keywords = {item.arg: self.value(item.value, frame) for item in node.keywords} if function else {}
        if isinstance(function, KnownFunction):
            if function.torch:
                return tester_tensors.torch_function(function.name, arguments)
            return tester_tensors.factory(function.name, arguments, keywords)
        if isinstance(function, TensorMethod):
            if function.name.endswith("_"):  # in place: values and perhaps shape change
                self._changed(func.value, frame)
                if isinstance(func.value, ast.Name):
                    frame.variables[func.value.id] = Tensor(func.value.id)
                return Unknown(ast.unparse(node))
            return tester_tensors.tensor_method(function.tensor, function.name, arguments)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in DICT_READS:
            container = frame.variables.get(func.value.id)
            if (
                isinstance(container, dict)
                and func.attr == "get"
                and arguments
                and isinstance(arguments[0], str)
            ):
                return container.get(arguments[0], arguments[1] if len(arguments) > 1 else None)
            if isinstance(container, dict) and func.attr == "copy" and not arguments:
                return dict(container)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr == "update"
            and isinstance(frame.variables.get(func.value.id), dict)
            and len(arguments) == 1
            and not keywords
            and isinstance(arguments[0], dict)
        ):  # d.update(<a dict the reader knows>): its items, added
            frame.variables[func.value.id] = {**frame.variables[func.value.id], **arguments[0]}
            return None
        if isinstance(function, BoundMethod) and function.name == "get_config":
            # what the evaluator reads from get_config's source, as called without arguments
            return TesterConfig() if self._default_call(function, arguments, keywords) else Unknown("config")
        if (
            isinstance(func, ast.Name)
            and func.id.endswith("Config")
            and func.id not in frame.variables
            and function is not None
            and not arguments
        ):  # XConfig(key=value, ...) written in the method: what it passes is known
            return TesterConfig(tuple(keywords.items()), built=func.id)
        if isinstance(func, ast.Name) and func.id in _READING_BUILTINS and func.id not in frame.variables:
            return Unknown(ast.unparse(node))  # getattr(config, ...), len(x): nothing changes
        followed = isinstance(function, (BoundMethod, ModuleFunction))
        for argument in (*node.args, *(item.value for item in node.keywords)):
            held = frame.variables.get(argument.id) if isinstance(argument, ast.Name) else None
            if not (followed and isinstance(held, TesterConfig)):  # a followed call shows its changes
                self._changed(argument.value if isinstance(argument, ast.Starred) else argument, frame, True)
        if followed:
            try:
                return self.call(function, arguments, keywords, frame.self_values, frame.owner)
            except GiveUp as given_up:
                if given_up.fails:
                    raise
                if any(isinstance(item, TesterConfig) for item in (*arguments, *keywords.values())):
                    self.escaped = True
                for name in self.self_stores:
                    frame.self_values[name] = Unknown(name)
                return Unknown(ast.unparse(node))
        if isinstance(func, ast.Attribute) and func.attr not in DICT_READS:
            self._changed(func.value, frame)  # x.update(...), x.pop(...): x may have changed
        return Unknown(ast.unparse(node))

    def _default_call(
        self, method: BoundMethod, arguments: list[object], keywords: dict[str, object]
    ) -> bool:
        """The call passes every parameter of ``method`` that its body reads its literal default (or
        passes nothing); a parameter the body never reads may take any value
        (``get_config(self, text_config, vision_config)`` building its parts itself)."""
        found = self._find(method.name, method.after)
        if found is None:
            return not arguments and not keywords
        read = read_names(found[1])
        try:
            passed = bind_parameters(found[1], arguments, keywords, method=True)
            unread = {name: value for name, value in passed.items() if name not in read}
            defaults = bind_parameters(found[1], [], named_parameters(found[1], unread), method=True)
        except GiveUp:
            return False
        return all(
            type(passed[name]) is type(value) and passed[name] == value and not isinstance(value, Unknown)
            for name, value in defaults.items()
            if name in read
            and name in passed
            and (name in keywords or list(passed).index(name) < len(arguments))
        )

    def _bool_operation(self, node: ast.BoolOp, frame: Frame) -> object:
        """``a or b`` / ``a and b`` on known literals, evaluated left to right as Python does."""
        deciding = isinstance(node.op, ast.Or)
        result: object = None
        for operand in node.values:
            result = self.value(operand, frame)
            if not isinstance(result, _LITERALS) or isinstance(result, Unknown):
                return Unknown(ast.unparse(node))
            if bool(result) == deciding:
                return result
        return result

    def _operation(self, node: ast.BinOp | ast.Compare, frame: Frame) -> object:
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                return Unknown(ast.unparse(node))
            left, right = self.value(node.left, frame), self.value(node.comparators[0], frame)
            compared = _compare(node.ops[0], left, right)
            if compared is not None:
                return compared
            if not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.Gt)):
                return Unknown(ast.unparse(node))
        else:
            left, right = self.value(node.left, frame), self.value(node.right, frame)
        tensor = tester_tensors.arithmetic(left, right)
        if tensor is not None:
            return tensor
        operation = _ARITHMETIC.get(type(node.op)) if isinstance(node, ast.BinOp) else None
        if operation is not None and all(type(side) is int for side in (left, right)):
            return operation(left, right)
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(left, tuple)
            and isinstance(right, tuple)
        ):
            return left + right
        return Unknown(ast.unparse(node))


def _compare(op: ast.cmpop, left: object, right: object) -> bool | None:
    """A comparison of two literals, or ``x is None`` of a value the reader built (never None)."""
    if isinstance(op, (ast.Is, ast.IsNot)) and None in (left, right):
        other = right if left is None else left
        if other is None or isinstance(other, (Tensor, TesterConfig, bool, int, float, str)):
            return (other is None) == isinstance(op, ast.Is)
        return None
    plain = (bool, int, float, str, type(None))
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (tuple, list)) and isinstance(left, plain):
        if not all(isinstance(item, plain) and not isinstance(item, Unknown) for item in right):
            return None
        return (left in right) == isinstance(op, ast.In)
    if not (isinstance(left, plain) and isinstance(right, plain)) or type(op) not in VALUE_COMPARISONS:
        return None
    try:
        return VALUE_COMPARISONS[type(op)](left, right)
    except TypeError:
        return None
