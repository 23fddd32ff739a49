"""The inputs dict a tester's ``prepare_config_and_inputs_for_common`` returns, when it is a literal.

The common tests ask which keys it has (``"use_cache" in inputs``) and pass it to the model
(``model(**inputs)``). Its keys are known when the method returns ``config, inputs_dict`` with
``inputs_dict`` assigned once from a dict literal with string keys and not changed afterwards;
the values are tensors, known only at run time, except the literal ones (``"use_cache": False``).
"""

from __future__ import annotations

import ast

from model_debugging.skips.runtime.values import Unknown


def literal_inputs(function: ast.FunctionDef) -> dict[str, object] | None:
    """The dict ``function`` returns second, key by key; None when it is not read as a literal."""
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) or len(returns[0].value.elts) != 2:
        return None
    returned = returns[0].value.elts[1]
    if isinstance(returned, ast.Name):
        returned = _only_assignment(function, returned.id)
    if not isinstance(returned, ast.Dict) or not all(
        isinstance(key, ast.Constant) and isinstance(key.value, str) for key in returned.keys
    ):
        return None  # a ``**`` entry, a computed key, or not a dict
    return {
        key.value: value.value if isinstance(value, ast.Constant) else Unknown(key.value, exists=True)
        for key, value in zip(returned.keys, returned.values, strict=True)
    }


def _only_assignment(function: ast.FunctionDef, name: str) -> ast.expr | None:
    """The value ``name`` is bound to, when one plain assignment binds it and nothing changes it."""
    bound: list[ast.expr] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            bound.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr, ast.With, ast.Delete)):
            if any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node)):
                return None
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name):
            changed = isinstance(node.ctx, (ast.Store, ast.Del)) or isinstance(node, ast.Attribute)
            if node.value.id == name and changed:  # inputs[k] = v, inputs.update(...), inputs.pop(...)
                return None
        elif isinstance(node, ast.Assign) and any(
            isinstance(inner, ast.Name) and inner.id == name for t in node.targets for inner in ast.walk(t)
        ):
            return None  # unpacked into, or a tuple target
    return bound[0] if len(bound) == 1 else None
