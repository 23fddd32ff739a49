"""What a library class's constructor sets on ``self``: literal values and defaults, the names it assigns (their values decided at run time), and what it hands its base constructor."""

from __future__ import annotations

import ast

from model_debugging.skips.parse.ast_nodes import self_attribute
from model_debugging.skips.parse.library.function_nodes import FunctionNodes
from model_debugging.skips.parse.library.values import value_of
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import (
    ClassName,
    Value,
)
from model_debugging.skips.records.literals import NonLiteral


def init_assignments(
    function: ast.FunctionDef | ast.AsyncFunctionDef, nodes: FunctionNodes
) -> tuple[list[tuple[str, Value]], set[str], list[str]]:
    """``self.x = <parameter with a literal default>`` / ``self.x = <literal>`` at the top level of
    ``__init__``, and the names of every other ``self.x = ...`` anywhere in it (decided at run time);
    ``nodes`` are those of ``function``."""
    defaults = signature(function, method=False).defaults
    decided: list[tuple[str, Value]] = []
    top_level = set()
    as_set: list[str] = []
    assigned = set()
    rebound = {node.id for node in nodes.of(ast.Name) if isinstance(node.ctx, ast.Store)}
    for statement in function.body:
        passed = _passed_to_base(statement, defaults, rebound)
        if passed is not None:  # before dataclass fields: the base constructor sets what it is handed
            decided.extend(
                (key, value) for key, value in passed if not isinstance(value, (NonLiteral, ClassName))
            )
            assigned.update(key for key, value in passed if isinstance(value, (NonLiteral, ClassName)))
            continue
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            name = self_attribute(statement.targets[0])
            source = statement.value
            if name is None:
                continue
            if _set_of_class_value(source, name):  # the instance keeps the class's value: not run-time
                top_level.add(id(statement))
                as_set.append(name)
                continue
            # a value not decided here is only named: its code is not kept
            if isinstance(source, ast.Name) and source.id in defaults:
                value = value_of(defaults[source.id], keep_code=False)
            else:
                value = value_of(source, keep_code=False)
            if not isinstance(value, (NonLiteral, ClassName)):
                decided.append((name, value))
                top_level.add(id(statement))
    keywords = function.args.kwarg.arg if function.args.kwarg is not None else None
    loops = _literal_loops(nodes.of(ast.For))
    targets = [
        *(target for node in nodes.of(ast.Assign) if id(node) not in top_level for target in node.targets),
        *(node.target for node in nodes.of(ast.AugAssign)),
        *(node.target for node in nodes.of(ast.AnnAssign)),
    ]
    for target in targets:
        name = self_attribute(target)
        assigned.update((name,) if name is not None else _keywords_set(target, keywords, loops))
    return decided, assigned, as_set


def _passed_to_base(
    statement: ast.stmt, defaults: dict[str, ast.expr], rebound: set[str]
) -> list[tuple[str, Value]] | None:
    """``super().__init__(key=value, ...)``: the value each keyword hands the base constructor, which
    sets it on the instance (a parameter never rebound is its default; anything else is opaque)."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__init__"
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    ):
        return None
    passed = []
    for keyword in call.keywords:
        if keyword.arg is None:
            continue  # `**kwargs`: what the caller passes, read from the tester
        source = keyword.value
        if isinstance(source, ast.Name):
            plain = source.id in defaults and source.id not in rebound
            value = value_of(defaults[source.id], keep_code=False) if plain else NonLiteral("")
        else:
            value = value_of(source, keep_code=False)
        passed.append((keyword.arg, value))
    return passed


def _keywords_set(
    target: ast.expr, keywords: str | None, loops: dict[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """``x`` for ``kwargs["x"] = ...``: the keyword the method passes on (``super().__post_init__(**kwargs)``)
    sets that attribute to a value computed at run time; every name of the loop for
    ``for key in ["bos_token_id", ...]: kwargs[key] = ...`` (T5Gemma)."""
    if not (
        keywords is not None
        and isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id == keywords
    ):
        return ()
    key = target.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return (key.value,)
    return loops.get(key.id, ()) if isinstance(key, ast.Name) else ()


def _literal_loops(loops_found: list[ast.For]) -> dict[str, tuple[str, ...]]:
    """``name -> the strings`` of each ``for name in ["a", "b"]`` (or a tuple) among ``loops_found``."""
    loops: dict[str, tuple[str, ...]] = {}
    for node in loops_found:
        if (
            isinstance(node.target, ast.Name)
            and isinstance(node.iter, (ast.List, ast.Tuple))
            and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.iter.elts)
        ):
            loops[node.target.id] = loops.get(node.target.id, ()) + tuple(
                item.value for item in node.iter.elts
            )
    return loops


def _set_of_class_value(source: ast.expr, name: str) -> bool:
    """``set(self.<name> or [])``: the instance keeps the class attribute (as a set)."""
    if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "set"):
        return False  # what follows unparses the value: the cost of reading most constructors
    return ast.unparse(source) in (f"set(self.{name} or [])", f"set(self.{name} or ())")
