"""The ``model-debugging compare`` report: terminal text, markdown and the divergence plot."""

from __future__ import annotations

from pathlib import Path

from model_debugging.compare.result import TraceComparison
from model_debugging.reporting import render_markdown_table, render_terminal_table

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


def render_terminal(result: TraceComparison) -> str:
    lines = result.summary_lines()
    differing = result.to_frame().query("status != 'equal'")[TABLE_COLUMNS]
    if len(differing):
        lines += [
            "",
            f"module calls that differ ({len(differing)}):",
            render_terminal_table(differing.head(TERMINAL_ROWS)),
        ]
        if len(differing) > TERMINAL_ROWS:
            lines.append(
                f"... {len(differing) - TERMINAL_ROWS} more (write them all with --markdown or --json)"
            )
    rules = _inferred_rules(result)
    if rules:
        lines += [
            "",
            "inferred rename rules (save them with --save-renames, edit, pass back with --config):",
            rules,
        ]
    return "\n".join(lines)


def _inferred_rules(result: TraceComparison) -> str | None:
    """The rename rules YAML when the alignment inferred something, else None."""
    summary = result.alignment
    if summary is None or summary.summary_line() is None:
        return None
    return summary.rename_rules_yaml.rstrip("\n")


def render_markdown(result: TraceComparison) -> str:
    parts = ["# Trace comparison", "", *(f"- {line}" for line in result.summary_lines()), ""]
    parts += ["## Module calls", "", render_markdown_table(result.to_frame()[TABLE_COLUMNS]), ""]
    rules = _inferred_rules(result)
    if rules:
        parts += ["## Inferred rename rules", "", "```yaml", rules, "```", ""]
    for side, unmatched in (
        ("reference", result.unmatched_reference),
        ("candidate", result.unmatched_candidate),
    ):
        if unmatched:
            parts += [f"## Only in the {side}", "", *(f"- `{path}`" for path in unmatched), ""]
    return "\n".join(parts)


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
