"""Which part of the candidate model runs a recorded call: a submodule, or a recorded function.

Module paths are matched like ``compare`` matches them: relative to the model (without the
leading class name), after the rename rules, applied to both sides. Given a compare result of the
reference and the candidate's trace, its alignment decides first (calls paired by path or inferred
from execution order and shapes); a reference call aligned with a fused or split projection has no
single candidate module to run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from torch import nn

from model_debugging.compare.renames import RenameRule, apply_rename_rules
from model_debugging.compare.result import AlignmentKind, ModuleComparison
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

    def __init__(
        self,
        trace: Trace,
        model: nn.Module,
        rules: Sequence[RenameRule],
        aligned: Mapping[str, ModuleComparison] | None = None,
    ):
        self._root = trace.root_path
        self._rules = tuple(rules)
        self.model = model
        self.names = {module: name for name, module in model.named_modules(remove_duplicate=False)}
        self._by_key = {apply_rename_rules(self._rules, name): name for name in self.names.values()}
        self._aligned = dict(aligned or {})
        self._by_name = set(self.names.values())
        model_root = type(model).__name__
        # candidate module name -> the reference key it was aligned with (one to one pairs only)
        self._aligned_keys = {
            _relative(row.candidate_path, model_root): self.key(row.module_path)
            for row in self._aligned.values()
            if row.alignment in _ONE_TO_ONE
        }

    def relative(self, module_path: str) -> str:
        return "" if module_path == self._root else module_path.removeprefix(self._root + ".")

    def key(self, module_path: str) -> str:
        """The matching key of a reference path (full, with the class name)."""
        return apply_rename_rules(self._rules, self.relative(module_path))

    def candidate_key(self, module: nn.Module) -> str | None:
        name = self.names.get(module)
        if name is None:
            return None
        return self._aligned_keys.get(name) or apply_rename_rules(self._rules, name)

    def module_for(self, module_path: str) -> tuple[str, nn.Module]:
        row = self._aligned.get(module_path)
        if row is not None and row.alignment not in _ONE_TO_ONE:
            raise NoCounterpart(
                f"aligned with the candidate's {row.candidate_path} as a {row.alignment.value} projection: "
                "no single module to run; replay its parent"
            )
        if row is not None:
            name = _relative(row.candidate_path, type(self.model).__name__)
            if name in self._by_name:
                return name, self.model.get_submodule(name)
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


_ONE_TO_ONE = (AlignmentKind.PATH, AlignmentKind.INFERRED)


def _relative(path: str, root: str) -> str:
    return "" if path == root else path.removeprefix(root + ".")
