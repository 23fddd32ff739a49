"""How a trace comparison colours the tree: a status per call and how far a diverged call diverges."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from model_debugging.explorer.tensor_view import TensorView, TextTable, json_number

# a diverged call's level: 1 just above tolerance, one more per factor of 10 above it, 5 at most
MAX_LEVEL = 5


class CallStatus(str, Enum):
    EQUAL = "equal"
    DIVERGED = "diverged"
    UNMATCHED = "unmatched"  # in the reference trace only
    CANDIDATE_ONLY = "candidate-only"
    # not compared on its own, but accounted for by compare's alignment: part of a fused or split
    # projection, or an identity call (dropout in eval mode) set aside
    ACCOUNTED = "accounted"
    # a call with children and no counterpart, not listed as unmatched: compare looked through it and
    # paired its calls one by one (a ViT port without the reference's ``embeddings`` module)
    LOOKED_THROUGH = "looked-through"


@dataclass(frozen=True)
class PairedValue:
    """One input or output of a paired call as compare saw it: where it sits on each side, how it
    compares, and the candidate's value (shown beside the reference's)."""

    place: str  # "inputs" or "outputs"
    reference: str | None  # the reference's sub-path (None: candidate only)
    candidate_at: str | None
    status: str
    paired_by: str | None = None
    form: str | None = None
    counted: bool = True
    max_abs_diff: float | None = None
    note: str | None = None
    candidate: TensorView | None = None

    def to_json(self, values: TextTable) -> dict:
        entry: dict = {
            "place": self.place,
            "at": self.reference,
            "candidateAt": self.candidate_at,
            "status": self.status,
        }
        if self.paired_by:
            entry["pairedBy"] = self.paired_by
        if self.form:
            entry["form"] = self.form
        if not self.counted:
            entry["counted"] = False
        if self.max_abs_diff is not None:
            entry["maxAbsDiff"] = json_number(self.max_abs_diff)
        if self.note:
            entry["note"] = self.note
        if self.candidate is not None:
            entry["candidate"] = self.candidate.to_json(values)
        return entry


@dataclass(frozen=True)
class CallComparison:
    """What the compare engine found for one call (``verdict`` is its own status text)."""

    status: CallStatus
    level: int = 0
    verdict: str = ""
    candidate_path: str | None = None
    candidate_class: str | None = None  # the candidate call's module class, when its trace records it
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    mean_abs_diff: float | None = None
    details: tuple[str, ...] = ()
    alignment: str | None = None  # how the pair was found, when not by path: inferred, fused, split
    notes: tuple[str, ...] = ()
    values: tuple[PairedValue, ...] = ()

    def to_json(self, values: TextTable) -> dict:
        entry: dict = {"status": self.status.value}
        if self.status in (CallStatus.EQUAL, CallStatus.DIVERGED):
            entry.update(
                level=self.level,
                verdict=self.verdict,
                candidatePath=self.candidate_path,
                maxAbsDiff=json_number(self.max_abs_diff),
                maxRelDiff=json_number(self.max_rel_diff),
                meanAbsDiff=json_number(self.mean_abs_diff),
                details=list(self.details),
            )
            if self.candidate_class is not None:
                entry["candidateClass"] = self.candidate_class
            if self.alignment is not None:
                entry["alignment"] = self.alignment
            if self.notes:
                entry["notes"] = list(self.notes)
            if self.values:
                entry["values"] = [value.to_json(values) for value in self.values]
        return entry


def divergence_level(max_abs_diff: float | None, atol: float) -> int:
    """1 for a difference just above ``atol``, +1 per factor of 10 beyond it; the most when unknown or not finite."""
    if max_abs_diff is None or not math.isfinite(max_abs_diff):
        return MAX_LEVEL
    ratio = max_abs_diff / atol if atol > 0 else math.inf
    if not math.isfinite(ratio):
        return MAX_LEVEL
    return min(MAX_LEVEL, 1 + int(math.floor(math.log10(max(ratio, 1.0)))))
