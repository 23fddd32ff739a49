"""The result of comparing two traces: one row per matched module call, and the verdict."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from model_debugging.debugger.trace_format.records import TraceMode

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
            f"{self.projections} fused/split projections, {self.identities} identity calls dropped out "
            "(the inferred rename rules are printed below; --save-renames writes them to a file)"
        )


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

    @property
    def status(self) -> ModuleStatus:
        if not self.inputs_match:
            return ModuleStatus.INPUTS_DIFFER
        if self.outputs_match is False:
            return ModuleStatus.OUTPUTS_DIFFER
        return ModuleStatus.EQUAL

    def to_row(self) -> dict[str, Any]:
        """The fields plus ``status``, ``details`` joined with "; " (a table row)."""
        return {
            **asdict(self),
            "details": "; ".join(self.details),
            "status": self.status.value,
            "alignment": self.alignment.value,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``details`` as a list, non-finite numbers as "inf", "-inf" or "nan"."""
        row = {
            **asdict(self),
            "details": list(self.details),
            "status": self.status.value,
            "alignment": self.alignment.value,
        }
        return {key: _json_number(value) for key, value in row.items()}


@dataclass(frozen=True)
class TraceComparison:
    """The result of :func:`compare_traces`."""

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
    rename_rules: tuple[str, ...] = ()
    bytes_compared: int = field(default=0, compare=False)
    origin_note: str | None = None  # where inside a divergence origin with children the difference is made
    alignment: AlignmentSummary | None = None

    @property
    def equivalent(self) -> bool:
        """Every matched call is within tolerance and no module is left unmatched."""
        return (
            all(module.status is ModuleStatus.EQUAL for module in self.modules)
            and not self.unmatched_reference
            and not self.unmatched_candidate
        )

    @property
    def note(self) -> str | None:
        return STATS_ONLY_NOTE if self.mode == "stats" else None

    def summary_lines(self) -> list[str]:
        """A few sentences for the top of a report: what was compared and where it diverges."""
        lines = [f"reference: {self.reference}", f"candidate: {self.candidate}"]
        lines.append(
            f"compared {len(self.modules)} matched module calls with atol={self.atol:g}, rtol={self.rtol:g}"
        )
        if self.note:
            lines.append(f"NOTE: {self.note}")
        if self.alignment is not None:
            lines += [line for line in (self.alignment.summary_line(), self.alignment.unaligned) if line]
        if self.equivalent:
            lines.append("result: EQUIVALENT within tolerance")
            return lines
        if any(module.status is not ModuleStatus.EQUAL for module in self.modules):
            lines.append("result: DIVERGED")
        else:
            lines.append(
                "result: NOT EQUIVALENT: the matched calls agree, but some module calls are in one trace only "
                "(see above why they could not be aligned)"
            )
        origin, first_input = self.divergence_origin, self.first_input_divergence
        if origin is not None:
            lines.append(
                f"divergence origin: {origin.module_path} (max abs diff {_format(origin.max_abs_diff)})"
            )
            if origin.alignment is not AlignmentKind.PATH:
                lines[-1] += f"; candidate {origin.candidate_path}, aligned as {origin.alignment.value}"
            if self.origin_note:
                lines.append(f"  {self.origin_note}")
        if first_input is not None:
            lines.append(f"first module whose inputs differ: {first_input.module_path}")
            if origin is None or origin.index > first_input.index:
                lines.append(
                    "  no recorded module before it diverged: look at the code of its parent module that runs "
                    "before this call, or at the model inputs"
                )
        for side, unmatched in (
            ("reference", self.unmatched_reference),
            ("candidate", self.unmatched_candidate),
        ):
            if unmatched:
                lines.append(f"{len(unmatched)} module calls only in the {side}: {', '.join(unmatched[:5])}")
                if len(unmatched) > 5:
                    lines[-1] += f", ... ({len(unmatched) - 5} more)"
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per matched module call, in the reference's execution order."""
        columns = [*ModuleComparison.__dataclass_fields__, "status"]
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
            "rename_rules": list(self.rename_rules),
            "alignment": None if self.alignment is None else asdict(self.alignment),
            "origin_note": self.origin_note,
            "equivalent": self.equivalent,
            "divergence_origin": None if self.divergence_origin is None else self.divergence_origin.to_dict(),
            "first_input_divergence": (
                None if self.first_input_divergence is None else self.first_input_divergence.to_dict()
            ),
            "unmatched_reference": list(self.unmatched_reference),
            "unmatched_candidate": list(self.unmatched_candidate),
            "modules": [module.to_dict() for module in self.modules],
        }


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _format(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"
