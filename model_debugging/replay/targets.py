"""Which part of the candidate model runs a recorded call: a submodule, a function, or a fused projection.

Given the candidate's own trace, compare's alignment decides first (:func:`~model_debugging.compare.align.align_traces`):

- a call paired one to one runs the candidate's module (called as the candidate's own trace
  recorded it, on the reference's values, when its signature does not take the reference's call:
  :mod:`.own_calls`), or, when the candidate's counterpart is a recorded function (the reference's activation module against the port's ``F.gelu``), that
  function with the candidate's own recorded arguments, its tensors replaced by the reference's;
- a reference call that is one part of a fused projection (``q_proj`` of the port's ``qkv``)
  runs the fused module on its inputs and is judged on its slice of the output;
- a reference call that the candidate splits (a fused ``c_attn`` against ``q``, ``k``, ``v``) runs
  each part and is judged on their outputs concatenated.

Otherwise module paths are matched like ``compare`` matches them: relative to the model (without
its class name), after the rename rules, applied to both sides. A reference wrapper the candidate
does not have (the ``model`` of ``LlamaForCausalLM.model.layers.0`` in a port whose layers sit
at the top) is looked through: its name is dropped from the paths below it. A container the
candidate never calls (an ``nn.ModuleDict`` of the same name) runs nothing. A recorded function
runs the candidate's function of the same name (a ``torch.`` function itself, or the Python
function of that name in the module defining the candidate's parent module class).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from model_debugging.compare.align import CallPair, TraceAlignment
from model_debugging.compare.call_result import AlignmentKind
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.padding import pads_nothing
from model_debugging.compare.renames import RenameRule, apply_rename_rules
from model_debugging.debugger.function_records import resolve_torch_function
from model_debugging.debugger.trace_format.records import Trace, TraceNode
from model_debugging.replay.adapters import CannotCall
from model_debugging.replay.arguments import (
    RecordedCall,
    Sources,
    UnrebuildableValue,
    flatten_output,
    rebuild_call,
)
from model_debugging.replay.own_calls import OwnCall


class NoCounterpart(LookupError):
    """The candidate has nothing that runs a recorded call; the message says what was looked for."""


# the reference's rebuilt call -> the arguments to give the candidate (raises CannotCall)
ArgumentMapping = Callable[[RecordedCall], RecordedCall]


@dataclass(frozen=True)
class Target:
    """What to run for one recorded call: ``call(*args, **kwargs)``, and its name in the candidate.

    ``module`` is the candidate's module (None for a function); ``arguments`` turns the
    reference's call into the candidate's when they differ; ``output`` turns what the candidate
    returned into the form of the reference's recorded outputs (a slice of a fused projection).
    """

    call: Callable
    candidate_path: str
    module: nn.Module | None
    arguments: ArgumentMapping | None = None
    output: Callable[[Any], Any] | None = None
    # the candidate's own recorded call on the reference's values, for a module whose signature does
    # not accept the reference's call, or that its model gives inputs in another form (:mod:`.own_calls`)
    own_call: OwnCall | None = None


class CandidateIndex:
    """The candidate's submodules by matching key, and compare's alignment by reference call, built once per replay."""

    def __init__(
        self,
        trace: Trace,
        model: nn.Module,
        rules: Sequence[RenameRule],
        alignment: TraceAlignment | None = None,
        comparer: PairComparer | None = None,
    ):
        self._rules = tuple(rules)
        self._comparer = comparer  # compare's, with ``alignment``: how the values of two calls are told apart
        self.model = model
        names = [name for name, _ in model.named_modules(remove_duplicate=False)]
        self._by_key = {apply_rename_rules(self._rules, name): name for name in names}
        self._names = set(names)
        self._alignment = alignment
        self._batch_unpadded = pads_nothing(trace)
        self._pairs: dict[int, CallPair] = {}
        self._aligned_paths: dict[str, str] = {}  # reference path -> candidate module name (one to one)
        if alignment is not None:
            for pair in alignment.pairs:
                for order in pair.reference:
                    self._pairs[order] = pair
                self._learn(pair, trace)

    def _learn(self, pair: CallPair, trace: Trace) -> None:
        if len(pair.reference) != 1 or len(pair.candidate) != 1:
            return
        candidate = self._alignment.candidate.node(pair.candidate[0])
        if candidate.function is not None:
            return
        name = self._candidate_name(candidate.module_path)
        if name in self._names:
            self._aligned_paths.setdefault(trace.nodes[pair.reference[0]].module_path, name)

    def paired(self, node: TraceNode) -> bool:
        """Whether compare's alignment pairs ``node`` with calls of the candidate."""
        return node.order in self._pairs

    @property
    def aligned(self) -> bool:
        """Whether compare's alignment pairs the calls (else module paths do)."""
        return self._alignment is not None

    def relative(self, module_path: str) -> str:
        """A reference path relative to the model (without its class name)."""
        return module_path.partition(".")[2]

    def _candidate_name(self, candidate_path: str) -> str:
        return candidate_path.partition(".")[2]

    def key(self, module_path: str) -> str:
        """The matching key of a reference path (full, with the class name)."""
        return apply_rename_rules(self._rules, self.relative(module_path))

    def module_for(self, module_path: str) -> tuple[str, nn.Module]:
        """The candidate's module for a reference module path (``LookupError`` when there is none)."""
        name = self._aligned_paths.get(module_path)
        if name is None:
            name = self._by_path(self.key(module_path))
        module = self.model.get_submodule(name)
        if type(module).forward is nn.Module.forward:
            raise NoCounterpart(
                f"the candidate's {name} ({type(module).__name__}) is a container that is never called: "
                "its parent's forward runs what it holds"
            )
        return name, module

    def _by_path(self, key: str) -> str:
        if key in self._by_key:
            return self._by_key[key]
        # look through reference wrappers the candidate lacks: drop each component above the last
        # whose path (so far) names no candidate module
        *wrappers, last = key.split(".")
        kept: list[str] = []
        for part in wrappers:
            if ".".join([*kept, part]) in self._by_key:
                kept.append(part)
        looked_through = ".".join([*kept, last])
        if looked_through in self._by_key:
            return self._by_key[looked_through]
        shown = f"{key!r} after rename rules" if self._rules else repr(key)
        raise NoCounterpart(f"no submodule of the candidate matches {shown}")

    def target(self, node: TraceNode) -> Target:
        pair = self._pairs.get(node.order)
        if pair is not None:
            return self._aligned_target(node, pair)
        if node.function is None:
            name, module = self.module_for(node.module_path)
            return Target(module, name or type(module).__name__, module)
        parent_path, _, function_name = node.module_path.rpartition(".")
        parent_name, parent = self.module_for(parent_path)
        where = f"{parent_name}.{function_name}" if parent_name else function_name
        torch_function = resolve_torch_function(node.function)
        if torch_function is not None:
            return Target(torch_function, where, None)
        helper = _python_function(type(parent).__module__, function_name)
        if helper is None:
            raise NoCounterpart(
                f"the candidate's {type(parent).__name__} is defined in {type(parent).__module__}, "
                f"which has no function {function_name!r}"
            )
        return Target(helper, where, None)

    def _aligned_target(self, node: TraceNode, pair: CallPair) -> Target:
        tree = self._alignment.candidate
        candidates = [tree.node(index) for index in pair.candidate]
        shown = " + ".join(
            self._candidate_name(other.module_path) or other.module_path for other in candidates
        )
        if any(other.function is not None for other in candidates) and len(candidates) > 1:
            raise NoCounterpart(f"aligned with the candidate's functions {shown}: replay its parent")
        if pair.kind is AlignmentKind.SPLIT or len(candidates) > 1:
            modules = [self._aligned_module(other) for other in candidates]
            return Target(_concatenated(modules), shown, modules[0])
        (candidate,) = candidates
        if candidate.function is not None:
            return self._function_target(candidate, shown)
        module = self._aligned_module(candidate)
        if len(pair.reference) == 1:
            own_call = OwnCall(
                node, candidate, self._comparer, self._aligned_module, module.forward, self._batch_unpadded
            )
            return Target(module, shown, module, own_call=own_call)
        start, width = _slice_of(self._alignment.reference.trace, pair.reference, node.order)
        return Target(
            module,
            f"{shown}[..., {start}:{start + width}]",
            module,
            output=lambda output: _last_dimension_slice(output, start, width),
        )

    def _aligned_module(self, candidate: TraceNode | str) -> nn.Module:
        path = candidate if isinstance(candidate, str) else candidate.module_path
        try:
            return self.model.get_submodule(self._candidate_name(path))
        except AttributeError:
            raise NoCounterpart(
                f"the candidate's trace has {path}, which is not a submodule of the model given"
            ) from None

    def _function_target(self, candidate: TraceNode, shown: str) -> Target:
        function = resolve_torch_function(candidate.function) or _python_function(
            *candidate.function.rpartition(".")[::2]
        )
        if function is None:
            raise NoCounterpart(f"the candidate's function {candidate.function} cannot be found")
        own_module = self._aligned_module  # a module the candidate's call passed, by its trace path
        return Target(
            function,
            shown,
            None,
            arguments=lambda call: _substituted(candidate, call, lambda path: own_module(path)),
        )


