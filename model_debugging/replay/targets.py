"""Which part of the candidate model runs a recorded call: a submodule, or a recorded function.

Module paths are matched like ``compare`` matches them: relative to the model (without the
leading class name), after the rename rules, applied to both sides.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from torch import nn

from model_debugging.compare.renames import RenameRule, apply_rename_rules
from model_debugging.debugger.function_records import resolve_torch_function
from model_debugging.debugger.trace_format.records import Trace, TraceNode


class NoCounterpart(LookupError):
    """The candidate has nothing that runs a recorded call; the message says what was looked for."""


@dataclass(frozen=True)
class Target:
    """What to run for one recorded call: ``call(*args, **kwargs)``, and its name in the candidate."""

    call: Callable
    candidate_path: str
    module: nn.Module | None  # the submodule, or None for a function


class CandidateIndex:
    """The candidate's submodules by matching key, built once per replay."""

    def __init__(self, trace: Trace, model: nn.Module, rules: Sequence[RenameRule]):
        self._root = trace.root_path
        self._rules = tuple(rules)
        self.model = model
        self.names = {module: name for name, module in model.named_modules(remove_duplicate=False)}
        self._by_key = {apply_rename_rules(self._rules, name): name for name in self.names.values()}

    def relative(self, module_path: str) -> str:
        return "" if module_path == self._root else module_path.removeprefix(self._root + ".")

    def key(self, module_path: str) -> str:
        """The matching key of a reference path (full, with the class name)."""
        return apply_rename_rules(self._rules, self.relative(module_path))

    def candidate_key(self, module: nn.Module) -> str | None:
        name = self.names.get(module)
        return None if name is None else apply_rename_rules(self._rules, name)

    def module_for(self, module_path: str) -> tuple[str, nn.Module]:
        key = self.key(module_path)
        name = self._by_key.get(key)
        if name is None:
            shown = f"{key!r} after rename rules" if self._rules else repr(key)
            raise NoCounterpart(f"no submodule of the candidate matches {shown}")
        return name, self.model.get_submodule(name)

    def target(self, node: TraceNode) -> Target:
        if node.function is None:
            name, module = self.module_for(node.module_path)
            return Target(module, name or type(module).__name__, module)
        parent_path, _, function_name = node.module_path.rpartition(".")
        parent_name, parent = self.module_for(parent_path)
        where = f"{parent_name}.{function_name}" if parent_name else function_name
        torch_function = resolve_torch_function(node.function)
        if torch_function is not None:
            return Target(torch_function, where, None)
        python_module = sys.modules.get(type(parent).__module__)
        helper = getattr(python_module, function_name, None)
        if not callable(helper):
            raise NoCounterpart(
                f"the candidate's {type(parent).__name__} is defined in {type(parent).__module__}, "
                f"which has no function {function_name!r}"
            )
        return Target(getattr(helper, "__wrapped__", helper), where, None)
