"""Read the calls a class's ``__init__`` makes: the raw material of its module tree (``module_tree``).

Every call is kept with its callee as written (``nn.Linear``, ``LlamaDecoderLayer``,
``AutoModel.from_config``, ``super().__init__``) and whether it runs only under a condition. Which
callee builds a module, and which builds a model of the library, is decided later, with the whole
library at hand.
"""

from __future__ import annotations

import ast

from model_debugging.skips.library.records import InitCall

_CONSTRUCTORS = ("from_config", "_from_config", "from_pretrained")
# Statements and expressions whose parts run only when a condition holds.
_CONDITIONAL = (ast.If, ast.IfExp, ast.Try, ast.While, ast.BoolOp, ast.Match)


def read_init_calls(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef,
    tables: dict[str, tuple[str, ...]],
) -> tuple[InitCall, ...]:
    """The calls in ``function``'s body, in source order (nested functions and lambdas are left out).

    A call of another method of ``owner`` (``self._init_layers()``) is replaced by that method's own
    calls; ``tables`` are the file's module-level dicts of classes (``X_ATTENTION_CLASSES``), whose
    entries a call of ``TABLE[key](...)`` may build.
    """
    methods = {
        item.name: item for item in owner.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    calls: list[InitCall] = []

    def read(
        body: ast.FunctionDef | ast.AsyncFunctionDef, conditional: bool, inlined: tuple[str, ...]
    ) -> None:
        aliases = _class_aliases(body, tables)
        values = _bound_to_calls(body)

        def visit(node: ast.AST, conditional: bool) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return
            if isinstance(node, ast.comprehension):
                conditional = conditional or bool(node.ifs)
            if isinstance(node, ast.Call):
                _record(node, conditional)
            inner = conditional or isinstance(node, _CONDITIONAL)
            for child in ast.iter_child_nodes(node):
                # the test of an `if` always runs; only its branches are conditional
                visit(child, conditional if isinstance(node, ast.If) and child is node.test else inner)

        def _record(node: ast.Call, conditional: bool) -> None:
            callee = _callee(node.func)
            method = callee.removeprefix("self.")
            if callee.startswith("self.") and method in methods and method not in inlined:
                read(methods[method], conditional, (*inlined, method))
                return
            argument = (
                node.args[0]
                if node.args
                else next((keyword.value for keyword in node.keywords if keyword.arg == "config"), None)
            )
            owner_name, _, attribute = callee.partition(".")
            if owner_name in values and attribute and "." not in attribute and attribute not in _CONSTRUCTORS:
                callee = f"{owner_name}().{attribute}"  # a method of a value a call returned
            table = _choices(node.func, tables) if isinstance(node.func, ast.Subscript) else None
            choices = aliases.get(callee) or table or (callee,)
            calls.extend(
                InitCall(
                    callee=choice,
                    conditional=conditional or len(choices) > 1,
                    argument=ast.unparse(argument) if argument is not None else "",
                )
                for choice in choices
            )

        for statement in body.body:
            visit(statement, conditional)

    read(function, False, (function.name,))
    return tuple(calls)


def class_tables(body: list[ast.stmt]) -> dict[str, tuple[str, ...]]:
    """Module-level ``NAME = {"key": SomeClass, ...}`` dicts whose values are all class names."""
    tables: dict[str, tuple[str, ...]] = {}
    for node in body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Dict)
            and node.value.values
            and all(isinstance(value, (ast.Name, ast.Attribute)) for value in node.value.values)
        ):
            tables[node.targets[0].id] = tuple(_callee(value) for value in node.value.values)
    return tables


def _choices(node: ast.expr, tables: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The classes ``node`` may name: one class, either of ``A if c else B``, or a table's entries."""
    if isinstance(node, ast.IfExp):
        body, orelse = _choices(node.body, tables), _choices(node.orelse, tables)
        return (*body, *orelse) if body and orelse else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return tables.get(node.value.id)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return (_callee(node),)
    return None


def _bound_to_calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Local names every assignment of which binds a computed value (a call's result, an indexed
    result, arithmetic): never a class, so calling one of its methods builds no model."""
    bound: dict[str, bool] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            computed = isinstance(node.value, (ast.Call, ast.BinOp, ast.Constant)) or (
                isinstance(node.value, ast.Subscript)
                and isinstance(node.value.value, (ast.Call, ast.Subscript))
            )
            bound[name] = bound.get(name, True) and computed
    return {name for name, only_calls in bound.items() if only_calls}


def _class_aliases(
    function: ast.FunctionDef | ast.AsyncFunctionDef, tables: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Local names bound only to classes (``cls = A if cross else B``, ``cls = A`` in one branch and
    ``cls = B`` in another) or to a table's entry: the classes a call of that name may build."""
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    aliases: dict[str, tuple[str, ...]] = {}
    for name, values in bound.items():
        found = [_choices(value, tables) for value in values]
        if all(found):
            aliases[name] = tuple(dict.fromkeys(choice for choices in found for choice in choices))
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
