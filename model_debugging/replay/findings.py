"""What the comparisons of one replayed call found: tensor differences, structural mismatches, notes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from model_debugging.compare.arguments import returned_part
from model_debugging.compare.forms import Form, converted, layout_permutation
from model_debugging.compare.fused import signature
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import UnrebuildableValue, flatten_output, literal_value
from model_debugging.replay.judging import Tolerance, diff_tensors, worse
from model_debugging.replay.noise import NoiseLevels


@dataclass(frozen=True)
class FirstDifference:
    """Where, inside one replayed call, the first tensor out of tolerance was seen: the recorded call
    (its order in the trace), whether in its inputs (the code before it) or its outputs, and which
    recorded calls inside had their inputs compared (the others' inputs took another form)."""

    order: int
    in_inputs: bool
    inputs_compared: frozenset[int]


@dataclass
class Findings:
    """The running verdict of one replay; ``first_wrong`` names the first tensor out of tolerance.

    Tensors are compared a *point* at a time (the outputs of a recorded call, or the inputs it is
    called with): a point is wrong when a tensor of it is out of tolerance and, when the reference's
    own spread there is known, its largest difference is above that spread.
    """

    within: bool = True
    structural: bool = False  # a missing, extra or reshaped output
    max_abs: float | None = None
    max_rel: float | None = None
    worst: str | None = None
    first_wrong: str | None = None
    first_wrong_at: tuple[int, bool] | None = None  # (order of the recorded call, in its inputs)
    inputs_compared: set[int] = field(default_factory=set)
    compared: int = 0
    noise_ratio: float | None = None
    noise_max_abs: float = 0.0
    details: list[str] = field(default_factory=list)
    _point: list[tuple[str, bool, int | None, float]] = field(default_factory=list)

    def _wrong_at(self, name: str | None, order: int | None) -> None:
        if self.first_wrong is None and name is not None:
            self.first_wrong = name
            if order is not None:
                self.first_wrong_at = (order, " inputs." in name)

    def first_difference(self) -> FirstDifference | None:
        if self.first_wrong_at is None:
            return None
        return FirstDifference(*self.first_wrong_at, frozenset(self.inputs_compared))

    def mismatch(self, detail: str, name: str | None = None, order: int | None = None) -> None:
        self.within = False
        self.structural = True
        self._wrong_at(name, order)
        self.details.append(detail)

    def add(self, name: str, within: bool, max_abs: float, max_rel: float, order: int | None = None) -> None:
        """One tensor of the current point."""
        self.compared += 1
        self._point.append((name, within, order, max_abs))
        if max_abs > (self.max_abs or 0.0):
            self.worst = name
        self.max_abs = worse(self.max_abs, max_abs)
        self.max_rel = worse(self.max_rel, max_rel)

    def settle(self, level: float | None = None) -> float:
        """End the current point, ``level`` being the reference's spread there (None: unknown); its largest difference."""
        point, self._point = self._point, []
        largest = max((difference for *_, difference in point), default=0.0)
        if level is not None:
            ratio = 0.0 if largest == 0 else (largest / level if level > 0 else math.inf)
            self.noise_ratio = ratio if self.noise_ratio is None else max(self.noise_ratio, ratio)
            self.noise_max_abs = max(self.noise_max_abs, level)
        failing = [(name, order) for name, within, order, _ in point if not within]
        # the reference's spread can excuse a difference, never accuse one within the tolerance
        if failing and not (level is not None and largest <= level):
            self.within = False
            self._wrong_at(*failing[0])
        return largest


def compare_outputs(
    node: TraceNode,
    output: Any,
    findings: Findings,
    label: str,
    tolerance: Tolerance,
    level: float | None = None,
) -> None:
    """Compare what the candidate returned with ``node``'s recorded outputs (``level``: the reference's spread there)."""
    produced = dict(flatten_output(output))
    returned, aside = returned_part_paths(node, produced)
    for record in node.outputs or ():
        name = f"{label}.{record.sub_path}" if record.sub_path else label
        if record.sub_path in aside:
            findings.details.append(
                f"{name}: returned by the reference only, beside a part of it: not compared"
            )
            continue
        at = returned.get(record.sub_path, record.sub_path)
        if at not in produced:
            findings.mismatch(
                f"{name}: recorded in the reference, not returned by the candidate", name, node.order
            )
            continue
        value = produced.pop(at)
        if not record.is_tensor:
            if not _same_literal(record, value):
                findings.mismatch(
                    f"{name}: reference {record.text}, candidate {short(value)}", name, node.order
                )
        elif not isinstance(value, torch.Tensor):
            findings.mismatch(
                f"{name}: reference is a tensor, candidate returned {short(value)}", name, node.order
            )
        elif record.file is None:
            findings.details.append(f"{name}: recorded as a repr only, not compared")
        elif (
            tuple(value.shape) != record.shape
            and layout_permutation(record.shape, tuple(value.shape)) is None
        ):
            findings.mismatch(
                f"{name}: shape {list(record.shape)} in the reference, {list(value.shape)} replayed",
                name,
                node.order,
            )
        else:
            expected = read_recorded_tensor(record)
            if tuple(value.shape) != record.shape:  # the same elements in another arrangement
                expected, value = converted(Form.LAYOUT, expected, value)
                findings.details.append(f"{name}: compared in the candidate's layout {list(value.shape)}")
            diff = diff_tensors(expected, value, tolerance)
            findings.add(name, diff.within, diff.max_abs, diff.max_rel, node.order)
    for sub_path, value in produced.items():
        name = f"{label}.{sub_path}" if sub_path else label
        if sub_path in aside:
            findings.details.append(
                f"{name}: returned by the candidate only, beside a part of it: not compared"
            )
        elif isinstance(value, torch.Tensor):
            findings.mismatch(f"{name}: returned by the candidate, not in the reference", name, node.order)
        elif value is not None:
            findings.mismatch(
                f"{name}: the candidate returned {short(value)}, the reference nothing", name, node.order
            )
    findings.settle(level)


def returned_part_paths(node: TraceNode, produced: dict[str, Any]) -> tuple[dict[str, str], set[str]]:
    """When the candidate returns some of the reference's output tensors and not the others, or the
    reverse (compare's :func:`~model_debugging.compare.arguments.returned_part`: a router returning
    ``(weights, indices)`` of the reference's ``(logits, weights, indices)``): the candidate's sub
    path of each reference output both return, and the sub paths (of either side) only one returns.
    Else nothing: outputs are compared by their sub paths."""
    recorded = [record for record in node.outputs or () if record.is_tensor]
    tensors = [(path, value) for path, value in produced.items() if isinstance(value, torch.Tensor)]
    part = returned_part(
        [signature(record) for record in recorded],
        [(tuple(value.shape), str(value.dtype)) for _, value in tensors],
    )
    if part is None:
        return {}, set()
    returned = {recorded[i].sub_path: tensors[j][0] for i, j in part}
    both = {i for i, _ in part}, {j for _, j in part}
    aside = {record.sub_path for i, record in enumerate(recorded) if i not in both[0]}
    return returned, aside | {path for j, (path, _) in enumerate(tensors) if j not in both[1]}


def outputs_line_up(node: TraceNode, output: Any) -> bool:
    """Whether ``output`` has the recorded outputs' tensors at the same places, of the same shapes or
    holding the same elements in another arrangement (a Conv2d's ``[2, 32, 4, 4]``, a Linear's ``[2, 16, 32]``)."""
    produced = {path: value for path, value in flatten_output(output) if isinstance(value, torch.Tensor)}
    recorded = {record.sub_path: record.shape for record in node.outputs or () if record.is_tensor}
    return set(produced) == set(recorded) and all(
        tuple(produced[path].shape) == shape or layout_permutation(shape, tuple(produced[path].shape))
        for path, shape in recorded.items()
    )


def compare_inputs(
    node: TraceNode,
    given: dict[str, Any],
    findings: Findings,
    label: str,
    tolerance: Tolerance,
    level: float | None = None,
) -> bool:
    """Compare the tensors a recorded call is made with to its recorded inputs (``level``: the reference's
    spread there); False when they do not line up (other names or nesting: a port's own signature),
    then nothing is compared."""
    produced = {path: value for path, value in flatten_output(given) if isinstance(value, torch.Tensor)}
    recorded = {record.sub_path: record for record in node.inputs if record.is_tensor}
    if set(produced) != set(recorded) or any(
        record.file is None or tuple(produced[path].shape) != record.shape
        for path, record in recorded.items()
    ):
        if set(produced) == set(recorded):
            _broadcast_differences(node, produced, recorded, findings, label, tolerance)
        return False
    findings.inputs_compared.add(node.order)
    for path, record in recorded.items():
        diff = diff_tensors(read_recorded_tensor(record), produced[path], tolerance)
        findings.add(f"{label} inputs.{path}", diff.within, diff.max_abs, diff.max_rel, node.order)
    findings.settle(level)
    return True


def _broadcast_differences(
    node: TraceNode,
    produced: dict[str, torch.Tensor],
    recorded: dict[str, TensorRecord],
    findings: Findings,
    label: str,
    tolerance: Tolerance,
) -> None:
    """An input of the same place whose shape broadcasts to the recorded one's (position ids ``[2, 8]``
    against ``[1, 8]``, the last position ``[2, 1, 32]`` against all of them ``[2, 8, 32]``) is the
    same value when it agrees once expanded; else the code before the call made it differently."""
    for path, record in recorded.items():
        value = produced[path]
        if record.file is None or tuple(value.shape) == record.shape or value.dim() != len(record.shape):
            continue
        try:
            expected, actual = torch.broadcast_tensors(read_recorded_tensor(record), value.detach().cpu())
        except RuntimeError:  # not a broadcast of one another: another form, set aside by the caller
            continue
        diff = diff_tensors(expected, actual, tolerance)
        if not diff.within:
            name = f"{label} inputs.{path}"
            findings.add(name, False, diff.max_abs, diff.max_rel, node.order)
            findings.settle()
            findings.details.append(
                f"{name}: shape {list(value.shape)} where the reference's is {list(record.shape)}"
            )


def noise_level(
    noise: NoiseLevels | None, node: TraceNode, findings: Findings, inputs: bool = False
) -> float | None:
    """The reference's own spread at ``node``'s outputs (the code before it, with ``inputs``), if measured."""
    if noise is None:
        return None
    level = noise.level(node, inputs)
    if level is None:
        where = "the code before " if inputs else ""
        findings.details.append(f"{where}{node.module_path}: not in the noise trace")
    return level


def _same_literal(record: TensorRecord, value: Any) -> bool:
    """Whether a returned non-tensor equals the recorded one; a repr that is no literal is not compared."""
    try:
        expected = literal_value(record)
    except UnrebuildableValue:
        return True
    if isinstance(expected, float) and isinstance(value, float) and math.isnan(expected):
        return math.isnan(value)
    return type(expected) is type(value) and expected == value


def short(value: Any) -> str:
    text = type(value).__name__ if isinstance(value, torch.Tensor) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
