"""The result of comparing two traces: the rows of the matched calls (:mod:`.call_result`), what the
alignment did, and the verdict with the summary printed above every report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from model_debugging.compare.call_result import (
    AlignmentKind,
    ModuleComparison,
    ModuleStatus,
    ValueStatus,
    describe_difference,
)
from model_debugging.compare.noise_floor import MULTIPLE
from model_debugging.debugger.trace_format.records import TraceMode

_LISTED = 3  # one-sided calls named in the summary; the rest are counted

STATS_ONLY_NOTE = (
    "only summary statistics (shape, dtype, mean/std/min/max) were compared: "
    "record both traces with use_repr=False to compare full tensors"
)


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


@dataclass(frozen=True)
class UnmatchedCall:
    """A call on one side only inside no other such call, and how many such calls it holds."""

    call: str
    calls_inside: int

    def __str__(self) -> str:
        count = self.calls_inside
        return f"{self.call} (and {count} call{'s' if count > 1 else ''} inside)" if count else self.call


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
    # a float32 run of a half-precision reference: a tensor it recorded is compared within
    # noise_atol + MULTIPLE * its level and noise_rtol (see noise_floor.py), atol/rtol being for the rest
    noise_from: Path | None = None
    noise_atol: float = 0.0
    noise_rtol: float = 0.0

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
        fixed = f"atol={self.atol:g}{scaled}, rtol={self.rtol:g}"
        if self.noise_from is None:
            return fixed
        return (
            f"the reference's own rounding: each tensor within atol={self.noise_atol:g} + {MULTIPLE:g} * its "
            f"largest difference from the reference's float32 run, rtol={self.noise_rtol:g} ({fixed} for "
            "tensors that run did not record)"
        )

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
            "noise_from": None if self.noise_from is None else str(self.noise_from),
            "noise_atol": self.noise_atol,
            "noise_rtol": self.noise_rtol,
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
