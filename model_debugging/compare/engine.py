"""Compare two debugger traces and find where the implementations start to disagree.

Module calls are matched by path (relative to the model, after rename rules) and, for a module
called several times, by call order. Walking the matched calls in the reference's execution order,
the *divergence origin* is the earliest leaf whose outputs exceed the tolerance while its inputs
were within it (or a module that raised on one side only, inputs equal); the *first input
divergence* is the earliest module whose inputs already differ. (The debugger records outputs on
leaves only, so a module with children can differ only in its inputs or by raising.)

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
from collections.abc import Iterable, Mapping

from model_debugging.compare.matching import describe_call, match_keys
from model_debugging.compare.numeric import GroupDiff, PairComparer
from model_debugging.compare.renames import RenameRule, coerce_rename_rules
from model_debugging.compare.result import ModuleComparison, TraceComparison
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import TensorRecord, TraceError, TraceNode

__all__ = ["compare_traces"]


def compare_traces(
    reference: str | os.PathLike,
    candidate: str | os.PathLike,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    rename: None | str | os.PathLike | Mapping[str, str] | Iterable[str | RenameRule] = None,
) -> TraceComparison:
    """Compare the traces ``reference`` and ``candidate`` module call by module call.

    Args:
        reference (`str` or `os.PathLike`): a debugger output directory, or its `_SUMMARY.json` /
            `_FULL_TENSORS.json` file.
        candidate (`str` or `os.PathLike`): the same for the implementation under test.
        atol (`float`, *optional*, defaults to `1e-5`) and rtol (`float`, *optional*, defaults to `1e-4`):
            a value is within tolerance when `|candidate - reference| <= atol + rtol * |reference|`.
        rename (*optional*): rules applied to both sides' module paths before matching: a
            `'REGEX=REPLACEMENT'` string, an iterable of them, a `{regex: replacement}` mapping, or a
            YAML file given as an `os.PathLike` (see `model_debugging.compare.renames`).

    Returns:
        `TraceComparison`: the matched rows, the divergence origin, the first module whose inputs
        differ, and the modules found on one side only.

    Raises:
        TraceError: a trace or one of its tensor files is missing or unreadable.
        RenameRuleError / ConfigError: a rename rule or rename file is invalid.
    """
    if atol < 0 or rtol < 0:
        raise ValueError(f"tolerances must be >= 0, got atol={atol}, rtol={rtol}")
    rules = coerce_rename_rules(rename)
    reference_trace, candidate_trace = read_trace(reference), read_trace(candidate)
    for trace in (reference_trace, candidate_trace):
        if not any(record.is_tensor for node in trace.nodes for record in node.records):
            raise TraceError(trace.path, "the trace records no tensor: there is nothing to compare")
    mode = "tensors" if reference_trace.mode == candidate_trace.mode == "tensors" else "stats"
    comparer = PairComparer(atol, rtol, mode)

    reference_keys = match_keys(reference_trace, rules)
    candidate_by_key = dict(zip(match_keys(candidate_trace, rules), candidate_trace.nodes, strict=True))
    modules: list[ModuleComparison] = []
    unmatched_reference: list[str] = []
    for key, node in zip(reference_keys, reference_trace.nodes, strict=True):
        other = candidate_by_key.pop(key, None)
        if other is None:
            unmatched_reference.append(describe_call(node))
        else:
            modules.append(_compare_nodes(len(modules), node, other, comparer))
    return TraceComparison(
        reference=reference_trace.path,
        candidate=candidate_trace.path,
        mode=mode,
        atol=atol,
        rtol=rtol,
        modules=tuple(modules),
        divergence_origin=next((m for m in modules if m.inputs_match and m.outputs_match is False), None),
        first_input_divergence=next((m for m in modules if not m.inputs_match), None),
        unmatched_reference=tuple(unmatched_reference),
        unmatched_candidate=tuple(describe_call(node) for node in candidate_by_key.values()),
        rename_rules=tuple(str(rule) for rule in rules),
        bytes_compared=comparer.bytes_compared,
    )


def _compare_group(
    reference: tuple[TensorRecord, ...],
    candidate: tuple[TensorRecord, ...],
    label: str,
    comparer: PairComparer,
    details: list[str],
) -> GroupDiff:
    diff = GroupDiff()
    candidate_tensors = {record.sub_path: record for record in candidate if record.is_tensor}
    for expected in reference:
        if not expected.is_tensor:
            continue
        name = f"{label}.{expected.sub_path}" if expected.sub_path else label
        actual = candidate_tensors.pop(expected.sub_path, None)
        if actual is None:
            details.append(f"{name} only in reference")
            continue
        if expected.shape != actual.shape:
            details.append(f"{name} shape {list(expected.shape)} vs {list(actual.shape)}")
            diff.match = False
            continue
        if expected.dtype != actual.dtype:
            details.append(f"{name} dtype {expected.dtype} vs {actual.dtype}")
            diff.match = False
        comparer.compare(expected, actual, diff)
    for sub_path in candidate_tensors:
        details.append(f"{label}.{sub_path} only in candidate" if sub_path else f"{label} only in candidate")
    return diff


def _compare_nodes(
    index: int, reference: TraceNode, candidate: TraceNode, comparer: PairComparer
) -> ModuleComparison:
    details: list[str] = []
    inputs = _compare_group(reference.inputs, candidate.inputs, "inputs", comparer, details)
    outputs = None
    if reference.outputs is not None and candidate.outputs is not None:
        outputs = _compare_group(reference.outputs, candidate.outputs, "outputs", comparer, details)
    elif reference.outputs is not None or candidate.outputs is not None:
        details.append(
            f"outputs recorded only in {'reference' if reference.outputs is not None else 'candidate'}"
        )
    if reference.exception or candidate.exception:
        details.append(
            f"reference raised {reference.exception}" if reference.exception else "reference did not raise"
        )
        details.append(
            f"candidate raised {candidate.exception}" if candidate.exception else "candidate did not raise"
        )
        if reference.exception != candidate.exception:
            outputs = outputs or GroupDiff()
            outputs.match = False
    measured = outputs if outputs is not None and outputs.count else inputs
    return ModuleComparison(
        index=index,
        module_path=reference.module_path,
        candidate_path=candidate.module_path,
        call_index=reference.call_index,
        depth=reference.depth,
        is_leaf=reference.is_leaf and candidate.is_leaf,
        inputs_match=inputs.match,
        outputs_match=None if outputs is None else outputs.match,
        compared="outputs" if measured is outputs else "inputs",
        max_abs_diff=measured.max_abs,
        max_rel_diff=measured.max_rel,
        mean_abs_diff=measured.mean_abs,
        details=tuple(details),
    )
