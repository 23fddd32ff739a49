"""The skip patterns the analyzer knows, one rule per module, each with the examples it is tested on."""

from model_debugging.skips.rules.base import RULES, Context, Rule
from model_debugging.skips.rules.body_skip import BodySkip
from model_debugging.skips.rules.condition_decorator import ConditionDecorator
from model_debugging.skips.rules.delegated_calls import DelegatedCalls
from model_debugging.skips.rules.flag_guard import FlagGuard
from model_debugging.skips.rules.noop_override import NoopOverride
from model_debugging.skips.rules.runtime_guard import RuntimeGuard
from model_debugging.skips.rules.skip_decorator import SkipDecorator
from model_debugging.skips.rules.test_name_skip import TestNameSkip

__all__ = [
    "RULES",
    "BodySkip",
    "ConditionDecorator",
    "Context",
    "DelegatedCalls",
    "FlagGuard",
    "NoopOverride",
    "Rule",
    "RuntimeGuard",
    "SkipDecorator",
    "TestNameSkip",
]
