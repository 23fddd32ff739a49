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

from model_debugging.skips.interp.values import Tensor, Unknown
from model_debugging.skips.models.test_class.context import UNREAD, TesterCommon
from model_debugging.skips.models.tester.parameters import GiveUp
from model_debugging.skips.models.tester.reader import TesterReader
from model_debugging.skips.models.tester.values import BoundMethod, TesterConfig

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
    reader = TesterReader(classes, functions, tester_attribute)
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
        return replace(value, source=name, node=None, exists=True)
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    return Unknown(name, exists=True)
