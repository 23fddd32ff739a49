"""Which rank made a difference, for a candidate traced sharded (``ranks="gathered"``).

A gathered trace records a tensor the ranks held in pieces as the pieces joined (its placement
in the extra file names the dimension and each rank's shape). At the divergence origin each
differing value is split back into the ranks' pieces:

- joined to the reference's shape: each rank's piece is compared with the same slice of the
  reference, and the ranks whose slice differs are named (a wrong shard of a column-parallel
  weight differs on its rank only);
- pieces that each have the reference's shape (the ranks held different values where one value
  was expected): each is compared with the reference, and so is their sum; a sum that agrees
  means partial sums that were never reduced (a missing all-reduce).

Only full-tensor traces (``use_repr=False``) can be split. A difference the ranks' reduction has
already mixed (a row-parallel layer's output) cannot be told apart by rank.
"""

from __future__ import annotations

import torch

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_result import ModuleComparison, ValueComparison, ValueStatus
from model_debugging.compare.numeric import PairComparer
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor


def _record(node: TraceNode, place: str, sub_path: str | None) -> TensorRecord | None:
    records = node.inputs if place == "inputs" else node.outputs or ()
    return next((record for record in records if record.sub_path == sub_path), None)


def _ranks_text(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(rank) for rank in ranks)


def _pieces(tensor: torch.Tensor, dim: int, shapes: tuple[tuple[int, ...], ...]) -> list[torch.Tensor]:
    return list(torch.split(tensor, [shape[dim] for shape in shapes], dim=dim))


def _value_note(
    value: ValueComparison, reference: TensorRecord, candidate: TensorRecord, comparer: PairComparer
) -> str | None:
    placement = candidate.placement
    dim = None if placement is None else placement.shard_dim
    if dim is None or len(placement.local_shapes) < 2 or reference.file is None or candidate.file is None:
        return None
    expected, joined = read_recorded_tensor(reference), read_recorded_tensor(candidate)
    pieces = _pieces(joined, dim, placement.local_shapes)
    if tuple(expected.shape) == tuple(joined.shape):
        references = _pieces(expected, dim, placement.local_shapes)
        differing = [
            rank
            for rank, (piece, part) in enumerate(zip(pieces, references, strict=True))
            if not comparer.compare_tensors(part, piece)[0]
        ]
        if not differing or len(differing) == len(pieces):
            return None
        agreeing = [rank for rank in range(len(pieces)) if rank not in differing]
        return (
            f"{value.label}: the shard of {_ranks_text(differing)} differs (dimension {dim} is split over "
            f"the ranks), the shard of {_ranks_text(agreeing)} agrees"
        )
    if all(tuple(piece.shape) == tuple(expected.shape) for piece in pieces):
        agreeing = [rank for rank, piece in enumerate(pieces) if comparer.compare_tensors(expected, piece)[0]]
        if comparer.compare_tensors(expected, torch.stack(pieces).sum(dim=0))[0]:
            return (
                f"{value.label}: the ranks hold different values of the reference's shape, and their sum "
                "agrees with the reference: partial sums that were never reduced (a missing all-reduce)"
            )
        if agreeing:
            differing = [rank for rank in range(len(pieces)) if rank not in agreeing]
            return (
                f"{value.label}: the ranks hold different values where one is expected: "
                f"{_ranks_text(differing)} differs from the reference, {_ranks_text(agreeing)} agrees"
            )
    return None


def rank_note(origin: ModuleComparison, alignment: TraceAlignment, comparer: PairComparer) -> str | None:
    """Which ranks the divergence ``origin``'s differing values differ on; None when nothing tells."""
    if comparer.mode != "tensors":
        return None
    pair = alignment.pairs[origin.index]
    if len(pair.reference) != 1 or len(pair.candidate) != 1:
        return None
    reference = alignment.reference.node(pair.reference[0])
    candidate = alignment.candidate.node(pair.candidate[0])
    notes = []
    for value in origin.values:
        if not value.counted or value.status is not ValueStatus.DIFFERS:
            continue
        left = _record(reference, value.place, value.reference)
        right = _record(candidate, value.place, value.candidate)
        if left is not None and right is not None and left.is_tensor and right.is_tensor:
            note = _value_note(value, left, right, comparer)
            if note is not None:
                notes.append(note)
    return "; ".join(notes) or None
