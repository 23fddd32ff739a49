"""``use_cache = False`` written under ``if`` tests in a modeling file: does it run on this call?

BERT-like files turn the cache off in the base model unless the configuration is a decoder
(``if self.config.is_decoder: ... else: use_cache = False``) and in the language-model head when
labels are given (``if labels is not None: use_cache = False``); switch-transformers' encoder-only
model always does (a switch without tests, which decides only in the forward the test calls). A
test is decided when it reads only the model's configuration (``self.config.<name>``, for a model
without sub-configurations, whose parts share its configuration) or, in the ``forward`` the test
calls, a parameter compared with None (passed in the call, else left at its default, taken as
None). A switch that runs turns the cache off only when its class is on the call's path: the
called class, or one of the models it holds; when the module tree is known, a switch outside it
decides nothing.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import ABSENT, Config, ModelInstance, Tensor, Unknown
from model_debugging.skips.models.config.values import config_value
from model_debugging.skips.models.generation_cache.cache_building import CacheGating
from model_debugging.skips.models.pretrained_model import modules
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.resolve.library import MISSING


def switched_off(
    facts: TestClassFacts, model: ModelInstance, passed: dict[str, object] | None, gating: CacheGating
) -> bool | None:
    """True when a switch of ``gating`` turns the cache off for this call, False when none does,
    None when only the run knows."""
    if not gating.disabled:
        return False
    library, config = facts.library, model.config
    called = library.defines(model.info, "forward")
    shared = isinstance(config, Config) and config.info is not None
    shared = shared and library.attribute(config.info, "sub_configs") in ({}, MISSING)
    parts = modules.modules_of(facts, model, Unknown("modules"))
    on_path = {called.name} if called is not None else set()
    if isinstance(parts, tuple):
        for part in parts:
            owner = library.defines(part.info, "forward") if isinstance(part, ModelInstance) else None
            on_path |= {owner.name} if owner is not None else set()
    unknown = False
    for owner, conditions in gating.disabled:
        if isinstance(parts, tuple) and owner not in on_path:
            continue  # the whole module tree is known and this forward is not in it
        arguments = passed if called is not None and owner == called.name else None
        if not conditions and (called is None or owner != called.name):
            unknown = True  # always off in a model it holds: whether that forward runs is not read
            continue
        holds = _all(_holds(test, facts, config if shared else None, arguments) for test in conditions)
        if holds is True and owner in on_path:
            return True
        unknown = unknown or holds is not False
    return None if unknown else False


def _all(verdicts) -> bool | None:
    found = list(verdicts)
    if False in found:
        return False
    return None if None in found else True


def _holds(
    test: ast.expr, facts: TestClassFacts, config: Config | None, passed: dict[str, object] | None
) -> bool | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, facts, config, passed)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        found = [_holds(value, facts, config, passed) for value in test.values]
        if isinstance(test.op, ast.And):
            return _all(found)
        return True if True in found else (None if None in found else False)
    if isinstance(test, ast.Attribute) and ast.unparse(test.value) == "self.config" and config is not None:
        value = config_value(facts, config, test.attr, Unknown(test.attr), ABSENT)
        return bool(value) if isinstance(value, (bool, int, str, type(None))) else None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and passed is not None
    ):
        value = passed.get(test.left.id)
        if value is not None and not isinstance(value, Tensor) and isinstance(value, Unknown):
            return None  # passed, but perhaps as None
        return (value is None) == isinstance(test.ops[0], ast.Is)
    return None
