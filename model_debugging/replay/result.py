"""The result of a replay: one verdict per replayed call, and the smallest wrong module found by bisection."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

NodeKind = Literal["module", "function"]


class ReplayVerdict(str, enum.Enum):
    """What running the candidate's call alone on the reference's recorded inputs showed."""

    CORRECT = "correct on identical inputs"  # a divergence seen by compare comes from upstream of it
    WRONG = "wrong on identical inputs"  # a real bug in this call (or its submodules)
    NOT_REPLAYED = "not replayed"  # ``reason`` says why (inputs not rebuildable, no counterpart, ...)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class NoiseJudgement:
    """A replay difference measured against the reference's own spread (two runs of the reference).

    ``noise_max_abs`` is the largest spread the compared calls add between the two reference runs
    (see :mod:`model_debugging.replay.noise`); ``ratio`` is the replay's largest difference over
    it, call by call (``inf`` when the reference runs agree exactly and the replay does not).
    """

    noise_max_abs: float
    ratio: float

    @property
    def within(self) -> bool:
        return self.ratio <= 1.0

    def __str__(self) -> str:
        if self.within:
            return "within reference noise"
        if math.isinf(self.ratio):
            return "above reference noise (the reference runs agree exactly here)"
        return f"{self.ratio:.3g}× above reference noise"


@dataclass(frozen=True)
class ModuleReplay:
    """One replayed call of the reference trace.

    For a call whose outputs the trace records (a leaf module, a recorded function), its own outputs
    are compared. For a module with submodules (upstream records no outputs for those) the outputs
    of its recorded leaves, run inside it on its identical inputs, are compared. ``worst`` names the
    tensor with the largest difference, ``first_wrong`` the first one out of tolerance (in execution
    order), ``compared`` counts the tensors compared. ``reason`` says why a call was not replayed, or
    what bisection concluded about it. ``candidate_path`` is None when the candidate has nothing
    that corresponds to the call.
    """

    module_path: str
    candidate_path: str | None
    call_index: int
    kind: NodeKind
    verdict: ReplayVerdict
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    worst: str | None = None
    first_wrong: str | None = None
    compared: int = 0
    reason: str | None = None
    noise: NoiseJudgement | None = None
    details: tuple[str, ...] = ()
    # how a module was called through a derived adapter: as the candidate's own model called it
    # (its trace), on the reference's values, and which of them were converted to its form
    called_as: str | None = None

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        row.update(
            verdict=self.verdict.value,
            noise=None if self.noise is None else str(self.noise),
            noise_ratio=None if self.noise is None else self.noise.ratio,
            details=list(self.details),
        )
        return {key: _json_number(value) for key, value in row.items()}


@dataclass(frozen=True)
class ReplayResult:
    """The replayed calls in the reference's execution order, and what bisection concluded (if run).

    ``smallest_wrong`` is the smallest call bisection found wrong on identical inputs; ``bug_in`` the
    module it places the bug in: that call, or, when the first difference inside it lies in a
    submodule that could not be replayed alone, that submodule.
    """

    reference: Path
    modules: tuple[ModuleReplay, ...]
    rename_rules: tuple[str, ...] = ()
    noise_reference: Path | None = None
    smallest_wrong: ModuleReplay | None = None
    bug_in: str | None = None
    bisected: bool = False

    @property
    def wrong(self) -> tuple[ModuleReplay, ...]:
        return tuple(module for module in self.modules if module.verdict is ReplayVerdict.WRONG)

    @property
    def replayed(self) -> int:
        """How many calls were replayed (correct or wrong); 0 means the candidate could not be checked."""
        return sum(module.verdict is not ReplayVerdict.NOT_REPLAYED for module in self.modules)

    def summary_lines(self) -> list[str]:
        counts = {verdict: 0 for verdict in ReplayVerdict}
        for module in self.modules:
            counts[module.verdict] += 1
        lines = [f"reference: {self.reference}"]
        if self.noise_reference is not None:
            lines.append(f"noise measured against: {self.noise_reference}")
        lines.append(", ".join(f"{count} {verdict.value}" for verdict, count in counts.items()))
        if self.bisected:
            if self.smallest_wrong is None:
                lines.append("bisection: no replayed call is wrong on identical inputs")
            else:
                lines.append(
                    f"bisection: smallest module wrong on identical inputs: {self.smallest_wrong.module_path}"
                )
                if self.bug_in not in (None, self.smallest_wrong.module_path):
                    lines.append(f"bisection: the bug is in {self.bug_in}")
                if self.smallest_wrong.reason:
                    lines.append(f"  {self.smallest_wrong.reason}")
        return lines

    def to_frame(self) -> pd.DataFrame:
        rows = [
            {
                "module_path": module.module_path,
                "call": module.call_index,
                "kind": module.kind,
                "verdict": module.verdict.value,
                "max_abs_diff": module.max_abs_diff,
                "worst": module.worst or "",
                "noise": "" if module.noise is None else str(module.noise),
                "reason": module.reason or "",
            }
            for module in self.modules
        ]
        return pd.DataFrame(
            rows,
            columns=["module_path", "call", "kind", "verdict", "max_abs_diff", "worst", "noise", "reason"],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": str(self.reference),
            "noise_reference": None if self.noise_reference is None else str(self.noise_reference),
            "rename_rules": list(self.rename_rules),
            "bisected": self.bisected,
            "smallest_wrong": None if self.smallest_wrong is None else self.smallest_wrong.module_path,
            "bug_in": self.bug_in,
            "modules": [module.to_dict() for module in self.modules],
        }


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
