"""What the values of a model tester's methods do, for the interpreter that runs those methods.

The tester reader (:mod:`~model_debugging.skips.models.tester.reader`) runs a tester's methods on
:class:`~model_debugging.skips.interp.expressions.Evaluator` with this table of handlers: ``self``
is the tester (its attributes, its methods, what its methods set on it), ``torch`` and the tensor
factories build :class:`~model_debugging.skips.interp.values.Tensor` facts, the configuration
``get_config()`` returns is a :class:`TesterConfig`, and a call of a method or of a function of the
file is followed. A call that is not followed may change what it is handed: the reader marks it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Protocol

from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.values import ABSENT, UNHANDLED, Tensor, TestSelf, Unknown
from model_debugging.skips.models.tester import tensors as tester_tensors
from model_debugging.skips.models.tester.parameters import GiveUp
from model_debugging.skips.models.tester.values import (
    BoundMethod,
    ConfigPart,
    Frame,
    KnownFunction,
    ModuleFunction,
    TensorMethod,
    TesterConfig,
    TorchModule,
)

TESTER_HANDLERS = Handlers()
_ELEMENT_WISE = (ast.Eq, ast.NotEq, ast.Lt, ast.Gt)  # the comparisons of a tensor and a number read


class TesterCode(Protocol):
    """What the handlers read of the tester reader (the ``facts`` the interpreter hands them)."""

    frame: Frame  # the method running
    functions: tuple[dict[str, ast.FunctionDef], ...]  # the module functions of each class's file
    tester_attribute: Callable[[str], object]
    find: Callable[[str, int], tuple[int, ast.FunctionDef] | None]
    default_call: Callable[[BoundMethod, list[object], dict[str, object]], bool]
    follow: Callable[[BoundMethod | ModuleFunction, list[object], dict[str, object], ast.Call], object]
    not_followed: Callable[[ast.Call], None]
    changed: Callable[..., None]


@TESTER_HANDLERS.name
def _tester_name(facts: TesterCode, name: str, unknown: Unknown) -> object:
    if name == "torch":
        return TorchModule()
    if name in tester_tensors.FACTORIES:
        return KnownFunction(name, torch=False)
    if name in facts.functions[facts.frame.owner]:
        return ModuleFunction(name)
    return UNHANDLED


@TESTER_HANDLERS.attribute(TestSelf)
def _tester_attribute(
    facts: TesterCode, owner: TestSelf, name: str, unknown: Unknown, missing: object
) -> object:
    """``self.<name>``: what the methods run set, a method of the tester, or a tester attribute."""
    if name in facts.frame.self_values:
        return facts.frame.self_values[name]
    found = facts.find(name, -1)
    if found is not None:
        return unknown if found[1].decorator_list else BoundMethod(name, -1)
    value = facts.tester_attribute(name)
    return unknown if value is ABSENT else value


@TESTER_HANDLERS.attribute(TorchModule)
def _torch_attribute(
    facts: TesterCode, owner: TorchModule, name: str, unknown: Unknown, missing: object
) -> object:
    return KnownFunction(name, torch=True) if name in tester_tensors.TORCH_FUNCTIONS else unknown


@TESTER_HANDLERS.attribute(Tensor)
def _tensor_attribute(
    facts: TesterCode, owner: Tensor, name: str, unknown: Unknown, missing: object
) -> object:
    if name == "shape" and owner.dims is not None:
        return tuple(size if size is not None else Unknown("size") for size in owner.dims)
    if name == "ndim" and owner.dims is not None:
        return len(owner.dims)
    return TensorMethod(owner, name)


@TESTER_HANDLERS.attribute(TesterConfig)
def _config_attribute(
    facts: TesterCode, owner: TesterConfig, name: str, unknown: Unknown, missing: object
) -> object:
    return dict(owner.overrides).get(name, ConfigPart(f"config.{name}"))


@TESTER_HANDLERS.attribute(ConfigPart)
def _part_attribute(
    facts: TesterCode, owner: ConfigPart, name: str, unknown: Unknown, missing: object
) -> object:
    return ConfigPart(f"{owner.source}.{name}")


@TESTER_HANDLERS.subscript(tuple, list, dict)
def _item(facts: TesterCode, container: object, key: object, unknown: Unknown) -> object:
    """``items[key]``: an index out of range or a missing key raises there, a path the reader gives
    up on (a method it follows then returns a value only the run knows)."""
    if not isinstance(key, (int, str)):
        return unknown
    try:
        return container[key]  # type: ignore[index]
    except (IndexError, KeyError, TypeError):
        raise GiveUp from None


@TESTER_HANDLERS.subscript(Tensor)
def _tensor_item(facts: TesterCode, container: Tensor, key: object, unknown: Unknown) -> object:
    return Tensor(unknown.code)  # a part of a tensor: its shape is not read


@TESTER_HANDLERS.comparison
def _compared(facts: TesterCode, operator: ast.cmpop, left: object, right: object) -> object:
    """A tensor or a configuration the tester built is never None; ``mask != 0`` is a tensor."""
    if isinstance(operator, (ast.Is, ast.IsNot)) and (left is None or right is None):
        if isinstance(right if left is None else left, (Tensor, TesterConfig)):
            return isinstance(operator, ast.IsNot)
        return UNHANDLED
    if isinstance(operator, _ELEMENT_WISE):
        found = tester_tensors.arithmetic(left, right)
        return UNHANDLED if found is None else found
    return UNHANDLED


@TESTER_HANDLERS.operation
def _tensor_arithmetic(facts: TesterCode, operator: ast.operator, left: object, right: object) -> object:
    found = tester_tensors.arithmetic(left, right)
    return UNHANDLED if found is None else found


@TESTER_HANDLERS.call(KnownFunction)
def _known_function_call(
    facts: TesterCode,
    function: KnownFunction,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: object,
    unknown: Unknown,
) -> object:
    if _unpacks(unknown.node):
        return _not_followed(facts, unknown)
    if function.torch:
        return tester_tensors.torch_function(function.name, arguments)
    return tester_tensors.factory(function.name, arguments, keywords)


@TESTER_HANDLERS.call(TensorMethod)
def _tensor_method_call(
    facts: TesterCode,
    function: TensorMethod,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: object,
    unknown: Unknown,
) -> object:
    node = unknown.node
    if _unpacks(node):
        return _not_followed(facts, unknown)
    if function.name.endswith("_"):  # in place: values and perhaps shape change
        owner = node.func.value
        facts.changed(owner, facts.frame)
        if isinstance(owner, ast.Name):
            facts.frame.variables[owner.id] = Tensor(owner.id)
        return unknown
    return tester_tensors.tensor_method(function.tensor, function.name, arguments)


@TESTER_HANDLERS.call(BoundMethod, ModuleFunction)
def _followed_call(
    facts: TesterCode,
    function: BoundMethod | ModuleFunction,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: object,
    unknown: Unknown,
) -> object:
    return method_call(facts, function, arguments, keywords, unknown)


def method_call(
    facts: TesterCode,
    function: BoundMethod | ModuleFunction,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    """A call of a method of the tester or a function of its file (``unknown`` names the call)."""
    node = unknown.node
    if _unpacks(node):
        return _not_followed(facts, unknown)
    if isinstance(function, BoundMethod) and function.name == "get_config":
        # what the evaluator reads from get_config's source, as called without arguments
        return TesterConfig() if facts.default_call(function, arguments, keywords) else unknown
    if isinstance(function, ModuleFunction) and function.name.endswith("Config") and not arguments:
        return TesterConfig(tuple(keywords.items()), built=function.name)
    return facts.follow(function, arguments, keywords, node)


@TESTER_HANDLERS.call(object)
def _other_call(
    facts: TesterCode,
    function: object,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: object,
    unknown: Unknown,
) -> object:
    """A call the reader does not follow: a read of a dict it holds, ``XConfig(key=value, ...)``
    (what it passes is known), or anything else (what it is handed may change)."""
    node = unknown.node
    func = node.func
    variables = facts.frame.variables
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        container = variables.get(func.value.id)
        if isinstance(container, dict) and not _unpacks(node):
            if func.attr == "get" and arguments and isinstance(arguments[0], str):
                return container.get(arguments[0], arguments[1] if len(arguments) > 1 else None)
            if func.attr == "copy" and not arguments:
                return dict(container)
            if (
                func.attr == "update"
                and len(arguments) == 1
                and not keywords
                and isinstance(arguments[0], dict)
            ):
                variables[func.value.id] = {**container, **arguments[0]}  # its items, added
                return None
    if (
        isinstance(func, ast.Name)
        and func.id.endswith("Config")
        and func.id not in variables
        and not arguments
        and not _unpacks(node)
    ):
        return TesterConfig(tuple(keywords.items()), built=func.id)
    return _not_followed(facts, unknown)


def _not_followed(facts: TesterCode, unknown: Unknown) -> Unknown:
    facts.not_followed(unknown.node)
    return unknown


def _unpacks(node: ast.Call) -> bool:
    """The call passes ``**mapping``: not followed."""
    return any(item.arg is None for item in node.keywords)
