"""Numeric differences between two recorded tensors, from their files or from their statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from model_debugging.compare.forms import Form, comparable_in_statistics, converted
from model_debugging.compare.noise_floor import NoiseFloor, allowance
from model_debugging.compare.padding import differs_only_at_padded_tokens
from model_debugging.debugger.trace_format.names import EXACT_STATISTICS, is_exact_dtype
from model_debugging.debugger.trace_format.records import TensorRecord, TraceMode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

# Elements per slice when diffing a tensor pair. The ten or so passes over a slice then run in
# the CPU cache instead of memory (about 3x faster than 1M-element slices), and temporaries stay tiny.
_CHUNK_ELEMENTS = 1 << 15


@dataclass
class GroupDiff:
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

    def merge(self, other: GroupDiff) -> None:
        if other.count or other.max_abs is not None:
            self.add(other.match, other.max_abs or 0.0, other.max_rel or 0.0, other.abs_sum, other.count)
        else:
            self.match = self.match and other.match

    @property
    def mean_abs(self) -> float | None:
        return self.abs_sum / self.count if self.count else None


@dataclass
class PairComparer:
    """Compares tensor pairs, from their safetensors files or their statistics, and counts bytes read."""

    atol: float
    rtol: float
    mode: TraceMode
    bytes_compared: int = 0
    # for sharded traces: the absolute tolerance grows by this much per unit of the reference
    # tensor's root mean square (rounding scales with the size of the terms; see tolerance.py)
    atol_per_rms: float = 0.0
    # [batch, tokens], True at the tokens the model's attention_mask pads (see padding.py)
    padded: torch.Tensor | None = None
    # a half-precision reference's own rounding per tensor: such a tensor is compared within
    # noise_floor.allowance(its level, noise_atol, noise_rtol) instead
    noise: NoiseFloor | None = None
    noise_atol: float = 0.0
    noise_rtol: float = 0.0

    def compare(self, reference: TensorRecord, candidate: TensorRecord, diff: GroupDiff) -> None:
        if self.mode == "tensors":
            diff.add(*self._compare_files(reference, candidate))
        else:
            self._compare_stats(reference, candidate, diff)

    def compare_values(
        self, reference: TensorRecord, candidate: TensorRecord, form: Form
    ) -> GroupDiff | None:
        """The differences of two values compared in ``form`` (see :mod:`.forms`); None when this mode
        cannot compare them (a form whose statistics are not those of the same values)."""
        diff = GroupDiff()
        if self.mode == "tensors":
            if form is Form.SAME:
                diff.add(*self._compare_files(reference, candidate))
            else:
                expected, actual = converted(
                    form, read_recorded_tensor(reference), read_recorded_tensor(candidate)
                )
                diff.add(*self.compare_tensors(expected, actual, self.noise_tolerance(reference)))
        elif comparable_in_statistics(form):
            self._compare_stats(reference, candidate, diff)
        else:
            return None
        return diff

    def agreeing_slice(self, reference: TensorRecord, candidate: TensorRecord) -> str | None:
        """For two values of the BROADCAST form that differ: when the one of size 1 along a
        dimension equals one position of the other there (a port that keeps only the last token's
        hidden states), that position, as ``"the candidate holds only the reference's [:, 7:8], ..."``."""
        if self.mode != "tensors" or reference.shape is None or candidate.shape is None:
            return None
        if len(reference.shape) != len(candidate.shape):
            return None
        sizes = list(zip(reference.shape, candidate.shape, strict=True))
        narrowed = [dim for dim, (one, other) in enumerate(sizes) if one != other]
        if len(narrowed) != 1:
            return None
        (dim,) = narrowed
        small_is_candidate = candidate.shape[dim] == 1
        whole, part = read_recorded_tensor(reference), read_recorded_tensor(candidate)
        if not small_is_candidate:
            whole, part = part, whole
        for position in range(whole.shape[dim]):
            expected, actual = whole.narrow(dim, position, 1), part
            if not small_is_candidate:
                expected, actual = actual, expected
            if self.compare_tensors(expected, actual)[0]:
                where = ", ".join([":"] * dim + [f"{position}:{position + 1}"])
                small, large = (
                    ("candidate", "reference") if small_is_candidate else ("reference", "candidate")
                )
                return f"the {small} holds only the {large}'s [{where}], equal there"
        return None

    def differs_only_at_padded_tokens(
        self, reference: TensorRecord, candidate: TensorRecord, form: Form
    ) -> bool:
        """For two values that differ: whether every element out of tolerance lies at a padded token."""
        if (
            self.padded is None
            or self.mode != "tensors"
            or form not in (Form.SAME, Form.SQUEEZED, Form.FLATTENED)
        ):
            return False
        expected, actual = converted(form, read_recorded_tensor(reference), read_recorded_tensor(candidate))
        return self.tensors_differ_only_at_padded_tokens(expected, actual, self.noise_tolerance(reference))

    def tensors_differ_only_at_padded_tokens(
        self, expected: torch.Tensor, actual: torch.Tensor, tolerance: tuple[float, float] | None = None
    ) -> bool:
        """For two same-shaped tensors that differ: whether every element out of tolerance (``tolerance``,
        (atol, rtol), or the comparer's own) lies at a token the model's attention_mask pads."""
        if self.padded is None:
            return False
        atol, rtol = tolerance or (self._atol_for(expected), self.rtol)
        return differs_only_at_padded_tokens(expected, actual, atol, rtol, self.padded)

    def agree(self, reference: TensorRecord, candidate: TensorRecord, form: Form) -> bool:
        """Whether two values compared in ``form`` are within tolerance (False when they cannot be compared)."""
        diff = self.compare_values(reference, candidate, form)
        return diff is not None and diff.match

    def _compare_stats(self, reference: TensorRecord, candidate: TensorRecord, diff: GroupDiff) -> None:
        """Compare the statistics both sides recorded: the float64/exact ones when both have them."""
        use_exact = bool(reference.statistics and candidate.statistics)
        expected_stats = reference.statistics if use_exact else reference.stats
        candidate_stats = dict(candidate.statistics if use_exact else candidate.stats)
        exact_dtype = is_exact_dtype(reference.dtype) and is_exact_dtype(candidate.dtype)
        atol = self._atol_from_statistics(dict(expected_stats))
        for name, expected in expected_stats:
            actual = candidate_stats.get(name)
            if expected is None or actual is None:
                if expected is not actual:  # one side has a value (e.g. a std), the other none
                    diff.add(False, math.inf, math.inf, 0.0, 1)
                continue
            same = expected == actual or (math.isnan(expected) and math.isnan(actual))
            error = 0.0 if same else abs(actual - expected)
            error = math.inf if math.isnan(error) else float(error)
            magnitude = abs(expected) if math.isfinite(expected) else 0.0
            relative = error / magnitude if magnitude else 0.0
            if exact_dtype or name in EXACT_STATISTICS:
                within = same
            else:
                within = error <= atol + self.rtol * magnitude
            diff.add(within, error, relative, error, 1)

    def _atol_from_statistics(self, statistics: dict) -> float:
        if not self.atol_per_rms:
            return self.atol
        mean, std = statistics.get("mean"), statistics.get("std")
        if mean is None or std is None or not math.isfinite(mean) or not math.isfinite(std):
            return self.atol
        return self.atol + self.atol_per_rms * math.hypot(mean, std)

    def _atol_for(self, expected: torch.Tensor) -> float:
        return scaled_atol(expected, self.atol, self.atol_per_rms)

    def noise_tolerance(self, *references: TensorRecord) -> tuple[float, float] | None:
        """(atol, rtol) for a tensor of the reference whose own rounding the noise floor measured, or
        for the concatenation of several (the parts of a fused projection): within the largest of
        their levels, when it measured every one."""
        levels = [None if self.noise is None else self.noise.level(reference) for reference in references]
        if not levels or None in levels:
            return None
        return allowance(max(levels), self.noise_atol, self.noise_rtol)

    def _compare_files(
        self, reference: TensorRecord, candidate: TensorRecord
    ) -> tuple[bool, float, float, float, int]:
        return self.compare_tensors(
            read_recorded_tensor(reference), read_recorded_tensor(candidate), self.noise_tolerance(reference)
        )

    def compare_tensors(
        self, expected: torch.Tensor, actual: torch.Tensor, tolerance: tuple[float, float] | None = None
    ) -> tuple[bool, float, float, float, int]:
        """(within tolerance, max abs, max rel, sum of abs differences, elements) of two same-shaped
        tensors; ``tolerance`` (atol, rtol) replaces the comparer's own."""
        self.bytes_compared += _nbytes(expected) + _nbytes(actual)
        same_dtype = expected.dtype == actual.dtype
        expected, actual = _as_real_elements(expected), _as_real_elements(actual)
        if expected.numel() != actual.numel():  # complex against real: the dtype mismatch is reported
            return False, math.inf, math.inf, 0.0, 0
        exact = not (expected.dtype.is_floating_point or actual.dtype.is_floating_point)
        wide = exact or torch.float64 in (expected.dtype, actual.dtype)
        work_dtype = torch.float64 if wide else torch.float32
        atol, rtol = tolerance or (self._atol_for(expected), self.rtol)
        within, max_abs, max_rel, abs_sum = True, 0.0, 0.0, 0.0
        for start in range(0, expected.numel(), _CHUNK_ELEMENTS):
            ref = expected[start : start + _CHUNK_ELEMENTS]
            cand = actual[start : start + _CHUNK_ELEMENTS]
            if same_dtype and torch.equal(ref, cand):
                continue  # bit-identical slice (the common case before a divergence): all differences 0
            chunk = _compare_chunk(ref.to(work_dtype), cand.to(work_dtype), atol, rtol)
            # integers and bools (this slice is not bit-identical) differ: no tolerance, and no
            # float rounding of a large int64 can hide the difference
            within = within and not exact and chunk[0]
            max_abs, max_rel, abs_sum = max(max_abs, chunk[1]), max(max_rel, chunk[2]), abs_sum + chunk[3]
        return within, max_abs, max_rel, abs_sum, expected.numel()


def _compare_chunk(
    ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float
) -> tuple[bool, float, float, float]:
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
    within = max_abs <= atol or float(torch.sub(error, magnitude, alpha=rtol).max()) <= atol
    abs_sum = float(error.sum(dtype=torch.float64))
    if math.isinf(max_abs):
        return within, max_abs, math.inf, abs_sum
    # where the reference is 0, x/0 gives inf and 0/0 NaN: those elements have no relative error
    relative = error.div_(magnitude).nan_to_num_(nan=0.0, posinf=0.0)
    return within, max_abs, float(relative.max()), abs_sum


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _as_real_elements(tensor: torch.Tensor) -> torch.Tensor:
    """A flat view whose elements are compared: a complex tensor's real and imaginary parts side by side."""
    if tensor.is_complex():
        return torch.view_as_real(tensor.resolve_conj()).reshape(-1)
    return tensor.reshape(-1)


def scaled_atol(expected: torch.Tensor, atol: float, atol_per_rms: float) -> float:
    """``atol`` plus ``atol_per_rms`` per unit of ``expected``'s root mean square (see tolerance.py)."""
    if not atol_per_rms or not expected.dtype.is_floating_point or not expected.numel():
        return atol
    rms = float(expected.double().square().mean().sqrt())
    return atol + atol_per_rms * rms if math.isfinite(rms) else atol
