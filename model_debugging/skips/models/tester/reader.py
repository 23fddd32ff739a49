"""Run a model tester's methods on the interpreter, statement by statement, to the value they return.

Expressions are the interpreter's (:class:`~model_debugging.skips.interp.expressions.Evaluator`, with
the tester's handlers of :mod:`~model_debugging.skips.models.tester.reader_handlers`); this module
runs the statements: assignments and unpacking, ``if`` on a known value takes its branch and on an
unknown one runs both and keeps what they agree on, a loop over known items is unrolled, any other
loop makes what it assigns unknown. It follows the calls to the tester's methods and to the
functions of its file, and tracks what a call not followed may change (:meth:`TesterReader.changed`).
A path it cannot follow raises :class:`~model_debugging.skips.models.tester.parameters.GiveUp`
(``fails`` when the tester surely raises there).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.expressions import Evaluator, augmented
from model_debugging.skips.interp.iteration import loop_items, run_loop
from model_debugging.skips.interp.join import merge_branches
from model_debugging.skips.interp.outcome import Exit
from model_debugging.skips.interp.parameters import MAX_DEPTH
from model_debugging.skips.interp.truth import Truth, truth_of
from model_debugging.skips.interp.unpacking import bindings
from model_debugging.skips.interp.values import Skipped, Tensor, Unknown
from model_debugging.skips.models.tester import tensors as tester_tensors
from model_debugging.skips.models.tester.parameters import (
    GiveUp,
    bind_parameters,
    named_parameters,
    read_names,
)
from model_debugging.skips.models.tester.reader_handlers import TESTER_HANDLERS, method_call
from model_debugging.skips.models.tester.self_writes import self_writes
from model_debugging.skips.models.tester.values import (
    DICT_READS,
    BoundMethod,
    ConfigPart,
    Frame,
    ModuleFunction,
    TesterConfig,
)


class TesterReader:
    """Runs the methods of one tester (``classes``: its MRO; ``functions``: the module-level
    functions of each class's file; ``tester_attribute``: a tester attribute's literal value, or
    ABSENT). It is the ``facts`` its handlers read: the frame running, the lookups, the calls."""

    handlers = TESTER_HANDLERS
    # a tester's method calls no helper of a test: the interpreter asks only for ``super()`` calls
    definition = inherited_definition = module_function = None

    def __init__(
        self,
        classes: tuple[ast.ClassDef, ...],
        functions: tuple[dict[str, ast.FunctionDef], ...],
        tester_attribute: Callable[[str], object],
    ):
        self.classes, self.functions, self.tester_attribute = classes, functions, tester_attribute
        self.depth, self.escaped = 0, False  # escaped: the configuration reached code not read
        # what a method the reader cannot follow may have set on the tester
        self.self_stores = set().union(*(self_writes(node).stored for node in classes))
        self.frame = Frame({}, 0)
        self.evaluator = Evaluator(
            self, self._inherited_call, not_made=lambda node, _: self.not_followed(node)
        )

    def find(self, name: str, after: int) -> tuple[int, ast.FunctionDef] | None:
        """The definition of method ``name`` on the first class after index ``after`` of the MRO."""
        for index in range(after + 1, len(self.classes)):
            for item in self.classes[index].body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return index, item
        return None

    def value(self, node: ast.expr, frame: Frame) -> object:
        """``node``'s value in the method ``frame`` runs."""
        caller, self.frame = self.frame, frame
        try:
            return self.evaluator.value(node, frame.variables)
        except Skipped:  # pytest.skip(...): the method does not return
            raise GiveUp(fails=True) from None
        finally:
            self.frame = caller

    # -- calls ------------------------------------------------------------------------------------
    def _inherited_call(
        self,
        name: str,
        arguments: list[object],
        keywords: dict[str, object],
        inherited: bool = False,
        module: bool = False,
        node: ast.Call | None = None,
    ) -> object:
        """``super().<name>(...)`` (the only call the interpreter hands back: ``definition`` and
        ``module_function`` are None): the next definition along the MRO."""
        unknown = Unknown(node=node)
        if any(isinstance(argument, ast.Starred) for argument in node.args):  # *args: not followed
            self.not_followed(node)
            return unknown
        return method_call(self, BoundMethod(name, self.frame.owner), arguments, keywords, unknown)

    def follow(
        self,
        method: BoundMethod | ModuleFunction,
        arguments: list[object],
        keywords: dict[str, object],
        node: ast.Call,
    ) -> object:
        """Run a call of a method or a module function; what it was handed may change (a
        configuration it is handed shows its changes), and a call it cannot follow is unknown."""
        frame = self.frame
        for argument in (*node.args, *(item.value for item in node.keywords)):
            held = frame.variables.get(argument.id) if isinstance(argument, ast.Name) else None
            if not isinstance(held, TesterConfig):
                self.changed(argument.value if isinstance(argument, ast.Starred) else argument, frame, True)
        try:
            return self.call(method, arguments, keywords, frame.self_values, frame.owner)
        except GiveUp as given_up:
            if given_up.fails:
                raise
            if any(isinstance(item, TesterConfig) for item in (*arguments, *keywords.values())):
                self.escaped = True
            for name in self.self_stores:
                frame.self_values[name] = Unknown(name)
            return Unknown(node=node)

    def not_followed(self, node: ast.Call) -> None:
        """A call not followed may change what it is handed, and the object whose method it is."""
        for argument in (*node.args, *(item.value for item in node.keywords)):
            self.changed(argument.value if isinstance(argument, ast.Starred) else argument, self.frame, True)
        if isinstance(node.func, ast.Attribute) and node.func.attr not in DICT_READS:
            self.changed(node.func.value, self.frame)  # x.update(...), x.pop(...): x may have changed

    def default_call(self, method: BoundMethod, arguments: list[object], keywords: dict[str, object]) -> bool:
        """The call passes every parameter of ``method`` that its body reads its literal default (or
        passes nothing); a parameter the body never reads may take any value
        (``get_config(self, text_config, vision_config)`` building its parts itself)."""
        found = self.find(method.name, method.after)
        if found is None:
            return not arguments and not keywords
        read = read_names(found[1])
        try:
            passed = bind_parameters(found[1], arguments, keywords, method=True)
            unread = {name: value for name, value in passed.items() if name not in read}
            defaults = bind_parameters(found[1], [], named_parameters(found[1], unread), method=True)
        except GiveUp:
            return False
        return all(
            type(passed[name]) is type(value) and passed[name] == value and not isinstance(value, Unknown)
            for name, value in defaults.items()
            if name in read
            and name in passed
            and (name in keywords or list(passed).index(name) < len(arguments))
        )

    # -- statements -------------------------------------------------------------------------------
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
            found = self.find(method.name, method.after)
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
        except Exit as returned:  # break and continue end in the loop they leave
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
            held = frame.variables.get(node.target.id) if isinstance(node.target, ast.Name) else None
            if isinstance(held, (list, dict, set)):
                self.changed(node.target, frame)  # changed in place, for whatever else holds it
            else:
                self._bind(node.target, augmented(node, lambda part: self.value(part, frame)), frame)
        elif isinstance(node, ast.Expr):
            self.value(node.value, frame)
        elif isinstance(node, ast.Return):
            raise Exit("return", self.value(node.value, frame) if node.value is not None else None)
        elif isinstance(node, ast.If):
            self._if(node, frame)
        elif isinstance(node, ast.For) and (items := self._iterated(node.iter, frame)) is not None:
            self._unrolled(node, items, frame)
        elif isinstance(node, (ast.For, ast.While)):
            self._opaque(node, frame)
        elif isinstance(node, (ast.Break, ast.Continue)) and frame.loops:
            raise Exit("break" if isinstance(node, ast.Break) else "continue")
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
        found = truth_of(self.value(node.test, frame))
        if found is not Truth.TRUTH_VALUE_UNKNOWN:
            self.block(node.body if found is Truth.ALWAYS_TRUE else node.orelse, frame)
            return
        branches = []
        for statements in (node.body, node.orelse):
            branch = Frame(dict(frame.variables), frame.owner, dict(frame.self_values))
            try:
                self.block(statements, branch)
            except Exit:
                raise GiveUp from None  # returns or leaves a loop under a condition only the run knows
            branches.append(branch)
        merge_branches(frame.variables, [branch.variables for branch in branches])
        merge_branches(frame.self_values, [branch.self_values for branch in branches])

    def _iterated(self, node: ast.expr, frame: Frame) -> list[object] | None:
        """The items of a loop's iterable when known (see :func:`loop_items`): ``range(...)``, a
        literal tuple or list, or a variable holding a known iterable."""
        ranged = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
        if not ranged and not isinstance(node, (ast.Name, ast.Tuple, ast.List)):
            return None
        return loop_items(self.value(node, frame))

    def _unrolled(self, node: ast.For, items: list[object], frame: Frame) -> None:
        """A loop over known items, run once per item (``break``, ``continue`` and ``else`` as Python
        runs them)."""
        frame.loops += 1
        try:
            run_loop(
                node,
                items,
                lambda item: self._bind(node.target, item, frame),
                lambda statements: self.block(statements, frame),
            )
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
                self.changed(inner.value, frame)
            elif isinstance(inner, ast.Call):
                for argument in (inner.func, *inner.args, *(item.value for item in inner.keywords)):
                    self.changed(argument.value if isinstance(argument, ast.Attribute) else argument, frame)

    def changed(self, node: ast.expr, frame: Frame, argument: bool = False) -> None:
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
            for element, item in bindings(target, value):
                self._bind(element, item, frame)
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
                self.changed(target.value, frame)
        else:
            self.changed(
                target.value if isinstance(target, (ast.Subscript, ast.Attribute)) else target, frame
            )

    def _delete(self, target: ast.expr, frame: Frame) -> None:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container, key = frame.variables.get(target.value.id), self.value(target.slice, frame)
            if isinstance(container, dict) and isinstance(key, str):
                frame.variables[target.value.id] = {k: v for k, v in container.items() if k != key}
                return
        if isinstance(target, ast.Name):
            frame.variables.pop(target.id, None)
            return
        self.changed(target.value if isinstance(target, ast.Subscript) else target, frame)


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
