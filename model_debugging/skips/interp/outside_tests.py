"""What the interpreter's ``Evaluator`` is handed for an expression it evaluates outside any test
(a configuration's constructor or ``__post_init__``, a module's top level): no test helper."""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import Unknown


class NoTestHelpers:
    """The part of the Evaluator's facts that names a test's helpers: there are none."""

    inherited_definition = None
    module_function = None

    @staticmethod
    def definition(_name: str) -> None:
        return None


def no_helper(name: str, *_: object, node: ast.Call | None = None, **__: object) -> Unknown:
    """The Evaluator's ``call_helper`` outside a test. Only ``super().<name>(...)`` reaches it (the
    facts name no helper): a method of a base class the interpreter does not run, whose result
    only the run knows."""
    return Unknown(f"super().{name}(...)", node)
