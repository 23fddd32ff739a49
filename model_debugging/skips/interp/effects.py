"""What a statement can do without being run: skip, end the test, or change which names.

The evaluator runs only the statements that may reach a skip; for the others it needs only their
effects. They are computed once per statement and kept on the ``ast`` node.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass

from model_debugging.skips.parse.ast_nodes import dotted_name
from model_debugging.skips.parse.signatures import signature

_SKIP_CALLS = frozenset({"self.skipTest", "pytest.skip"})
# Methods that change the container they are called on (``found.append(model_class)``).
MUTATORS = frozenset({"append", "extend", "add", "update", "insert", "remove", "pop", "clear", "setdefault"})


@dataclass(frozen=True)
class Effects:
    """``may_skip``: a skip call (or a helper that may skip) is inside; ``ends``: a ``return`` or
    ``raise`` (also ``break``/``continue`` outside inner loops) is; ``names`` / ``attributes``:
    the variables, and ``(variable, attribute)`` pairs, it assigns; ``changed``: the variables it
    assigns or changes an attribute of; ``passed``: the variables it hands to a call
    (``tune(options)``), which may change them in place."""

    may_skip: bool
    ends: ast.stmt | None
    names: frozenset[str]
    attributes: frozenset[tuple[str, str]]
    changed: frozenset[str]
    passed: frozenset[str]


def effects(node: ast.stmt, skipping_helpers: frozenset[str]) -> Effects:
    found = getattr(node, "_skip_effects", None)
    if found is None:
        found = _compute(node, skipping_helpers)
        node._skip_effects = found  # type: ignore[attr-defined]
    return found


def _compute(node: ast.stmt, skipping_helpers: frozenset[str]) -> Effects:
    may_skip = False
    ends: ast.stmt | None = None
    names: set[str] = set()
    attributes: set[tuple[str, str]] = set()
    passed: set[str] = set()
    # ast.walk's order (the first end met is kept), each node with whether it is inside a loop
    # nested in ``node``: a ``break`` / ``continue`` there ends that loop, not the path
    todo = deque([(node, False)])
    while todo:
        inner, in_loop = todo.popleft()
        in_loop_below = in_loop or (inner is not node and isinstance(inner, (ast.For, ast.While)))
        todo.extend((child, in_loop_below) for child in ast.iter_child_nodes(inner))
        if isinstance(inner, ast.Call):
            changed = mutated_name(inner)
            if changed is not None:
                names.add(changed)
            passed.update(passed_names(inner))
            target = dotted_name(inner.func)
            if target in _SKIP_CALLS or called_helper(inner) in skipping_helpers:
                may_skip = True
        elif isinstance(inner, ast.Raise):
            if inner.exc is not None and "SkipTest" in dotted_name(
                inner.exc.func if isinstance(inner.exc, ast.Call) else inner.exc
            ):
                may_skip = True
            ends = ends or inner
        elif isinstance(inner, ast.Return) or isinstance(inner, (ast.Break, ast.Continue)) and not in_loop:
            ends = ends or inner
        elif isinstance(inner, (ast.Name)) and isinstance(inner.ctx, ast.Store):
            names.add(inner.id)
        elif (
            isinstance(inner, ast.Subscript)
            and isinstance(inner.ctx, (ast.Store, ast.Del))
            and isinstance(inner.value, ast.Name)
        ):
            names.add(inner.value.id)  # inputs["use_cache"] = True, del inputs["labels"]
        elif (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.ctx, ast.Store)
            and isinstance(inner.value, ast.Name)
        ):
            attributes.add((inner.value.id, inner.attr))
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner is not node:
            names.add(inner.name)
    changed = frozenset(names | {name for name, _ in attributes})
    return Effects(may_skip, ends, frozenset(names), frozenset(attributes), changed, frozenset(passed))


def relevant_names(function: ast.FunctionDef, skipping_helpers: frozenset[str]) -> frozenset[str]:
    """The variables whose values can decide a skip of ``function``: read by the condition of an
    ``if``/loop that may skip or end the path (``return``, ``continue``), or by a skipping call, and,
    in turn, by what is assigned to them."""
    found = getattr(function, "_skip_relevant", None)
    if found is not None:
        return found
    relevant: set[str] = set()
    kinds = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)
    assignments = []
    for node in ast.walk(function):
        found = effects(node, skipping_helpers) if isinstance(node, (ast.If, ast.While)) else None
        if found is not None and (found.may_skip or found.ends is not None):  # a skip, or a way around one
            relevant |= _read(node.test)
        elif isinstance(node, ast.For) and effects(node, skipping_helpers).may_skip:
            relevant |= _read(node.iter)
        elif isinstance(node, ast.Call) and (
            dotted_name(node.func) in _SKIP_CALLS or called_helper(node) in skipping_helpers
        ):
            relevant |= {name for argument in (*node.args, *node.keywords) for name in _read(argument)}
        if isinstance(node, ast.Return) and node.value is not None:  # a helper's result may decide a skip
            relevant |= _read(node.value)
        if (
            isinstance(node, kinds)
            or (isinstance(node, ast.Call) and mutated_name(node) is not None)
            or (isinstance(node, ast.withitem) and node.optional_vars is not None)
        ):
            assignments.append(node)
    changed = True
    while changed:
        changed = False
        for node in assignments:
            if isinstance(node, ast.Call):  # name.append(value) assigns from its arguments
                targets, source = [node.func.value], ast.Tuple(elts=[*node.args], ctx=ast.Load())
            elif isinstance(node, ast.withitem):  # with open(path) as handle
                targets, source = [node.optional_vars], node.context_expr
            else:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                source = node.iter if isinstance(node, ast.For) else node.value
            if source is not None and assigned_names(targets) & relevant:
                added = _read(source) - relevant
                if added:
                    relevant |= added
                    changed = True
    function._skip_relevant = frozenset(relevant)  # type: ignore[attr-defined]
    return function._skip_relevant


def alias_names(function: ast.FunctionDef, relevant: frozenset[str]) -> frozenset[str]:
    """The other names ``function`` binds to a variable of ``relevant`` (``same = options``): a
    call handed one may change that variable in place. Kept on the node, as ``relevant`` is."""
    found = getattr(function, "_skip_aliases", None)
    if found is None:
        found = frozenset(
            target.id
            for node in ast.walk(function)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in relevant
            for target in node.targets
            if isinstance(target, ast.Name) and target.id not in relevant
        )
        function._skip_aliases = found  # type: ignore[attr-defined]
    return found


def mutated_name(call: ast.Call) -> str | None:
    """``name`` in ``name.append(...)`` and the like."""
    function = call.func
    if (
        isinstance(function, ast.Attribute)
        and function.attr in MUTATORS
        and isinstance(function.value, ast.Name)
    ):
        return function.value.id
    return None


def passed_names(call: ast.Call) -> list[str]:
    """The variables ``call`` is handed as they are (``tune(options, config=config)``): not those
    unpacked (``*items``, ``**inputs``), which hand their items only."""
    return [
        argument.id
        for argument in (*call.args, *(keyword.value for keyword in call.keywords if keyword.arg is not None))
        if isinstance(argument, ast.Name)
    ]


def changed_parameters(function: ast.FunctionDef) -> frozenset[str]:
    """The parameters whose value ``function`` may change in place: an item or attribute of it set
    or deleted, a method that changes a container called on it, or it handed to a call, unless the
    function binds the name again (``inputs_dict = copy.deepcopy(inputs_dict)``: it changes its
    copy). Kept on the node."""
    found = getattr(function, "_changed_parameters", None)
    if found is None:
        found = signature(function, method=False)
        parameters = {*found.names, *(extra for extra in (found.varargs, found.kwargs) if extra is not None)}
        changed: set[str] = set()
        rebound: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                rebound.add(node.id)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
                node.ctx, (ast.Store, ast.Del)
            ):
                if isinstance(node.value, ast.Name):
                    changed.add(node.value.id)
            elif isinstance(node, ast.Call):
                changed.update(passed_names(node))
                if (name := mutated_name(node)) is not None:
                    changed.add(name)
        found = frozenset((changed - rebound) & parameters)
        function._changed_parameters = found  # type: ignore[attr-defined]
    return found


def mutated_names(value: ast.expr) -> tuple[str, ...]:
    """The containers the calls inside ``value`` change (``inputs.pop(...)``), kept on the node."""
    found = getattr(value, "_mutated_names", None)
    if found is None:
        found = tuple(
            dict.fromkeys(
                changed
                for call in ast.walk(value)
                if isinstance(call, ast.Call) and (changed := mutated_name(call)) is not None
            )
        )
        value._mutated_names = found  # type: ignore[attr-defined]
    return found


def assigned_names(targets: list[ast.expr]) -> set[str]:
    """The variables an assignment binds or changes (``config.x = ...`` changes ``config``)."""
    names = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)
    return names


def _read(node: ast.AST) -> set[str]:
    return {inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)}


def called_helper(node: ast.Call) -> str | None:
    """The helper a call runs: ``name`` for ``self.name(...)``, ``super().name(...)`` (from an
    override) and ``name(self, ...)`` (a module-level function of a common file taking the test)."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    if isinstance(func, ast.Name):
        return func.id if passes_self(node) else None
    return super_method(node)


def passes_self(node: ast.Call) -> bool:
    """``function(self, ...)``: the test itself is the first argument."""
    return bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "self"


def super_method(node: ast.AST) -> str | None:
    """``name`` when ``node`` is a ``super().name(...)`` call (an override calling the next definition)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    owner = node.func.value  # `super()`, with no arguments
    calls_super = (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "super"
        and not owner.args
        and not owner.keywords
    )
    return node.func.attr if calls_super else None
