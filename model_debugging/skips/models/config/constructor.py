"""Configuration constructors run on the keywords the tester passes.

Before configurations were dataclasses (transformers 4.x, until 2025), ``PretrainedConfig.__init__``
set most attributes from what it was handed (``self.is_encoder_decoder =
kwargs.pop("is_encoder_decoder", False)``), and each model's configuration passed its own values
on with ``super().__init__(bos_token_id=bos_token_id, **kwargs)``. What such a configuration holds
is what running these constructors gives, so they are run here, on what the tester passes: the
``__init__`` first found along the configuration's MRO, then ``super().__init__(...)`` /
``Base.__init__(self, ...)`` along it, the configuration's own methods and the library's functions
it calls with ``self`` (``rope_config_validation(self)``), ``kwargs.pop`` / ``get`` / ``setdefault``,
loops over known values, and the closing ``for key, value in kwargs.items(): setattr(self, key,
value)`` that keeps the keywords nobody took.

Nothing is guessed: a keyword the tester passes with a value only the run knows, a call of anything
else, a loop over unknown values or a branch on an unknown condition whose sides disagree gives an
unknown value; a function handed ``self`` that cannot be followed, or a ``setattr`` whose name only
the run knows, makes every attribute unknown from there on. A path that raises builds no
configuration and is left out. When the constructors cannot be run at all (one is not found, or
the calls go too deep) the reading says so, and the caller keeps its own answer.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.expressions import augmented
from model_debugging.skips.interp.iteration import loop_items
from model_debugging.skips.interp.parameters import MAX_DEPTH
from model_debugging.skips.interp.unpacking import bindings
from model_debugging.skips.interp.values import ABSENT, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS
from model_debugging.skips.models.config.constructor_definitions import function_of, method_of
from model_debugging.skips.models.config.constructor_handlers import evaluate
from model_debugging.skips.models.config.constructor_state import (
    SELF,
    Flow,
    Items,
    Keywords,
    State,
    Stop,
    joined,
    known,
    same,
)
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_READERS = frozenset({"getattr", "hasattr", "isinstance", "len", "repr", "str", "type", "print", "id"})
NOT_RUN = object()  # the constructors could not be run: the caller keeps its answer


class ConstructedConfig:
    """The attributes a configuration's constructors set, run on what the tester passes."""

    def __init__(self, library: Library, info: LibraryClass, passed: Callable[[str], object]):
        self.library, self.info = library, info
        aliases = library.attribute(info, "attribute_map")
        self.aliases = aliases if isinstance(aliases, dict) else {}
        self.mro = library.mro(info)
        self.depth = 0
        self.state: State | None = None
        try:
            found = method_of(self.library, self.mro, 0, "__init__")
            if found is not None:
                index, path, function, _ = found
                self.state, _ = self._call(index, path, function, [], Keywords(passed), State())
        except (Stop, RecursionError):
            self.state = None

    def value(self, name: str) -> object:
        """What the configuration holds for ``name`` after its constructors, :data:`ABSENT` when
        they set nothing of that name, or :data:`NOT_RUN`."""
        if self.state is None:
            return NOT_RUN
        try:
            return self.attribute(name, self.state.copy(), own=True)
        except (Stop, RecursionError):
            return NOT_RUN

    # -- what the expressions ask (``constructor_handlers.Run``) -------------------------------------
    def is_method(self, name: str) -> bool:
        """``self.<name>`` is a method (or a static one) of a class of the MRO."""
        return method_of(self.library, self.mro, 0, name) is not None

    def attribute(self, name: str, state: State, own: bool = False) -> object:
        """``self.<name>``: a property's getter, the attribute set, a keyword the base kept; then
        (unless ``own``: only what the constructors are seen to set) the class's value.
        :data:`ABSENT` when none. With ``own``, a name they are not seen to set is :data:`ABSENT`
        even after a call that may set anything: the caller's reading of it stands."""
        name = self.aliases.get(name, name)
        getter = method_of(self.library, self.mro, 0, name, "getter")
        if getter is not None:
            index, path, function, _ = getter
            return self._call(index, path, function, [], Keywords(lambda _: ABSENT), state)[1]
        if name in state.attributes:  # set: it exists, whatever its value
            value = state.attributes[name]
            return value.existing() if isinstance(value, Unknown) else value
        if state.wild and not own:  # anything may have been set: not even whether it exists is known
            return Unknown(f"config.{name}")
        kept = state.rest.look(name) if state.rest is not None else ABSENT
        if kept is not ABSENT or own:
            return kept
        value = self.library.attribute(self.info, name)
        return value if known(value) else Unknown(f"config.{name}")

    def set_attribute(self, name: str, value: object, state: State) -> None:
        """``self.<name> = value``: through ``attribute_map``, and a property's setter when it has one."""
        name = self.aliases.get(name, name)
        setter = method_of(self.library, self.mro, 0, name, "setter")
        if setter is not None:
            self._into(state, setter, [value], Keywords(lambda _: ABSENT))
        else:
            state.attributes[name] = value

    def call_next(self, name: str, start: int, arguments: list, keywords: Keywords, state: State) -> object:
        """``self.<name>(...)`` (from ``start`` 0) or ``super().<name>(...)`` (from the next class)."""
        found = method_of(self.library, self.mro, start, name)
        if found is None:
            if name == "__init__" and start > 0 and self.mro[start - 1].name in BASE_CONFIGS:
                return None  # object.__init__
            if name == "__init__":
                raise Stop  # a base the library does not hold
            state.forget()  # a method of a class it does not hold may write anything
            return Unknown(f"self.{name}(...)")
        return self._into(state, found, arguments, keywords)

    def call_base(self, base: str, name: str, arguments: list, keywords: Keywords, state: State) -> object:
        """``Base.<name>(self, ...)``."""
        index = next((index for index, ancestor in enumerate(self.mro) if ancestor.name == base), None)
        found = method_of(self.library, self.mro, index, name) if index is not None else None
        if found is None:
            raise Stop
        return self._into(state, found, arguments, keywords)

    def call_function(
        self, path: str, name: str, arguments: list, keywords: Keywords, state: State
    ) -> object:
        """A library function ``name`` written in (or imported by) ``path``; :data:`ABSENT` if none."""
        found = function_of(self.library, path, name)
        if found is None:
            return ABSENT
        return self._into(state, (0, found[0], found[1], "static"), arguments, keywords)

    def _into(self, state: State, found: tuple, arguments: list, keywords: Keywords) -> object:
        """Call ``found`` from ``state``, which takes what the call leaves; the value it returns."""
        index, path, function, role = found
        after, value = self._call(index, path, function, arguments, keywords, state, method=role != "static")
        state.attributes, state.wild, state.rest = after.attributes, after.wild, after.rest
        return value

    # -- calls ---------------------------------------------------------------------------------------
    def _call(
        self, index: int, path: str, function: ast.FunctionDef, arguments: list[object], keywords: Keywords,
        caller: State, method: bool = True,
    ) -> tuple[State, object]:  # fmt: skip
        """Run ``function`` (of the class at ``index`` of the MRO; with ``method``, ``self`` first):
        the state after it, with its caller's variables, and the value it returns."""
        if self.depth >= MAX_DEPTH:
            raise Stop
        frame = State(caller.attributes, {}, caller.wild, caller.rest)
        frame.variables.update(self._parameters(function, arguments, keywords, method, index, path))
        self.depth += 1
        try:
            going, returned = self._block(function.body, frame, index, path)
        finally:
            self.depth -= 1
        ends = [*((state, None) for state in going), *returned]
        if not ends:  # every path raises: what it wrote is left to the run
            return State(caller.attributes, caller.variables, True, caller.rest), Unknown(function.name)
        after = joined([state for state, _ in ends])
        values = [value for _, value in ends]
        value = values[0] if len(values) == 1 or same(values) else Unknown(function.name)
        return State(after.attributes, caller.variables, after.wild, after.rest), value

    def _parameters(
        self, function: ast.FunctionDef, arguments: list[object], keywords: Keywords, method: bool, index: int, path: str
    ) -> dict[str, object]:  # fmt: skip
        bound: dict[str, object] = {}
        found = signature(function, method)
        if found.receiver is not None:
            bound[found.receiver] = SELF
        given = list(arguments)
        for name in found.names:
            value = given.pop(0) if given and name in found.positional else keywords.look(name, take=True)
            if value is ABSENT:
                default = found.defaults.get(name)
                value = (
                    self._expression(default, State(), index, path) if default is not None else Unknown(name)
                )
            bound[name] = value
        if found.varargs is not None:
            bound[found.varargs] = Unknown(found.varargs)
        if found.kwargs is not None:
            bound[found.kwargs] = keywords
        return bound

    # -- statements ----------------------------------------------------------------------------------
    def _block(self, statements: list[ast.stmt], state: State, index: int, path: str) -> Flow:
        running, returned = [state], []
        for statement in statements:
            following = []
            for current in running:
                going, ended = self._statement(statement, current, index, path)
                following += going
                returned += ended
            running = [joined(following)] if following else []
            if not running:
                break
        return running, returned

    def _expression(self, node: ast.expr, state: State, index: int, path: str) -> object:
        return evaluate(self, node, state, index, path)

    def _statement(self, node: ast.stmt, state: State, index: int, path: str) -> Flow:
        def evaluate(expression: ast.expr) -> object:
            return self._expression(expression, state, index, path)

        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = evaluate(node.value)
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self._bind(target, value, state, evaluate)
        elif isinstance(node, ast.AugAssign):
            current = evaluate(node.target)
            if isinstance(current, (list, dict, set)):  # += on a list changes it in place
                state.changed(current)
                self._bind(node.target, Unknown(node=node.target), state, evaluate)
            else:
                self._bind(node.target, augmented(node, evaluate), state, evaluate)
        elif isinstance(node, ast.Expr):
            evaluate(node.value)
        elif isinstance(node, ast.Return):
            return [], [(state, evaluate(node.value) if node.value is not None else None)]
        elif isinstance(node, ast.Raise):
            return [], []  # this path builds no configuration
        elif isinstance(node, ast.If):
            test = evaluate(node.test)
            if known(test) or test is SELF:
                return self._block(node.body if test else node.orelse, state, index, path)
            first, second = (
                self._block(node.body, state.copy(), index, path),
                self._block(node.orelse, state, index, path),
            )
            return first[0] + second[0], first[1] + second[1]
        elif isinstance(node, ast.For):
            return self._loop(node, state, index, path, evaluate)
        elif isinstance(node, ast.Delete) and all(
            self._takes_keyword(target, evaluate) for target in node.targets
        ):
            pass  # ``del kwargs["decoder"]``: taken out, as by ``kwargs.pop``
        elif isinstance(node, ast.With):
            return self._block(node.body, state, index, path)
        elif isinstance(node, ast.Try) and not node.handlers:  # try/finally
            going, returned = self._block([*node.body, *node.orelse], state, index, path)
            for final in going:
                self._block(node.finalbody, final, index, path)
            return going, returned
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                state.variables[(alias.asname or alias.name).split(".")[0]] = Unknown(alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            state.variables[node.name] = Unknown(node.name)
        elif not isinstance(node, (ast.Pass, ast.Assert)):  # while, try/except, match, del, ...
            return self._havoc(node, state)
        return [state], []

    def _loop(self, node: ast.For, state: State, index: int, path: str, evaluate) -> Flow:
        iterable = evaluate(node.iter)
        if isinstance(iterable, Items) and self._keeps_keywords(node):
            state.rest = iterable.keywords.copy()
            for name in list(state.attributes):  # a keyword of that name is set over it
                kept = state.rest.look(name)
                if kept is not ABSENT:
                    state.attributes[name] = kept
            return [state], []
        jumps = any(isinstance(inner, (ast.Break, ast.Continue)) for inner in ast.walk(node))
        items = loop_items(iterable)
        if jumps or node.orelse or items is None:
            return self._havoc(node, state)
        running, returned = [state], []
        for item in items:
            following = []
            for current in running:
                self._bind(node.target, item, current, evaluate)
                going, ended = self._block(node.body, current, index, path)
                following += going
                returned += ended
            running = [joined(following)] if following else []
        return running, returned

    @staticmethod
    def _keeps_keywords(node: ast.For) -> bool:
        """``for key, value in kwargs.items(): ... setattr(self, key, value)``: they become attributes."""
        if not (isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2):
            return False
        pair = ", ".join(ast.unparse(item) for item in node.target.elts)
        return any(
            isinstance(call, ast.Call) and ast.unparse(call) == f"setattr(self, {pair})"
            for call in ast.walk(node)
        )

    def _havoc(self, node: ast.stmt, state: State) -> Flow:
        """What a statement that is not run may write becomes unknown: the names and attributes it
        assigns, everything when it calls ``self``'s methods or hands ``self`` on; a ``return`` in
        it returns an unknown value."""
        if any(isinstance(inner, ast.Return) for inner in ast.walk(node)):
            returned = [(state.copy(), Unknown(node=node))]
        else:
            returned = []
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                state.variables[inner.id] = Unknown(inner.id)
            elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                if state.variables.get(ast.unparse(inner.value)) is SELF:
                    state.attributes[self.aliases.get(inner.attr, inner.attr)] = Unknown(inner.attr)
            elif isinstance(inner, ast.Call) and self._may_write_self(inner, state):
                state.forget()
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                owner = self._held(inner.func.value, state)
                if isinstance(owner, (list, dict)):  # ``layers.append(...)``
                    state.changed(owner)
            elif isinstance(inner, ast.Subscript) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                owner = self._held(inner.value, state)
                if isinstance(owner, Keywords):
                    owner.opaque = True
                elif isinstance(owner, (list, dict)):
                    state.changed(owner)
            elif isinstance(inner, (ast.Global, ast.Nonlocal)):
                state.forget()
        return [state], returned

    def _may_write_self(self, call: ast.Call, state: State) -> bool:
        """``self.<method>(...)``, ``super().<method>(...)``, or ``self`` handed to anything but a
        builtin that only reads it (``getattr(self, name)``)."""
        func = call.func
        if isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                return True
            if self._held(owner, state) is SELF:
                return True
        if isinstance(func, ast.Name) and func.id in _READERS:
            return False
        return any(
            self._held(value, state) is SELF
            for value in [*call.args, *(item.value for item in call.keywords)]
        )

    @staticmethod
    def _takes_keyword(target: ast.expr, evaluate) -> bool:
        """``del kwargs[<a known name>]``: takes the keyword out (True), or is not such a ``del``."""
        if not isinstance(target, ast.Subscript):
            return False
        owner, key = evaluate(target.value), evaluate(target.slice)
        if not isinstance(owner, Keywords) or not isinstance(key, str):
            return False
        owner.look(key, take=True)
        return True

    def _held(self, node: ast.expr, state: State) -> object:
        """What a variable or ``self.<attribute>`` holds, read without running anything."""
        if isinstance(node, ast.Name):
            return state.variables.get(node.id, ABSENT)
        if isinstance(node, ast.Attribute) and self._held(node.value, state) is SELF:
            return state.attributes.get(self.aliases.get(node.attr, node.attr), ABSENT)
        return ABSENT

    def _bind(self, target: ast.expr, value: object, state: State, evaluate) -> None:
        if isinstance(target, ast.Name):
            state.variables[target.id] = value
        elif isinstance(target, ast.Attribute) and evaluate(target.value) is SELF:
            self.set_attribute(target.attr, value, state)
        elif isinstance(target, ast.Subscript) and isinstance(owner := evaluate(target.value), Keywords):
            key = evaluate(target.slice)
            if isinstance(key, str):
                owner.written[key] = value
                owner.taken.discard(key)
            else:
                owner.opaque = True
        elif isinstance(target, ast.Subscript) and isinstance(owner, (list, dict)):
            state.changed(owner)  # ``self.id2label[0] = ...``
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element, item in bindings(target, value):
                self._bind(element, item, state, evaluate)
