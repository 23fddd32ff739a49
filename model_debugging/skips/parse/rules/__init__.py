"""The skip patterns the analyzer knows, one rule per module, each with the examples it is tested on."""

from model_debugging.skips.parse.rules.base import RULES, Context, Rule
from model_debugging.skips.parse.rules.body_skip import BodySkip
from model_debugging.skips.parse.rules.condition_decorator import ConditionDecorator
from model_debugging.skips.parse.rules.delegated_calls import DelegatedCalls
from model_debugging.skips.parse.rules.flag_guard import FlagGuard
from model_debugging.skips.parse.rules.noop_override import NoopOverride
from model_debugging.skips.parse.rules.runtime_guard import RuntimeGuard
from model_debugging.skips.parse.rules.skip_decorator import SkipDecorator
from model_debugging.skips.parse.rules.test_name_skip import TestNameSkip

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
