"""What the page shows of one recorded input or output: shape, dtype, statistics, values or a histogram."""

from __future__ import annotations

import math
from dataclasses import dataclass

from model_debugging.debugger.trace_format.records import TensorRecord, TraceError
from model_debugging.explorer.histogram import Histogram, tensor_histogram

# repr lines kept per tensor: torch already summarizes large tensors, this bounds the rest
MAX_VALUE_LINES = 40


def json_number(value: float | None) -> float | str | None:
    """JSON has no NaN or Infinity: those become the strings JavaScript's ``Number()`` reads back."""
    if value is None or math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


class TextTable:
    """Texts many calls share, each distinct text once, referred to by index: the printed values
    (a call's input is often the previous call's output; the page parses them only when a detail
    pane first needs them) and the module classes."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        return self._index.setdefault(text, len(self._index))

    def texts(self) -> list[str]:
        return list(self._index)


@dataclass(frozen=True)
class TensorView:
    """One leaf of a call's inputs or outputs, as the page shows it."""

    record: TensorRecord
    histogram: Histogram | None = None
    histogram_error: str | None = None

    def to_json(self, values: TextTable) -> dict:
        record = self.record
        entry: dict = {"at": record.sub_path}
        if not record.is_tensor:
            entry["text"] = record.text
            return entry
        entry["shape"] = list(record.shape or ())
        entry["dtype"] = (record.dtype or "").removeprefix("torch.")
        if record.stats:
            entry["stats"] = {name: json_number(value) for name, value in record.stats}
        if record.value_lines:
            entry["values"] = values.add("\n".join(record.value_lines[:MAX_VALUE_LINES]))
            entry["valuesDropped"] = max(0, len(record.value_lines) - MAX_VALUE_LINES)
        if self.histogram is not None:
            entry["histogram"] = self.histogram.to_json()
        if self.histogram_error is not None:
            entry["histogramError"] = self.histogram_error
        return entry


def tensor_view(record: TensorRecord) -> TensorView:
    """The view of ``record``, with a histogram when its values sit in a tensor file."""
    if record.file is None:
        return TensorView(record)
    try:
        return TensorView(record, histogram=tensor_histogram(record.file))
    except TraceError as error:  # a missing or broken tensor file costs its histogram, not the page
        return TensorView(record, histogram_error=str(error))
