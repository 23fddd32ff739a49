"""A run traced with ``ranks="all"`` (one trace per rank, in ``rank0/``, ``rank1/``, ...) read as one
trace of the logical tensors, to compare with a single-device reference.

Each tensor is assembled from the ranks' records of the same call: a DTensor by its placement
(``Shard(dim=d)``: the pieces joined along ``d``; ``Replicate()``: rank 0's; ``Partial(sum)``: the
sum), a plain tensor as the gathered view records it (see :mod:`model_debugging.debugger.distributed`):
equal on every rank, rank 0's; otherwise the pieces joined along the one dimension their shapes
differ in, or else along the last one, with each rank's shape kept in its placement so that
:mod:`.ranks` can name the rank that differs. Joined tensors are written to ``workdir``. The ranks'
traces must hold full tensors (``use_repr=False``) and the same calls.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from model_debugging.debugger.trace_format.reading import find_traces, read_trace
from model_debugging.debugger.trace_format.records import (
    DistributedRun,
    Placement,
    TensorRecord,
    Trace,
    TraceError,
    joined_dimension,
)
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor, write_tensor_file


def rank_directories(path: str | Path) -> list[Path] | None:
    """``rank0``, ``rank1``, ... of ``path`` when it is a directory of per-rank traces holding no trace
    itself; None otherwise."""
    path = Path(path)
    if not path.is_dir() or find_traces(path) or not (path / "rank0").is_dir():
        return None
    directories = []
    while (path / f"rank{len(directories)}").is_dir():
        directories.append(path / f"rank{len(directories)}")
    return directories


def _check_same_calls(traces: list[Trace]) -> None:
    first = traces[0]
    if first.mode != "tensors":
        raise TraceError(first.path, "a per-rank trace must hold full tensors: trace with use_repr=False")
    for trace in traces[1:]:
        if trace.mode != "tensors":
            raise TraceError(trace.path, "a per-rank trace must hold full tensors: trace with use_repr=False")
        if [node.module_path for node in trace.nodes] != [node.module_path for node in first.nodes]:
            raise TraceError(trace.path, f"records other calls than {first.path}: not a rank of the same run")
        for node, other in zip(first.nodes, trace.nodes, strict=True):
            if [r.sub_path for r in node.records] != [r.sub_path for r in other.records] or [
                r.is_tensor for r in node.records
            ] != [r.is_tensor for r in other.records]:
                raise TraceError(
                    trace.path,
                    f"{node.module_path} records other values than in {first.path}: not the same run",
                )


def _joined(records: list[TensorRecord]) -> tuple[torch.Tensor | None, Placement]:
    """The logical tensor of one value (None: rank 0's record as it is) and its placement."""
    tensors = [read_recorded_tensor(record) for record in records]
    declared = records[0].placement
    if declared is not None and declared.source == "dtensor" and len(declared.placements) == 1:
        kind = declared.placements[0]
        if kind == "Replicate()":
            return None, declared
        if kind.startswith("Partial"):
            return torch.stack(tensors).sum(dim=0), declared
        if declared.shard_dim is not None:
            shapes = tuple(tuple(tensor.shape) for tensor in tensors)
            return torch.cat(tensors, dim=declared.shard_dim), replace(declared, local_shapes=shapes)
    shapes = tuple(tuple(tensor.shape) for tensor in tensors)
    if all(tensor.dtype == tensors[0].dtype and torch.equal(tensor, tensors[0]) for tensor in tensors[1:]):
        return None, Placement(("Replicate()",), "equal on every rank")
    joined = joined_dimension(shapes)
    if joined is None:
        return None, Placement((), "local to each rank", shapes)
    dim, source = joined
    return torch.cat(tensors, dim=dim), Placement((f"Shard(dim={dim})",), source, shapes)


def read_rank_run(directories: list[Path], workdir: Path) -> Trace:
    """The per-rank traces in ``directories`` as one trace of the logical tensors (files in ``workdir``)."""
    traces = [read_trace(directory) for directory in directories]
    _check_same_calls(traces)
    nodes = []
    for calls in zip(*(trace.nodes for trace in traces), strict=True):
        values = []
        for index, records in enumerate(zip(*(node.records for node in calls), strict=True)):
            if not records[0].is_tensor:
                values.append(records[0])
                continue
            tensor, placement = _joined(list(records))
            if tensor is None:
                values.append(replace(records[0], placement=placement))
                continue
            file = workdir / f"{calls[0].order}_{index}.safetensors"
            write_tensor_file(file, tensor)
            values.append(
                replace(
                    records[0],
                    shape=tuple(tensor.shape),
                    stats=(),
                    statistics=(),
                    file=file,
                    placement=placement,
                )
            )
        first = calls[0]
        inputs = tuple(values[: len(first.inputs)])
        outputs = None if first.outputs is None else tuple(values[len(first.inputs) :])
        nodes.append(replace(first, inputs=inputs, outputs=outputs))
    run = DistributedRun("all", 0, len(traces))
    return Trace(path=directories[0].parent, mode="tensors", nodes=tuple(nodes), distributed=run)
