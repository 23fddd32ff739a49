"""The ``model-debugging replay`` report as terminal text."""

from __future__ import annotations

from model_debugging.compare.result import TraceComparison
from model_debugging.replay.result import ReplayResult, ReplayVerdict
from model_debugging.reporting import Report, Section, render_text

# rows shown per section; the JSON output holds every replayed call
TERMINAL_ROWS = 30


def render_terminal(result: ReplayResult, comparison: TraceComparison | None = None) -> str:
    summary = result.summary_lines()
    if comparison is not None:
        origin = comparison.divergence_origin or comparison.first_input_divergence
        shown = "no divergence" if origin is None else origin.module_path
        summary.insert(1, f"compare alone: first divergence at {shown}")
    frame = result.to_frame()
    sections = [
        Section(
            title=f"calls {verdict.value}",
            rows=frame[frame["verdict"] == verdict.value].drop(columns="verdict"),
            limit=TERMINAL_ROWS,
        )
        for verdict in (ReplayVerdict.WRONG, ReplayVerdict.NOT_REPLAYED, ReplayVerdict.CORRECT)
    ]
    title = "Replay on the reference's recorded inputs"
    return render_text(Report(title=title, summary=summary, sections=sections)).rstrip("\n")
