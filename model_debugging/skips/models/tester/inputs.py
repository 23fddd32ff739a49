"""The inputs dict a tester's ``prepare_config_and_inputs_for_common`` returns, read from its source.

The common tests ask which keys it has (``"use_cache" in inputs``), pass it to the model
(``model(**inputs)``) and look at its tensors (``inputs_dict["input_ids"].ndim``, ``0 in
attention_mask``). The method is run on the tester's own source, statement by statement: calls to
other methods of the tester (also ``super()``) are followed, tester attributes read from their
literal values, tuples unpacked, ``if`` on a known value takes its branch. A value only the run
knows stays unknown: two branches that disagree, a loop's assignments, a dict changed by a call
(``inputs.update(extra)``), a tensor passed to a call (it may be changed in place). A ``raise`` or
``try`` on the path, or a ``return`` under a condition only the run knows, leaves the whole dict
unknown. Literal values are kept; tensors are :class:`Tensor` facts; anything else is unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from model_debugging.skips.interp.values import ABSENT, Tensor, Unknown
from model_debugging.skips.models.test_class.context import UNREAD, TesterCommon
from model_debugging.skips.models.tester import tensors as tester_tensors
from model_debugging.skips.models.tester.expressions import (
    MAX_DEPTH,
    BoundMethod,
    ConfigPart,
    ExpressionReader,
    Frame,
    ModuleFunction,
    Returned,
    TesterConfig,
)
from model_debugging.skips.models.tester.parameters import GiveUp, bind_parameters

_COMMON = "prepare_config_and_inputs_for_common"


def common_inputs(
    classes: tuple[ast.ClassDef, ...],
    functions: tuple[dict[str, ast.FunctionDef], ...],
    tester_attribute: Callable[[str], object],
    config_class: str | None,
) -> TesterCommon:
    """Run ``prepare_config_and_inputs_for_common`` on the tester's source (``classes``: its MRO;
    ``functions``: the module-level functions of each class's file; ``config_class``: the name of
    the configuration class the evaluator takes the tester to build)."""
    called = tester_method_result(classes, functions, tester_attribute, config_class, _COMMON, [], {})
    return UNREAD if called is None else called


def tester_method_result(
    classes: tuple[ast.ClassDef, ...],
    functions: tuple[dict[str, ast.FunctionDef], ...],
    tester_attribute: Callable[[str], object],
    config_class: str | None,
    method: str,
    arguments: list[object],
    keywords: dict[str, object],
) -> TesterCommon | None:
    """What ``self.model_tester.<method>(*arguments, **keywords)`` returns when it is a
    (configuration, inputs) pair, run like ``prepare_config_and_inputs_for_common``
    (``prepare_config_and_inputs_for_generate(batch_size=2)`` in a tester); None when the method
    cannot be followed or returns anything else."""
    reader = _Reader(classes, functions, tester_attribute)
    try:
        result = reader.call(BoundMethod(method, -1), arguments, keywords, {})
    except (GiveUp, RecursionError):
        return None
    if not isinstance(result, tuple) or len(result) != 2:
        return None
    config, passed = None, None
    built = result[0].built if isinstance(result[0], TesterConfig) else None
    if isinstance(result[0], TesterConfig) and not reader.escaped and built in (None, config_class):
        config = tuple((key, _plain(value, f"config.{key}")) for key, value in result[0].overrides)
        passed = frozenset(key for key, _ in config) if built is not None else None
    inputs = result[1]
    if not isinstance(inputs, dict) or not all(isinstance(key, str) for key in inputs):
        return TesterCommon(config, None, passed)
    return TesterCommon(config, {key: _plain(value, key) for key, value in inputs.items()}, passed)


def _plain(value: object, name: str) -> object:
    """A value handed to the evaluator: a literal, a tensor's facts, else unknown."""
    if isinstance(value, Tensor):
        return replace(value, source=name, exists=True)
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    return Unknown(name, exists=True)


