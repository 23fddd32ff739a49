"""What the comparisons of one replayed call found: tensor differences, structural mismatches, notes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import UnrebuildableValue, flatten_output, literal_value
from model_debugging.replay.judging import Tolerance, diff_tensors, worse


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
    """The running verdict of one replay; ``first_wrong`` names the first tensor out of tolerance."""

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
        self.compared += 1
        self.within = self.within and within
        if not within:
            self._wrong_at(name, order)
        if max_abs > (self.max_abs or 0.0):
            self.worst = name
        self.max_abs = worse(self.max_abs, max_abs)
        self.max_rel = worse(self.max_rel, max_rel)

    def add_noise(self, replayed: float, level: float) -> None:
        ratio = 0.0 if replayed == 0 else (replayed / level if level > 0 else math.inf)
        self.noise_ratio = ratio if self.noise_ratio is None else max(self.noise_ratio, ratio)
        self.noise_max_abs = max(self.noise_max_abs, level)


def compare_outputs(
    node: TraceNode, output: Any, findings: Findings, label: str, tolerance: Tolerance
) -> float:
    """Compare what the candidate returned with ``node``'s recorded outputs; the largest difference."""
    produced = dict(flatten_output(output))
    largest = 0.0
    for record in node.outputs or ():
        name = f"{label}.{record.sub_path}" if record.sub_path else label
        if record.sub_path not in produced:
            findings.mismatch(
                f"{name}: recorded in the reference, not returned by the candidate", name, node.order
            )
            continue
        value = produced.pop(record.sub_path)
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
        elif tuple(value.shape) != record.shape:
            findings.mismatch(
                f"{name}: shape {list(record.shape)} in the reference, {list(value.shape)} replayed",
                name,
                node.order,
            )
        else:
            diff = diff_tensors(read_recorded_tensor(record), value, tolerance)
            findings.add(name, diff.within, diff.max_abs, diff.max_rel, node.order)
            largest = worse(largest, diff.max_abs)
    for sub_path, value in produced.items():
        name = f"{label}.{sub_path}" if sub_path else label
        if isinstance(value, torch.Tensor):
            findings.mismatch(f"{name}: returned by the candidate, not in the reference", name, node.order)
        elif value is not None:
            findings.mismatch(
                f"{name}: the candidate returned {short(value)}, the reference nothing", name, node.order
            )
    return largest


def compare_inputs(
    node: TraceNode, given: dict[str, Any], findings: Findings, label: str, tolerance: Tolerance
) -> bool:
    """Compare the tensors a recorded call is made with to its recorded inputs; False when they do not line up
    (other names or nesting: a port's own signature), then nothing is compared."""
    produced = {path: value for path, value in flatten_output(given) if isinstance(value, torch.Tensor)}
    recorded = {record.sub_path: record for record in node.inputs if record.is_tensor}
    if set(produced) != set(recorded) or any(
        record.file is None or tuple(produced[path].shape) != record.shape
        for path, record in recorded.items()
    ):
        return False
    findings.inputs_compared.add(node.order)
    for path, record in recorded.items():
        diff = diff_tensors(read_recorded_tensor(record), produced[path], tolerance)
        findings.add(f"{label} inputs.{path}", diff.within, diff.max_abs, diff.max_rel, node.order)
    return True


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
