"""What the interpreter's ``Evaluator`` is handed for an expression a configuration class runs
outside any test (its constructor, its ``__post_init__``): no test helper to call."""

from __future__ import annotations


class NoTestHelpers:
    """The part of the Evaluator's facts that names a test's helpers: there are none."""

    inherited_definition = None
    module_function = None

    @staticmethod
    def definition(_name: str) -> None:
        return None


def no_helper(*_: object, **__: object) -> object:
    """The Evaluator's ``call_helper``: never called, since the facts name no helper."""
    raise AssertionError("an expression of a configuration class calls no test helper")