class _Reader(ExpressionReader):
    """Runs the statements of a tester's methods; follows the calls to its methods and functions."""

    def call(
        self,
        method: BoundMethod | ModuleFunction,
        arguments: list[object],
        keywords: dict[str, object],
        self_values: dict[str, object],
        owner: int = 0,
    ) -> object:
        if isinstance(method, ModuleFunction):
            function, index = self.functions[owner][method.name], owner
        else:
            found = self._find(method.name, method.after)
            if found is None:
                raise GiveUp
            index, function = found
        if self.depth >= MAX_DEPTH or function.decorator_list:
            raise GiveUp
        frame = Frame(
            bind_parameters(function, arguments, keywords, isinstance(method, BoundMethod)),
            index,
            self_values,
        )
        frame.parameters = frozenset(frame.variables)
        self.depth += 1
        try:
            self.block(function.body, frame)
        except Returned as returned:
            return returned.value
        finally:
            self.depth -= 1
        return None

    def block(self, statements: list[ast.stmt], frame: Frame) -> None:
        for statement in statements:
            self.statement(statement, frame)

    def statement(self, node: ast.stmt, frame: Frame) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = self.value(node.value, frame)
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self._bind(target, value, frame)
        elif isinstance(node, ast.AugAssign):
            self._bind(node.target, Unknown(ast.unparse(node.target)), frame)
        elif isinstance(node, ast.Expr):
            self.value(node.value, frame)
        elif isinstance(node, ast.Return):
            raise Returned(self.value(node.value, frame) if node.value is not None else None)
        elif isinstance(node, ast.If):
            self._if(node, frame)
        elif isinstance(node, ast.For) and (items := self._iterated(node.iter, frame)) is not None:
            self._unrolled(node, items, frame)
        elif isinstance(node, (ast.For, ast.While)):
            self._opaque(node, frame)
        elif isinstance(node, (ast.Break, ast.Continue)) and frame.loops:
            raise _LoopExit(isinstance(node, ast.Break))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._delete(target, frame)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                frame.variables[(alias.asname or alias.name).split(".")[0]] = Unknown(alias.name)
        elif isinstance(node, ast.Raise):
            raise GiveUp(fails=True)
        elif not isinstance(node, ast.Pass):
            raise GiveUp  # try, with, assert, nested definitions: not followed

    def _if(self, node: ast.If, frame: Frame) -> None:
        test = self.value(node.test, frame)
        if not isinstance(test, Unknown) and isinstance(
            test, (bool, int, str, type(None), tuple, list, dict)
        ):
            self.block(node.body if test else node.orelse, frame)
            return
        branches = []
        for statements in (node.body, node.orelse):
            branch = Frame(dict(frame.variables), frame.owner, dict(frame.self_values))
            try:
                self.block(statements, branch)
            except (Returned, _LoopExit):
                raise GiveUp from None  # returns or leaves a loop under a condition only the run knows
            branches.append(branch)
        for name in {*branches[0].variables, *branches[1].variables}:
            values = [branch.variables.get(name, ABSENT) for branch in branches]
            frame.variables[name] = values[0] if _same(*values) else Unknown(name)
        for name in {*branches[0].self_values, *branches[1].self_values}:
            values = [branch.self_values.get(name, ABSENT) for branch in branches]
            frame.self_values[name] = values[0] if _same(*values) else Unknown(name)

    def _iterated(self, node: ast.expr, frame: Frame) -> list[object] | None:
        """The items of a loop's iterable when known: ``range(<ints>)``, a literal tuple or list, or
        a variable holding one (at most :data:`_MAX_ITERATIONS` items)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            bounds = [self.value(argument, frame) for argument in node.args]
            if node.keywords or not 1 <= len(bounds) <= 3 or any(type(bound) is not int for bound in bounds):
                return None
            items: object = list(range(*bounds))
        elif isinstance(node, (ast.Name, ast.Tuple, ast.List)):
            items = self.value(node, frame)
        else:
            return None
        if not isinstance(items, (tuple, list)) or len(items) > _MAX_ITERATIONS:
            return None
        return list(items)

    def _unrolled(self, node: ast.For, items: list[object], frame: Frame) -> None:
        """A loop over known items, run once per item (``break``, ``continue`` and ``else`` as Python
        runs them)."""
        frame.loops += 1
        try:
            for item in items:
                self._bind(node.target, item, frame)
                try:
                    self.block(node.body, frame)
                except _LoopExit as leaving:
                    if leaving.breaks:
                        return
            self.block(node.orelse, frame)
        finally:
            frame.loops -= 1

    def _opaque(self, node: ast.stmt, frame: Frame) -> None:
        """A loop: what it assigns or changes is unknown after it; a ``return`` or ``raise`` in it is
        a path the reader cannot follow."""
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Return, ast.Raise, ast.Try)):
                raise GiveUp
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                frame.variables[inner.id] = Unknown(inner.id)
            elif isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(
                inner.ctx, (ast.Store, ast.Del)
            ):
                self._changed(inner.value, frame)
            elif isinstance(inner, ast.Call):
                for argument in (inner.func, *inner.args, *(item.value for item in inner.keywords)):
                    self._changed(argument.value if isinstance(argument, ast.Attribute) else argument, frame)

    def _changed(self, node: ast.expr, frame: Frame, argument: bool = False) -> None:
        """``node`` (a variable, or ``self.x``) may have been changed in place (``argument``: it was
        passed to a call not followed, which may change the object but not a value read from it)."""
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        held = frame.variables.get(root.id) if isinstance(root, ast.Name) else None
        if isinstance(held, (TesterConfig, ConfigPart)):
            # the configuration itself handed over, or changed through a name or a part of it
            self.escaped = self.escaped or not argument or (root is node and isinstance(held, TesterConfig))
            return
        if isinstance(node, ast.Name) and node.id in frame.variables:
            held = frame.variables[node.id]
            frame.variables[node.id] = (
                Tensor(held.source, dims=held.dims) if isinstance(held, Tensor) else Unknown(node.id)
            )
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            frame.self_values[node.attr] = Unknown(node.attr)

    def _bind(self, target: ast.expr, value: object, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.variables[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, frame)
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            frame.self_values[target.attr] = value
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and isinstance(config := frame.variables.get(target.value.id), TesterConfig)
            and target.value.id not in frame.parameters
        ):  # config.x = value, on the configuration this method holds itself
            kept = tuple(item for item in config.overrides if item[0] != target.attr)
            frame.variables[target.value.id] = TesterConfig((*kept, (target.attr, value)))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container, key = frame.variables.get(target.value.id), self.value(target.slice, frame)
            if isinstance(container, dict) and isinstance(key, str):
                frame.variables[target.value.id] = {**container, key: value}
            elif isinstance(container, Tensor):
                written = tester_tensors.item_set(container, _literal_index(target.slice), value)
                _replace_everywhere(frame, container, written)
            else:
                self._changed(target.value, frame)
        else:
            self._changed(
                target.value if isinstance(target, (ast.Subscript, ast.Attribute)) else target, frame
            )

    def _unpack(self, targets: list[ast.expr], value: object, frame: Frame) -> None:
        starred = [index for index, target in enumerate(targets) if isinstance(target, ast.Starred)]
        items = list(value) if isinstance(value, (tuple, list)) else None
        if items is not None and starred:
            at, after = starred[0], len(targets) - starred[0] - 1
            if len(items) < len(targets) - 1:
                items = None
            else:
                items = [*items[:at], items[at : len(items) - after], *items[len(items) - after :]]
        if items is None or len(items) != len(targets):
            items = [Unknown(ast.unparse(target)) for target in targets]
        for target, item in zip(targets, items, strict=True):
            self._bind(target.value if isinstance(target, ast.Starred) else target, item, frame)

    def _delete(self, target: ast.expr, frame: Frame) -> None:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container, key = frame.variables.get(target.value.id), self.value(target.slice, frame)
            if isinstance(container, dict) and isinstance(key, str):
                frame.variables[target.value.id] = {k: v for k, v in container.items() if k != key}
                return
        if isinstance(target, ast.Name):
            frame.variables.pop(target.id, None)
            return
        self._changed(target.value if isinstance(target, ast.Subscript) else target, frame)

    # -- expressions ------------------------------------------------------------------------------


_MAX_ITERATIONS = 256  # a longer loop over known items is read as opaque


class _LoopExit(Exception):  # noqa: N818 - control flow
    """``break`` (``breaks``) or ``continue`` in a loop the reader runs item by item."""

    def __init__(self, breaks: bool):
        super().__init__("loop exit")
        self.breaks = breaks


def _literal_index(node: ast.expr) -> object:
    """The indices of ``t[-1, 0]`` as literals (None when any is not one)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def _replace_everywhere(frame: Frame, old: Tensor, new: Tensor) -> None:
    """A tensor changed in place: every variable holding it, also as an item of a dict or tuple,
    sees the change."""

    def swap(value: object) -> object:
        if value is old:
            return new
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, tuple):
            return tuple(swap(item) for item in value)
        return value

    for name, value in list(frame.variables.items()):
        frame.variables[name] = swap(value)


def _same(one: object, other: object) -> bool:
    return bool(one == other)
