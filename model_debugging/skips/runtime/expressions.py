"""Evaluate one expression of a common test on symbolic values; what cannot be known is ``Unknown``."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from model_debugging.skips.runtime import attributes, environment, module_types, modules
from model_debugging.skips.runtime.config_methods import CONFIG_METHODS, call_config_method
from model_debugging.skips.runtime.context import ABSENT, TestClassFacts
from model_debugging.skips.runtime.conversions import conversions
from model_debugging.skips.runtime.effects import passes_self, super_method
from model_debugging.skips.runtime.model_calls import ModelOutputs, call_model, outputs_contain
from model_debugging.skips.runtime.values import (
    VALUE_COMPARISONS,
    Builtin,
    Config,
    Helper,
    ModelClass,
    ModelInstance,
    ModuleName,
    Parameters,
    Signal,
    Skipped,
    SourceText,
    Tensor,
    TestSelf,
    Unknown,
    compared_number,
)

_COMPARE = {**VALUE_COMPARISONS, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_BINARY = {ast.BitOr: operator.or_, ast.Add: operator.add, ast.Sub: operator.sub, ast.Mod: operator.mod}
_BUILTINS = {
    "len", "any", "all", "set", "list", "tuple", "hasattr", "getattr", "get_values", "sorted", "str", "bool", "int", "open",
    "isinstance",
}  # fmt: skip
_MODULES = {"inspect", "re"}
_STRING_METHODS = {"lower", "upper", "startswith", "endswith", "strip", "split"}
_PLAIN = (str, int, float, bool, type(None), tuple, list, dict, set, frozenset)

# Calls a helper statement evaluates: (helper name, arguments) -> value, or raises Skipped.
CallHelper = Callable[..., object]  # (name, arguments, keywords, inherited=False, module=False) -> value


class Evaluator:
    """Evaluates expressions of one test for one test class (``facts``) with local ``variables``."""

    def __init__(self, facts: TestClassFacts, call_helper: CallHelper):
        self.facts, self.call_helper = facts, call_helper

    def value(self, node: ast.expr, variables: dict[str, object]) -> object:
        try:
            return self._value(node, variables)
        except Signal:
            raise
        except Exception:  # an operation on values of the wrong kind: only the run knows
            return Unknown(node=node)

    def _value(self, node: ast.expr, variables: dict[str, object]) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node, variables)
        if isinstance(node, ast.Attribute):
            return self._attribute(self.value(node.value, variables), node)
        unknown = Unknown(node=node)  # made after the commonest nodes, which need none
        if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
            keys = [self.value(key, variables) for key in node.keys]
            if not all(isinstance(key, (str, int)) for key in keys):
                return unknown
            return {key: self.value(value, variables) for key, value in zip(keys, node.values, strict=True)}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [self.value(item, variables) for item in node.elts]
            kind = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
            return (
                unknown if any(isinstance(item, Unknown) for item in items) and kind is set else kind(items)
            )
        if isinstance(node, ast.JoinedStr):
            parts = [
                part.value if isinstance(part, ast.Constant) else self.value(part.value, variables)
                for part in node.values
            ]
            return "".join(attributes.text(part) for part in parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.value(node.operand, variables)
            return unknown if not attributes.known(inner) else not attributes.truth(inner)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node, variables, unknown)
        if isinstance(node, ast.Compare):
            return self._compare(node, variables, unknown)
        if isinstance(node, ast.Call):
            return self._call(node, variables, unknown)
        if isinstance(node, ast.NamedExpr):
            result = self.value(node.value, variables)
            variables[node.target.id] = result
            return result
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, variables), self.value(node.right, variables)
            operation = _BINARY.get(type(node.op))
            if (
                operation is not None
                and isinstance(left, (int, str, tuple, list))
                and isinstance(right, (int, str, tuple, list))
            ):
                return operation(left, right)
            return unknown
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, variables)
            if not attributes.known(test):
                return unknown
            return self.value(node.body if attributes.truth(test) else node.orelse, variables)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            return self._comprehension(node, variables, unknown)
        if isinstance(node, ast.Subscript):
            container, key = self.value(node.value, variables), self.value(node.slice, variables)
            if isinstance(container, (list, tuple, dict, str)) and attributes.known(key):
                return container[key]
        return unknown

    def _name(self, node: ast.Name, variables: dict[str, object]) -> object:
        name = node.id
        if name in variables:
            return variables[name]
        if name == "self":
            return TestSelf()
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in self.facts.names:
            return self.facts.names[name]
        if name == "nn" and self.facts.library is not None:  # the common files' `from torch import nn`
            return module_types.TORCH_NN
        if name in modules.BASE_MODEL_NAMES and self.facts.library is not None:
            return modules.base_model_class(self.facts, name) or Unknown(node=node)
        if name in _BUILTINS or name in _MODULES:
            return Builtin(name)
        found = environment.name_value(name)
        if found is not None:
            return found
        if name == "get_model_conversion_mapping":
            return Builtin(name)
        return Unknown(node=node)

    def _bool_op(self, node: ast.BoolOp, variables: dict[str, object], unknown: Unknown) -> object:
        decisive = isinstance(node.op, ast.Or)  # a true operand decides an `or`, a false one an `and`
        undecided = False
        result: object = None
        for operand in node.values:
            result = self.value(operand, variables)
            if not attributes.known(result):
                undecided = True
                continue
            if attributes.truth(result) == decisive:
                return result
        return unknown if undecided else result

    def _compare(self, node: ast.Compare, variables: dict[str, object], unknown: Unknown) -> object:
        left = self.value(node.left, variables)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.value(right_node, variables)
            versions = (
                environment.compare(op, left, right)
                if isinstance(left, environment.Release) or isinstance(right, environment.Release)
                else None
            )
            if versions is not None:
                outcome = versions
            elif isinstance(op, (ast.In, ast.NotIn)):
                found = (
                    outputs_contain(self.facts, right, left)
                    if isinstance(right, ModelOutputs) and isinstance(left, str)
                    else attributes.contains(self.facts, right, left)
                )
                if found is None:
                    return unknown
                outcome = found if isinstance(op, ast.In) else not found
            elif isinstance(op, (ast.Eq, ast.NotEq)) and _module_name_against_empty(left, right):
                outcome = isinstance(op, ast.NotEq)  # a submodule's name is never ""
            elif isinstance(left, _PLAIN) and isinstance(right, _PLAIN) and type(op) in _COMPARE:
                if isinstance(op, (ast.Is, ast.IsNot)):
                    outcome = (left is None and right is None) or (
                        left is not None and left == right and right is not None
                    )
                    outcome = outcome if isinstance(op, ast.Is) else not outcome
                else:
                    outcome = _COMPARE[type(op)](left, right)
            elif isinstance(op, (ast.Is, ast.IsNot)) and {type(left), type(right)} == {Tensor, type(None)}:
                outcome = isinstance(op, ast.IsNot)  # a tensor the tester built is never None
            elif (
                isinstance(op, (ast.Is, ast.IsNot))
                and None in (left, right)
                and (
                    module_types.is_module(right if left is None else left)
                    or isinstance(right if left is None else left, ModelClass)
                )
            ):  # a module a constructor built (or the model itself, or a model class) is never None
                outcome = isinstance(op, ast.IsNot)
            elif isinstance(op, (ast.Is, ast.IsNot)) and compared_number(
                right if left is None else left, left, right
            ):
                outcome = isinstance(op, ast.IsNot)  # a number is never None
            elif (
                isinstance(op, (ast.Eq, ast.NotEq))
                and attributes.comparable(left)
                and attributes.comparable(right)
            ):
                outcome = (left == right) == isinstance(op, ast.Eq)
            else:
                return unknown
            if not outcome:
                return False
            left = right
        return True

    def _comprehension(self, node: ast.expr, variables: dict[str, object], unknown: Unknown) -> object:
        results: list[object] = []

        def generate(index: int, scope: dict[str, object]) -> bool:
            if index == len(node.generators):
                if isinstance(node, ast.DictComp):
                    results.append((self.value(node.key, scope), self.value(node.value, scope)))
                else:
                    results.append(self.value(node.elt, scope))
                return True
            generator = node.generators[index]
            iterable = self.value(generator.iter, scope)
            target = generator.target
            names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", None)
            if not isinstance(iterable, (list, tuple, set, frozenset, str, dict)) or not (
                names and all(isinstance(name, ast.Name) for name in names)
            ):
                return False
            for item in iterable:
                if isinstance(target, ast.Name):
                    inner = {**scope, target.id: item}
                elif isinstance(item, (tuple, list)) and len(item) == len(names):  # for k, v in d.items()
                    inner = {**scope, **{name.id: value for name, value in zip(names, item, strict=True)}}
                else:
                    return False
                conditions = [self.value(condition, inner) for condition in generator.ifs]
                if not all(attributes.known(condition) for condition in conditions):
                    return False
                if all(attributes.truth(condition) for condition in conditions) and not generate(
                    index + 1, inner
                ):
                    return False
            return True

        if not generate(0, dict(variables)):
            return unknown
        if isinstance(node, ast.DictComp):
            keys = [key for key, _ in results]
            return dict(results) if all(isinstance(key, (str, int)) for key in keys) else unknown
        return set(results) if isinstance(node, ast.SetComp) else results

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
            raise Skipped(
                attributes.text(self.value(reason, variables)) if reason is not None else "", node.lineno
            )
        inherited = super_method(node)
        if inherited is not None:  # super().helper(...) in a model's override of a common helper
            arguments = [self.value(argument, variables) for argument in node.args]
            keywords = {item.arg: self.value(item.value, variables) for item in node.keywords if item.arg}
            return self.call_helper(inherited, arguments, keywords, inherited=True)
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
            return self.call_helper(func.id, self._arguments(node.args[1:], variables), keywords, module=True)
        # the owner of a method is evaluated once: ``self.value(node.func)`` would evaluate it again
        owner = self.value(func.value, variables) if isinstance(func, ast.Attribute) else None
        function = (
            self._attribute(owner, func) if isinstance(func, ast.Attribute) else self.value(func, variables)
        )
        arguments = self._arguments(node.args, variables)
        if arguments is None:
            return unknown
        keywords = {
            keyword.arg: self.value(keyword.value, variables) for keyword in node.keywords if keyword.arg
        }
        if isinstance(function, Helper):
            if function.name == "skipTest":
                reason = arguments[0] if arguments else keywords.get("reason", "")
                raise Skipped(attributes.text(reason), node.lineno)
            return self.call_helper(function.name, arguments, keywords)
        if isinstance(function, Builtin):
            return _builtin(self.facts, function.name, arguments, unknown)
        if isinstance(function, environment.Function):
            found = environment.call(function, arguments)
            return unknown if found is None else found
        if isinstance(function, ModelInstance):  # model(**inputs)
            unpacked = [
                self.value(keyword.value, variables) for keyword in node.keywords if keyword.arg is None
            ]
            return call_model(function, keywords, unpacked)
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "from_pretrained"
            and isinstance(owner, ModelClass)
        ):
            return modules.from_pretrained(self.facts, owner, keywords)
        if isinstance(function, ModelClass):  # model_class(config)
            config = arguments[0] if arguments and isinstance(arguments[0], Config) else unknown
            return ModelInstance(function.info, config)
        if isinstance(func, ast.Attribute):
            returned = (
                library_class_method(self.facts, owner, func.attr)
                if isinstance(owner, (ModelClass, ModelInstance)) and not arguments and not keywords
                else None
            )
            if returned is not None:  # ``cls`` bound to the model's class, as Python binds it
                return self.value(returned[1], {returned[0]: ModelClass(owner.info)})
            if isinstance(owner, Config) and func.attr in CONFIG_METHODS and not arguments:
                return call_config_method(self.facts, owner, func.attr, keywords, unknown)
            return attributes.call_method(self.facts, owner, func.attr, arguments, unknown, keywords)
        return unknown

    def _attribute(self, owner: object, node: ast.Attribute) -> object:
        """``owner.<attribute>`` as :meth:`value` gives it when ``owner`` is the value of ``node.value``."""
        unknown = Unknown(node=node)
        try:
            return attributes.attribute(self.facts, owner, node.attr, unknown)
        except Signal:
            raise
        except Exception:
            return unknown

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


def library_class_method(
    facts: TestClassFacts, owner: ModelClass | ModelInstance, name: str
) -> tuple[str, ast.expr] | None:
    """``(its first parameter, the expression it returns)`` when ``name`` is a class method of the
    library that only returns one expression (``_supports_default_dynamic_cache``: a flag and the
    class's name), as the first class of ``owner``'s MRO defining it writes it (the library's records
    keep such methods); None otherwise (the methods the evaluator answers itself come first)."""
    if name in attributes.ANSWERED_CLASS_METHODS or facts.library is None:
        return None
    defining = facts.library.defines(owner.info, name)
    found = next((entry for entry in defining.class_returns if entry[0] == name), None) if defining else None
    if found is None:
        return None
    _, parameter, source = found
    return parameter, ast.parse(source, mode="eval").body


def _module_name_against_empty(left: object, right: object) -> bool:
    """One side is a :class:`ModuleName`, the other the empty string."""
    return any(
        isinstance(one, ModuleName) and isinstance(other, str) and other == ""
        for one, other in ((left, right), (right, left))
    )


def _mapping_values(facts: TestClassFacts, mapping: dict) -> tuple[object, ...]:
    """``get_values(mapping)``'s items, kept per test class with the mapping (an auto mapping's
    hundreds of names are flattened for every model class a test loops over)."""
    key = ("get_values", id(mapping))
    found = facts.kept.get(key)
    if found is None or found[0] is not mapping:
        values = tuple(
            item for items in mapping.values() for item in (items if isinstance(items, tuple) else (items,))
        )
        found = facts.kept[key] = (mapping, values)
    return found[1]


def _builtin(facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown) -> object:
    if name in ("hasattr", "getattr"):
        if len(arguments) < 2 or not isinstance(arguments[1], str):
            return unknown
        value = attributes.attribute(facts, arguments[0], arguments[1], unknown, missing=ABSENT)
        if name == "hasattr":
            return unknown if isinstance(value, Unknown) and not value.exists else value is not ABSENT
        if value is ABSENT:
            return arguments[2] if len(arguments) > 2 else unknown
        return value
    if name == "isinstance":
        verdict = module_types.is_instance(facts, *arguments[:2]) if len(arguments) == 2 else None
        return unknown if verdict is None else verdict
    if name in ("set", "list", "tuple") and not arguments:
        return {"set": set, "list": list, "tuple": tuple}[name]()
    if name == "get_model_conversion_mapping":
        return conversions(facts, arguments[0], unknown) if arguments else unknown
    if name == "signature":
        return attributes.parameters(facts, arguments[0], unknown) if arguments else unknown
    if name in ("getfile", "open"):
        return attributes.source_file(facts, arguments[0], unknown) if arguments else unknown
    if name == "search":  # re.search(pattern, text, flags)
        if len(arguments) >= 2 and isinstance(arguments[1], SourceText):
            return attributes.search_text(facts, arguments, unknown)
        if len(arguments) >= 2 and all(isinstance(item, (str, int)) for item in arguments[:3]):
            return re.search(*arguments[:3])
        return unknown
    if arguments and isinstance(arguments[0], Parameters) and name in ("set", "list", "tuple"):
        return {"set": set, "list": list, "tuple": tuple}[name](arguments[0].names)
    if name == "get_values":
        if not arguments or not isinstance(arguments[0], dict):
            return unknown
        return list(_mapping_values(facts, arguments[0]))
    if not arguments or not all(attributes.known(argument) for argument in arguments):
        return unknown
    plain = {
        "int": int,
        "len": len,
        "any": any,
        "all": all,
        "set": set,
        "list": list,
        "tuple": tuple,
        "sorted": sorted,
        "str": str,
        "bool": bool,
    }
    if name in ("any", "all") and isinstance(arguments[0], (list, tuple)):
        decisive = name == "any"  # a true item decides any(), a false one all()
        items = arguments[0]
        if any(attributes.known(item) and attributes.truth(item) == decisive for item in items):
            return decisive
        return unknown if any(not attributes.known(item) for item in items) else not decisive
    if name in plain and all(isinstance(argument, _PLAIN) for argument in arguments):
        return plain[name](*arguments)
    return unknown if any(not attributes.known(item) for item in items) else not decisive
    return unknown
