"""CSV rendering: lists in cells become ``"; "``-joined text, dicts ``"key: value"`` pairs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from model_debugging.reporting.atomic import atomic_write_text


def _flat(value: Any) -> Any:
    if isinstance(value, list | tuple | set):
        return "; ".join(str(item) for item in value)
    if isinstance(value, dict):
        return "; ".join(f"{key}: {item}" for key, item in value.items())
    return value


def render_csv(rows: pd.DataFrame | Sequence[dict[str, Any]], *, index: bool = False) -> str:
    """Rows (a DataFrame or a list of dicts) as CSV text; ``index=True`` keeps a DataFrame's index."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    return frame.map(_flat).to_csv(index=index, lineterminator="\n")


def write_csv(
    rows: pd.DataFrame | Sequence[dict[str, Any]], path: str | os.PathLike, *, index: bool = False
) -> Path:
    """Write :func:`render_csv` output to ``path`` atomically and return the path."""
    return atomic_write_text(path, render_csv(rows, index=index))
