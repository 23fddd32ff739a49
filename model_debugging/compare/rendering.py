"""The ``model-debugging compare`` report (through the shared report model) and the divergence plot.

The terminal report fits the terminal's width (``COLUMNS`` when set): summary lines are wrapped,
the table keeps the columns that fit, a module path too long for its column keeps its end (the part
that tells calls apart) and a code line its start.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pandas as pd

from model_debugging.compare.divergence_plot import plot_divergence
from model_debugging.compare.result import TraceComparison
from model_debugging.reporting.report import ItemsSection, Report, Section, render_text
from model_debugging.reporting.report import render_markdown as reporting_markdown

# Terminal output lists at most this many differing module calls; the markdown and JSON hold all.
TERMINAL_ROWS = 20
TABLE_COLUMNS = [
    "index",
    "module_path",
    "call_index",
    "status",
    "max_abs_diff",
    "max_rel_diff",
    "mean_abs_diff",
    "details",
    "notes",
]
# the terminal's columns, in the order they are given up when the terminal is narrow
_TERMINAL_COLUMNS = [
    "index",
    "module_path",
    "status",
    "max_abs_diff",
    "details",
    "call_index",
    "max_rel_diff",
]
_DROPPED_FIRST = ["max_rel_diff", "call_index", "details", "max_abs_diff", "index"]
_OPTIONAL = {"call_index", "max_rel_diff"}  # dropped before a path or a detail is cut
_MIN_PATH, _MIN_DETAILS = 16, 12
_MAX_CELL = 60  # the shared table renderer cuts longer cells at their end


def build_report(
    result: TraceComparison, *, every_call: bool, width: int | None = None, rules: bool = True
) -> Report:
    """The comparison as a :class:`Report`: every call (``every_call``, for files) or only the
    calls that differ, at most :data:`TERMINAL_ROWS` of them, fitted to ``width`` (for a terminal)."""
    frame = result.to_frame()
    if every_call:
        calls = Section("Module calls", frame[TABLE_COLUMNS], limit=len(frame))
    else:
        differing = frame.query("status != 'equal'").head(TERMINAL_ROWS)
        table = _fitted(differing, width) if width else differing[TABLE_COLUMNS]
        calls = Section("Module calls that differ", table, limit=TERMINAL_ROWS)
        calls = Section(calls.title, table, limit=TERMINAL_ROWS)
    rules = _inferred_rules(result) if rules else None
    summary = result.summary_lines()
    if width:
        summary = [
            wrapped
            for line in summary
            for wrapped in textwrap.wrap(
                line, width, subsequent_indent="    ", break_on_hyphens=False, drop_whitespace=True
            )
            or [""]
        ]
        rules = "\n".join(_cut_end(line, width) for line in rules.splitlines()) if rules else rules
    return Report(
        "Trace comparison",
        summary,
        [
            calls,
            ItemsSection(
                "Inferred rename rules (--save_renames FILE writes them; edit, pass back with --config)",
                tuple(rules.splitlines()) if rules else (),
                style="code",
                language="yaml",
            ),
            ItemsSection(
                "Only in the reference",
                tuple(map(str, result.unmatched_reference_outermost)) if every_call else (),
            ),
            ItemsSection(
                "Only in the candidate",
                tuple(map(str, result.unmatched_candidate_outermost)) if every_call else (),
            ),
        ],
    )


def render_terminal(result: TraceComparison, width: int | None = None, *, rules: bool = True) -> str:
    """The report for a terminal of ``width`` columns (default: the terminal's, or ``COLUMNS``),
    with the inferred rename rules unless ``rules`` is False."""
    width = width or shutil.get_terminal_size().columns
    text = render_text(build_report(result, every_call=False, width=width, rules=rules)).rstrip("\n")
    return "\n".join(_cut_end(line, width) for line in text.splitlines())


def _cut_end(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cut_start(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _fitted(frame: pd.DataFrame, width: int) -> pd.DataFrame:
    """The table of differing calls as text cells, its columns chosen and cut to fit ``width``."""
    cells = {column: [_cell(value) for value in frame[column]] for column in _TERMINAL_COLUMNS}

    def natural(column: str) -> int:
        return min(_MAX_CELL, max([len(column), *map(len, cells[column])]))

    kept = list(_TERMINAL_COLUMNS)
    while True:
        fixed = sum(natural(c) for c in kept if c not in ("module_path", "details")) + 2 * (len(kept) - 1)
        room = width - fixed
        details = natural("details") if "details" in kept else 0
        path = min(natural("module_path"), max(_MIN_PATH, room - min(details, _MIN_DETAILS)))
        details = min(details, room - path)
        fits = path <= room and ("details" not in kept or details >= _MIN_DETAILS)
        uncut = path == natural("module_path") and details == (natural("details") if "details" in kept else 0)
        if fits and (uncut or not _OPTIONAL.intersection(kept)):
            break
        droppable = [column for column in _DROPPED_FIRST if column in kept]
        if not droppable:
            path = max(_MIN_PATH, room)
            break
        kept.remove(droppable[0])
    fitted = {"module_path": [_cut_start(text, path) for text in cells["module_path"]]}
    if "details" in kept:
        fitted["details"] = [_cut_end(text, details) for text in cells["details"]]
    return pd.DataFrame({column: fitted.get(column, cells[column]) for column in kept})


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_markdown(result: TraceComparison) -> str:
    return reporting_markdown(build_report(result, every_call=True))


def _inferred_rules(result: TraceComparison) -> str | None:
    """The rename rules YAML when the alignment inferred something, else None."""
    summary = result.alignment
    if summary is None or summary.summary_line() is None:
        return None
    return summary.rename_rules_yaml.rstrip("\n")


def write_plot(result: TraceComparison, path: Path) -> None:
    if result.divergence_origin is not None:
        marked, label = result.divergence_origin, "divergence origin"
    else:
        marked, label = result.first_input_divergence, "inputs first differ"
    plot_divergence(
        [module.module_path for module in result.modules],
        [module.max_abs_diff for module in result.modules],
        path,
        marked=None if marked is None else marked.index,
        marked_label=label,
        tolerance=result.atol,
    )
