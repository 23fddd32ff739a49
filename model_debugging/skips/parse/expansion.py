"""Read ``@parameterized.expand`` on a test method: which methods it adds and what it leaves behind.

``parameterized.expand(parameters)`` puts one method per parameter into the class being defined,
named ``<test>_<index>`` (the index zero-padded to the width of the last one) plus ``_<first
argument>`` when the parameter's first argument is a string (every character outside
``[a-zA-Z0-9_]`` runs replaced by ``_``), and returns None: the decorators written above it are
applied to None. A model's test class then overrides single cases under their expanded names
(``test_x_0_random``) or expands the test again, and pytest runs each case, the name ``test_x``
itself only when something callable was left there.
"""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.case_names import case_name
from model_debugging.skips.parse.rules.base import Context
from model_debugging.skips.parse.rules.nodes import decorator_call, literal_value
from model_debugging.skips.parse.rules.skip_decorator import decorator_skip
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import Expansion

_EXPAND = "parameterized.expand"


def read_expansion(function: cst.FunctionDef, context: Context) -> tuple[Expansion | None, cst.FunctionDef]:
    """The expansion of ``function`` (None without ``parameterized.expand``) and the function as each
    case runs it: with only the decorators below ``expand``."""
    for index, decorator in enumerate(function.decorators):
        name, call = decorator_call(decorator, context.aliases, context.names)
        if name is None or not (name == _EXPAND or name.endswith(f".{_EXPAND}")) or call is None:
            continue
        above = function.decorators[:index]
        skips = [skip for item in above if (skip := decorator_skip(item, context)) is not None]
        marks_only = bool(above) and all(
            (decorator_call(item, context.aliases, context.names)[0] or "").startswith("pytest.mark.")
            for item in above
        )
        expansion = Expansion(
            _case_names(function.name.value, call),
            base_runs=marks_only and not skips,
            base_skip=skips[0] if skips else None,
        )
        return expansion, function.with_changes(decorators=function.decorators[index + 1 :])
    return None, function


def _case_names(test: str, call: cst.Call) -> tuple[str, ...] | None:
    """The names ``expand`` gives its methods, or None when they cannot be read from the source."""
    if not call.args or call.args[0].keyword is not None or any(arg.keyword for arg in call.args[1:]):
        return None  # a name_func= (or other keyword) may name them otherwise
    parameters = call.args[0].value
    if not isinstance(parameters, (cst.List, cst.Tuple)) or any(
        isinstance(element, cst.StarredElement) for element in parameters.elements
    ):
        return None
    count = len(parameters.elements)
    names = []
    for index, element in enumerate(parameters.elements):
        first = element.value
        if isinstance(first, (cst.Tuple, cst.List)):
            if not first.elements or isinstance(first.elements[0], cst.StarredElement):
                names.append(case_name(test, index, count, None))
                continue
            first = first.elements[0].value
        value = literal_value(first)
        if isinstance(value, NonLiteral):
            return None  # a string at run time would add to the name
        names.append(case_name(test, index, count, value))
    return tuple(names)
