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
    derived = [module for module in result.modules if module.called_as]
    if derived:
        lines = [f"{module.module_path}: {module.candidate_path} {module.called_as}" for module in derived]
        title = f"calls made through a derived adapter, without one written by hand ({len(derived)})"
        sections.append(ItemsSection(title, tuple(_shown(lines, width))))
    title = "Replay on the reference's recorded inputs"
    wrapped = [line for text in summary for line in _wrap(text, width, "  ")]
    return render_text(Report(title=title, summary=wrapped, sections=sections)).rstrip("\n")


def _reasons(calls: list[ModuleReplay], width: int) -> tuple[str, ...]:
    lines = [
        f"{module.module_path}{f' (call {module.call_index})' if module.call_index else ''}: {module.reason}"
        for module in calls
    ]
    return tuple(_shown(lines, width))


def _shown(lines: list[str], width: int) -> list[str]:
    shown = [wrapped for line in lines[:TERMINAL_ROWS] for wrapped in _wrap(line, width, "    ")]
    if len(lines) > TERMINAL_ROWS:
        shown.append(f"… and {len(lines) - TERMINAL_ROWS} more (every call is in --json)")
    return shown


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
