"""The rows of a comparison as a tree: which row holds which (rows are in the reference's execution
order, so a row's descendants follow it)."""

from __future__ import annotations

from model_debugging.compare.align import TraceAlignment


def rows_of_calls(alignment: TraceAlignment) -> dict[int, int]:
    """The row of each reference call paired one to one (a fused projection's parts have none)."""
    return {pair.reference[0]: row for row, pair in enumerate(alignment.pairs) if len(pair.reference) == 1}


def parent_rows(alignment: TraceAlignment) -> list[int | None]:
    """Per row, the row of the nearest enclosing call paired one to one (None for the outermost)."""
    tree = alignment.reference
    row_of_call = rows_of_calls(alignment)
    parents: list[int | None] = []
    for pair in alignment.pairs:
        call = tree.parent[pair.reference[0]]
        while call >= 0 and call not in row_of_call:
            call = tree.parent[call]
        parents.append(row_of_call.get(call))
    return parents
