"""Compare two debugger traces and find where the implementations start to disagree.

Module calls are paired by path (relative to the model, after rename rules; call by call for a
module called several times), then the rest are aligned automatically (:mod:`.align`: execution
order, shapes and dtypes, fused/split projections, identity calls dropping out). The *divergence
origin* is the innermost paired call whose inputs agree and whose outputs differ (:mod:`.origin`;
a call with children differs when a call inside it does); the *first input divergence* is the
earliest paired call whose inputs already differ.

With ``use_repr=False`` traces every tensor pair is read from its safetensors files, compared and
dropped before the next one is read, so memory stays near the size of the largest pair. Otherwise
only what the JSON holds is compared: shapes, dtypes and the mean/std/min/max statistics.

Example::

    result = compare_traces("reference_trace/", "port_trace/", rename=["transformer.h.(\\d+)=model.layers.\\1"])
    print(result.divergence_origin)
    result.to_frame()
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from model_debugging.compare.align import align_calls
from model_debugging.compare.boundaries import boundary_origin, boundary_rows
from model_debugging.compare.call_result import ModuleStatus
from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.checks import final_output_note, trace_warnings
from model_debugging.compare.inferred_renames import summarize_alignment
from model_debugging.compare.inputs_without_effect import set_aside_inputs_without_effect
from model_debugging.compare.matching import describe_call
from model_debugging.compare.noise_floor import NoiseFloor
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.origin import find_origin
from model_debugging.compare.padding import padded_tokens
from model_debugging.compare.rank_runs import rank_directories, read_rank_run
from model_debugging.compare.ranks import rank_note
from model_debugging.compare.renames import RenameRule, RenameSpec, coerce_rename_rules
from model_debugging.compare.result import TraceComparison, UnmatchedCall
from model_debugging.compare.rows import compare_pair
from model_debugging.compare.tolerance import DEFAULT_ATOL, DEFAULT_RTOL, choose_tolerance
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import Trace, TraceError

__all__ = ["compare_traces"]


def compare_traces(
    reference: str | os.PathLike,
    candidate: str | os.PathLike,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    rename: RenameSpec = None,
    align: bool = True,
    boundaries: bool = False,
    ignore: Iterable[str | re.Pattern[str]] = (),
    noise_from: str | os.PathLike | None = None,
) -> TraceComparison:
    """Compare the traces ``reference`` and ``candidate`` module call by module call.

    Args:
        reference (`str` or `os.PathLike`): a debugger output directory, or its `_SUMMARY.json` /
            `_FULL_TENSORS.json` file, or a directory of per-rank traces (``ranks="all"``, read as
            one trace of the logical tensors: see `model_debugging.compare.rank_runs`).
        candidate (`str` or `os.PathLike`): the same for the implementation under test.
        atol (`float`, *optional*) and rtol (`float`, *optional*): a value is within tolerance when
            `|candidate - reference| <= atol + rtol * |reference|`. Not given: 1e-5 and 1e-4, or for
            a trace holding float16/bfloat16 tensors or recorded sharded over several ranks a
            tolerance derived from its dtype and reduction length (see
            `model_debugging.compare.tolerance`); the result says which.
        rename (*optional*): rules applied to both sides' module paths before matching: a
            `'REGEX=REPLACEMENT'` string, a `{regex: replacement}` mapping, a rules file (a `str`
            or `os.PathLike` ending in `.yaml`/`.yml`), or an iterable of rules, rule strings and
            files (see `model_debugging.compare.renames`).
        align (`bool`, *optional*, defaults to `True`): align the calls that paths and rename rules
            leave unpaired automatically; False pairs by path only.
        boundaries (`bool`, *optional*, defaults to `False`): compare block boundaries only (numbered
            layers, the calls after them such as the final norm and the LM head), for a port that
            moves logic between modules (see `model_debugging.compare.boundaries`).
        ignore (*optional*): regular expressions; calls on one side only whose path matches one
            (searched, as `re.search` does) are not listed (they are counted in `ignored`).
        noise_from (`str` or `os.PathLike`, *optional*): a float32 trace of the same reference on
            the same inputs, for a float16/bfloat16 ``reference``: each tensor is compared within a
            few times the reference's own rounding at that place, measured against it, instead of
            the tolerance derived from the dtype (see `model_debugging.compare.noise_floor`).
            `debug_port` records it for you.

    Returns:
        `TraceComparison`: the paired rows, the divergence origin (and where inside it to look), the
        first module whose inputs differ, the calls nothing accounts for, and what the alignment did.

    Raises:
        TraceError: a trace or one of its tensor files is missing or unreadable, or ``noise_from``
            shares no half-precision tensor with ``reference``.
        RenameRuleError / ConfigError: a rename rule or rename file is invalid.
    """
    if (atol is not None and atol < 0) or (rtol is not None and rtol < 0):
        raise ValueError(f"tolerances must be >= 0, got atol={atol}, rtol={rtol}")
    rules = coerce_rename_rules(rename)
    with tempfile.TemporaryDirectory(prefix="model_debugging_ranks_") as workdir:
        reference_trace = _read(reference, Path(workdir) / "reference")
        noise = None if noise_from is None else NoiseFloor.measure(reference_trace, read_trace(noise_from))
        return _compare(
            reference_trace,
            _read(candidate, Path(workdir) / "candidate"),
            atol,
            rtol,
            rules,
            align,
            boundaries,
            ignore,
            noise,
        )


def _read(path: str | os.PathLike, workdir: Path) -> Trace:
    """The trace at ``path``; a directory of per-rank traces is joined into one, its files in ``workdir``."""
    directories = rank_directories(path)
    if directories is None:
        return read_trace(path)
    workdir.mkdir()
    return read_rank_run(directories, workdir)


def _compare(
    reference_trace: Trace,
    candidate_trace: Trace,
    atol: float | None,
    rtol: float | None,
    rules: tuple[RenameRule, ...],
    align: bool,
    boundaries: bool,
    ignore: Iterable[str | re.Pattern[str]],
    noise: NoiseFloor | None,
) -> TraceComparison:
    for trace in (reference_trace, candidate_trace):
        if not any(record.is_tensor for node in trace.nodes for record in node.records):
            raise TraceError(trace.path, "the trace records no tensor: there is nothing to compare")
    mode = "tensors" if reference_trace.mode == candidate_trace.mode == "tensors" else "stats"
    if mode != "tensors":  # levels are of tensors; statistics keep the derived tolerance
        noise = None
    tolerance = choose_tolerance(reference_trace, candidate_trace, atol, rtol, noise)
    comparer = PairComparer(
        tolerance.atol,
        tolerance.rtol,
        mode,
        atol_per_rms=tolerance.atol_per_rms,
        padded=padded_tokens(reference_trace) if mode == "tensors" else None,
        noise=noise,
        noise_atol=DEFAULT_ATOL if atol is None else atol,
        noise_rtol=DEFAULT_RTOL if rtol is None else rtol,
    )

    patterns = [re.compile(pattern) for pattern in ignore]
    alignment = align_calls(reference_trace, candidate_trace, rules, comparer, infer=align)
    modules = [compare_pair(index, alignment, pair, comparer) for index, pair in enumerate(alignment.pairs)]
    modules = set_aside_inputs_without_effect(alignment, modules)
    if boundaries:
        modules = boundary_rows(alignment, modules)
        origin, origin_note = boundary_origin(modules)
    else:
        origin, origin_note = find_origin(alignment, modules, comparer)
    if origin is not None:  # a call with children is marked as differing: something inside it does
        modules[origin.index] = origin
    ranks = None if origin is None else rank_note(origin, alignment, comparer)
    raised = any(node.exception for trace in (reference_trace, candidate_trace) for node in trace.nodes)
    described = [
        [(index, describe_call(tree.node(index))) for index in calls]
        for tree, calls in (
            (alignment.reference, alignment.unaligned_reference),
            (alignment.candidate, alignment.unaligned_candidate),
        )
    ]
    shown = [
        [(index, call) for index, call in side if not any(p.search(call) for p in patterns)]
        for side in described
    ]
    return TraceComparison(
        reference=reference_trace.path,
        candidate=candidate_trace.path,
        mode=mode,
        atol=tolerance.atol,
        rtol=tolerance.rtol,
        tolerance_basis=tolerance.basis,
        atol_per_rms=tolerance.atol_per_rms,
        rank_note=ranks,
        noise_from=None if noise is None else noise.source,
        noise_atol=comparer.noise_atol if noise is not None else 0.0,
        noise_rtol=comparer.noise_rtol if noise is not None else 0.0,
        modules=tuple(modules),
        divergence_origin=origin,
        first_input_divergence=next((m for m in modules if not m.inputs_match), None),
        unmatched_reference=tuple(call for _, call in shown[0]),
        unmatched_candidate=tuple(call for _, call in shown[1]),
        unmatched_reference_outermost=_outermost(alignment.reference, [index for index, _ in shown[0]]),
        unmatched_candidate_outermost=_outermost(alignment.candidate, [index for index, _ in shown[1]]),
        rename_rules=tuple(str(rule) for rule in rules),
        bytes_compared=comparer.bytes_compared,
        origin_note=origin_note,
        alignment=summarize_alignment(alignment),
        final_output_note=final_output_note(alignment),
        warnings=trace_warnings(alignment, any(module.status is not ModuleStatus.EQUAL for module in modules))
        + ((tolerance.if_diverged,) if origin is not None and tolerance.if_diverged and not raised else ()),
        ignored=sum(map(len, described)) - sum(map(len, shown)),
        boundaries_only=boundaries,
    )


def _outermost(tree: CallTree, calls: list[int]) -> tuple[UnmatchedCall, ...]:
    """``calls`` (in execution order) that none of the others holds, each with how many it holds."""
    found: list[list[int]] = []  # [call, how many of calls it holds]
    for call in calls:
        if found and tree.contains(found[-1][0], call):
            found[-1][1] += 1
        else:
            found.append([call, 0])
    return tuple(UnmatchedCall(describe_call(tree.node(call)), inside) for call, inside in found)