def _python_function(module_name: str, name: str) -> Callable | None:
    helper = getattr(sys.modules.get(module_name), name, None)
    return getattr(helper, "__wrapped__", helper) if callable(helper) else None


def _concatenated(modules: list[nn.Module]) -> Callable:
    def call(*args, **kwargs):
        return torch.cat([module(*args, **kwargs) for module in modules], dim=-1)

    return call


def _slice_of(trace: Trace, group: tuple[int, ...], order: int) -> tuple[int, int]:
    """Where call ``order``'s output sits in the concatenated outputs of ``group`` (start, width)."""
    start = 0
    for member in group:
        width = _output_width(trace.nodes[member])
        if member == order:
            return start, width
        start += width
    raise NoCounterpart(f"call {order} is not part of its fused group")


def _output_width(node: TraceNode) -> int:
    tensors = [record for record in node.outputs or () if record.is_tensor and record.shape]
    if len(tensors) != 1:
        raise NoCounterpart(f"{node.module_path} is fused but does not record exactly one output tensor")
    return tensors[0].shape[-1]


def _last_dimension_slice(output: Any, start: int, width: int) -> Any:
    if not isinstance(output, torch.Tensor):
        return output
    return output[..., start : start + width]


def _substituted(
    candidate: TraceNode, reference: RecordedCall, modules: Callable[[str], nn.Module]
) -> RecordedCall:
    """The candidate's recorded call of a function, with its tensors replaced by the reference's, in order."""
    recorded = {"args": reference.args, "kwargs": reference.kwargs}
    given = [value for _, value in flatten_output(recorded) if isinstance(value, torch.Tensor)]
    wanted = [record for record in candidate.inputs if record.is_tensor]
    if len(given) != len(wanted) or any(
        tuple(tensor.shape) != record.shape for tensor, record in zip(given, wanted, strict=False)
    ):
        raise CannotCall(
            f"the candidate's {candidate.function} took tensors shaped {[list(r.shape or ()) for r in wanted]}, "
            f"the reference's call {[list(t.shape) for t in given]}"
        )
    supply = iter(given)
    try:
        return rebuild_call(candidate.inputs, Sources(modules=modules, tensors=lambda _record: next(supply)))
    except UnrebuildableValue as error:
        raise CannotCall(f"the candidate's recorded argument {error}") from None


def first_parameter(module: nn.Module | None, floating: bool = False) -> torch.Tensor | None:
    """The module's first parameter or buffer (the first floating-point one with ``floating``)."""
    if module is None:
        return None
    for tensor in itertools.chain(module.parameters(), module.buffers()):
        if not floating or tensor.is_floating_point():
            return tensor
    return None
