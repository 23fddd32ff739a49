"""The ``model-debugging replay`` report as terminal text, its long lines wrapped to the terminal's width (``COLUMNS``)."""

from __future__ import annotations

import shutil
import textwrap

from model_debugging.compare.result import TraceComparison
from model_debugging.replay.result import ModuleReplay, ReplayResult, ReplayVerdict
from model_debugging.reporting.report import ItemsSection, Report, Section, render_text

# rows shown per section; the JSON output holds every replayed call
TERMINAL_ROWS = 30
_TABLE_COLUMNS = ["module_path", "call", "kind", "max_abs_diff", "worst", "noise"]


def render_terminal(result: ReplayResult, comparison: TraceComparison | None = None) -> str:
    width = max(40, shutil.get_terminal_size(fallback=(100, 24)).columns)
    summary = result.summary_lines()
    if comparison is not None:
        origin = comparison.divergence_origin or comparison.first_input_divergence
        shown = "no divergence" if origin is None else f"first divergence at {origin.module_path}"
        summary.insert(1, f"compare alone: {shown}")
    frame = result.to_frame()
    sections: list[Section | ItemsSection] = []
    for verdict in (ReplayVerdict.WRONG, ReplayVerdict.NOT_REPLAYED, ReplayVerdict.CORRECT):
        calls = [module for module in result.modules if module.verdict is verdict]
        title = f"calls {verdict.value}"
        if verdict is ReplayVerdict.NOT_REPLAYED:
            if calls:
                sections.append(ItemsSection(f"{title} ({len(calls)})", _reasons(calls, width)))
            continue
        rows = frame[frame["verdict"] == verdict.value][_TABLE_COLUMNS]
        if not (rows["noise"] != "").any():
            rows = rows.drop(columns="noise")
        sections.append(Section(title=title, rows=rows, limit=TERMINAL_ROWS))
        concluded = result.smallest_wrong
        explained = [  # the call bisection concluded in gives its reason in the summary
            module
            for module in calls
            if module.reason
            and (
                concluded is None
                or (module.module_path, module.call_index) != (concluded.module_path, concluded.call_index)
            )
        ]
        if explained:
            sections.append(ItemsSection(f"why ({len(explained)})", _reasons(explained, width)))
    title = "Replay on the reference's recorded inputs"
    wrapped = [line for text in summary for line in _wrap(text, width, "  ")]
    return render_text(Report(title=title, summary=wrapped, sections=sections)).rstrip("\n")


def _reasons(calls: list[ModuleReplay], width: int) -> tuple[str, ...]:
    lines: list[str] = []
    for module in calls[:TERMINAL_ROWS]:
        call = f" (call {module.call_index})" if module.call_index else ""
        lines += _wrap(f"{module.module_path}{call}: {module.reason}", width, "    ")
    if len(calls) > TERMINAL_ROWS:
        lines.append(f"… and {len(calls) - TERMINAL_ROWS} more (every call is in --json)")
    return tuple(lines)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    lead = text[: len(text) - len(text.lstrip())]
    return textwrap.wrap(
        text,
        width,
        initial_indent="",
        subsequent_indent=lead + indent,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [text]
