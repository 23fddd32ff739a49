"""Inputs a port passes in another form than its reference: a padding mask where the reference
passes a 4-D mask, rotary tables of another shape. A correct port is equivalent, and a bug inside
is still found where it is."""

import pytest
import torch

from model_debugging import compare_traces, debug_port
from tests.ports import distilbert


def _causal_mask(padding: torch.Tensor) -> torch.Tensor:
    """The 4-D boolean mask (True: attend) a transformers model builds from a padding mask."""
    tokens = padding.shape[1]
    causal = torch.ones(tokens, tokens, dtype=torch.bool).tril()
    return causal[None, None] & padding.bool()[:, None, None, :]


def _layer_trace(writer, mask_name, mask, output):
    x = torch.ones(2, 4, 3)
    inside = writer.node("Toy.layer.proj", {"args": [x]}, output)
    layer = writer.node("Toy.layer", {"args": [x], "kwargs": {mask_name: mask}}, children=[inside])
    return writer.write(writer.node("Toy", {"args": [x]}, output, children=[layer]))


@pytest.mark.parametrize("batch", [2, 4])  # 4: as many sequences as tokens
def test_a_padding_mask_agrees_with_the_causal_4d_mask_made_from_it(tmp_path, trace_writer, batch):
    padding = torch.ones(batch, 4, dtype=torch.bool)  # the test's traces keep no statistics of integers
    padding[1, 3:] = False
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "attention_mask", _causal_mask(padding), y)
    _layer_trace(trace_writer(tmp_path / "b"), "attention_mask", padding, y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent
    (mask,) = [value for value in result.modules[1].values if value.reference == "kwargs.attention_mask"]
    assert (mask.form, mask.status) == ("mask", "equal")

    wrong = padding.clone()
    wrong[0, 0] = False  # pads a token the reference lets through
    _layer_trace(trace_writer(tmp_path / "c"), "attention_mask", wrong, y)
    result = compare_traces(tmp_path / "a", tmp_path / "c")
    assert result.first_input_divergence.module_path == "Toy.layer"
    assert "inputs.kwargs.attention_mask differs" in result.first_input_divergence.details


def test_a_padding_mask_agrees_with_a_sliding_window_mask_made_from_it(tmp_path, trace_writer):
    """A sliding-window layer (Qwen2, Mistral) gets the causal mask narrowed to the last keys; a port's
    block given the padding mask applies the window itself."""
    padding = torch.ones(2, 4, dtype=torch.bool)
    padding[1, 0] = False  # left padding
    window = ~torch.ones(4, 4, dtype=torch.bool).tril(-2)  # a query sees itself and the key before
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "attention_mask", _causal_mask(padding) & window, y)
    _layer_trace(trace_writer(tmp_path / "b"), "attention_mask", padding, y)
    assert compare_traces(tmp_path / "a", tmp_path / "b").equivalent

    wrong = padding.clone()
    wrong[0, 0] = False
    _layer_trace(trace_writer(tmp_path / "c"), "attention_mask", wrong, y)
    result = compare_traces(tmp_path / "a", tmp_path / "c")
    assert "inputs.kwargs.attention_mask differs" in result.first_input_divergence.details


def test_an_input_in_another_form_that_changes_nothing_is_a_note(tmp_path, trace_writer):
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "cos", torch.ones(8, 4), y)
    _layer_trace(trace_writer(tmp_path / "b"), "cos", torch.ones(1, 8, 2, 2), y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent and result.first_input_divergence is None
    assert result.modules[1].notes == (
        "inputs.kwargs.cos: shape [8, 4] vs [1, 8, 2, 2]; not counted: nothing computed in this call differs",
    )

    _layer_trace(
        trace_writer(tmp_path / "c"), "cos", torch.ones(1, 8, 2, 2), y * 2
    )  # and a call inside differs
    result = compare_traces(tmp_path / "a", tmp_path / "c")
    assert not result.equivalent
    assert result.first_input_divergence.module_path == "Toy.layer"


def test_values_that_differ_stay_counted_when_the_outputs_agree(tmp_path, trace_writer):
    """A difference below tolerance after a call is still a difference before it."""
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "cos", torch.ones(8, 4), y)
    _layer_trace(trace_writer(tmp_path / "b"), "cos", torch.ones(8, 4) * 1.01, y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert not result.equivalent
    assert result.first_input_divergence.module_path == "Toy.layer"


# ---- a DistilBERT port written by hand, as a porter would (tests/ports/distilbert.py) ------------


@pytest.mark.integration
@pytest.mark.parametrize(
    ("bug", "origin"),
    [("NONE", None), ("NO_ATTENTION_SCALING", "DistilBertModel.transformer.layer.0.attention")],
)
def test_a_hand_written_port_with_padding_is_judged_by_what_it_computes(tmp_path, bug, origin):
    pytest.importorskip("transformers")
    reference = distilbert.reference()
    port = distilbert.port(reference, bug=distilbert.Bug[bug])
    result = debug_port(reference, port, distilbert.inputs(), output_dir=tmp_path)
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    # the port's position embedding, at its top and given arange(10), pairs with the reference's,
    # inside its embeddings and given position ids [1, 10]; what is left is GELU, a module on one side only
    assert result.comparison.unmatched_candidate == ()
    assert all(call.endswith("ffn.activation") for call in result.comparison.unmatched_reference)
