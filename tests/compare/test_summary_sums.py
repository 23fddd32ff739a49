"""Whether one tensor of a summary trace is another, or that plus a third: from printed values and
statistics, with the printing's rounding allowed, and "unknown" where they cannot tell."""

import pytest
import torch

from model_debugging.compare.summary_sums import Relation, summed_relation
from model_debugging.debugger.trace_format.entries import parse_stat
from model_debugging.debugger.trace_format.records import TensorRecord

ATOL, RTOL = 1e-5, 1e-4


def record(tensor: torch.Tensor, printed: bool = True, exact: bool = True) -> TensorRecord:
    """``tensor`` as a summary trace records it: its repr lines (``printed``), upstream's printed
    statistics, and this project's float64 ones (``exact``)."""
    with torch._tensor_str.printoptions(sci_mode=True, linewidth=120):
        lines = tuple(repr(tensor).splitlines()) if printed else ()
        stats = tuple(
            (name, parse_stat(repr(getattr(tensor, name)()))) for name in ("mean", "std", "min", "max")
        )
    wide = tensor.double()
    statistics = (("mean", float(wide.mean())), ("std", float(wide.std())), ("min", float(wide.min())))
    statistics += (("max", float(wide.max())), ("nan", 0), ("posinf", 0), ("neginf", 0))
    return TensorRecord(
        "args.0",
        shape=tuple(tensor.shape),
        dtype=repr(tensor.dtype),
        stats=stats,
        statistics=statistics if exact else (),
        value_lines=lines,
    )


def parts(elements: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    made = torch.randn(2, elements // 64, 32, generator=generator) * 0.3
    return made, torch.randn(made.shape, generator=generator) + 0.5


@pytest.mark.parametrize("elements", [512, 4096], ids=["every element printed", "corners printed"])
@pytest.mark.parametrize("exact", [True, False], ids=["our statistics", "upstream's statistics"])
def test_printed_values_confirm_a_sum_and_refute_a_scaled_one(elements, exact):
    made, residual = parts(elements)
    given = made + residual
    relation = summed_relation(
        record(given, exact=exact), record(made, exact=exact), record(residual), ATOL, RTOL
    )
    assert relation is Relation.HOLDS  # though each printed value is rounded to 5 digits
    scaled = made * 0.7 + residual  # a module scaling its output after its last recorded call
    assert summed_relation(record(scaled), record(made), record(residual), ATOL, RTOL) is Relation.REFUTED
    assert summed_relation(record(given), record(given), None, ATOL, RTOL) is Relation.HOLDS
    assert summed_relation(record(given), record(made), None, ATOL, RTOL) is Relation.REFUTED


def test_statistics_alone_confirm_an_equality_never_a_sum():
    made, residual = parts(512)
    given, unprinted = made + residual, lambda tensor: record(tensor, printed=False)
    assert summed_relation(unprinted(given), unprinted(given), None, ATOL, RTOL) is Relation.HOLDS
    assert (
        summed_relation(unprinted(given), unprinted(made), unprinted(residual), ATOL, RTOL)
        is Relation.UNKNOWN
    )
    # a mean that does not add up refutes the sum
    shifted = made + 1.0 + residual
    assert (
        summed_relation(unprinted(shifted), unprinted(made), unprinted(residual), ATOL, RTOL)
        is Relation.REFUTED
    )


def test_bfloat16_sums_are_allowed_their_rounding():
    made, residual = (part.to(torch.bfloat16) for part in parts(512))
    given = made + residual
    assert summed_relation(record(given), record(made), record(residual), ATOL, RTOL) is Relation.HOLDS


def test_what_is_no_floating_tensor_or_holds_non_finite_values_is_unknown():
    made, residual = parts(512)
    integers = TensorRecord(
        "args.0", shape=tuple(made.shape), dtype="torch.int64", value_lines=("tensor([[[1, 2]]])",)
    )
    assert summed_relation(integers, integers, None, ATOL, RTOL) is Relation.UNKNOWN
    broken = (made + residual).clone()
    broken[0, 0, 0] = float("nan")
    nan = record(broken)
    nan = TensorRecord(
        nan.sub_path,
        nan.shape,
        nan.dtype,
        nan.stats,
        (*nan.statistics[:4], ("nan", 1)),
        value_lines=nan.value_lines,
    )
    assert summed_relation(nan, record(made), record(residual), ATOL, RTOL) is Relation.UNKNOWN
