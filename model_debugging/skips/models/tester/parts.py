"""Sub-configurations a tester's ``get_config`` builds through one of its own methods.

``VLMModelTester.get_config`` gathers its keywords in a loop (not read), then sets
``kwargs["text_config"] = self.get_text_config()``, a method returning
``self.text_config_class(**kwargs)``. The part's class is then known (the tester's attribute names
it) while its values are not: the part is read as ``<Class>(**kwargs)``, a configuration of that
class whose attributes exist as the class declares them. An override of ``get_config`` that calls
``super().get_config()`` and does not set that part again keeps what the next one builds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import Unknown
from model_debugging.skips.records.library import ClassName

# (class name, get_config / other method definitions of that class), along the tester's MRO
TesterMethods = tuple[tuple[str, dict[str, ast.FunctionDef]], ...]


def built_parts(methods: TesterMethods, tester_attribute: Callable[[str], object]) -> dict[str, Unknown]:
    """Part name -> ``<Class>(**kwargs)`` for the parts ``get_config`` builds with a method of the
    tester returning an instance of the class one of its attributes names."""
    found: dict[str, Unknown] = {}
    changed: set[str] = set()  # parts an override sets again on the configuration
    for index, (_, functions) in enumerate(methods):
        function = functions.get("get_config")
        if function is None:
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                changed.add(node.attr)
            part = _part_assignment(node)
            if part is not None and part[0] not in changed and part[0] not in found:
                built = _built_class(methods, index, part[1], tester_attribute)
                if built is not None:
                    found[part[0]] = Unknown(f"{built}(**kwargs)", exists=True)
        if not _calls_super(function):
            break
    return found


def _part_assignment(node: ast.AST) -> tuple[str, str] | None:
    """``kwargs["<part>"] = self.<method>()``: (part, method)."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Subscript)
        and isinstance(node.targets[0].slice, ast.Constant)
        and isinstance(node.targets[0].slice.value, str)
        and isinstance(node.value, ast.Call)
        and not node.value.args
        and not node.value.keywords
        and isinstance(node.value.func, ast.Attribute)
        and ast.unparse(node.value.func.value) == "self"
    ):
        return None
    return node.targets[0].slice.value, node.value.func.attr


def _built_class(
    methods: TesterMethods, after: int, name: str, tester_attribute: Callable[[str], object]
) -> str | None:
    """The class ``self.<name>()`` (looked up from the class at ``after`` on) returns an instance of:
    its only ``return`` is ``self.<attribute>(...)`` with that tester attribute naming a class."""
    function = next((functions[name] for _, functions in methods[after:] if name in functions), None)
    if function is None:
        return None
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
        return None
    func = returns[0].value.func
    if not (isinstance(func, ast.Attribute) and ast.unparse(func.value) == "self"):
        return None
    named = tester_attribute(func.attr)
    if isinstance(named, Unknown) and named.source.replace(".", "").isidentifier():
        return named.source.rpartition(".")[2]  # the class as written (``LlamaConfig``)
    return named.name if isinstance(named, ClassName) else None


def _calls_super(function: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_config"
        and isinstance(node.func.value, ast.Call)
        and ast.unparse(node.func.value.func) == "super"
        for node in ast.walk(function)
    )
