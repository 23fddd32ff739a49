"""Left padding: a causal model's padded tokens attend to nothing, and two correct implementations
fill them in differently. Differences only there are notes; a difference at a real token counts."""

import pytest
import torch
from torch import nn

from model_debugging import compare_traces, debug_port, model_addition_debugger_context, replay_trace
from tests.ports import llama


def _trace(writer, output):
    mask = torch.ones(2, 4, dtype=torch.long)
    mask[1, :2] = 0  # the second sequence is padded on the left
    x = torch.ones(2, 4, 3)
    layer = writer.node("Toy.layer", {"args": [x]}, output)
    return writer.write(
        writer.node("Toy", {"args": [x], "kwargs": {"attention_mask": mask}}, children=[layer])
    )


@pytest.mark.parametrize(("token", "counted"), [(1, False), (2, True)])
def test_differences_at_padded_tokens_only_are_notes(tmp_path, trace_writer, token, counted):
    y = torch.ones(2, 4, 3)
    _trace(trace_writer(tmp_path / "a"), y)
    changed = y.clone()
    changed[1, token] = float("nan")  # token 1 is padding, token 2 is not
    _trace(trace_writer(tmp_path / "b"), changed)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent is not counted
    (output,) = [value for value in result.modules[1].values if value.place == "outputs"]
    assert output.counted is counted
    if not counted:
        assert output.note == "differs only at tokens the model's attention_mask pads: not counted"

    summaries = [trace_writer(tmp_path / f"{side}-summary", use_repr=True) for side in "ab"]
    _trace(summaries[0], y)
    _trace(summaries[1], changed)  # statistics cannot say where a difference is
    assert not compare_traces(tmp_path / "a-summary", tmp_path / "b-summary").equivalent


class _Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x, attention_mask):
        return self.proj(x) * attention_mask[..., None]


@pytest.mark.parametrize(
    ("padded", "diverged", "warned"),
    [(0, True, True), (0, False, False), (3, True, False), (None, True, False)],
)
def test_summary_traces_of_left_padded_inputs_that_diverge_say_what_statistics_cannot_tell(
    tmp_path, padded, diverged, warned
):
    torch.manual_seed(0)
    model, x = _Masked().eval(), torch.randn(2, 4, 3)
    mask = torch.ones(2, 4, dtype=torch.long)
    if padded is not None:
        mask[1, padded] = 0  # token 0: padded on the left; token 3: on the right
    for side in "ab":
        with model_addition_debugger_context(model, debug_path=tmp_path / side, use_repr=True):
            model(x, attention_mask=mask)
        if diverged:
            model.proj.bias.data += 1.0
    warnings = compare_traces(tmp_path / "a", tmp_path / "b").warnings
    assert (
        any("the model's attention_mask pads tokens on the left" in warning for warning in warnings) is warned
    )


# ---- a Llama port written by hand in plain PyTorch, as a porter would (tests/ports/llama.py) ---------


@pytest.mark.integration
@pytest.mark.parametrize(
    ("bug", "origin"), [("NONE", None), ("ATTENTION_OUTPUT_HALVED", "LlamaModel.layers.0.self_attn")]
)
def test_a_hand_written_llama_port_with_left_padding_is_judged_at_real_tokens(tmp_path, bug, origin):
    pytest.importorskip("transformers")
    reference = llama.reference()
    port = llama.port(reference, bug=llama.Bug[bug])
    result = debug_port(reference, port, llama.inputs(left_padding=3), output_dir=tmp_path)
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    if origin is None:
        assert result.summary_line().startswith(
            "returned outputs: equal within tolerance at every real token"
        )
    # replay runs the port on the reference's recorded inputs and judges it the same way; the port
    # counts the padded sequence's positions from its first real token, the reference from 0: no
    # rotary table of the reference is the port's, and its blocks cannot be called without an adapter
    replayed = replay_trace(tmp_path / "reference", port, bisect=True, comparison=result.comparison)
    assert (replayed.bug_in is None) is (origin is None)
    if origin is not None:
        assert (
            "cos (args.1 [2, 1, 10, 8] torch.float32) has no derivable value: compare pairs it with the "
            "reference's position_embeddings.0 [1, 10, 8] torch.float32 only by order, their values differ"
        ) in replayed.smallest_wrong.reason


@pytest.mark.integration
@pytest.mark.parametrize(
    ("dtype", "bug", "origin"),
    [
        # no padding: transformers passes attention_mask=None, the port its mask of ones, and both
        # pass a [batch, tokens] integer tensor (position ids, the mask) that must not be paired
        (torch.float32, "NONE", None),
        (torch.float32, "ATTENTION_OUTPUT_HALVED", "LlamaModel.layers.0.self_attn"),
        # bfloat16: the port's norms round differently from transformers' (computed in float32)
        (torch.bfloat16, "NONE", None),
        (torch.bfloat16, "ATTENTION_OUTPUT_HALVED", "LlamaModel.layers.0.self_attn"),
    ],
)
def test_a_hand_written_llama_port_without_padding(tmp_path, dtype, bug, origin):
    pytest.importorskip("transformers")
    reference = llama.reference().to(dtype)
    port = llama.port(reference, bug=llama.Bug[bug]).to(dtype)
    result = debug_port(reference, port, llama.inputs(), output_dir=tmp_path, verbose=False)
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    basis = result.comparison.tolerance_basis
    assert (basis == "compare's defaults") is (dtype is torch.float32)
    # in bfloat16 the float32 copy's noise floor grows with depth: no warning that rounding does
    assert not any("rounding grows with depth" in warning for warning in result.comparison.warnings)
    assert (dtype is torch.bfloat16) is ("its float32 run" in basis)


@pytest.mark.integration
def test_a_bfloat16_port_whose_block_raises_is_named_where_it_raised(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    reference = llama.reference().to(torch.bfloat16)
    port = llama.port(reference).to(torch.bfloat16)
    forward = llama.Block.forward  # a porter's first bf16 run: the rotary tables left in float32
    monkeypatch.setattr(
        llama.Block,
        "forward",
        lambda self, x, cos, sin, mask: forward(self, x, cos.float(), sin.float(), mask),
    )
    result = debug_port(reference, port, llama.inputs(), output_dir=tmp_path, verbose=False)
    assert result.comparison.divergence_origin.module_path == "LlamaModel.layers.0.self_attn"
    assert "candidate raised RuntimeError" in result.comparison.divergence_origin.details[0]
    assert not any("rounding grows" in warning for warning in result.comparison.warnings)
