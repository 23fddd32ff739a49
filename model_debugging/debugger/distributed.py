"""Which ranks of a ``torch.distributed`` run record, and which tensor each records for a value.

The debugger's ``ranks`` option:

- ``"0"`` (upstream's behaviour): rank 0 records and writes; a DTensor is recorded from the shard
  rank 0 holds. The other ranks run their forward untouched.
- ``"all"``: every rank records its own trace, of its own tensors, into ``<debug_path>/rank<N>``;
  a DTensor is recorded from its local shard, with its placements. No rank waits for another.
- ``"gathered"``: every rank records, rank 0 writes one trace of the logical tensors. A DTensor
  is recorded as its full tensor (``full_tensor()``: an all-gather, or a reduction of partial
  sums). A plain tensor (tensor-parallel styles hand their outputs on as local tensors) is
  compared across the ranks by a fingerprint (shape, float64 sum and an xor hash of its elements,
  one small all-gather): held alike by every rank it is recorded as it is (``Replicate()``);
  otherwise the ranks' pieces are gathered to rank 0 and joined along the one dimension their
  shapes differ in, or, for pieces of one shape, along the last dimension (where tensor-parallel
  layers split their outputs; compare re-reads them by rank). Each tensor is gathered, recorded
  and freed before the next, and every rank takes part in every gather in the same order, so the
  ranks must run the same modules (as tensor parallelism does). A rank that stops recording (its
  recording failed) leaves the others waiting in a gather until the process group's timeout.

Each recorded tensor's layout is kept as its ``placement`` in the extra file, and the run itself
as ``distributed`` (see :mod:`.trace_format.extra`). The same code runs on NCCL with CUDA tensors
(fingerprints and pieces are gathered on the tensor's device).
"""

from __future__ import annotations

import os
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from model_debugging.debugger.trace_format.records import joined_dimension

RANK_VIEWS = ("0", "all", "gathered")
# values whose gathered tensor is kept for a repeated record (the same hidden state is often the
# input of several projections in a row): at most this many gathered tensors stay alive
_REUSED = 4
_MAX_DIMS = 8  # a fingerprint's room for a shape; a tensor with more dimensions is recorded per rank


def check_ranks(ranks: Any) -> str:
    """``ranks`` when it is one of :data:`RANK_VIEWS`, else a ``ValueError`` naming it."""
    if ranks not in RANK_VIEWS:
        choices = ", ".join(repr(view) for view in RANK_VIEWS)
        raise ValueError(f"ranks={ranks!r} is not one of {choices}")
    return ranks


def _process_group() -> tuple[int, int]:
    """(rank, world size) of the initialized default process group; (0, 1) without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


@dataclass(frozen=True)
class RankSetup:
    """What this process does for the chosen ``ranks``.

    ``records``: it runs the tracer (its module calls are recorded); ``writes``: it writes files
    into ``output_dir``; ``tensors``: which tensor it records for a value.
    """

    ranks: str
    rank: int
    world_size: int
    records: bool
    writes: bool
    output_dir: Path
    tensors: TensorSource

    @property
    def run(self) -> dict | None:
        """The extra file's ``distributed`` object; None when nothing beyond upstream was asked for."""
        if self.ranks == "0" or (self.ranks == "gathered" and self.world_size == 1):
            return None
        return {"ranks": self.ranks, "rank": self.rank, "world_size": self.world_size}


def rank_setup(ranks: str, debug_path: str | bytes | os.PathLike | None) -> RankSetup:
    """What this process records and writes for ``ranks`` (see the module docstring)."""
    rank, world_size = _process_group()
    output_dir = _output_dir(debug_path)
    if ranks == "all":
        return RankSetup(ranks, rank, world_size, True, True, output_dir / f"rank{rank}", LocalTensors(True))
    if ranks == "gathered" and world_size > 1:
        return RankSetup(
            ranks, rank, world_size, True, rank == 0, output_dir, GatheredTensors(rank, world_size)
        )
    writes = rank == 0
    return RankSetup(ranks, rank, world_size, writes, writes, output_dir, LocalTensors(False))


