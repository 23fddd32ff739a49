"""Which tolerance a comparison uses, and why.

Two float32 traces on one device are compared with ``atol=1e-5, rtol=1e-4`` unless the user gives
others. Two cases differ by rounding alone, even when nothing is wrong, and get a tolerance derived
from the dtype and the reduction length:

- a trace recorded sharded over several ranks (its extra file says so) computed its sums in
  another order: a row-parallel layer adds the ranks' partial sums, each of a slice of the
  reduction;
- a trace holding float16 or bfloat16 tensors: two implementations of a model round differently
  (a port's RMSNorm in bfloat16 where transformers' computes in float32, rotary tables computed in
  another order), and one rounding step of bfloat16 (``2**-8`` relative) is 40 times compare's
  float32 ``rtol``.

The difference is derived so:

- a sum of ``K`` products accumulated in float32 (as CPU and GPU matrix products do for float32,
  float16 and bfloat16 inputs) and added in another order differs by about ``sqrt(K) * 2**-24``
  relative to the size of its terms (rounding errors add up like a random walk);
- a result stored in float16 or bfloat16 is then rounded to its dtype, and two orders may round
  to neighbouring values: ``2 * u`` with ``u`` the dtype's unit roundoff (2**-11, 2**-8);
- the layers after it carry the difference on: a margin of ``_MARGIN`` times covers that.

``K`` is the longest last dimension of a floating input of a leaf call (the longest reduction a
linear layer makes) in the unsharded trace, and the dtype the least precise floating dtype
recorded. Rounding scales with the size of the terms, not of the result (an element near zero
may be a sum of large terms), so the result ``T`` is used as ``rtol`` and, per tensor, as
``atol = 1e-5 + T * rms(reference tensor)``. When ``T`` is below compare's default ``rtol``,
the defaults are used. Tolerances the user gives are used as given.

On the tiny Llama of the tests, sharded over 2 gloo processes in bfloat16, the largest
difference of a correct run was 4.8 units of ``2**-8 * (|reference| + rms)``. A 10% error in one
rank's shard of ``k_proj`` was 20 units. The derived tolerance allows 16. A Llama port written by
hand in plain PyTorch, in bfloat16 on one device, is equivalent with margins of 4 and 8, not 2;
with 8 its ``o_proj`` scaled by 0.97 is still not equivalent, and by 0.9 named at ``self_attn``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from model_debugging.compare.noise_floor import HALF_PRECISION, MULTIPLE, NoiseFloor
from model_debugging.debugger.trace_format.records import Trace

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-4
_MARGIN = 8
# unit roundoff of each floating dtype, and of the float32 accumulation of a matrix product
_UNIT_ROUNDOFF = {
    "torch.float64": 2.0**-53,
    "torch.float32": 2.0**-24,
    "torch.float16": 2.0**-11,
    "torch.bfloat16": 2.0**-8,
}
_FLOAT32 = 2.0**-24
# in the warning of a half-precision comparison that diverges (Tolerance.if_diverged)
ROUNDING_GROWS = "rounding grows with depth"


@dataclass(frozen=True)
class Tolerance:
    """``atol`` and ``rtol`` of a comparison, and one sentence saying why these."""

    atol: float
    rtol: float
    basis: str
    atol_per_rms: float = 0.0  # added to atol per unit of the reference tensor's root mean square
    if_diverged: str | None = None  # a warning for a comparison that finds a divergence


def _sharded(trace: Trace) -> str | None:
    run = trace.distributed
    if run is None or run.world_size < 2:
        return None
    return f"recorded over {run.world_size} ranks (ranks={run.ranks!r})"


def _least_precise_dtype(trace: Trace) -> str | None:
    dtypes = {
        record.dtype for node in trace.nodes for record in node.records if record.dtype in _UNIT_ROUNDOFF
    }
    return max(dtypes, key=_UNIT_ROUNDOFF.__getitem__, default=None)


def _longest_reduction(trace: Trace) -> int:
    return max(
        (
            record.shape[-1]
            for node in trace.nodes
            if node.is_leaf
            for record in node.inputs
            if record.dtype in _UNIT_ROUNDOFF and record.shape
        ),
        default=1,
    )


def _half_precision(trace: Trace) -> str | None:
    dtype = _least_precise_dtype(trace)
    return f"recorded in {dtype.removeprefix('torch.')}" if dtype in HALF_PRECISION else None


def choose_tolerance(
    reference: Trace,
    candidate: Trace,
    atol: float | None = None,
    rtol: float | None = None,
    noise: NoiseFloor | None = None,
) -> Tolerance:
    """The tolerance to compare ``candidate`` with ``reference`` (see the module docstring). With
    ``noise``, that tolerance is for the tensors it did not measure; the others are compared within
    ``atol + MULTIPLE * level`` and ``rtol`` (compare's defaults unless given), which grow with the
    rounding of each depth: no warning that rounding grows."""
    tolerance = _chosen(reference, candidate, atol, rtol)
    if noise is None:
        return tolerance
    basis = (
        f"per tensor within {DEFAULT_ATOL if atol is None else atol:g} + {MULTIPLE:g} * the reference's own "
        f"rounding there (its largest difference from its float32 run {noise.source}), "
        f"rtol={DEFAULT_RTOL if rtol is None else rtol:g}; for tensors that run did not record: {tolerance.basis}"
    )
    return replace(tolerance, basis=basis, if_diverged=None)


def _chosen(reference: Trace, candidate: Trace, atol: float | None, rtol: float | None) -> Tolerance:
    if atol is not None and rtol is not None:
        return Tolerance(atol, rtol, "as given")
    reasons = [
        (side, why, consequence)
        for reason, consequence in (
            (_sharded, "its sums add in another order"),
            (_half_precision, "two implementations round differently"),
        )
        for side, trace in (("reference", reference), ("candidate", candidate))
        if (why := reason(trace))
    ]
    if not reasons:
        return Tolerance(
            DEFAULT_ATOL if atol is None else atol,
            DEFAULT_RTOL if rtol is None else rtol,
            "compare's defaults",
        )
    dtypes = [dtype for trace in (candidate, reference) if (dtype := _least_precise_dtype(trace))]
    dtype = max(dtypes, key=_UNIT_ROUNDOFF.__getitem__, default="torch.float32")
    # the unsharded side's shapes are the logical ones (a per-rank run may join replicas by mistake)
    unsharded = [trace for trace in (reference, candidate) if not _sharded(trace)] or [reference, candidate]
    length = max(_longest_reduction(trace) for trace in unsharded)
    accumulation = _FLOAT32 if _UNIT_ROUNDOFF[dtype] >= _FLOAT32 else _UNIT_ROUNDOFF[dtype]
    rounding = 2 * _UNIT_ROUNDOFF[dtype] if _UNIT_ROUNDOFF[dtype] > _FLOAT32 else 0.0
    derived = _MARGIN * (math.sqrt(length) * accumulation + rounding)
    side, why, consequence = reasons[0]
    parts = f"sqrt({length}) * {accumulation:.3g}" + (
        f" + 2 * {_UNIT_ROUNDOFF[dtype]:.3g}" if rounding else ""
    )
    basis = (
        f"the {side} was {why}: {consequence}, so differences of about {_MARGIN} * ({parts}) = "
        f"{derived:.2g} times the size of the terms are rounding ({dtype.removeprefix('torch.')}, reductions "
        f"of up to {length} terms)"
    )
    if derived <= DEFAULT_RTOL:
        basis += "; compare's defaults are larger and are used"
        return Tolerance(
            DEFAULT_ATOL if atol is None else atol, DEFAULT_RTOL if rtol is None else rtol, basis
        )
    rounding_grows = (
        f"{dtype.removeprefix('torch.')} {ROUNDING_GROWS}, so a difference made earlier may cross the "
        "tolerance first at the origin; `model-debugging replay REF_TRACE --model PORT --bisect` runs each "
        "module on the reference's own inputs"
        if _half_precision(reference) or _half_precision(candidate)
        else None
    )
    if atol is not None:
        return Tolerance(atol, derived if rtol is None else rtol, basis, if_diverged=rounding_grows)
    return Tolerance(
        DEFAULT_ATOL,
        derived if rtol is None else rtol,
        basis,
        atol_per_rms=derived,
        if_diverged=rounding_grows,
    )
