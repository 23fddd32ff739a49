"""What pytest collects from a module, read at parse time (the rules beyond skip decorators).

- ``pytestmark`` (one mark or a list of them) at module level marks every test the module's
  classes give; in a class body it marks the class's tests (and its subclasses').
- A name bound last in a class body by anything but a ``def`` (``test_x = False``, ``test_x = None``)
  shadows the test: pytest does not collect it. ``del test_x`` in the body unbinds the class's own
  definition, so the inherited one is collected again.
- ``X = unittest.skip("r")(X)`` after the class body skips the class as the decorator would;
  ``X.test_x = None`` there shadows the test and ``del X.test_x`` unbinds the class's own one.
- A class name defined twice in a module: only the last definition exists when pytest collects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import libcst as cst

from model_debugging.skips.parse.rules import Context
from model_debugging.skips.parse.rules.condition_decorator import decorator_condition
from model_debugging.skips.parse.rules.nodes import literal_value
from model_debugging.skips.parse.rules.skip_decorator import decorator_skip
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import ClassInfo, Condition, Skip, SkipKind


def _small_statements(statements: Iterable[cst.BaseStatement]) -> Iterator[cst.BaseSmallStatement]:
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body


def _target_names(small: cst.BaseSmallStatement) -> Iterator[str]:
    """Names a statement binds in its scope (``x = ...``, ``x: T = ...``, ``x += ...``)."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and isinstance(small.target, cst.Name):
        annotation_only = isinstance(small, cst.AnnAssign) and small.value is None
        if not annotation_only:
            yield small.target.value


def class_bindings(statements: Sequence[cst.BaseStatement]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(shadowing, deleted)``: names whose last binding in the body is not a ``def``, and unbound ones."""
    last: dict[str, str] = {}
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            last[statement.name.value] = "def"
            continue
        for small in _small_statements([statement]):
            for name in _target_names(small):
                last[name] = "value"
            if isinstance(small, cst.Del) and isinstance(small.target, cst.Name):
                last[small.target.value] = "deleted"
    shadowing = tuple(name for name, kind in last.items() if kind == "value")
    deleted = tuple(name for name, kind in last.items() if kind == "deleted")
    return shadowing, deleted


def mark_skip(value: cst.BaseExpression, context: Context) -> tuple[Skip | None, tuple[Condition, ...]]:
    """The skip and conditions of a ``pytestmark`` value: one mark, or a list or tuple of marks."""
    marks = (
        [element.value for element in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    )
    skip, conditions = None, []
    for mark in marks:
        decorator = cst.Decorator(decorator=mark)
        skip = skip or decorator_skip(decorator, context)
        condition = decorator_condition(decorator, context)
        if condition is not None:
            conditions.append(condition)
    return skip, tuple(conditions)


def pytestmark(
    statements: Sequence[cst.BaseStatement], context: Context
) -> tuple[Skip | None, tuple[Condition, ...]]:
    """The last ``pytestmark = ...`` among ``statements`` (a module or class body)."""
    found: tuple[Skip | None, tuple[Condition, ...]] = (None, ())
    for small in _small_statements(statements):
        if "pytestmark" in _target_names(small) and isinstance(small, (cst.Assign, cst.AnnAssign)):
            skip, conditions = mark_skip(small.value, context)
            found = (
                None if skip is None else Skip(SkipKind.PYTESTMARK, skip.reason, context.line),
                conditions,
            )
    return found


def _post_hoc_decorator(small: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    """``X = <decorator expression>(X)``: the class name and the decorator expression."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    target, call = small.targets[0].target, small.value
    if not isinstance(target, cst.Name) or len(call.args) != 1:
        return None
    argument = call.args[0].value
    if (
        call.args[0].keyword is not None
        or not isinstance(argument, cst.Name)
        or argument.value != target.value
    ):
        return None
    return target.value, call.func


def _class_attribute_rebound(small: cst.BaseSmallStatement) -> tuple[str, str, str] | None:
    """``X.test_x = <literal>`` ("value": shadows) or ``del X.test_x`` ("deleted") at module level."""
    if isinstance(small, cst.Del):
        target, kind = small.target, "deleted"
    elif (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and not isinstance(literal_value(small.value), NonLiteral)
    ):
        target, kind = small.targets[0].target, "value"
    else:
        return None
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return target.value.value, target.attr.value, kind
    return None


def module_level_classes(
    statements: Sequence[cst.BaseStatement], classes: list[ClassInfo], context: Context
) -> list[ClassInfo]:
    """``classes`` (in file order) as pytest finds them once the module has run: the last definition
    of each name, with the decorators applied after the class body (``X = skip("r")(X)``)."""
    last = {info.name: index for index, info in enumerate(classes)}
    kept = {info.name: info for index, info in enumerate(classes) if last[info.name] == index}
    for small in _small_statements(statements):
        rebound = _class_attribute_rebound(small)
        if rebound is not None and rebound[0] in kept:
            name, attribute, kind = rebound
            info = kept[name]
            if kind == "value":
                kept[name] = replace(info, shadowing=(*info.shadowing, attribute))
            else:
                kept[name] = replace(info, deleted=(*info.deleted, attribute))
            continue
        found = _post_hoc_decorator(small)
        if found is None or found[0] not in kept:
            continue
        name, expression = found
        info = kept[name]
        decorator = cst.Decorator(decorator=expression)
        skip = decorator_skip(decorator, replace(context, line=info.line))
        condition = decorator_condition(decorator, replace(context, line=info.line))
        kept[name] = replace(
            info,
            skip=info.skip
            or (None if skip is None else Skip(SkipKind.CLASS_DECORATOR, skip.reason, info.line)),
            conditions=info.conditions + ((condition,) if condition is not None else ()),
        )
    return [kept[info.name] for index, info in enumerate(classes) if last[info.name] == index]
