"""Badges that point at suspicious statistics: NaN/Inf values, and scales that jump.

A call's *scale* is the standard deviation of its first output tensor with statistics (its first
such input when outputs were not recorded). A jump is a scale more than ``JUMP_FACTOR`` times
larger than the scale of the parent call's first input (what flowed into the parent), or more
than ``JUMP_FACTOR`` times larger or smaller than the same module's scale in the previous layer
(``layers.7.mlp`` against ``layers.6.mlp``). Normalizations shrink scales by design, so only
growth counts against the parent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode

# Two orders of magnitude: random-init models stay well inside it (residual streams grow
# slowly, norms bring scales back to ~1), blow-ups and collapses do not.
JUMP_FACTOR = 100.0
# the first numbered segment of a path is its layer: "model.layers.7.mlp" -> ("model.layers.", 7, ".mlp")
_LAYER_RE = re.compile(r"^(.*?\.)(\d+)((?:\..*)?)$")


class BadgeKind(str, Enum):
    NAN = "nan"
    INF = "inf"
    JUMP = "jump"
    EXCEPTION = "exception"


@dataclass(frozen=True)
class Badge:
    """A short ``label`` shown in the tree and a ``detail`` sentence shown on hover and in the detail pane."""

    kind: BadgeKind
    label: str
    detail: str

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "label": self.label, "detail": self.detail}


def _where(group: str, record: TensorRecord) -> str:
    return f"{group}.{record.sub_path}" if record.sub_path else group


def non_finite_badges(node: TraceNode) -> list[Badge]:
    """A NaN and/or an Inf badge when a recorded statistic of an input or output is not finite."""
    nan_at: list[str] = []
    inf_at: list[str] = []
    groups = (("inputs", node.inputs), ("outputs", node.outputs or ()))
    for group, records in groups:
        for record in records:
            stats = {name: value for name, value in record.stats if value is not None}
            # min and max hold a NaN or an infinity exactly when the values do (mean and std of
            # [-inf, inf] are NaN), so they decide; the others only when they are missing
            extremes = [stats[name] for name in ("min", "max") if name in stats] or list(stats.values())
            if any(math.isnan(value) for value in extremes):
                nan_at.append(_where(group, record))
            if any(math.isinf(value) for value in extremes):
                inf_at.append(_where(group, record))
    badges = []
    if nan_at:
        badges.append(Badge(BadgeKind.NAN, "NaN", f"NaN in {', '.join(nan_at)}"))
    if inf_at:
        badges.append(Badge(BadgeKind.INF, "Inf", f"Inf in {', '.join(inf_at)}"))
    if node.exception:
        badges.append(Badge(BadgeKind.EXCEPTION, "raised", node.exception))
    return badges


def _std(records: Sequence[TensorRecord] | None) -> float | None:
    for record in records or ():
        std = dict(record.stats).get("std")
        if std is not None:
            return std if math.isfinite(std) else None
    return None


def _scale(node: TraceNode) -> float | None:
    std = _std(node.outputs)
    return _std(node.inputs) if std is None else std


def _ratio_text(ratio: float) -> str:
    return f"×{ratio:.3g}" if ratio >= 1 else f"÷{1 / ratio:.3g}"


def _ratio(scale: float, against: float) -> float:
    if against == 0:
        return math.inf if scale > 0 else 1.0
    return scale / against


def jump_badges(nodes: Sequence[TraceNode], parents: Sequence[int]) -> dict[int, Badge]:
    """Jump badges by node index; ``parents[i]`` is the index of node i's parent (-1 for the root)."""
    scales = [_scale(node) for node in nodes]
    by_call = {(node.module_path, node.call_index): index for index, node in enumerate(nodes)}
    badges: dict[int, Badge] = {}
    for index, node in enumerate(nodes):
        scale = scales[index]
        if scale is None:
            continue
        parent = parents[index]
        parent_scale = _std(nodes[parent].inputs) if parent >= 0 else None
        if parent_scale is not None and _ratio(scale, parent_scale) > JUMP_FACTOR:
            ratio = _ratio(scale, parent_scale)
            badges[index] = Badge(
                BadgeKind.JUMP,
                f"σ{_ratio_text(ratio)}",
                f"std {scale:.4g} is {_ratio_text(ratio)} the std of the parent's input ({parent_scale:.4g})",
            )
            continue
        match = _LAYER_RE.match(node.module_path)
        if match is None or match.group(2) == "0":
            continue
        head, number, tail = match.groups()
        previous_path = f"{head}{int(number) - 1}{tail}"
        previous = by_call.get((previous_path, node.call_index))
        previous_scale = None if previous is None else scales[previous]
        if previous_scale is None:
            continue
        ratio = _ratio(scale, previous_scale)
        if ratio > JUMP_FACTOR or ratio < 1 / JUMP_FACTOR:
            badges[index] = Badge(
                BadgeKind.JUMP,
                f"σ{_ratio_text(ratio)}",
                f"std {scale:.4g} is {_ratio_text(ratio)} the std of {previous_path} ({previous_scale:.4g})",
            )
    return badges