def _output_dir(debug_path: str | bytes | os.PathLike | None) -> Path:
    """``debug_path`` as an absolute directory: the current one when None or empty; bytes (or a
    path object giving bytes) decoded as ``os`` functions decode them (``os.fsdecode``), so every
    name the file system can hold is reachable."""
    if debug_path is None:
        return Path.cwd()
    try:
        path = os.fsdecode(debug_path)
    except TypeError:
        raise ValueError(
            f"debug_path={debug_path!r} is not a path: expected a str, bytes or os.PathLike, "
            f"not {type(debug_path).__name__}"
        ) from None
    # absolute now: a forward run after an os.chdir inside the context still writes where it was asked
    return Path(path).absolute() if path else Path.cwd()


class TensorSource:
    """Turns a forward's value into the tensor to record for it, and its placement.

    ``keeps_records``: whether this process keeps what it records (False for the ranks of a
    gathered view that only take part in its gathers: their entries are not formatted).
    """

    keeps_records = True

    def tensor(self, value: Any) -> tuple[torch.Tensor | None, dict | None]:
        raise NotImplementedError


def _dtensor(value: Any) -> Any:
    """``value`` when it is a DTensor, else None."""
    try:
        placements = getattr(value, "placements", None)
        local = getattr(value, "_local_tensor", None)
    except Exception:  # an object whose __getattr__ raises something else is simply not a DTensor
        return None
    return value if isinstance(local, torch.Tensor) and placements is not None else None


def _placement(placements: list[str], source: str, local_shapes: list | None = None) -> dict:
    """A tensor's ``placement`` in the extra file; ``placements`` as torch's reprs (``Shard(dim=0)``)."""
    placement = {"placements": placements, "source": source}
    if local_shapes is not None:
        placement["local_shapes"] = [list(shape) for shape in local_shapes]
    return placement


class LocalTensors(TensorSource):
    """Each rank's own tensors: a DTensor's local shard (with its placements when ``with_placements``)."""

    def __init__(self, with_placements: bool):
        self._with_placements = with_placements

    def tensor(self, value: Any) -> tuple[torch.Tensor | None, dict | None]:
        if type(value) is torch.Tensor:
            return value, None
        dtensor = _dtensor(value)
        if dtensor is None:
            return (value, None) if isinstance(value, torch.Tensor) else (None, None)
        placement = (
            _placement([repr(item) for item in dtensor.placements], "dtensor")
            if self._with_placements
            else None
        )
        if placement is not None:
            placement["global_shape"] = list(dtensor.shape)
        return dtensor._local_tensor, placement


class GatheredTensors(TensorSource):
    """The logical tensor of each value, gathered to rank 0 (every rank must call :meth:`tensor` alike)."""

    def __init__(self, rank: int, world_size: int):
        self._rank = rank
        self._world_size = world_size
        self.keeps_records = rank == 0
        self._recent: deque[tuple[weakref.ref, int, tuple]] = deque(maxlen=_REUSED)

    def tensor(self, value: Any) -> tuple[torch.Tensor | None, dict | None]:
        """The logical tensor of ``value`` and its placement (on the ranks but 0: their own piece).

        The very tensor recorded moments ago, unchanged (same object, same version counter), gets
        the same answer without a new gather. Whether it is that tensor is decided alike on every
        rank (each runs the same code on its own objects), so the ranks stay in step.
        """
        if not isinstance(value, torch.Tensor):
            return None, None
        version = _version(value)
        for source, recorded_version, result in self._recent:
            if source() is value and recorded_version == version:
                return result
        result = self._logical(value)
        if version is not None:
            self._recent.append((weakref.ref(value), version, result))
        return result

    def _logical(self, value: torch.Tensor) -> tuple[torch.Tensor, dict]:
        dtensor = _dtensor(value)
        if dtensor is not None:
            return dtensor.full_tensor(), _placement([repr(item) for item in dtensor.placements], "dtensor")
        return self._plain(value)

    def _plain(self, tensor: torch.Tensor) -> tuple[torch.Tensor, dict]:
        prints = _gather_fingerprints(tensor, self._world_size)
        if all(torch.equal(prints[0], other) for other in prints[1:]):
            return tensor, _placement(["Replicate()"], "equal on every rank")
        shapes = [_shape_of(row) for row in prints]
        joined = joined_dimension(shapes)
        if joined is None:
            return tensor, _placement([], "local to each rank", shapes)
        dim, source = joined
        placement = _placement([f"Shard(dim={dim})"], source, shapes)
        pieces = _gather_pieces(tensor, shapes, self._rank)
        if pieces is None:  # a rank other than 0: it only sends its piece
            return tensor, placement
        return torch.cat(pieces, dim=dim), placement


