"""Build the explorer page for a trace, or for a trace compared with a candidate trace."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from model_debugging.compare.engine import compare_traces
from model_debugging.compare.renames import RenameRule
from model_debugging.compare.result import TraceComparison
from model_debugging.explorer.calls import CallView, trace_calls
from model_debugging.explorer.overlay import overlay_comparison
from model_debugging.explorer.page import render_page
from model_debugging.explorer.source import read_view_trace
from model_debugging.explorer.tensor_view import TextTable
from model_debugging.reporting.atomic import atomic_write_text

DEFAULT_PAGE_NAME = "trace.html"


def _add_rows(document: dict, calls: Sequence[CallView]) -> None:
    values, classes = TextTable(), TextTable()
    document["nodes"] = [call.to_json(values, classes) for call in calls]
    document["classes"] = classes.texts()
    document["values"] = values.texts()


def view_document(
    trace_path: str | os.PathLike,
    compare: str | os.PathLike | None = None,
    rename: Sequence[str | RenameRule] = (),
    align: bool = True,
    comparison: TraceComparison | None = None,
) -> dict:
    """The data the page embeds: the trace's calls in pre-order (``nodes``), the distinct module
    classes (``classes``, as ``<Python module>.<qualname>``) and printed values (``values``) they
    refer to by index and, with ``compare``, the comparison (``comparison`` when the caller has
    already compared the two traces, else computed with compare's defaults).

    Raises:
        TraceError: a trace is missing or unreadable.
        RenameRuleError: a rename rule is invalid.
    """
    trace = read_view_trace(trace_path)
    calls = trace_calls(trace)
    document: dict = {
        "title": trace.root_path or trace.path.name,
        "source": str(trace.path),
        "mode": trace.mode,
        "comparison": None,
    }
    if compare is None:
        _add_rows(document, calls)
        return document

    result = comparison or compare_traces(trace.path, compare, rename=list(rename), align=align)
    candidate = read_view_trace(compare)
    tree = overlay_comparison(calls, trace_calls(candidate), result)
    _add_rows(document, tree.calls)
    document["comparison"] = {
        "candidate": str(candidate.path),
        "lines": result.summary_lines(),
        "origin": tree.origin,
        "firstInputDivergence": tree.first_input_divergence,
        # what the automatic alignment inferred, as a renames file the user can edit and pass back
        "inferredRenames": (
            result.alignment.rename_rules_yaml
            if result.alignment is not None and result.alignment.summary_line() is not None
            else None
        ),
    }
    return document


def default_page_path(trace_path: str | os.PathLike) -> Path:
    """``TRACE_DIR/trace.html`` for a directory; ``<trace base>.html`` beside a trace JSON file."""
    path = Path(trace_path)
    if path.is_dir():
        return path / DEFAULT_PAGE_NAME
    stem = path.name.removesuffix(".json").removesuffix("_SUMMARY").removesuffix("_FULL_TENSORS")
    return path.with_name(f"{stem}.html")


def write_view(
    trace_path: str | os.PathLike,
    output: str | os.PathLike | None = None,
    compare: str | os.PathLike | None = None,
    rename: Sequence[str | RenameRule] = (),
    align: bool = True,
    comparison: TraceComparison | None = None,
) -> Path:
    """Write the explorer page for ``trace_path`` (atomically) and return where it went.

    Args:
        trace_path (`str` or `os.PathLike`): a debugger output directory or one of its trace JSON files.
        output (`str` or `os.PathLike`, *optional*): the page to write; defaults to ``trace.html`` in
            the trace directory.
        compare (`str` or `os.PathLike`, *optional*): a candidate trace to compare ``trace_path`` with.
        rename (`Sequence[str | RenameRule]`, *optional*): rules (``REGEX=REPLACEMENT`` strings or
            loaded rules) rewriting module paths before matching.
        align (`bool`, *optional*, defaults to `True`): let compare pair the calls that paths leave
            unmatched (execution order, shapes, fused/split projections, identity calls).
        comparison (`TraceComparison`, *optional*): the result of comparing ``trace_path`` with
            ``compare`` when already computed (it is not computed again).
    """
    page = render_page(view_document(trace_path, compare, rename, align, comparison))
    target = Path(output) if output is not None else default_page_path(trace_path)
    atomic_write_text(target, page)
    return target
