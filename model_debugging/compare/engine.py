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

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import torch
from safetensors import SafetensorError, safe_open

from model_debugging.debugger.renames import RenameRule, apply_rename_rules, coerce_rename_rules
from model_debugging.reporting.traces import TensorRecord, Trace, TraceError, TraceNode, read_trace

__all__ = ["ModuleComparison", "TraceComparison", "compare_traces"]

STATS_ONLY_NOTE = (
    "only summary statistics (shape, dtype, mean/std/min/max) were compared: "
    "record both traces with use_repr=False to compare full tensors"
)
# Elements per slice when diffing a tensor pair. The ten or so passes over a slice then run in
# the CPU cache instead of memory (about 3x faster than 1M-element slices), and temporaries stay tiny.
_CHUNK_ELEMENTS = 1 << 15


@dataclass(frozen=True)
class ModuleComparison:
    """One matched module call.

    ``max_abs_diff``, ``max_rel_diff`` and ``mean_abs_diff`` measure the outputs when the debugger
    recorded them (leaves), else the inputs; ``compared`` says which. The relative difference is
    taken over elements whose reference value is nonzero. When only statistics were compared,
    these are differences between the statistics (mean, std, min, max), not between elements. ``details`` lists shape and dtype
    mismatches, tensors recorded on one side only, and exceptions.
    """

    index: int
    module_path: str
    candidate_path: str
    call_index: int
    depth: int
    is_leaf: bool
    inputs_match: bool
    outputs_match: bool | None
    compared: Literal["inputs", "outputs"]
    max_abs_diff: float | None
    max_rel_diff: float | None
    mean_abs_diff: float | None
    details: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        if not self.inputs_match:
            return "inputs differ"
        if self.outputs_match is False:
            return "outputs differ"
        return "equal"

    def to_row(self) -> dict[str, Any]:
        """The fields plus ``status``, ``details`` joined with "; " (a table row)."""
        return {**asdict(self), "details": "; ".join(self.details), "status": self.status}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``details`` as a list, non-finite numbers as "inf", "-inf" or "nan"."""
        row = {**asdict(self), "details": list(self.details), "status": self.status}
        return {key: _json_number(value) for key, value in row.items()}


@dataclass(frozen=True)
class TraceComparison:
    """The result of :func:`compare_traces`."""

    reference: Path
    candidate: Path
    mode: Literal["tensors", "stats"]
    atol: float
    rtol: float
    modules: tuple[ModuleComparison, ...]
    divergence_origin: ModuleComparison | None
    first_input_divergence: ModuleComparison | None
    unmatched_reference: tuple[str, ...]
    unmatched_candidate: tuple[str, ...]
    rename_rules: tuple[str, ...] = ()
    bytes_compared: int = field(default=0, compare=False)

    @property
    def equivalent(self) -> bool:
        """Every matched call is within tolerance and no module is left unmatched."""
        return (
            all(module.status == "equal" for module in self.modules)
            and not self.unmatched_reference
            and not self.unmatched_candidate
        )

    @property
    def note(self) -> str | None:
        return STATS_ONLY_NOTE if self.mode == "stats" else None

    def summary_lines(self) -> list[str]:
        """A few sentences for the top of a report: what was compared and where it diverges."""
        lines = [f"reference: {self.reference}", f"candidate: {self.candidate}"]
        lines.append(
            f"compared {len(self.modules)} matched module calls with atol={self.atol:g}, rtol={self.rtol:g}"
        )
        if self.note:
            lines.append(f"NOTE: {self.note}")
        if self.equivalent:
            lines.append("result: EQUIVALENT within tolerance")
            return lines
        if any(module.status != "equal" for module in self.modules):
            lines.append("result: DIVERGED")
        else:
            lines.append(
                "result: NOT EQUIVALENT: the matched calls agree, but some module calls are in one trace only "
                "(rename rules may align them)"
            )
        origin, first_input = self.divergence_origin, self.first_input_divergence
        if origin is not None:
            lines.append(
                f"divergence origin: {origin.module_path} (max abs diff {_format(origin.max_abs_diff)})"
            )
        if first_input is not None:
            lines.append(f"first module whose inputs differ: {first_input.module_path}")
            if origin is None or origin.index > first_input.index:
                lines.append(
                    "  no recorded module before it diverged: look at the code of its parent module that runs "
                    "before this call, or at the model inputs"
                )
        for side, unmatched in (
            ("reference", self.unmatched_reference),
            ("candidate", self.unmatched_candidate),
        ):
            if unmatched:
                lines.append(f"{len(unmatched)} module calls only in the {side}: {', '.join(unmatched[:5])}")
                if len(unmatched) > 5:
                    lines[-1] += f", ... ({len(unmatched) - 5} more)"
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per matched module call, in the reference's execution order."""
        columns = [*ModuleComparison.__dataclass_fields__, "status"]
        return pd.DataFrame([module.to_row() for module in self.modules], columns=columns)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; non-finite numbers become the strings "inf", "-inf" and "nan"."""
        return {
            "reference": str(self.reference),
            "candidate": str(self.candidate),
            "mode": self.mode,
            "note": self.note,
            "atol": self.atol,
            "rtol": self.rtol,
            "rename_rules": list(self.rename_rules),
            "equivalent": self.equivalent,
            "divergence_origin": None if self.divergence_origin is None else self.divergence_origin.to_dict(),
            "first_input_divergence": (
                None if self.first_input_divergence is None else self.first_input_divergence.to_dict()
            ),
            "unmatched_reference": list(self.unmatched_reference),
            "unmatched_candidate": list(self.unmatched_candidate),
            "modules": [module.to_dict() for module in self.modules],
        }


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
            YAML file given as an `os.PathLike` (see `model_debugging.debugger.renames`).

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
    mode = "tensors" if reference_trace.mode == candidate_trace.mode == "tensors" else "stats"
    comparer = _PairComparer(atol, rtol, mode)

    reference_keys = _match_keys(reference_trace, rules)
    candidate_by_key = dict(zip(_match_keys(candidate_trace, rules), candidate_trace.nodes, strict=True))
    modules: list[ModuleComparison] = []
    unmatched_reference: list[str] = []
    for key, node in zip(reference_keys, reference_trace.nodes, strict=True):
        other = candidate_by_key.pop(key, None)
        if other is None:
            unmatched_reference.append(_describe_call(node))
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
        unmatched_candidate=tuple(_describe_call(node) for node in candidate_by_key.values()),
        rename_rules=tuple(str(rule) for rule in rules),
        bytes_compared=comparer.bytes_compared,
    )


def _match_keys(trace: Trace, rules: Sequence[RenameRule]) -> list[tuple[str, int]]:
    """(renamed path relative to the model, call index among calls with that path) per node."""
    root = trace.root_path
    calls: Counter[str] = Counter()
    keys = []
    for node in trace.nodes:
        path = node.module_path
        relative = "" if path == root else path.removeprefix(root + ".")
        renamed = apply_rename_rules(rules, relative)
        keys.append((renamed, calls[renamed]))
        calls[renamed] += 1
    return keys


def _describe_call(node: TraceNode) -> str:
    return node.module_path if node.call_index == 0 else f"{node.module_path} (call {node.call_index})"


@dataclass
class _GroupDiff:
    """Running totals over the tensors of one node's inputs or outputs."""

    match: bool = True
    max_abs: float | None = None
    max_rel: float | None = None
    abs_sum: float = 0.0
    count: int = 0

    def add(self, within: bool, max_abs: float, max_rel: float, abs_sum: float, count: int) -> None:
        self.match = self.match and within
        self.max_abs = max_abs if self.max_abs is None else max(self.max_abs, max_abs)
        self.max_rel = max_rel if self.max_rel is None else max(self.max_rel, max_rel)
        self.abs_sum += abs_sum
        self.count += count

    @property
    def mean_abs(self) -> float | None:
        return self.abs_sum / self.count if self.count else None


