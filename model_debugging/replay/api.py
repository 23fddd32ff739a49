"""``model_debugging.replay``: run the candidate's modules on the reference's recorded inputs.

Example::

    from model_debugging import compare_traces, replay

    result = replay("reference_trace/", port_model, modules=["model.layers.3"])
    print(result.modules[0].verdict)          # ReplayVerdict.WRONG: a real bug in layer 3

    found = replay("reference_trace/", port_model, bisect=True,
                   comparison=compare_traces("reference_trace/", "port_trace/"))
    print(found.smallest_wrong.module_path)   # the smallest module wrong on identical inputs
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence

from torch import nn

from model_debugging.compare.renames import RenameRule, coerce_rename_rules
from model_debugging.compare.result import ModuleStatus, TraceComparison
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import Trace, TraceError, TraceNode
from model_debugging.replay.bisection import bisect_trace
from model_debugging.replay.judging import Tolerance
from model_debugging.replay.noise import NoiseLevels
from model_debugging.replay.result import ReplayResult
from model_debugging.replay.runner import Replayer

__all__ = ["replay"]


def replay(
    ref_trace: str | os.PathLike,
    model: nn.Module,
    modules: Sequence[str] | None = None,
    *,
    rename: None | str | os.PathLike | Mapping[str, str] | Iterable[str | RenameRule] = None,
    atol: float | None = None,
    rtol: float | None = None,
    noise_from: str | os.PathLike | None = None,
    bisect: bool = False,
    comparison: TraceComparison | None = None,
) -> ReplayResult:
    """Feed recorded calls of ``ref_trace`` to the matching parts of ``model`` and judge each alone.

    Args:
        ref_trace (`str` or `os.PathLike`): a reference trace recorded with ``use_repr=False``
            (a directory or its `_SUMMARY.json` / `_FULL_TENSORS.json` file).
        model (`nn.Module`): the candidate; it is run as it is (call ``model.eval()`` first).
        modules (`Sequence[str]`, *optional*): reference module paths to replay, relative to the
            model (``model.layers.3``) or with its class name; every call of each. All calls when None.
        rename (*optional*): compare's rename rules (see `compare_traces`).
        atol (`float`, *optional*) and rtol (`float`, *optional*): fixed tolerances; by default they
            follow each reference tensor's dtype (see `model_debugging.replay.judging`).
        noise_from (`str` or `os.PathLike`, *optional*): a second trace of the reference (run another
            way); differences are then judged against the spread between the two reference runs.
        bisect (`bool`, *optional*, defaults to `False`): search top-down for the smallest module
            that is wrong on identical inputs, instead of replaying ``modules``.
        comparison (`TraceComparison`, *optional*): a compare result of the reference and the
            candidate's trace: its alignment maps reference calls to candidate modules (before the
            rename rules), and bisection skips calls compare found equal.

    Returns:
        `ReplayResult`: a verdict per replayed call, and the bisection's finding.

    Raises:
        TraceError: the trace is unreadable, or records tensors only as reprs.
        ValueError: a path in ``modules`` names no recorded call, or a tolerance is negative.
    """
    trace = read_trace(ref_trace)
    if not any(record.file is not None for node in trace.nodes for record in node.records):
        raise TraceError(
            trace.path, "records no tensor files: trace the reference with use_repr=False to replay it"
        )
    rules = coerce_rename_rules(rename)
    noise = NoiseLevels.measure(ref_trace, noise_from) if noise_from is not None else None
    aligned = {row.module_path: row for row in comparison.modules} if comparison is not None else None
    replayer = Replayer(trace, model, rules, Tolerance(atol, rtol), noise, aligned)
    common = {
        "reference": trace.path,
        "rename_rules": tuple(str(rule) for rule in rules),
        "noise_reference": None if noise is None else noise.source,
    }
    if bisect:
        diverged = _diverged_paths(comparison) if comparison is not None else None
        replays, smallest = bisect_trace(replayer, diverged)
        return ReplayResult(modules=replays, smallest_wrong=smallest, bisected=True, **common)
    # innermost calls first: a module with submodules then runs only what its correct leaves do not cover
    replays = {node.order: replayer.replay(node) for node in reversed(_selected_nodes(trace, modules))}
    return ReplayResult(modules=tuple(replays[order] for order in sorted(replays)), **common)


def _selected_nodes(trace: Trace, modules: Sequence[str] | None) -> list[TraceNode]:
    if modules is None:
        return list(trace.nodes)
    root = trace.root_path
    by_path: dict[str, list[TraceNode]] = {}
    for node in trace.nodes:
        by_path.setdefault(node.module_path, []).append(node)
    selected: list[TraceNode] = []
    for path in modules:
        full = path if path == root or path.startswith(root + ".") else f"{root}.{path}" if path else root
        if full not in by_path:
            relative = [name.removeprefix(root + ".") for name in by_path]
            close = difflib.get_close_matches(path, relative, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"module {path!r} has no recorded call in {trace.path}{hint}")
        selected += by_path[full]
    return sorted(selected, key=lambda node: node.order)


def _diverged_paths(comparison: TraceComparison) -> frozenset[str]:
    """Reference paths of compare rows that are not equal, with all their ancestors."""
    paths: set[str] = set()
    for row in comparison.modules:
        if row.status is not ModuleStatus.EQUAL:
            parts = row.module_path.split(".")
            paths.update(".".join(parts[:length]) for length in range(1, len(parts) + 1))
    return frozenset(paths)
