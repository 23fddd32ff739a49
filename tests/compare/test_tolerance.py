"""Which tolerance compare uses: its defaults for one device, one derived from the dtype and the
reduction length for a trace recorded sharded, what the user gives as given."""

from pathlib import Path

import pytest
import torch

from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.tolerance import choose_tolerance
from model_debugging.debugger.trace_format.records import DistributedRun, TensorRecord, Trace, TraceNode


def _trace(dtype: str, reduction: int, world_size: int | None = None) -> Trace:
    leaf = TraceNode(
        order=1,
        module_path="M.proj",
        depth=1,
        call_index=0,
        is_leaf=True,
        inputs=(TensorRecord("args.0", shape=(1, 8, reduction), dtype=dtype),),
        outputs=(TensorRecord("", shape=(1, 8, 16), dtype=dtype),),
    )
    root = TraceNode(order=0, module_path="M", depth=0, call_index=0, is_leaf=False, inputs=(), outputs=None)
    run = None if world_size is None else DistributedRun("gathered", 0, world_size)
    return Trace(path=Path("t"), mode="tensors", nodes=(root, leaf), distributed=run)


def test_one_device_float32_traces_keep_compares_defaults():
    tolerance = choose_tolerance(_trace("torch.float32", 4096), _trace("torch.float32", 4096))
    assert (tolerance.atol, tolerance.rtol, tolerance.basis) == (1e-5, 1e-4, "compare's defaults")
    assert tolerance.if_diverged is None


@pytest.mark.parametrize("side", ["reference", "candidate"])
def test_a_bfloat16_trace_on_one_device_gets_a_tolerance_for_its_rounding(side):
    traces = {"reference": _trace("torch.float32", 4096), "candidate": _trace("torch.float32", 4096)}
    traces[side] = _trace("torch.bfloat16", 4096)
    tolerance = choose_tolerance(traces["reference"], traces["candidate"])
    derived = pytest.approx(8 * (64 * 2**-24 + 2 * 2**-8))
    assert (tolerance.atol, tolerance.rtol, tolerance.atol_per_rms) == (1e-5, derived, derived)
    assert tolerance.basis.startswith(
        f"the {side} was recorded in bfloat16: two implementations round differently"
    )
    assert tolerance.if_diverged.startswith("bfloat16 rounding grows with depth")
    assert choose_tolerance(traces["reference"], traces["candidate"], atol=0.0, rtol=0.0).basis == "as given"


def test_a_sharded_bfloat16_trace_gets_a_tolerance_for_its_rounding():
    tolerance = choose_tolerance(_trace("torch.bfloat16", 4096), _trace("torch.bfloat16", 4096, world_size=8))
    # 8 * (sqrt(4096) * 2**-24 + 2 * 2**-8): the float32 accumulation, then bfloat16's rounding,
    # relative to the size of the terms: as rtol, and per unit of the reference tensor's rms
    derived = pytest.approx(8 * (64 * 2**-24 + 2 * 2**-8))
    assert (tolerance.atol, tolerance.rtol, tolerance.atol_per_rms) == (1e-5, derived, derived)
    assert tolerance.basis.startswith("the candidate was recorded over 8 ranks (ranks='gathered')")
    assert "(bfloat16, reductions of up to 4096 terms)" in tolerance.basis


def test_a_sharded_float32_trace_of_short_reductions_keeps_the_larger_defaults():
    tolerance = choose_tolerance(_trace("torch.float32", 128), _trace("torch.float32", 128, world_size=2))
    assert (tolerance.atol, tolerance.rtol) == (1e-5, 1e-4)
    assert tolerance.basis.endswith("compare's defaults are larger and are used")


def test_given_tolerances_are_used_as_given():
    tolerance = choose_tolerance(
        _trace("torch.float32", 128), _trace("torch.float32", 128, 2), atol=0.0, rtol=0.0
    )
    assert (tolerance.atol, tolerance.rtol, tolerance.basis) == (0.0, 0.0, "as given")


def test_the_scaled_absolute_tolerance_follows_the_size_of_the_tensor():
    """Rounding of a sum is relative to its terms: an element near zero of a tensor of rms 1 may move
    by a few ulps of 1."""
    reference = torch.tensor([1.0, -1.0, 1.0, 0.001])
    rounded = reference + torch.tensor([0.0, 0.0, 0.0, 0.03])
    scaled = PairComparer(1e-5, 0.0625, "tensors", atol_per_rms=0.0625)
    assert scaled.compare_tensors(reference, rounded)[0]
    assert not scaled.compare_tensors(reference, reference + torch.tensor([0.0, 0.0, 0.0, 0.1]))[0]
    assert not PairComparer(1e-5, 0.0625, "tensors").compare_tensors(reference, rounded)[0]
