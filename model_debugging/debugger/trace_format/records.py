"""The record types of a trace: what the debugger writes per tensor, and what a reader gets back."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# "tensors": a safetensors file holds every tensor; "stats": only the JSON's statistics are known
TraceMode = Literal["tensors", "stats"]


class TensorEntry(dict):
    """The JSON record of one tensor as written: upstream's keys only.

    What this debugger records beyond upstream rides along as attributes, for the extra file and
    the writer: ``statistics`` (the float64/exact numbers, or None), ``file_stem`` (the name
    upstream gives the tensor's file, without ``.safetensors``; None when the tensor has no file)
    and ``placement`` (its layout over the ranks of a torch.distributed run, or None).
    """

    __slots__ = ("statistics", "file_stem", "placement")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.statistics: dict | None = None
        self.file_stem: str | None = None
        self.placement: dict | None = None

    def copy(self) -> TensorEntry:
        duplicate = TensorEntry(self)
        duplicate.statistics, duplicate.file_stem = self.statistics, self.file_stem
        duplicate.placement = self.placement
        return duplicate


class TraceError(ValueError):
    """A trace file is missing, unreadable or not in the debugger format; the message names the file."""

    def __init__(self, path: str | os.PathLike, message: str):
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


@dataclass(frozen=True)
class Placement:
    """How a tensor of a torch.distributed run was laid out over the ranks (from the extra file).

    ``placements`` are torch's names (``Shard(dim=2)``, ``Replicate()``, ``Partial(sum)``);
    ``source`` says how they are known: ``dtensor`` (the value was a DTensor), ``equal on every
    rank``, ``shapes differ`` (the ranks' pieces differ in one dimension: joined along it) or
    ``assumed`` (plain tensors of one shape that differ between ranks: joined along the last
    dimension). ``local_shapes`` are the ranks' shapes, in rank order, when the recorded tensor
    joins their pieces.
    """

    placements: tuple[str, ...]
    source: str
    local_shapes: tuple[tuple[int, ...], ...] = ()

    @property
    def shard_dim(self) -> int | None:
        """The dimension the recorded tensor joins the ranks' pieces along (one-dimensional meshes)."""
        if len(self.placements) == 1 and self.placements[0].startswith("Shard(dim="):
            return int(self.placements[0].removeprefix("Shard(dim=").removesuffix(")"))
        return None


def joined_dimension(shapes: list[tuple[int, ...]] | tuple[tuple[int, ...], ...]) -> tuple[int, str] | None:
    """Along which dimension the ranks' differing pieces of one value (of ``shapes``) are joined, and the
    placement's ``source``: the one dimension the shapes differ in, else the last one (where
    tensor-parallel layers split their outputs), as an assumption. None when no dimension can join
    them (pieces with different numbers of dimensions, or scalars)."""
    if len({len(shape) for shape in shapes}) > 1 or not shapes[0]:
        return None
    differing = [dim for dim in range(len(shapes[0])) if len({shape[dim] for shape in shapes}) > 1]
    if len(differing) == 1:
        return differing[0], "shapes differ"
    return len(shapes[0]) - 1, "assumed"


@dataclass(frozen=True)
class DistributedRun:
    """The torch.distributed run a trace was recorded in: ``ranks`` is the debugger's ``ranks`` option."""

    ranks: str
    rank: int
    world_size: int


@dataclass(frozen=True)
class TensorRecord:
    """One leaf of a node's ``inputs`` or ``outputs``.

    ``sub_path`` locates it: ``args.0``, ``kwargs.attention_mask``, ``kwargs.position_embeddings.1``
    for inputs; ``""`` (a single output), ``0``, ``last_hidden_state`` for outputs. A tensor has
    ``shape`` and ``dtype``; anything else was recorded as its repr and sits in ``text``.
    """

    sub_path: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    stats: tuple[tuple[str, float | None], ...] = ()  # (name, value) for mean/std/min/max when recorded
    # (name, value) of the statistics in the extra file; complex parts are named "real.mean", ...
    statistics: tuple[tuple[str, int | float | None], ...] = ()
    file: Path | None = None  # the safetensors file (use_repr=False traces only)
    text: str | None = None  # repr of a non-tensor value
    value_lines: tuple[str, ...] = ()  # a tensor's printed values (use_repr=True FULL_TENSORS traces)
    placement: Placement | None = None  # a tensor of a torch.distributed run (from the extra file)

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None


@dataclass(frozen=True)
class TraceNode:
    """One recorded module call.

    ``call_index`` counts earlier calls with the same ``module_path`` (0 for the first call);
    ``outputs`` is ``None`` when the debugger did not record them (modules with submodules; a leaf
    module whose only children are function records keeps its outputs, as upstream's files have them).
    ``function`` is the qualified name of the function a function-call node records (see
    ``record_functions``), None for a module call. ``module_class`` is a module call's class as
    ``<Python module>.<qualname>``, ``exception`` the one-line ``Type: message`` of the exception
    the call raised. ``inputs_modified`` are the sub-paths of its input tensors (``args.0``) the
    call changed in place (empty when it changed none). These four, and each tensor's ``statistics``,
    come from the trace's extra file: None (empty) for a trace without one (written by upstream's
    debugger); ``inputs_modified`` is None too when the extra file is of a version that did not check.
    """

    order: int
    module_path: str
    depth: int
    call_index: int
    is_leaf: bool
    inputs: tuple[TensorRecord, ...]
    outputs: tuple[TensorRecord, ...] | None
    exception: str | None = None
    function: str | None = None
    module_class: str | None = None
    inputs_modified: tuple[str, ...] | None = None

    @property
    def records(self) -> tuple[TensorRecord, ...]:
        """The inputs' records followed by the outputs' (when recorded)."""
        return self.inputs + (self.outputs or ())


@dataclass(frozen=True)
class Trace:
    """A parsed trace: the JSON file it came from and its nodes in execution order."""

    path: Path
    mode: TraceMode
    nodes: tuple[TraceNode, ...]
    distributed: DistributedRun | None = None  # recorded under torch.distributed with ranks="all"/"gathered"

    @property
    def root_path(self) -> str:
        return self.nodes[0].module_path if self.nodes else ""
