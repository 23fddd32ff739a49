"""The ``model-debugging compare`` report (through the shared report model) and the divergence plot."""

from __future__ import annotations

from pathlib import Path

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
]


def build_report(result: TraceComparison, *, every_call: bool) -> Report:
    """The comparison as a :class:`Report`: every call (``every_call``, for files) or only the
    calls that differ, at most :data:`TERMINAL_ROWS` of them (for a terminal)."""
    frame = result.to_frame()
    if every_call:
        calls = Section("Module calls", frame[TABLE_COLUMNS], limit=len(frame))
    else:
        differing = frame.query("status != 'equal'")[TABLE_COLUMNS]
        calls = Section("Module calls that differ", differing, limit=TERMINAL_ROWS)
    rules = _inferred_rules(result)
    return Report(
        "Trace comparison",
        result.summary_lines(),
        [
            calls,
            ItemsSection(
                "Inferred rename rules (save them with --save-renames, edit, pass back with --config)",
                tuple(rules.splitlines()) if rules else (),
                style="code",
                language="yaml",
            ),
            ItemsSection("Only in the reference", tuple(result.unmatched_reference) if every_call else ()),
            ItemsSection("Only in the candidate", tuple(result.unmatched_candidate) if every_call else ()),
        ],
    )


def render_terminal(result: TraceComparison) -> str:
    return render_text(build_report(result, every_call=False)).rstrip("\n")


def render_markdown(result: TraceComparison) -> str:
    return reporting_markdown(build_report(result, every_call=True))


def _inferred_rules(result: TraceComparison) -> str | None:
    """The rename rules YAML when the alignment inferred something, else None."""
    summary = result.alignment
    if summary is None or summary.summary_line() is None:
        return None
    return summary.rename_rules_yaml.rstrip("\n")


def write_plot(result: TraceComparison, path: Path) -> None:
    from model_debugging.reporting.divergence_plot import plot_divergence

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
