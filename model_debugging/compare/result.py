"""The result of comparing two traces: one row per matched module call, and the verdict."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from model_debugging.debugger.trace_format.records import TraceMode

_LISTED = 3  # one-sided calls named in the summary; the rest are counted

STATS_ONLY_NOTE = (
    "only summary statistics (shape, dtype, mean/std/min/max) were compared: "
    "record both traces with use_repr=False to compare full tensors"
)


class AlignmentKind(str, enum.Enum):
    """How the calls of a matched pair were found to correspond."""

    PATH = "path"  # equal module paths after the rename rules
    INFERRED = "inferred"  # same place in execution order, shapes and dtypes
    FUSED = "fused"  # several reference calls, one candidate call holding their outputs concatenated
    SPLIT = "split"  # one reference call, several candidate calls whose outputs concatenate to its output

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AlignmentSummary:
    """What the automatic alignment did, for the report.

    ``rename_rules_yaml`` holds the given and inferred rename rules as a ``--config`` file (with the
    fused/split projections and dropped identity calls as comments); ``unaligned`` says in one line
    what could not be aligned and why.
    """

    inferred: bool
    from_shapes_only: bool
    inferred_pairs: int
    projections: int
    identities: int
    rename_rules_yaml: str
    unaligned: str | None

    def summary_line(self) -> str | None:
        if not self.inferred or not (self.inferred_pairs or self.projections or self.identities):
            return None
        basis = "execution order, shapes and dtypes"
        if self.from_shapes_only:
            basis += " only (summary statistics: values were not available to confirm it)"
        return (
            f"aligned automatically from {basis}: {self.inferred_pairs} calls paired, "
            f"{self.projections} fused/split projections, {self.identities} identity calls dropped out"
        )


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


@dataclass(frozen=True)
class UnmatchedCall:
    """A call on one side only inside no other such call, and how many such calls it holds."""

    call: str
    calls_inside: int

    def __str__(self) -> str:
        count = self.calls_inside
        return f"{self.call} (and {count} call{'s' if count > 1 else ''} inside)" if count else self.call


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


@dataclass(frozen=True)
class TraceComparison:
    """The result of :func:`compare_traces`.

    ``unmatched_reference`` / ``unmatched_candidate`` are the calls made on one side only (notes, not
    differences; ``ignored`` counts those ``--ignore`` silenced), every one; the ``_outermost`` ones list
    them as the report does: each call inside none of them, with how many it holds. ``final_output_note``
    says why the final outputs could not be compared (None when they were): without them no verdict of
    equivalence is given. ``warnings`` flag traces that may not be comparable as recorded.
    """

    reference: Path
    candidate: Path
    mode: TraceMode
    atol: float
    rtol: float
    modules: tuple[ModuleComparison, ...]
    divergence_origin: ModuleComparison | None
    first_input_divergence: ModuleComparison | None
    unmatched_reference: tuple[str, ...]
    unmatched_candidate: tuple[str, ...]
    unmatched_reference_outermost: tuple[UnmatchedCall, ...]
    unmatched_candidate_outermost: tuple[UnmatchedCall, ...]
    rename_rules: tuple[str, ...] = ()
    bytes_compared: int = field(default=0, compare=False)
    origin_note: str | None = None  # where inside a divergence origin with children the difference is made
    alignment: AlignmentSummary | None = None
    final_output_note: str | None = None
    warnings: tuple[str, ...] = ()
    ignored: int = 0
    boundaries_only: bool = False
    tolerance_basis: str = "as given"  # why these atol/rtol (see tolerance.py)
    atol_per_rms: float = 0.0  # added to atol per unit of the reference tensor's root mean square
    rank_note: str | None = None  # for a candidate traced sharded: which ranks the origin differs on

    @property
    def calls_agree(self) -> bool:
        """Every compared call is within tolerance (the final outputs may not have been compared)."""
        return all(module.status is ModuleStatus.EQUAL for module in self.modules)

    @property
    def equivalent(self) -> bool:
        """Every compared call is within tolerance, the final outputs included."""
        return self.final_output_note is None and self.calls_agree

    @property
    def note(self) -> str | None:
        return STATS_ONLY_NOTE if self.mode == "stats" else None

    def summary_lines(self) -> list[str]:
        """A few sentences for the top of a report: what was compared and where it diverges."""
        scope = (
            " (block boundaries only: numbered layers and the calls after them)"
            if self.boundaries_only
            else ""
        )
        lines = [
            f"reference: {self.reference}",
            f"candidate: {self.candidate}",
            f"compared {len(self.modules)} paired calls{scope} with {self._tolerance()}",
        ]
        if self.tolerance_basis not in ("as given", "compare's defaults"):
            lines.append(f"tolerance: {self.tolerance_basis}")
        if self.note:
            lines.append(f"NOTE: {self.note}")
        lines += [f"warning: {warning}" for warning in self.warnings]
        if self.alignment is not None:
            lines += [line for line in (self.alignment.summary_line(),) if line]
            if self.alignment.unaligned and (self.unmatched_reference or self.unmatched_candidate):
                lines.append(self.alignment.unaligned)
        lines.append(f"result: {self._verdict()}")
        origin, first_input = self.divergence_origin, self.first_input_divergence
        if origin is not None:
            lines.append(f"divergence origin: {origin.module_path} ({describe_difference(origin)})")
            if origin.alignment is not AlignmentKind.PATH:
                lines[-1] += f"; candidate {origin.candidate_path}, aligned as {origin.alignment.value}"
            if self.origin_note:
                lines.append(f"  {self.origin_note}")
            if self.rank_note:
                lines.append(f"  by rank: {self.rank_note}")
        if first_input is not None and first_input is not origin:
            lines.append(
                f"first module whose inputs differ: {first_input.module_path} ({describe_difference(first_input)})"
            )
            if origin is None or origin.index > first_input.index:
                lines.append(
                    "  no recorded module before it diverged: look at the code of its parent module that runs "
                    "before this call, or at the model inputs"
                )
        lines += self._notes()
        return lines

    def _tolerance(self) -> str:
        scaled = f" + {self.atol_per_rms:g} * rms(reference tensor)" if self.atol_per_rms else ""
        return f"atol={self.atol:g}{scaled}, rtol={self.rtol:g}"

    def _verdict(self) -> str:
        if not self.calls_agree:
            return "DIVERGED"
        if self.final_output_note is not None:
            return f"NOT CONFIRMED: every compared call agrees, but {self.final_output_note}"
        return "EQUIVALENT within tolerance"

    def _notes(self) -> list[str]:
        parts = [
            f"{len(calls)} call(s) only in the {side} ({', '.join(map(str, outermost[:_LISTED]))}"
            f"{', ...' if len(outermost) > _LISTED else ''})"
            for side, calls, outermost in (
                ("reference", self.unmatched_reference, self.unmatched_reference_outermost),
                ("candidate", self.unmatched_candidate, self.unmatched_candidate_outermost),
            )
            if calls
        ]
        lines = []
        if parts:
            lines.append(f"notes: {'; '.join(parts)}: not differences (--ignore REGEX silences them)")
        if self.ignored:
            lines.append(f"notes: {self.ignored} call(s) on one side only silenced by --ignore")
        set_aside = sum(
            value.status is ValueStatus.NOT_COMPARED for module in self.modules for value in module.values
        )
        if set_aside:
            lines.append(
                f"notes: {set_aside} value(s) could not be compared (an object's repr, or a form a summary "
                "trace cannot convert); each call's notes say which"
            )
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per paired call, in the reference's execution order."""
        columns = [name for name in ModuleComparison.__dataclass_fields__ if name != "values"] + ["status"]
        return pd.DataFrame([module.to_row() for module in self.modules], columns=columns)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; non-finite numbers become the strings "inf", "-inf" and "nan"."""
        return {
            "reference": str(self.reference),
            "candidate": str(self.candidate),
            "mode": self.mode,
            "note": self.note,
            "atol": self.atol,
            "rtol": self.rtol,
            "atol_per_rms": self.atol_per_rms,
            "tolerance_basis": self.tolerance_basis,
            "rank_note": self.rank_note,
            "boundaries_only": self.boundaries_only,
            "rename_rules": list(self.rename_rules),
            "alignment": None if self.alignment is None else asdict(self.alignment),
            "warnings": list(self.warnings),
            "origin_note": self.origin_note,
            "equivalent": self.equivalent,
            "final_output_note": self.final_output_note,
            "divergence_origin": None if self.divergence_origin is None else self.divergence_origin.to_dict(),
            "first_input_divergence": (
                None if self.first_input_divergence is None else self.first_input_divergence.to_dict()
            ),
            "unmatched_reference": list(self.unmatched_reference),
            "unmatched_candidate": list(self.unmatched_candidate),
            "unmatched_reference_outermost": [asdict(call) for call in self.unmatched_reference_outermost],
            "unmatched_candidate_outermost": [asdict(call) for call in self.unmatched_candidate_outermost],
            "ignored": self.ignored,
            "modules": [module.to_dict() for module in self.modules],
        }


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
