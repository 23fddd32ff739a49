"""``replay_trace``: run the candidate's modules on the reference's recorded inputs.

Example::

    from model_debugging import compare_traces, replay_trace

    result = replay_trace("reference_trace/", port_model, modules=["model.layers.3"])
    print(result.modules[0].verdict)          # ReplayVerdict.WRONG: a real bug in layer 3

    found = replay_trace("reference_trace/", port_model, bisect=True,
                         comparison=compare_traces("reference_trace/", "port_trace/"))
    print(found.smallest_wrong.module_path)   # the smallest module wrong on identical inputs
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import replace

from torch import nn

from model_debugging.compare.align import align_traces
from model_debugging.compare.call_result import ModuleStatus
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.padding import padded_tokens
from model_debugging.compare.renames import RenameSpec, coerce_rename_rules
from model_debugging.compare.result import TraceComparison
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import Trace, TraceError, TraceNode
from model_debugging.replay.adapters import AdapterSpec, ArgumentAdapters
from model_debugging.replay.bisection import bisect_trace, side_effect_blame
from model_debugging.replay.forgotten import ForgottenCalls
from model_debugging.replay.judging import Tolerance
from model_debugging.replay.noise import NoiseLevels
from model_debugging.replay.result import ModuleReplay, ReplayResult, ReplayVerdict
from model_debugging.replay.runner import Replayer
from model_debugging.replay.targets import CandidateIndex

__all__ = ["replay_trace"]


def replay_trace(
    ref_trace: str | os.PathLike,
    model: nn.Module,
    modules: Sequence[str] | None = None,
    *,
    rename: RenameSpec = None,
    atol: float | None = None,
    rtol: float | None = None,
    noise_from: str | os.PathLike | None = None,
    bisect: bool = False,
    comparison: TraceComparison | None = None,
    adapters: AdapterSpec = None,
) -> ReplayResult:
    """Feed recorded calls of ``ref_trace`` to the matching parts of ``model`` and judge each alone.

    Args:
        ref_trace (`str` or `os.PathLike`): a reference trace recorded with ``use_repr=False``
            (a directory or its `_SUMMARY.json` / `_FULL_TENSORS.json` file).
        model (`nn.Module`): the candidate; it is run as it is (call ``model.eval()`` first).
        modules (`Sequence[str]`, *optional*): reference module paths to replay, relative to the model
            (``model.layers.3``) or with its class name; every call of each. All calls when None.
            With ``bisect``, where the search starts (its first wrong call).
        rename (*optional*): compare's rename rules (see `compare_traces`).
        atol (`float`, *optional*) and rtol (`float`, *optional*): fixed tolerances; by default they
            follow the dtypes compared (see `model_debugging.replay.judging`).
        noise_from (`str` or `os.PathLike`, *optional*): a second trace of the reference (run another
            way); differences are then judged against the spread between the two reference runs.
        bisect (`bool`, *optional*, defaults to `False`): search top-down for the smallest module
            that is wrong on identical inputs, instead of replaying every selected call.
        comparison (`TraceComparison`, *optional*): a compare result of the reference and the
            candidate's trace: compare's alignment of the two traces maps reference calls to
            candidate modules, functions and fused projections, and bisection skips calls compare
            found equal.
        adapters (*optional*): argument adapters for candidate modules whose signature differs
            from the reference's, by module class or path pattern, or a function of the model
            returning them (see `model_debugging.replay.adapters`).

    Returns:
        `ReplayResult`: a verdict per replayed call, and the bisection's finding.

    Raises:
        TraceError: the trace is unreadable, or records tensors only as reprs.
        ValueError: a path in ``modules`` names no recorded call, a tolerance is negative, or the
            adapters are not a mapping of module classes or path patterns to functions.
    """
    trace = read_trace(ref_trace)
    if not any(record.file is not None for node in trace.nodes for record in node.records):
        raise TraceError(
            trace.path, "records no tensor files: trace the reference with use_repr=False to replay it"
        )
    rules = coerce_rename_rules(rename)
    adapter_map = ArgumentAdapters(adapters, model)
    noise = NoiseLevels.measure(ref_trace, noise_from) if noise_from is not None else None
    alignment = comparer = None
    if comparison is not None:
        alignment = align_traces(
            trace, comparison.candidate, rename=rules, atol=comparison.atol, rtol=comparison.rtol
        )
        # the values of two recorded calls are told apart as compare told them
        comparer = PairComparer(
            comparison.atol, comparison.rtol, comparison.mode, atol_per_rms=comparison.atol_per_rms
        )
    index = CandidateIndex(trace, model, rules, alignment, comparer)
    replayer = Replayer(trace, index, Tolerance(atol, rtol, padded=padded_tokens(trace)), noise, adapter_map)
    common = {
        "reference": trace.path,
        "rename_rules": tuple(str(rule) for rule in rules),
        "noise_reference": None if noise is None else noise.source,
    }
    selected = _selected_nodes(trace, modules)
    if bisect:
        diverged = _diverged_paths(comparison) if comparison is not None else None
        starts = selected if modules is not None else selected[:1]
        forgotten = ForgottenCalls(alignment, comparison, comparer) if alignment is not None else None
        found = bisect_trace(replayer, starts, diverged, forgotten)
        return ReplayResult(
            modules=found.replays,
            smallest_wrong=found.smallest_wrong,
            bug_in=found.bug_in,
            bisected=True,
            **common,
        )
    # innermost calls first: a module with submodules then runs only what its correct leaves do not cover
    replays = {node.order: replayer.replay(node) for node in reversed(selected)}
    _blame_side_effects(replayer, replays)
    for order in replayer.unconfirmed_ends:  # judged once their parent is replayed
        reason = replayer.end_blame(replayer.trace.nodes[order]) if order in replays else None
        if reason is not None and replays[order].verdict is ReplayVerdict.CORRECT:
            replays[order] = replace(replays[order], verdict=ReplayVerdict.WRONG, reason=reason)
    _skipped_calls_said_once(replayer, replays)
    return ReplayResult(modules=tuple(replays[order] for order in sorted(replays)), **common)


def _blame_side_effects(replayer: Replayer, replays: dict[int, ModuleReplay]) -> None:
    """A call that modified its inputs in place, before the first difference of a wrong call it runs in, is wrong."""
    for order in sorted(replays, reverse=True):  # the innermost wrong call names it first
        parent, first = replays[order], replayer.first_differences.get(order)
        if parent.verdict is not ReplayVerdict.WRONG or first is None:
            continue
        node = replayer.trace.nodes[order]
        modifiers = [
            other
            for other in replayer.modified_inputs
            if replayer.contains(node, other) and other < first.order
        ]
        last = max(modifiers, default=None)
        if last in replays and replays[last].verdict is ReplayVerdict.CORRECT:
            replays[last] = side_effect_blame(replays[last], replayer.modified_inputs[last], parent)


def _skipped_calls_said_once(replayer: Replayer, replays: dict[int, ModuleReplay]) -> None:
    """A call the port may skip (or the advice to align the calls) is said by the outermost wrong call
    that says one, not again by every call inside it (replayed before it)."""
    for order in replays:
        if order in replayer.skipped_calls and replayer.skipped_said_above(replayer.trace.nodes[order]):
            replays[order] = replace(replays[order], reason=None)


def _selected_nodes(trace: Trace, modules: Sequence[str] | None) -> list[TraceNode]:
    if modules is None:
        return list(trace.nodes)
    root = trace.root_path.partition(".")[0]
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
