"""Whether one recorded tensor is another, or that plus a third, from what a summary trace holds.

A summary trace (``use_repr=True``) keeps no tensor files, but per tensor its statistics (mean, std,
min, max: this project's float64 ones when its extra file is there, else upstream's printed ones)
and the lines ``print(tensor)`` shows: every element of a small tensor, the corners (torch's
``edgeitems`` of each dimension) of a large one, the same positions for two tensors of one shape.

``given == made`` means equal statistics and equal printed values. ``given == made + residual``
means ``mean(given) = mean(made) + mean(residual)``, ``min(given) >= min(made) + min(residual)``,
``max(given) <= max(made) + max(residual)``, ``std(given) <= std(made) + std(residual)`` and printed
values that add up element by element. Each check allows compare's tolerance, the printing's
rounding (half a unit of each printed number's last digit) and the dtype's rounding of the sum.
One failed check refutes a relation; printed values that agree (with the statistics) confirm it;
statistics alone confirm an equality (all four agree), never a sum: then the answer is unknown.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from model_debugging.debugger.trace_format.records import TensorRecord

# a printed element: "-1.2345e-01", "3.0000e+00", "0.5000", "12.", "inf", "nan"
_NUMBER = re.compile(r"(?<![\w.])([-+]?)(?:(\d+)\.(\d*)(?:e([-+]?\d+))?|(inf|nan))")
_STATISTICS = ("mean", "std", "min", "max")
_PRINTED_DIGITS = 4  # torch's default precision, for printed statistics when no element says otherwise


class Relation(enum.Enum):
    HOLDS = "holds"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class _Summary:
    """One tensor as a summary trace holds it: statistics and printed elements, each with its rounding."""

    statistics: dict[str, tuple[float, float]]  # name -> (value, half a unit of how it is known)
    printed: tuple[torch.Tensor, torch.Tensor] | None  # (values, half a unit of each), float64
    eps: float  # the dtype's rounding, relative

    @property
    def scale(self) -> float:
        mean, std = self.statistics.get("mean", (0.0, 0.0))[0], self.statistics.get("std", (0.0, 0.0))[0]
        return math.hypot(mean, std)


def summed_relation(
    given: TensorRecord, made: TensorRecord, residual: TensorRecord | None, atol: float, rtol: float
) -> Relation:
    """Whether ``given`` is ``made`` (``residual`` None) or ``made + residual``, within ``atol``/``rtol``."""
    parts = [_summary(record) for record in (given, made, residual) if record is not None]
    if any(part is None for part in parts):
        return Relation.UNKNOWN
    target, *terms = parts
    checks = _statistic_checks(target, terms, atol, rtol)
    if False in checks:
        return Relation.REFUTED
    corners = _printed_check(target, terms, atol, rtol)
    if corners is False:
        return Relation.REFUTED
    if corners is True or (residual is None and len(checks) == len(_STATISTICS) and all(checks)):
        return Relation.HOLDS
    return Relation.UNKNOWN


def _statistic_checks(target: _Summary, terms: Sequence[_Summary], atol: float, rtol: float) -> list[bool]:
    """Each statistic both sides know, checked: equal for an equality, bounded as above for a sum."""
    checks = []
    eps = max(part.eps for part in (target, *terms))
    for name in _STATISTICS:
        known = [part.statistics.get(name) for part in (target, *terms)]
        if None in known:
            continue
        (value, slack), *others = known
        total = sum(other[0] for other in others)
        allowed = atol + rtol * abs(value) + slack + sum(other[1] for other in others)
        allowed += eps * sum(part.scale for part in (target, *terms))
        if len(terms) == 1 or name == "mean":
            checks.append(abs(value - total) <= allowed)
        elif name == "min":
            checks.append(value >= total - allowed)
        else:  # max, std: a sum's is at most the sum of its terms'
            checks.append(value <= total + allowed)
    return checks


def _printed_check(target: _Summary, terms: Sequence[_Summary], atol: float, rtol: float) -> bool | None:
    """Whether the printed elements add up (None: not printed alike, or none finite)."""
    printed = [part.printed for part in (target, *terms)]
    if any(item is None for item in printed) or len({item[0].numel() for item in printed}) != 1:
        return None
    values = torch.stack([item[0] for item in printed])
    finite = values.isfinite().all(dim=0)
    if not finite.any():
        return None
    values = values[:, finite]
    slack = torch.stack([item[1] for item in printed])[:, finite].sum(dim=0)
    eps = max(part.eps for part in (target, *terms))
    allowed = atol + rtol * values[0].abs() + slack + eps * values.abs().sum(dim=0)
    return bool(((values[0] - values[1:].sum(dim=0)).abs() <= allowed).all())


def _summary(record: TensorRecord) -> _Summary | None:
    dtype = getattr(torch, (record.dtype or "").removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        return None
    printed = _printed(record.value_lines)
    digits = _PRINTED_DIGITS if printed is None else printed[2]
    exact = dict(record.statistics)
    if any(exact.get(count) for count in ("nan", "posinf", "neginf")):
        return None  # its statistics are of its finite elements only
    if all(isinstance(exact.get(name), int | float) for name in _STATISTICS):
        statistics = {name: (float(exact[name]), 0.0) for name in _STATISTICS}
    else:  # upstream's printed statistics
        statistics = {
            name: (value, 0.5 * 10.0**-digits * abs(value))
            for name, value in record.stats
            if value is not None and math.isfinite(value)
        }
    return _Summary(statistics, None if printed is None else printed[:2], torch.finfo(dtype).eps)


def _printed(lines: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor, int] | None:
    """The elements printed in ``lines`` (a tensor of at least one dimension), half a unit of each
    one's last digit, and the most digits after a point; None when nothing is printed."""
    text = "\n".join(lines)
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return None
    values, slack, digits = [], [], 0
    for sign, whole, fraction, exponent, word in _NUMBER.findall(text[start:end]):
        if word:
            values.append(float(sign + word))
            slack.append(0.0)
            continue
        power = int(exponent or 0)
        values.append(float(f"{sign}{whole}.{fraction}e{power}"))
        slack.append(0.5 * 10.0 ** (power - len(fraction)))
        digits = max(digits, len(fraction))
    if not values:
        return None
    return torch.tensor(values, dtype=torch.float64), torch.tensor(slack, dtype=torch.float64), digits