def _version(tensor: torch.Tensor) -> int | None:
    """The in-place modification counter (of a DTensor's local shard); None for inference tensors."""
    local = getattr(tensor, "_local_tensor", tensor)
    return None if local.is_inference() else local._version


def _shape_of(row: torch.Tensor) -> tuple[int, ...]:
    ndim = int(row[0])
    return tuple(int(size) for size in row[1 : 1 + ndim])


def _fingerprint(tensor: torch.Tensor) -> torch.Tensor:
    """Shape, float64 sum and xor hash of ``tensor`` as one int64 row (equal rows: equal tensors, but
    for a hash collision); a tensor with more than ``_MAX_DIMS`` dimensions gets a row of its own."""
    row = torch.full((_MAX_DIMS + 3,), -1, dtype=torch.int64, device=tensor.device)
    if tensor.dim() > _MAX_DIMS or tensor.layout != torch.strided or tensor.device.type == "meta":
        row[-1] = dist.get_rank()  # never equal to another rank's: recorded per rank
        row[0] = 0
        return row
    row[0] = tensor.dim()
    row[1 : 1 + tensor.dim()] = torch.tensor(tensor.shape, dtype=torch.int64)
    data = tensor.detach()
    if data.is_complex():
        data = torch.view_as_real(data.resolve_conj())
    if data.dtype == torch.bool:
        data = data.to(torch.uint8)
    row[-2] = data.sum(dtype=torch.float64).view(torch.int64) if data.numel() else 0
    row[-1] = torch.hash_tensor(data).view(torch.int64) if data.numel() else 0
    return row


def _gather_fingerprints(tensor: torch.Tensor, world_size: int) -> list[torch.Tensor]:
    row = _fingerprint(tensor)
    rows = [torch.empty_like(row) for _ in range(world_size)]
    dist.all_gather(rows, row)
    return rows


def _gather_pieces(
    tensor: torch.Tensor, shapes: list[tuple[int, ...]], rank: int
) -> list[torch.Tensor] | None:
    """Every rank's ``tensor`` (of ``shapes[rank]``, all with as many dimensions) on rank 0, in rank
    order; None on the other ranks.

    The pieces are padded to the largest size in each dimension, since a gather moves equal sizes.
    """
    largest = [max(sizes) for sizes in zip(*shapes, strict=True)]
    padded = tensor.new_zeros(largest)
    padded[tuple(slice(0, size) for size in tensor.shape)] = tensor
    received = [torch.empty_like(padded) for _ in shapes] if rank == 0 else None
    dist.gather(padded, received, dst=0)
    if received is None:
        return None
    return [
        piece[tuple(slice(0, size) for size in shape)] for piece, shape in zip(received, shapes, strict=True)
    ]


class NoFiles:
    """The writer of a rank that records for a gathered view but writes nothing."""

    def begin(self) -> None:
        return None

    def write(self, paths: None, tree: dict, tensor_files: list[Path]) -> None:
        pass

    def abandon(self, paths: None, tensor_files: list[Path]) -> None:
        pass
