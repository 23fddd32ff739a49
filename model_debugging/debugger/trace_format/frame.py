"""One trace as a pandas DataFrame, one row per module call."""

from __future__ import annotations

import math
import os

import pandas as pd

from model_debugging.debugger.trace_format.names import STAT_NAMES
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import TensorRecord


def _shapes(records: tuple[TensorRecord, ...] | None) -> dict[str, tuple[int, ...]] | None:
    if records is None:
        return None
    return {record.sub_path: record.shape for record in records if record.is_tensor}


def _dtypes(records: tuple[TensorRecord, ...] | None) -> dict[str, str] | None:
    if records is None:
        return None
    return {record.sub_path: record.dtype for record in records if record.is_tensor}


def _first_stats(records: tuple[TensorRecord, ...] | None) -> dict[str, float]:
    for record in records or ():
        if record.stats:
            return {name: math.nan if value is None else value for name, value in record.stats}
    return {}


def load_trace(path: str | os.PathLike) -> pd.DataFrame:
    """One row per recorded module call, in execution order.

    Columns: ``order``, ``module_path``, ``module_class`` (None when the trace does not record it),
    ``depth``, ``call_index``, ``is_leaf``, ``input_shapes`` / ``input_dtypes`` / ``output_shapes`` /
    ``output_dtypes`` (dicts keyed by sub-path; outputs are None when not recorded),
    ``mean``/``std``/``min``/``max`` of the first output tensor with statistics (else of the first
    such input; NaN when there is none), and ``exception``.
    """
    rows = []
    for node in read_trace(path).nodes:
        stats = _first_stats(node.outputs) or _first_stats(node.inputs)
        rows.append(
            {
                "order": node.order,
                "module_path": node.module_path,
                "module_class": node.module_class,
                "depth": node.depth,
                "call_index": node.call_index,
                "is_leaf": node.is_leaf,
                "input_shapes": _shapes(node.inputs),
                "input_dtypes": _dtypes(node.inputs),
                "output_shapes": _shapes(node.outputs),
                "output_dtypes": _dtypes(node.outputs),
                **{name: stats.get(name, math.nan) for name in STAT_NAMES},
                "exception": node.exception,
            }
        )
    return pd.DataFrame(rows)
