"""The table through which the interpreter asks what the APIs a test reaches do.

The interpreter runs Python itself: names, operators, builtins on plain values, calls of the
test's helpers, control flow. What a value of the library, of a tester or of torch does
(``config.use_cache``, ``model.modules()``, ``isinstance(m, PreTrainedModel)``,
``"past_key_values" in outputs``) it asks a :class:`Handlers` table, which the models
(``skips/models/``) fill: each handler is registered for a kind of value (its Python type, found
along the type's MRO) or for a name, and says what Python would give. The interpreter imports no
model; the models import the interpreter's values and register here.

Each handler receives ``facts`` (what the analyzer read about the test class being run; the
interpreter does not look into it) and ``unknown``, the value to give when only the run knows the
answer (it names the expression asked about).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from model_debugging.skips.interp.builtins import python_attribute, python_contains, python_method
from model_debugging.skips.interp.values import UNHANDLED, Unknown

Handler = Callable[..., Any]


class Handlers:
    """Handlers by value kind or name (see the module docstring); registering one twice is an error.

    - ``attribute(kind)``: ``handler(facts, owner, name, unknown, missing)`` gives ``owner.name``,
      ``missing`` when the attribute surely does not exist.
    - ``method(kind)``: ``handler(facts, owner, name, arguments, keywords, unknown)`` gives
      ``owner.name(*arguments, **keywords)`` (a :class:`~model_debugging.skips.interp.values.Returns`
      to run a one-expression body).
    - ``call(kind)``: ``handler(facts, function, arguments, keywords, unpacked, unknown)`` gives
      ``function(...)``; ``unpacked()`` evaluates the ``**`` arguments.
    - ``builtin(name)``: ``handler(facts, name, arguments, unknown)`` for a function the interpreter
      names (``isinstance``, ``inspect.signature``, ...), or :data:`UNHANDLED`.
    - ``contains(kind)``: ``handler(facts, container, item)`` gives ``item in container`` (None:
      only the run knows), or :data:`UNHANDLED`.
    - ``subscript(kind)``: ``handler(facts, container, key, unknown)`` gives ``container[key]``
      (``key`` may be unknown), or :data:`UNHANDLED`; asked before Python's own indexing.
    - ``name``: ``handler(facts, name, unknown)`` gives a module-level name of the test's file
      (``PreTrainedModel``, ``torch_device``), or :data:`UNHANDLED`; asked in registration order.
    - ``comparison``: ``handler(facts, operator, left, right)`` gives the truth of ``left <op>
      right``, or :data:`UNHANDLED`; asked in registration order, before Python's own comparison.
      An answer that is not a bool is the value of the comparison (a tensor's ``mask != 0``).
    - ``operation``: ``handler(facts, operator, left, right)`` gives ``left <op> right`` for an
      arithmetic operator Python's own operation does not apply to (``mask + 1``), or
      :data:`UNHANDLED`; asked in registration order.
    - ``explanation(kind)``: ``handler(written)`` says why a value of that kind compared in a
      condition is only known at run time (``written``: the expression that holds it).
    """

    def __init__(self) -> None:
        self._attributes: dict[type, Handler] = {}
        self._methods: dict[type, Handler] = {}
        self._calls: dict[type, Handler] = {}
        self._contains: dict[type, Handler] = {}
        self._subscripts: dict[type, Handler] = {}
        self._explanations: dict[type, Handler] = {}
        self._builtins: dict[str, Handler] = {}
        self._names: list[Handler] = []
        self._comparisons: list[Handler] = []
        self._operations: list[Handler] = []

    # -- registration -----------------------------------------------------------------------------
    def attribute(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._attributes, kinds, "attribute")

    def method(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._methods, kinds, "method")

    def call(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._calls, kinds, "call")

    def contains(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._contains, kinds, "contains")

    def subscript(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._subscripts, kinds, "subscript")

    def explanation(self, *kinds: type) -> Callable[[Handler], Handler]:
        return self._keyed(self._explanations, kinds, "explanation")

    def builtin(self, *names: str) -> Callable[[Handler], Handler]:
        return self._keyed(self._builtins, names, "builtin")

    def name(self, handler: Handler) -> Handler:
        self._names.append(handler)
        return handler

    def comparison(self, handler: Handler) -> Handler:
        self._comparisons.append(handler)
        return handler

    def operation(self, handler: Handler) -> Handler:
        self._operations.append(handler)
        return handler

    @staticmethod
    def _keyed(table: dict, keys: tuple, what: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for key in keys:
                known = table.get(key)
                if known is not None:
                    raise ValueError(
                        f"a {what} handler for {getattr(key, '__name__', key)} is registered twice: "
                        f"{known.__module__}.{known.__qualname__} and {handler.__module__}.{handler.__qualname__}"
                    )
                table[key] = handler
            return handler

        return register

    # -- questions --------------------------------------------------------------------------------
    def attribute_of(
        self, facts: object, owner: object, name: str, unknown: Unknown, missing: object = None
    ) -> object:
        """``owner.name``; ``missing`` (``unknown`` if None) when it surely does not exist."""
        missing = unknown if missing is None else missing
        found = python_attribute(owner, name, unknown, missing)
        if found is not UNHANDLED:
            return found
        handler = _by_kind(self._attributes, owner)
        return unknown if handler is None else handler(facts, owner, name, unknown, missing)

    def method_call(
        self,
        facts: object,
        owner: object,
        name: str,
        arguments: list[object],
        keywords: dict[str, object],
        unknown: Unknown,
    ) -> object:
        found = python_method(owner, name, arguments, unknown)
        if found is not UNHANDLED:
            return found
        handler = _by_kind(self._methods, owner)
        return unknown if handler is None else handler(facts, owner, name, arguments, keywords, unknown)

    def value_call(
        self,
        facts: object,
        function: object,
        arguments: list[object],
        keywords: dict[str, object],
        unpacked: Callable[[], list[object]],
        unknown: Unknown,
    ) -> object:
        handler = _by_kind(self._calls, function)
        if handler is None:
            return UNHANDLED
        return handler(facts, function, arguments, keywords, unpacked, unknown)

    def builtin_call(self, facts: object, name: str, arguments: list[object], unknown: Unknown) -> object:
        handler = self._builtins.get(name)
        return UNHANDLED if handler is None else handler(facts, name, arguments, unknown)

    def contained(self, facts: object, container: object, item: object) -> bool | None:
        """``item in container``, or None when only the run knows."""
        handler = _by_kind(self._contains, container)
        found = UNHANDLED if handler is None else handler(facts, container, item)
        return python_contains(container, item) if found is UNHANDLED else found

    def subscripted(self, facts: object, container: object, key: object, unknown: Unknown) -> object:
        handler = _by_kind(self._subscripts, container) if self._subscripts else None
        return UNHANDLED if handler is None else handler(facts, container, key, unknown)

    def global_name(self, facts: object, name: str, unknown: Unknown) -> object:
        return _first_answer(self._names, facts, name, unknown)

    def compared(self, facts: object, operator: ast.cmpop, left: object, right: object) -> object:
        return _first_answer(self._comparisons, facts, operator, left, right)

    def operated(self, facts: object, operator: ast.operator, left: object, right: object) -> object:
        return _first_answer(self._operations, facts, operator, left, right)

    def explained(self, value: object, written: str) -> str | None:
        handler = _by_kind(self._explanations, value)
        return None if handler is None else handler(written)


def _first_answer(handlers: list[Handler], *arguments: object) -> object:
    """What the first of ``handlers`` that handles ``arguments`` gives, else :data:`UNHANDLED`."""
    for handler in handlers:
        found = handler(*arguments)
        if found is not UNHANDLED:
            return found
    return UNHANDLED


def _by_kind(table: dict[type, Handler], value: object) -> Handler | None:
    """The handler registered for the type of ``value`` or the nearest of its bases."""
    for kind in type(value).__mro__:
        handler = table.get(kind)
        if handler is not None:
            return handler
    return None
