"""Read the calls a class's ``__init__`` makes: the raw material of its module tree (``module_tree``).

Every call is kept with its callee as written (``nn.Linear``, ``LlamaDecoderLayer``,
``AutoModel.from_config``, ``super().__init__``) and whether it runs only under a condition. Which
callee builds a module, and which builds a model of the library, is decided later, with the whole
library at hand.
"""

from __future__ import annotations

import ast

from model_debugging.skips.library.records import InitCall

# Statements and expressions whose parts run only when a condition holds.
_CONDITIONAL = (ast.If, ast.IfExp, ast.Try, ast.While, ast.BoolOp, ast.Match)


def read_init_calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[InitCall, ...]:
    """The calls in ``function``'s body, in source order (nested functions and lambdas are left out)."""
    calls: list[InitCall] = []
    aliases = _class_aliases(function)

    def visit(node: ast.AST, conditional: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, ast.comprehension):
            conditional = conditional or bool(node.ifs)
        if isinstance(node, ast.Call):
            argument = (
                node.args[0]
                if node.args
                else next((keyword.value for keyword in node.keywords if keyword.arg == "config"), None)
            )
            callee = _callee(node.func)
            choices = aliases.get(callee, (callee,))
            calls.extend(
                InitCall(
                    callee=choice,
                    conditional=conditional or len(choices) > 1,
                    argument=ast.unparse(argument) if argument is not None else "",
                )
                for choice in choices
            )
        inner = conditional or isinstance(node, _CONDITIONAL)
        for child in ast.iter_child_nodes(node):
            # the test of an `if` always runs; only its branches are conditional
            visit(child, conditional if isinstance(node, ast.If) and child is node.test else inner)

    for statement in function.body:
        visit(statement, False)
    return tuple(calls)


def _class_aliases(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str, ...]]:
    """Local names bound once to a class or to one of two (``cls = A if cross else B``): the
    classes a call of that name may build."""
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    aliases: dict[str, tuple[str, ...]] = {}
    for name, values in bound.items():
        if len(values) != 1:
            continue
        value = values[0]
        choices = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        if all(isinstance(choice, (ast.Name, ast.Attribute)) for choice in choices):
            aliases[name] = tuple(_callee(choice) for choice in choices)
    return aliases


def _callee(node: ast.expr) -> str:
    """``nn.Linear`` / ``LlamaModel`` / ``super().__init__``; anything else (a subscript, a call's
    result) as its source text, which resolves to nothing."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = node.value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            return f"super().{node.attr}"
        if isinstance(owner, (ast.Name, ast.Attribute)):
            return f"{_callee(owner)}.{node.attr}"
    return ast.unparse(node)
