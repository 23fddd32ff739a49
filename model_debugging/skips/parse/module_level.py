"""What pytest collects from a module, read at parse time (the rules beyond skip decorators).

- ``pytestmark`` (one mark or a list of them) at module level marks every test the module's
  classes give; in a class body it marks the class's tests (and its subclasses').
- A name bound last in a class body by something that cannot be called (``test_x = False``,
  ``test_x = None``, a ``@property``) shadows the test: unittest's loader, which pytest uses,
  collects only callables. ``test_x = lambda self: ...`` is collected, as the ``def`` it stands
  for, and so is ``test_x = test_y`` naming a ``def`` of the body (the same function under a second
  name); a test bound to any other value that is not a literal is a test the scanner does not read. ``del test_x`` in the body unbinds the class's own definition, so the inherited one is
  collected again.
- ``X = unittest.skip("r")(X)`` after the class body skips the class as the decorator would;
  ``X.test_x = <value>`` or ``setattr(X, "test_x", <value>)`` there binds the test anew: a literal
  shadows it, ``unittest.skip("r")(...)`` makes it a test that skips, a lambda a test that runs
  its body, and any other value a test the scanner cannot read (undecided); ``del X.test_x``
  unbinds the class's own one.
- A class name defined twice in a module: only the last definition exists when pytest collects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Literal

import libcst as cst

from model_debugging.skips.parse.rules import Context
from model_debugging.skips.parse.rules.condition_decorator import decorator_condition
from model_debugging.skips.parse.rules.nodes import code, decorator_call, dotted_name, literal_value
from model_debugging.skips.parse.rules.skip_decorator import decorator_skip
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import ClassInfo, Condition, Method, Skip, SkipKind


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


# decorators that leave a descriptor the class returns as a value: unittest does not collect it
_NOT_CALLABLE = frozenset({"property", "functools.cached_property", "cached_property"})


def lambda_definition(name: str, value: cst.Lambda) -> cst.FunctionDef:
    """The ``def`` that ``name = lambda <params>: <body>`` stands for (a literal body does nothing)."""
    does_nothing = not isinstance(literal_value(value.body), NonLiteral)
    statement = cst.Pass() if does_nothing else cst.Expr(value.body)
    return cst.FunctionDef(
        cst.Name(name), value.params, cst.IndentedBlock([cst.SimpleStatementLine([statement])])
    )


def class_bindings(
    statements: Sequence[cst.BaseStatement], context: Context
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, cst.FunctionDef | str], ...]]:
    """``(shadowing, deleted, functions)`` of a class body: the names whose last binding is not
    callable, the unbound ones, and the ``def`` each ``name = <value>`` stands for: a lambda's, or
    that of a function the body bound before under another name (``test_x = test_y``), renamed;
    the code of the value for a test bound to anything else that is not a literal (a value the
    scanner does not read, which may be callable)."""
    last: dict[str, str] = {}
    defined: dict[str, cst.FunctionDef] = {}
    functions: list[tuple[str, cst.FunctionDef | str]] = []
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            decorators = (decorator_call(item, context.aliases)[0] for item in statement.decorators)
            not_callable = isinstance(statement, cst.FunctionDef) and not _NOT_CALLABLE.isdisjoint(decorators)
            last[statement.name.value] = "value" if not_callable else "def"
            if isinstance(statement, cst.FunctionDef) and not not_callable:
                defined[statement.name.value] = statement
            continue
        for small in _small_statements([statement]):
            for name in _target_names(small):
                function = _bound_function(small, name, defined) if isinstance(small, cst.Assign) else False
                last[name] = "value" if function is False else "def"
                defined.pop(name, None)
                if function is not False:
                    functions.append((name, function))
                    if isinstance(function, cst.FunctionDef):
                        defined[name] = function
            if isinstance(small, cst.Del) and isinstance(small.target, cst.Name):
                last[small.target.value] = "deleted"
    shadowing = tuple(name for name, kind in last.items() if kind == "value")
    deleted = tuple(name for name, kind in last.items() if kind == "deleted")
    return shadowing, deleted, tuple(functions)


def _bound_function(
    assign: cst.Assign, name: str, defined: dict[str, cst.FunctionDef]
) -> cst.FunctionDef | str | Literal[False]:
    """The ``def`` ``name = <value>`` binds, the value's code when not read, False for a value
    that cannot be called."""
    value = assign.value
    if isinstance(value, cst.Lambda):
        return lambda_definition(name, value)
    if isinstance(value, cst.Name) and value.value in defined:
        return defined[value.value].with_changes(name=cst.Name(name))
    if name.startswith("test") and isinstance(literal_value(value), NonLiteral):
        return code(value)
    return False


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


def _class_attribute_rebound(
    small: cst.BaseSmallStatement,
) -> tuple[str, str, cst.BaseExpression | None] | None:
    """``(class, attribute, value)`` for ``X.test_x = value`` / ``setattr(X, "test_x", value)`` at
    module level, with value None for ``del X.test_x``."""
    if isinstance(small, cst.Del):
        target, value = small.target, None
    elif isinstance(small, cst.Assign) and len(small.targets) == 1:
        target, value = small.targets[0].target, small.value
    elif (
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and dotted_name(small.value.func) == "setattr"
    ):
        args = small.value.args
        if len(args) != 3 or any(arg.keyword is not None or arg.star for arg in args):
            return None
        attribute = literal_value(args[1].value)
        if not isinstance(args[0].value, cst.Name) or not isinstance(attribute, str):
            return None
        return args[0].value.value, attribute, args[2].value
    else:
        return None
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return target.value.value, target.attr.value, value
    return None


# reads a method the way the parser reads those of a class body: (def, line) -> record
MethodReader = Callable[[cst.FunctionDef, int], Method]


def _bound_method(
    name: str, value: cst.BaseExpression, line: int, context: Context, read: MethodReader
) -> Method | None:
    """What ``X.<name> = value`` after the class makes of the test (None: a literal, which shadows it)."""
    if not isinstance(literal_value(value), NonLiteral):
        return None
    if isinstance(value, cst.Lambda):
        return read(lambda_definition(name, value), line)
    if isinstance(value, cst.Call):  # unittest.skip("r")(function): a function that skips
        skip = decorator_skip(cst.Decorator(decorator=value.func), replace(context, line=line))
        if skip is not None:
            return Method(name, line, skip)
    return Method(name, line, unread=f"{name} is bound after the class to `{code(value)}`, which is not read")


def _rebind(info: ClassInfo, attribute: str, method: Method | None, deleted: bool) -> ClassInfo:
    """``info`` once ``attribute`` is unbound (``deleted``), shadowed (no ``method``) or rebound."""
    shadowing = tuple(name for name in info.shadowing if name != attribute)
    if deleted:
        return replace(info, deleted=(*info.deleted, attribute), shadowing=shadowing)
    if method is None:
        return replace(info, shadowing=(*shadowing, attribute))
    methods = tuple(found for found in info.methods if found.name != attribute)
    return replace(info, methods=(*methods, method), shadowing=shadowing)


def module_level_classes(
    statements: Sequence[cst.BaseStatement],
    classes: list[ClassInfo],
    context: Context,
    read: MethodReader,
    line_of: Callable[[str, str], int],
) -> list[ClassInfo]:
    """``classes`` (in file order) as pytest finds them once the module has run: the last definition
    of each name, with the decorators applied after the class body (``X = skip("r")(X)``) and the
    attributes bound or deleted there. ``line_of(class, attribute)`` is the line of such a binding."""
    last = {info.name: index for index, info in enumerate(classes)}
    kept = {info.name: info for index, info in enumerate(classes) if last[info.name] == index}
    for small in _small_statements(statements):
        rebound = _class_attribute_rebound(small)
        if rebound is not None and rebound[0] in kept:
            name, attribute, value = rebound
            line = line_of(name, attribute) or kept[name].line
            method = None if value is None else _bound_method(attribute, value, line, context, read)
            kept[name] = _rebind(kept[name], attribute, method, deleted=value is None)
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
