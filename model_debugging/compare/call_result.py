"""The result of comparing one pair of calls: how each input and output compares, and the call's status.

:class:`ModuleComparison` is one row of a comparison (:class:`~.result.TraceComparison` holds them
in execution order); :class:`ValueComparison` one of its values; :func:`describe_difference` says in a
few words how a differing row differs.
"""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass
from typing import Any, Literal


class AlignmentKind(str, enum.Enum):
    """How the calls of a matched pair were found to correspond."""

    PATH = "path"  # equal module paths after the rename rules
    INFERRED = "inferred"  # same place in execution order, shapes and dtypes
    FUSED = "fused"  # several reference calls, one candidate call holding their outputs concatenated
    SPLIT = "split"  # one reference call, several candidate calls whose outputs concatenate to its output

    def __str__(self) -> str:
        return self.value


class ValueStatus(str, enum.Enum):
    """How one recorded value of a call compares with its counterpart."""

    EQUAL = "equal"
    DIFFERS = "differs"
    NOT_COMPARED = "not compared"  # set aside: a form a summary trace cannot compare, an object's repr
    ONLY_REFERENCE = "only in reference"
    ONLY_CANDIDATE = "only in candidate"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ValueComparison:
    """One input or output of a pair of calls: which value of each side, how they were paired and
    how they compare. ``counted`` says whether a difference here makes the call differ (a pair
    guessed by order, an input passed by one side only, a value set aside never do)."""

    place: Literal["inputs", "outputs"]
    reference: str | None  # where the value sits in the reference call (None: candidate only)
    candidate: str | None
    status: ValueStatus
    paired_by: str | None = None  # name, shape, value, order
    form: str | None = None  # same, squeezed, broadcast, mask, layout
    counted: bool = True
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    mean_abs_diff: float | None = None
    elements: int = 0  # how many elements (or statistics) the differences are over
    note: str | None = None

    @property
    def label(self) -> str:
        """``inputs.kwargs.attention_mask``, or both places when the sides differ
        (``inputs.kwargs.position_embeddings.0 / args.1``)."""
        name = self.reference if self.reference is not None else self.candidate
        text = f"{self.place}.{name}" if name else self.place
        if self.reference is not None and self.candidate is not None and self.candidate != self.reference:
            text += f" / {self.candidate or '(output)'}"
        return text

    def to_dict(self) -> dict[str, Any]:
        row = {**asdict(self), "status": self.status.value, "label": self.label}
        return {key: _json_number(value) for key, value in row.items()}


class ModuleStatus(str, enum.Enum):
    """How a matched module call compares; the value is what tables and JSON show."""

    EQUAL = "equal"
    INPUTS_DIFFER = "inputs differ"
    OUTPUTS_DIFFER = "outputs differ"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ModuleComparison:
    """One matched module call.

    ``max_abs_diff``, ``max_rel_diff`` and ``mean_abs_diff`` measure the outputs when the debugger
    recorded them (leaves), else the inputs; ``compared`` says which. The relative difference is
    taken over elements whose reference value is nonzero. When only statistics were compared,
    these are differences between the statistics (mean, std, min, max), not between elements. ``details`` lists shape and dtype
    mismatches, tensors recorded on one side only, and exceptions.
    """

    index: int
    module_path: str
    candidate_path: str
    call_index: int
    depth: int
    is_leaf: bool
    inputs_match: bool
    outputs_match: bool | None
    compared: Literal["inputs", "outputs"]
    max_abs_diff: float | None
    max_rel_diff: float | None
    mean_abs_diff: float | None
    details: tuple[str, ...] = ()
    alignment: AlignmentKind = AlignmentKind.PATH
    values: tuple[ValueComparison, ...] = ()
    notes: tuple[str, ...] = ()  # what was set aside or passed by one side only: not differences

    @property
    def differing_inputs(self) -> tuple[ValueComparison, ...]:
        """The inputs that make this call's inputs differ."""
        return tuple(
            value
            for value in self.values
            if value.place == "inputs" and value.counted and value.status is ValueStatus.DIFFERS
        )

    @property
    def status(self) -> ModuleStatus:
        if not self.inputs_match:
            return ModuleStatus.INPUTS_DIFFER
        if self.outputs_match is False:
            return ModuleStatus.OUTPUTS_DIFFER
        return ModuleStatus.EQUAL

    def to_row(self) -> dict[str, Any]:
        """The fields plus ``status``, ``details`` and ``notes`` joined with "; " (a table row)."""
        row = asdict(self)
        del row["values"]
        return {
            **row,
            "details": "; ".join(self.details),
            "notes": "; ".join(self.notes),
            "status": self.status.value,
            "alignment": self.alignment.value,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``details`` as a list, non-finite numbers as "inf", "-inf" or "nan"."""
        row = {
            **asdict(self),
            "details": list(self.details),
            "notes": list(self.notes),
            "status": self.status.value,
            "alignment": self.alignment.value,
        }
        row = {key: _json_number(value) for key, value in row.items()}
        row["values"] = [value.to_dict() for value in self.values]
        return row


def describe_difference(row: ModuleComparison) -> str:
    """How a differing call differs, in a few words: its largest difference when it is a number
    above 0, else what differs (a shape, a tensor on one side only, a literal, an exception)."""
    differing = [value for value in row.values if value.counted and value.status is ValueStatus.DIFFERS]
    if not row.inputs_match:
        differing = [value for value in differing if value.place == "inputs"] or differing
    if row.inputs_match and not row.is_leaf and row.details:  # an origin with children: what inside differs
        text = row.details[0]
    elif differing:
        named = ", ".join(value.label for value in differing[:3])
        plural = len(differing) > 1 or named in ("inputs", "outputs")
        text = f"{named} {'differ' if plural else 'differs'}"
    else:
        text = row.details[0] if row.details else "differs"
    if row.max_abs_diff:
        text += f", max abs diff {_format(row.max_abs_diff)}"
        if differing and differing[0].note and differing[0].form == "broadcast":  # the part it holds
            text += f"; {differing[0].note}"
    elif differing and differing[0].note:
        text += f": {differing[0].note}"
    return text


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _format(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"
