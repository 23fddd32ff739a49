"""The reference's value of an input converted to the port's form, and checked against the port's own."""

import pytest
import torch
from safetensors.torch import save_file

from model_debugging.compare.forms import Form
from model_debugging.compare.numeric import PairComparer
from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.replay.conversions import NotDerivable, extended, in_candidate_form

COMPARER = PairComparer(1e-5, 1e-4, "tensors")


def recorded(tmp_path, name: str, tensor: torch.Tensor) -> TensorRecord:
    save_file({"data": tensor.contiguous()}, tmp_path / f"{name}.safetensors")
    return TensorRecord(
        f"args.{name}", tuple(tensor.shape), repr(tensor.dtype), file=tmp_path / f"{name}.safetensors"
    )


def converted(tmp_path, reference: torch.Tensor, port: torch.Tensor, form: Form) -> torch.Tensor:
    records = recorded(tmp_path, "0", reference), recorded(tmp_path, "1", port)
    return in_candidate_form(reference, *records, form, COMPARER)


PADDING = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
CAUSAL = torch.ones(4, 4, dtype=torch.bool).tril()


@pytest.mark.parametrize("causal", [False, True])
def test_a_padding_mask_becomes_the_ports_4d_mask_with_or_without_the_causal_mask(tmp_path, causal):
    port = PADDING.bool()[:, None, None, :].expand(2, 1, 4, 4)
    port = port & CAUSAL if causal else port
    assert torch.equal(converted(tmp_path, PADDING, port, Form.MASK), port)


def test_a_4d_additive_mask_becomes_the_ports_padding_mask(tmp_path):
    allowed = CAUSAL & PADDING.bool()[:, None, None, :]
    additive = torch.zeros(2, 1, 4, 4).masked_fill(~allowed, torch.finfo(torch.float32).min)
    made = converted(tmp_path, additive, PADDING, Form.MASK)
    assert torch.equal(made, PADDING) and made.dtype == torch.int64


def test_a_4d_sliding_window_mask_becomes_the_ports_padding_mask(tmp_path):
    """Qwen2's sliding-window layers get a mask whose last query sees only the last keys: the
    padding is the keys some query sees."""
    window = CAUSAL & ~torch.ones(4, 4, dtype=torch.bool).tril(-2)  # the last 2 tokens
    allowed = window & PADDING.bool()[:, None, None, :]
    assert torch.equal(converted(tmp_path, allowed, PADDING, Form.MASK), PADDING)


def test_a_port_mask_no_conversion_reproduces_is_not_derived(tmp_path):
    wrong = CAUSAL.clone()
    wrong[0, 1] = True  # lets the first token see the next one
    reference = CAUSAL[None, None].expand(2, 1, 4, 4)
    with pytest.raises(NotDerivable, match=r"\(mask form\), converted to \[4, 4\] torch.bool, is not what"):
        converted(tmp_path, reference, wrong, Form.MASK)


def test_a_table_shared_by_the_batch_is_expanded_only_where_the_port_holds_it_per_sequence(tmp_path):
    table = torch.randn(1, 4, 8)
    assert torch.equal(
        converted(tmp_path, table, table.expand(2, 4, 8), Form.BROADCAST), table.expand(2, 4, 8)
    )
    shifted = torch.cat([table, torch.randn(1, 4, 8)])  # the second sequence's positions shifted
    with pytest.raises(NotDerivable, match="the port computes it differently"):
        converted(tmp_path, table, shifted, Form.BROADCAST)


def test_a_replay_in_bfloat16_gets_the_value_in_the_dtype_it_computes_in(tmp_path):
    table = torch.randn(1, 4, 8)
    records = recorded(tmp_path, "0", table), recorded(tmp_path, "1", table.expand(2, 4, 8))
    made = in_candidate_form(table.bfloat16(), *records, Form.BROADCAST, COMPARER)
    assert made.dtype == torch.bfloat16 and made.shape == (2, 4, 8)


def test_a_port_trace_without_values_cannot_check_a_conversion(tmp_path):
    reference = recorded(tmp_path, "0", PADDING)
    port = TensorRecord("args.1", (2, 4), "torch.bool")
    with pytest.raises(NotDerivable, match="trace the port with use_repr=False"):
        in_candidate_form(PADDING, reference, port, Form.MASK, COMPARER)


def test_a_table_the_port_holds_for_more_positions_is_the_references_then_its_own(tmp_path):
    """Rotary tables made for 5 positions where the reference's call has 4: the reference's values,
    then the port's own fifth, when its first four are the reference's."""
    table = torch.randn(5, 8)
    reference, port = recorded(tmp_path, "0", table[None, :4]), recorded(tmp_path, "1", table)
    value = table[None, :4] + 1  # what the reference's call holds in this replay
    made = extended(value, reference, port, COMPARER)
    assert torch.equal(made, torch.cat([value[0], table[4:]]))
    shifted = recorded(tmp_path, "2", torch.cat([table[1:], table[:1]]))
    with pytest.raises(NotDerivable, match="pairs with no input"):
        extended(value, reference, shifted, COMPARER)