@dataclass
class _PairComparer:
    """Compares tensor pairs, from their safetensors files or their statistics, and counts bytes read."""

    atol: float
    rtol: float
    mode: Literal["tensors", "stats"]
    bytes_compared: int = 0

    def compare(self, reference: TensorRecord, candidate: TensorRecord, diff: _GroupDiff) -> None:
        if self.mode == "tensors":
            diff.add(*self._compare_files(reference.file, candidate.file))
        else:
            self._compare_stats(reference, candidate, diff)

    def _compare_stats(self, reference: TensorRecord, candidate: TensorRecord, diff: _GroupDiff) -> None:
        candidate_stats = dict(candidate.stats)
        for name, expected in reference.stats:
            actual = candidate_stats.get(name)
            if expected is None or actual is None:
                continue
            if (math.isnan(expected) and math.isnan(actual)) or expected == actual:
                error = 0.0
            else:
                error = abs(actual - expected)
                error = math.inf if math.isnan(error) else error
            relative = error / abs(expected) if expected and math.isfinite(expected) else 0.0
            diff.add(error <= self.atol + self.rtol * abs(expected), error, relative, error, 1)

    def _compare_files(self, reference: Path, candidate: Path) -> tuple[bool, float, float, float, int]:
        expected, actual = _load_tensor(reference).reshape(-1), _load_tensor(candidate).reshape(-1)
        self.bytes_compared += _nbytes(expected) + _nbytes(actual)
        same_dtype = expected.dtype == actual.dtype
        work_dtype = torch.float64 if torch.float64 in (expected.dtype, actual.dtype) else torch.float32
        within, max_abs, max_rel, abs_sum = True, 0.0, 0.0, 0.0
        for start in range(0, expected.numel(), _CHUNK_ELEMENTS):
            ref = expected[start : start + _CHUNK_ELEMENTS]
            cand = actual[start : start + _CHUNK_ELEMENTS]
            if same_dtype and torch.equal(ref, cand):
                continue  # bit-identical slice (the common case before a divergence): all differences 0
            chunk = self._compare_chunk(ref.to(work_dtype), cand.to(work_dtype))
            within = within and chunk[0]
            max_abs, max_rel, abs_sum = max(max_abs, chunk[1]), max(max_rel, chunk[2]), abs_sum + chunk[3]
        return within, max_abs, max_rel, abs_sum, expected.numel()

    def _compare_chunk(self, ref: torch.Tensor, cand: torch.Tensor) -> tuple[bool, float, float, float]:
        """(within tolerance, max abs, max rel, sum of abs differences) of one slice."""
        error = torch.sub(cand, ref).abs_()
        max_abs = float(error.max())
        if not math.isfinite(max_abs):
            # like torch.isclose: non-finite values must be equal (NaN pairs count as equal), and
            # they get no magnitude, so an infinite reference cannot excuse an infinite error
            same = (ref == cand) | (ref.isnan() & cand.isnan())
            error = error.nan_to_num_(nan=math.inf).masked_fill_(same, 0.0)
            ref = ref.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
            max_abs = float(error.max())
        magnitude = ref.abs()
        within = (
            max_abs <= self.atol or float(torch.sub(error, magnitude, alpha=self.rtol).max()) <= self.atol
        )
        abs_sum = float(error.sum(dtype=torch.float64))
        if math.isinf(max_abs):
            return within, max_abs, math.inf, abs_sum
        # where the reference is 0, x/0 gives inf and 0/0 NaN: those elements have no relative error
        relative = error.div_(magnitude).nan_to_num_(nan=0.0, posinf=0.0)
        return within, max_abs, float(relative.max()), abs_sum


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _load_tensor(path: Path) -> torch.Tensor:
    if not path.is_file():
        raise TraceError(path, "tensor file named in the trace is missing")
    try:
        with safe_open(path, framework="pt") as handle:
            return handle.get_tensor("data")
    except (SafetensorError, OSError, KeyError) as error:
        raise TraceError(path, f"cannot read tensor 'data': {error}") from None


def _compare_group(
    reference: tuple[TensorRecord, ...],
    candidate: tuple[TensorRecord, ...],
    label: str,
    comparer: _PairComparer,
    details: list[str],
) -> _GroupDiff:
    diff = _GroupDiff()
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
    index: int, reference: TraceNode, candidate: TraceNode, comparer: _PairComparer
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
            outputs = outputs or _GroupDiff()
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


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _format(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"
