"""Running one recorded call of the reference on the candidate, alone, and judging what it returns.

The candidate's module (or function) gets the reference's recorded inputs and runs under
``torch.no_grad()``. A call whose outputs the trace records is judged on them. A module with
submodules (upstream records no outputs for those) is judged on its recorded leaves: forward hooks
on the candidate's submodules compare each leaf's outputs, as it runs inside the replayed module,
with the reference's outputs of the same leaf call.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from model_debugging.compare.renames import RenameRule
from model_debugging.compare.result import ModuleComparison
from model_debugging.debugger.trace_format.records import TensorRecord, Trace, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import (
    UnrebuildableValue,
    flatten_output,
    literal_value,
    rebuild_call,
    rebuild_outputs,
)
from model_debugging.replay.judging import Tolerance, diff_tensors, worse
from model_debugging.replay.noise import NoiseLevels
from model_debugging.replay.result import ModuleReplay, NodeKind, NoiseJudgement, ReplayVerdict
from model_debugging.replay.targets import CandidateIndex, NoCounterpart

_MAX_LISTED = 3


@dataclass
class _Findings:
    """What the comparisons of one replay found so far."""

    within: bool = True
    structural: bool = False  # a missing, extra or reshaped output, or the candidate raised
    max_abs: float | None = None
    max_rel: float | None = None
    worst: str | None = None
    first_wrong: str | None = None
    compared: int = 0
    noise_ratio: float | None = None
    noise_max_abs: float = 0.0
    details: list[str] = field(default_factory=list)

    def mismatch(self, detail: str, name: str | None = None) -> None:
        self.within = False
        self.structural = True
        self.first_wrong = self.first_wrong or name
        self.details.append(detail)

    def add(self, name: str, within: bool, max_abs: float, max_rel: float) -> None:
        self.compared += 1
        self.within = self.within and within
        if not within:
            self.first_wrong = self.first_wrong or name
        if max_abs > (self.max_abs or 0.0):
            self.worst = name
        self.max_abs = worse(self.max_abs, max_abs)
        self.max_rel = worse(self.max_rel, max_rel)

    def add_noise(self, replayed: float, level: float) -> None:
        ratio = 0.0 if replayed == 0 else (replayed / level if level > 0 else math.inf)
        self.noise_ratio = ratio if self.noise_ratio is None else max(self.noise_ratio, ratio)
        self.noise_max_abs = max(self.noise_max_abs, level)


def _describe(node: TraceNode) -> str:
    return node.module_path if node.call_index == 0 else f"{node.module_path} (call {node.call_index})"


class Replayer:
    """Replays calls of one reference trace on one candidate model.

    Args:
        trace (`Trace`): the reference trace (``use_repr=False``, so that tensors can be read back).
        model (`nn.Module`): the candidate.
        rules (`Sequence[RenameRule]`): compare's rename rules, mapping both sides' paths to one key.
        tolerance (`Tolerance`): the per-tensor tolerance when no noise levels are given.
        noise (`NoiseLevels`, *optional*): the reference's own spread; it can excuse a difference.
        aligned (`Mapping[str, ModuleComparison]`, *optional*): compare's rows by reference path,
            whose alignment maps reference calls to candidate modules before the rename rules.
    """

    def __init__(
        self,
        trace: Trace,
        model: nn.Module,
        rules: Sequence[RenameRule] = (),
        tolerance: Tolerance | None = None,
        noise: NoiseLevels | None = None,
        aligned: Mapping[str, ModuleComparison] | None = None,
    ):
        self.trace = trace
        self.index = CandidateIndex(trace, model, rules, aligned)
        self._tolerance = tolerance or Tolerance()
        self._noise = noise
        self._subtree_end = _subtree_ends(trace.nodes)
        self._correct_leaves: set[int] = set()  # orders of calls replayed correct on their own outputs

    def children(self, node: TraceNode) -> list[TraceNode]:
        return [other for other in self.subtree(node) if other.depth == node.depth + 1]

    def subtree(self, node: TraceNode) -> tuple[TraceNode, ...]:
        """The calls made inside ``node``, in execution order."""
        return self.trace.nodes[node.order + 1 : self._subtree_end[node.order]]

    def replay(self, node: TraceNode) -> ModuleReplay:
        if node.exception is not None:
            return not_replayed(
                node, None, f"the reference call raised ({node.exception}): nothing to compare"
            )
        try:
            target = self.index.target(node)
        except NoCounterpart as error:
            return not_replayed(node, None, str(error))
        device = _device_of(target.module)
        try:
            call = rebuild_call(node.inputs, device, lambda path: self.index.module_for(path)[1])
        except UnrebuildableValue as error:
            return not_replayed(
                node, target.candidate_path, f"input {error.sub_path} cannot be rebuilt: {error.reason}"
            )
        findings = _Findings()
        if node.outputs is not None:
            judge = self._judge_own_outputs(node, findings)
            patches: list[_PatchedForward] = []
        else:
            leaves = [
                leaf for leaf in self.subtree(node) if leaf.outputs is not None and leaf.function is None
            ]
            if not leaves:
                return not_replayed(
                    node, target.candidate_path, "the trace records no outputs for it or its submodules"
                )
            judge, patches = self._judge_leaves(target.module, leaves, findings)
        try:
            with torch.no_grad():
                output = target.call(*call.args, **call.kwargs)
        except Exception as error:  # the candidate failing on the recorded inputs is a finding
            findings.mismatch(f"the candidate raised {type(error).__name__} on the recorded inputs: {error}")
        else:
            judge(output)
        finally:
            for patch in patches:
                patch.remove()
        verdict = self._verdict(node, node_kind(node), target.candidate_path, findings)
        if node.outputs is not None and verdict.verdict is ReplayVerdict.CORRECT:
            self._correct_leaves.add(node.order)
        return verdict

    def _judge_own_outputs(self, node: TraceNode, findings: _Findings) -> Callable[[Any], None]:
        def judge(output: Any) -> None:
            self._compare_outputs(node, output, findings, "outputs")

        return judge

    def _judge_leaves(
        self, module: nn.Module | None, leaves: list[TraceNode], findings: _Findings
    ) -> tuple[Callable[[Any], None], list]:
        """Judge each recorded leaf as it runs inside ``module``, then hand on the reference's outputs.

        Handing on the recorded outputs keeps every later call inside ``module`` on the reference's
        values, so rounding does not pile up from leaf to leaf: each leaf is judged on (nearly)
        identical inputs. A leaf already replayed correct on its own recorded inputs is not run
        again: its inputs are compared with the recorded ones instead (cheap, and what is left to
        check). The judge lists recorded leaves the candidate never ran.
        """
        expected: dict[tuple[str, int], TraceNode] = {}
        counts: Counter[str] = Counter()
        for leaf in leaves:
            key = self.index.key(leaf.module_path)
            expected[(key, counts[key])] = leaf
            counts[key] += 1
        seen: Counter[str] = Counter()
        ran: set[int] = set()

        def judged_forward(key: str, submodule: nn.Module, original: Callable) -> Callable:
            def forward(*args, **kwargs):
                leaf = expected.get((key, seen[key]))
                seen[key] += 1
                if leaf is None:
                    return original(*args, **kwargs)
                ran.add(leaf.order)
                label = self.index.relative(leaf.module_path)
                device = _device_of(submodule)
                if leaf.order in self._correct_leaves and self._inputs_checked(
                    leaf, args, kwargs, findings, label
                ):
                    return rebuild_outputs(leaf.outputs, device)
                output = original(*args, **kwargs)
                self._compare_outputs(leaf, output, findings, label)
                try:
                    return rebuild_outputs(leaf.outputs, device)
                except UnrebuildableValue:
                    return output  # keep the candidate's own outputs

            return forward

        patched = []
        keys = {key for key, _ in expected}
        for submodule in module.modules() if module is not None else ():
            key = self.index.candidate_key(submodule)
            if key in keys:
                patched.append(_PatchedForward(submodule, judged_forward(key, submodule, submodule.forward)))

        def judge(_output: Any) -> None:
            missing = [_describe(leaf) for leaf in leaves if leaf.order not in ran]
            if missing:
                listed = ", ".join(missing[:_MAX_LISTED]) + (", ..." if len(missing) > _MAX_LISTED else "")
                findings.details.append(
                    f"{len(missing)} recorded submodule calls not run by the candidate: {listed}"
                )

        return judge, patched

    def _inputs_checked(
        self, leaf: TraceNode, args: tuple, kwargs: dict, findings: _Findings, label: str
    ) -> bool:
        """Compare the tensors a leaf is called with to its recorded inputs; False when they do not line up."""
        given = {key: value for key, value in (("args", args), ("kwargs", kwargs)) if len(value) > 0}
        produced = dict(flatten_output(given))
        recorded = {record.sub_path: record for record in leaf.inputs if record.is_tensor}
        tensors = {path for path, value in produced.items() if isinstance(value, torch.Tensor)}
        if tensors != set(recorded) or any(record.file is None for record in recorded.values()):
            return False
        for path, record in recorded.items():
            value = produced[path]
            if tuple(value.shape) != record.shape:
                return False
            diff = diff_tensors(read_recorded_tensor(record), value, self._tolerance)
            findings.add(f"{label} inputs.{path}", diff.within, diff.max_abs, diff.max_rel)
        return True

    def _compare_outputs(self, node: TraceNode, output: Any, findings: _Findings, label: str) -> None:
        produced = dict(flatten_output(output))
        largest = 0.0
        for record in node.outputs or ():
            name = f"{label}.{record.sub_path}" if record.sub_path else label
            if record.sub_path not in produced:
                findings.mismatch(f"{name}: recorded in the reference, not returned by the candidate", name)
                continue
            value = produced.pop(record.sub_path)
            if not record.is_tensor:
                if not _same_literal(record, value):
                    findings.mismatch(f"{name}: reference {record.text}, candidate {_short(value)}", name)
            elif not isinstance(value, torch.Tensor):
                findings.mismatch(f"{name}: reference is a tensor, candidate returned {_short(value)}", name)
            elif record.file is None:
                findings.details.append(f"{name}: recorded as a repr only, not compared")
            elif tuple(value.shape) != record.shape:
                findings.mismatch(
                    f"{name}: shape {list(record.shape)} in the reference, {list(value.shape)} replayed", name
                )
            else:
                diff = diff_tensors(read_recorded_tensor(record), value, self._tolerance)
                findings.add(name, diff.within, diff.max_abs, diff.max_rel)
                largest = worse(largest, diff.max_abs)
        for sub_path in produced:
            name = f"{label}.{sub_path}" if sub_path else label
            findings.mismatch(f"{name}: returned by the candidate, not in the reference", name)
        if self._noise is not None:
            level = self._noise.level(node)
            if level is None:
                findings.details.append(f"{_describe(node)}: not in the noise trace")
            else:
                findings.add_noise(largest, level)

    def _verdict(
        self, node: TraceNode, kind: NodeKind, candidate_path: str, findings: _Findings
    ) -> ModuleReplay:
        noise = None
        within = findings.within
        if findings.noise_ratio is not None:
            noise = NoiseJudgement(noise_max_abs=findings.noise_max_abs, ratio=findings.noise_ratio)
            # the reference's spread can excuse a difference, never accuse one within the tolerance
            within = (findings.within or noise.within) and not findings.structural
        return ModuleReplay(
            module_path=node.module_path,
            candidate_path=candidate_path,
            call_index=node.call_index,
            kind=kind,
            verdict=ReplayVerdict.CORRECT if within else ReplayVerdict.WRONG,
            max_abs_diff=findings.max_abs,
            max_rel_diff=findings.max_rel,
            worst=findings.worst,
            first_wrong=findings.first_wrong,
            compared=findings.compared,
            noise=noise,
            details=tuple(findings.details),
        )


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


def not_replayed(node: TraceNode, candidate_path: str | None, reason: str) -> ModuleReplay:
    return ModuleReplay(
        module_path=node.module_path,
        candidate_path=candidate_path,
        call_index=node.call_index,
        kind=node_kind(node),
        verdict=ReplayVerdict.NOT_REPLAYED,
        reason=reason,
    )


def node_kind(node: TraceNode) -> NodeKind:
    return "module" if node.function is None else "function"


def _same_literal(record: TensorRecord, value: Any) -> bool:
    """Whether a returned non-tensor equals the recorded one; a repr that is no literal is not compared."""
    try:
        expected = literal_value(record)
    except UnrebuildableValue:
        return True
    if isinstance(expected, float) and isinstance(value, float) and math.isnan(expected):
        return math.isnan(value)
    return type(expected) is type(value) and expected == value


def _short(value: Any) -> str:
    text = type(value).__name__ if isinstance(value, torch.Tensor) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _device_of(module: nn.Module | None) -> torch.device | None:
    if module is None:
        return None
    for tensor in itertools.chain(module.parameters(), module.buffers()):
        return tensor.device
    return None


def _subtree_ends(nodes: Sequence[TraceNode]) -> list[int]:
    """For each node (by order), the order of the first node after its subtree."""
    ends = [len(nodes)] * len(nodes)
    open_nodes: list[TraceNode] = []
    for node in nodes:
        while open_nodes and open_nodes[-1].depth >= node.depth:
            ends[open_nodes.pop().order] = node.order
        open_nodes.append(node)
    return ends
