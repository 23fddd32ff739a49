"""Judging a module with submodules on the recorded leaves it runs.

Upstream records no outputs for a module with submodules, so its replay is judged on its recorded
leaves: the candidate's submodules that correspond to them get their ``forward`` replaced, for
the duration of the call, by one that compares the tensors the leaf is called with to its recorded
inputs (the code between two recorded calls), runs it and compares its outputs, then hands on the
*reference's* outputs, so that rounding does not pile up from leaf to leaf and every leaf is
judged on (nearly) identical inputs. A leaf already replayed correct on its own recorded inputs,
and seen not to modify its inputs in place, is not run again: its recorded outputs are handed on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Container, Iterator, Sequence
from typing import Any

import torch
from torch import nn

from model_debugging.debugger.trace_format.records import TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import Placement, UnrebuildableValue, flatten_output, rebuild_outputs
from model_debugging.replay.findings import (
    Findings,
    compare_inputs,
    compare_outputs,
    noise_level,
    outputs_line_up,
    returned_part_paths,
)
from model_debugging.replay.judging import Tolerance
from model_debugging.replay.noise import NoiseLevels
from model_debugging.replay.targets import CandidateIndex, first_parameter

_MAX_LISTED = 3


def describe(node: TraceNode) -> str:
    return node.module_path if node.call_index == 0 else f"{node.module_path} (call {node.call_index})"


class LeafHooks:
    """The candidate's submodules patched to judge ``leaves`` as ``module`` runs them; :meth:`remove` puts them back.

    ``skippable`` holds the orders of leaves that need not run again (correct alone, no side effect).
    """

    def __init__(
        self,
        index: CandidateIndex,
        module: nn.Module | None,
        leaves: Sequence[TraceNode],
        findings: Findings,
        tolerance: Tolerance,
        skippable: Container[int],
        noise: NoiseLevels | None = None,
    ):
        self._index = index
        self.leaves = leaves
        self._findings = findings
        self._tolerance = tolerance
        self._skippable = skippable
        self._noise = noise
        self.ran: set[int] = set()
        inside = set(module.modules()) if module is not None else set()
        calls: dict[nn.Module, list[TraceNode]] = {}  # the candidate module -> its leaf calls, in order
        # leaves whose counterpart is a candidate module outside ``module`` (its name)
        self.outside: list[tuple[TraceNode, str]] = []
        self._names: dict[int, str] = {}  # leaves with a counterpart inside ``module``: its name
        for leaf in leaves:
            try:
                name, candidate = index.module_for(leaf.module_path)
            except LookupError:
                continue  # reported by missing()
            if candidate in inside:
                calls.setdefault(candidate, []).append(leaf)
                self._names[leaf.order] = name
            else:
                self.outside.append((leaf, name))
        self._patched = [
            _PatchedForward(candidate, self._judged(iter(expected), candidate, candidate.forward))
            for candidate, expected in calls.items()
        ]

    def _judged(self, expected: Iterator[TraceNode], submodule: nn.Module, original: Callable) -> Callable:
        def forward(*args, **kwargs):
            leaf = next(expected, None)
            if leaf is None:
                return original(*args, **kwargs)
            self.ran.add(leaf.order)
            label = self._index.relative(leaf.module_path)
            given = {name: value for name, value in (("args", args), ("kwargs", kwargs)) if len(value) > 0}
            level = noise_level(self._noise, leaf, self._findings, inputs=True)
            lined_up = compare_inputs(leaf, given, self._findings, label, self._tolerance, level)
            placement = Placement(_device_of(submodule))
            if lined_up and leaf.order in self._skippable:
                return _recorded_like(leaf, None, placement, submodule)
            output = original(*args, **kwargs)
            if not lined_up and not outputs_line_up(leaf, output):
                # another form on both sides (a Conv2d patch embedding against unfold + Linear)
                self._findings.details.append(f"{label}: takes and returns another form: not compared")
                return output
            level = noise_level(self._noise, leaf, self._findings)
            compare_outputs(leaf, output, self._findings, label, self._tolerance, level)
            return _recorded_like(leaf, output, placement, submodule)

        return forward

    def missing(self) -> None:
        """Note the recorded leaves the candidate never ran (once its call is over)."""
        missing = [describe(leaf) for leaf in self.leaves if leaf.order not in self.ran]
        if missing:
            listed = ", ".join(missing[:_MAX_LISTED]) + (", ..." if len(missing) > _MAX_LISTED else "")
            self._findings.details.append(
                f"{len(missing)} recorded submodule calls not run by the candidate: {listed}"
            )

    def skipped_before(self, receiver: TraceNode, compared: bool) -> tuple[str, bool] | None:
        """When the recorded leaf just before ``receiver`` (a call whose inputs differ; identity calls,
        a dropout in eval, looked through) did not run: a clause saying the port may skip it, and
        whether the port holds a module of its name it never called (else the clause advises
        ``--compare``; not when ``compared``: compare's alignment names such a call itself). Else None."""
        earlier = [leaf for leaf in self.leaves if leaf.order < receiver.order]
        while earlier and earlier[-1].order not in self.ran and _identity(earlier[-1]):
            earlier.pop()
        if not earlier or earlier[-1].order in self.ran:
            return None
        leaf, receives = earlier[-1], self._index.relative(receiver.module_path)
        if leaf.order in self._names:
            return (
                f"{leaf.module_path} (the candidate's {self._names[leaf.order] or 'model'}), the recorded call just "
                f"before {receives}, was never called: the port skips it, or computes it another way"
            ), True
        if compared:
            return None
        return (
            f"{receives} is given other inputs than recorded, and {leaf.module_path}, the recorded call before "
            "it, has no counterpart of its name in the candidate: replay --compare PORT_TRACE (the port's own "
            "trace) pairs the two models' calls, and names a call the port skips"
        ), False

    def remove(self) -> None:
        for patch in self._patched:
            patch.remove()


def _identity(leaf: TraceNode) -> bool:
    """Whether ``leaf`` returned its one tensor input unchanged (a dropout in eval mode)."""
    given = [record for record in leaf.inputs if record.is_tensor]
    returned = [record for record in leaf.outputs or () if record.is_tensor]
    if len(given) != 1 or len(returned) != 1 or given[0].file is None or returned[0].file is None:
        return False
    return given[0].shape == returned[0].shape and torch.equal(
        read_recorded_tensor(given[0]), read_recorded_tensor(returned[0])
    )


def _recorded_like(leaf: TraceNode, output: Any, placement: Placement, module: nn.Module) -> Any:
    """The reference's outputs of ``leaf`` in the form and dtypes of the candidate's ``output`` (the
    candidate's own output when the two are not shaped alike); for a leaf that did not run
    (``output`` None), as recorded, floating-point tensors in the module's dtype."""
    try:
        recorded = rebuild_outputs(leaf.outputs or (), placement)
    except UnrebuildableValue:
        return output
    if output is None:
        parameter = first_parameter(module, floating=True)
        return (
            recorded
            if parameter is None
            else _replaced(recorded, dict(flatten_output(recorded)), parameter.dtype)
        )
    mine, theirs = dict(flatten_output(output)), dict(flatten_output(recorded))
    returned, _ = returned_part_paths(leaf, mine)
    if returned:  # the candidate returns a part of the reference's outputs: those are handed on
        return _replaced(output, {**mine, **{at: theirs[sub_path] for sub_path, at in returned.items()}})
    if set(mine) != set(theirs) or any(
        isinstance(value, torch.Tensor) != isinstance(theirs[path], torch.Tensor)
        or (isinstance(value, torch.Tensor) and value.shape != theirs[path].shape)
        for path, value in mine.items()
    ):
        return output
    return _replaced(output, theirs)


def _replaced(value: Any, tensors: dict[str, Any], dtype: torch.dtype | None = None, prefix: str = "") -> Any:
    """``value`` with each tensor replaced by ``tensors[its sub path]`` in its dtype (or ``dtype`` for floats)."""
    if isinstance(value, torch.Tensor):
        new = tensors[prefix]
        target = value.dtype if dtype is None else (dtype if new.is_floating_point() else new.dtype)
        return new.to(target)
    if isinstance(value, dict):
        copied = copy.copy(value)  # a ModelOutput stays one
        for key, item in value.items():
            copied[key] = _replaced(item, tensors, dtype, f"{prefix}.{key}" if prefix else str(key))
        return copied
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        items = [
            _replaced(item, tensors, dtype, f"{prefix}.{index}" if prefix else str(index))
            for index, item in enumerate(value)
        ]
        return type(value)(items)
    return value


class _PatchedForward:
    """A module's ``forward`` replaced for one replay, and put back."""

    def __init__(self, module: nn.Module, forward: Callable):
        self._module = module
        self._saved = module.__dict__.get("forward")
        module.forward = forward

    def remove(self) -> None:
        if self._saved is None:
            del self._module.forward
        else:
            self._module.forward = self._saved


def _device_of(module: nn.Module) -> torch.device | None:
    parameter = first_parameter(module)
    return None if parameter is None else parameter.device
