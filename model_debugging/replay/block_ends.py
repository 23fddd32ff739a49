"""A numbered block's outputs, which the trace does not record, judged on what the reference hands on.

Upstream records no outputs for a module with submodules, so a block replayed alone is judged on
its recorded leaves: code after its last one (a residual added wrongly or not at all, a final
scaling) would go unseen, and the block be called correct. A numbered block of a stack
(``layers.3``) hands its outputs to the next (``layers.4``), and the last block to the call after
the stack (the final norm): the reference recorded them there, as that call's inputs. The block's
first output tensor is compared with the recorded input tensors of that call of its shape: one
within tolerance confirms the block's end; none makes the block wrong at its end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import flatten_output
from model_debugging.replay.findings import Findings
from model_debugging.replay.judging import Tolerance, diff_tensors


def next_in_stack(
    nodes: Sequence[TraceNode], node: TraceNode, end: int, parent: TraceNode | None
) -> TraceNode | None:
    """The call ``node`` (a numbered block whose calls end before order ``end``) hands its outputs to:
    the next block of its stack, or the call after the stack; None when ``node`` is no numbered
    block, is its parent's last call, or the next numbered call is not the next block (layers pruned)."""
    stack, _, number = node.module_path.rpartition(".")
    if not number.isdigit() or end >= len(nodes) or nodes[end].depth != node.depth or parent is None:
        return None
    following = nodes[end]
    following_stack, _, following_number = following.module_path.rpartition(".")
    if following_number.isdigit() and (following_stack, int(following_number)) != (stack, int(number) + 1):
        return None
    return following


def judge_end(
    node: TraceNode,
    following: TraceNode,
    label: str,
    output: Any,
    findings: Findings,
    tolerance: Tolerance,
    level: float | None = None,
) -> None:
    """Compare ``output``'s first tensor with ``following``'s recorded inputs of its shape (``label``:
    ``following``'s path relative to the model; ``level``: the reference's spread in the code before
    ``following``); when none agrees, ``node`` is wrong at its end."""
    tensor = _first_tensor(output)
    if tensor is None:
        return
    records = _inputs_shaped(tensor, [following])
    diffs = [(record, diff_tensors(read_recorded_tensor(record), tensor, tolerance)) for record in records]
    if not diffs or any(diff.within for _, diff in diffs):
        return
    record, diff = min(diffs, key=lambda item: item[1].max_abs)
    findings.add(
        f"outputs (given to {label} as {record.sub_path})", False, diff.max_abs, diff.max_rel, node.order
    )
    findings.settle(level)


def end_agrees(
    output: Any, following: TraceNode, earlier: Sequence[TraceNode], tolerance: Tolerance
) -> bool | None:
    """Whether ``output``'s first tensor (a module's, not recorded) is what the reference's
    ``following`` call received, or that less a tensor ``earlier`` calls received (a residual its
    parent adds); None when ``following`` receives no tensor of its shape."""
    tensor = _first_tensor(output)
    if tensor is None:
        return None
    received = [read_recorded_tensor(record) for record in _inputs_shaped(tensor, [following])]
    if not received:
        return None
    residuals = [read_recorded_tensor(record) for record in _inputs_shaped(tensor, earlier)]
    return any(
        diff_tensors(value, tensor, tolerance).within
        for given in received
        for value in (given, *(given - residual for residual in residuals))
    )


def _first_tensor(output: Any) -> torch.Tensor | None:
    return next((value for _, value in flatten_output(output) if isinstance(value, torch.Tensor)), None)


def _inputs_shaped(tensor: torch.Tensor, calls: Sequence[TraceNode]) -> list[TensorRecord]:
    """The recorded input tensors of ``calls`` (with their files) shaped as ``tensor``."""
    shape = tuple(tensor.shape)
    return [
        record
        for call in calls
        for record in call.inputs
        if record.is_tensor and record.file is not None and record.shape == shape
    ]
