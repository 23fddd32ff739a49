"""Render rows as terminal or GitHub-flavoured markdown tables.

Both take a ``pandas.DataFrame`` or a list of dicts (one per row, same keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd


def _as_frame(rows: pd.DataFrame | Sequence[dict[str, Any]]) -> pd.DataFrame:
    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _fit_column(cells: list[str], max_width: int) -> list[str]:
    """Cells cut to ``max_width`` with '…' at the end, or in the middle where cutting the end would
    make distinct cells read the same (``test_x_with_position_ids`` and ``test_x_with_position_ids_and_fa_kwargs``)."""
    if all(len(text) <= max_width for text in cells):
        return cells
    ends = [text if len(text) <= max_width else text[: max_width - 1] + "…" for text in cells]
    if len(set(ends)) == len(set(cells)):
        return ends
    head = (max_width - 1) // 2
    tail = max_width - 1 - head
    return [text if len(text) <= max_width else f"{text[:head]}…{text[-tail:]}" for text in cells]


def render_terminal_table(rows: pd.DataFrame | Sequence[dict[str, Any]], *, max_width: int = 60) -> str:
    """Left-aligned columns separated by two spaces; cells longer than ``max_width`` are cut with '…'
    (in the middle when the end is what tells two cells of a column apart)."""
    frame = _as_frame(rows)
    header = [str(column) for column in frame.columns]
    columns = [[_cell(value) for value in frame.iloc[:, index]] for index in range(len(header))]
    columns = [_fit_column(cells, max_width) for cells in columns]
    body = [list(row) for row in zip(*columns, strict=True)] if columns else []
    widths = [max([len(h)] + [len(row[i]) for row in body]) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(row) for row in body)])


def render_markdown_table(rows: pd.DataFrame | Sequence[dict[str, Any]]) -> str:
    """A GitHub-flavoured markdown table; pipes and newlines inside cells are escaped."""
    frame = _as_frame(rows)

    def escape(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", "<br>")

    header = "| " + " | ".join(escape(str(column)) for column in frame.columns) + " |"
    rule = "|" + "|".join(" --- " for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(escape(_cell(value)) for value in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])
