"""A porter's first run of replay on a port written by hand in plain PyTorch, without argument adapters.

The ports (tests/ports/llama.py, tests/ports/distilbert.py, tests/ports/gpt2_masked.py) take their blocks' arguments their own
way: ``Block(x, cos, sin, mask)`` with a ``[batch, tokens]`` padding mask where the reference's
decoder layer gets ``(hidden_states, attention_mask=<4-D mask or None>, position_embeddings=(cos, sin),
...)``. ``debug_port`` traces both models; replay, given its comparison, calls each block and
attention as the port's own model called it, on the reference's values converted to the port's form
(a derived adapter, checked against the port's own recorded values), and says which calls it made so.
"""

import pytest

from model_debugging import ReplayVerdict, debug_port, replay_trace
from model_debugging.replay.rendering import render_terminal
from tests.ports import distilbert, gpt2_masked, llama

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

LLAMA_BLOCKS = ["layers.0", "layers.0.self_attn", "layers.1", "layers.1.self_attn"]
DISTILBERT_BLOCKS = [f"transformer.layer.{index}{inner}" for index in (0, 1) for inner in ("", ".attention")]
GPT2_BLOCKS = [f"transformer.h.{index}{inner}" for index in (0, 1) for inner in ("", ".attn")]


@pytest.fixture(scope="module")
def references():
    return {
        "llama": llama.reference(),
        "distilbert": distilbert.reference(),
        "gpt2_masked": gpt2_masked.reference(),
    }


def checked(references, tmp_path, architecture, bug, **inputs):
    reference = references[architecture.__name__.rpartition(".")[2]]
    port = architecture.port(reference, bug=architecture.Bug[bug])
    result = debug_port(reference, port, architecture.inputs(**inputs), output_dir=tmp_path, verbose=False)
    return port, result.comparison


@pytest.mark.parametrize(
    ("architecture", "blocks"),
    [(llama, LLAMA_BLOCKS), (distilbert, DISTILBERT_BLOCKS), (gpt2_masked, GPT2_BLOCKS)],
    ids=["llama", "distilbert", "gpt2-blocks-called-positionally"],
)
def test_every_block_of_a_correct_port_agrees_on_identical_inputs(references, tmp_path, architecture, blocks):
    port, comparison = checked(references, tmp_path, architecture, "NONE")
    result = replay_trace(tmp_path / "reference", port, blocks, comparison=comparison)
    assert [call.verdict for call in result.modules] == [ReplayVerdict.CORRECT] * len(blocks), [
        call.reason for call in result.modules
    ]
    assert all(call.called_as for call in result.modules)
    assert replay_trace(tmp_path / "reference", port, bisect=True, comparison=comparison).bug_in is None


def test_the_terminal_says_which_calls_went_through_a_derived_adapter(references, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    port, comparison = checked(references, tmp_path, llama, "NONE")
    result = replay_trace(tmp_path / "reference", port, ["layers.0"], comparison=comparison)
    out = render_terminal(result, comparison)
    assert "1 correct on identical inputs, 0 wrong on identical inputs, 0 not replayed" in out
    # the reference's SDPA layers get attention_mask=None without padding, and cos/sin shared by the
    # batch; the port gets a padding mask of ones, and tables of shape [2, 1, 10, 8]
    assert out.endswith(
        "calls made through a derived adapter, without one written by hand (1)\n"
        "---------------------------------------------------------------------\n"
        "LlamaModel.layers.0: blocks.0 called as the port's own model called it (its trace), on the\n"
        "    reference's values; converted to its form, as its own run was given them: cos = the reference's\n"
        "    position_embeddings.0 [1, 10, 8] torch.float32 as [2, 1, 10, 8] torch.float32, sin = the\n"
        "    reference's position_embeddings.1 [1, 10, 8] torch.float32 as [2, 1, 10, 8] torch.float32, mask\n"
        "    = the reference's no mask (None) as [2, 10] torch.int64"
    ), out


@pytest.mark.parametrize(
    ("architecture", "bug", "bug_in", "conclusion"),
    [
        (
            llama,
            "ATTENTION_OUTPUT_HALVED",
            "LlamaModel.layers.0.self_attn",
            "the bug is at its end: after its last recorded call, or in the code of LlamaModel.layers.0",
        ),
        (
            llama,
            "NO_ATTENTION_SCALING",
            "LlamaModel.layers.0.self_attn",
            "the bug is in its own code, before layers.0.self_attn.o_proj inputs.args.0",
        ),
        (
            llama,
            "GELU_FOR_SILU",  # the port's block applies it: no mlp module
            "LlamaModel.layers.0",
            "the bug is in its own code, before layers.0.mlp.down_proj inputs.args.0",
        ),
        (
            distilbert,
            "NO_ATTENTION_SCALING",
            "DistilBertModel.transformer.layer.0.attention",
            "the bug is in its own code, before transformer.layer.0.attention.out_lin inputs.args.0",
        ),
        (
            distilbert,
            "RELU_FOR_GELU",
            "DistilBertModel.transformer.layer.0",
            "DistilBertModel.transformer.layer.0.ffn.activation (no counterpart in the candidate) made what "
            "DistilBertModel.transformer.layer.0.ffn.lin2 receives",
        ),
        (
            gpt2_masked,
            "ATTENTION_OUTPUT_HALVED",
            "GPT2LMHeadModel.transformer.h.0.attn",
            "the bug is at its end",
        ),
    ],
    ids=[
        "llama-o_proj-halved",
        "llama-unscaled",
        "llama-gelu",
        "distilbert-unscaled",
        "distilbert-relu",
        "gpt2-c_proj-halved",
    ],
)
def test_bisection_names_the_module_a_planted_bug_is_in(
    references, tmp_path, architecture, bug, bug_in, conclusion
):
    port, comparison = checked(references, tmp_path, architecture, bug)
    found = replay_trace(tmp_path / "reference", port, bisect=True, comparison=comparison)
    assert found.bug_in == bug_in, found.smallest_wrong.reason
    assert conclusion in found.smallest_wrong.reason
    assert found.smallest_wrong.called_as.startswith("called as the port's own model called it")


def test_a_block_whose_inputs_the_port_computes_otherwise_is_not_replayed_and_says_which(
    references, tmp_path
):
    """Left padding: the port counts the padded sequence's positions from its first real token, the
    reference from 0 (attention depends on relative positions only): no rotary table of the
    reference is the port's, and nothing is guessed."""
    port, comparison = checked(references, tmp_path, llama, "NONE", left_padding=3)
    (block,) = replay_trace(tmp_path / "reference", port, ["layers.0"], comparison=comparison).modules
    assert block.verdict is ReplayVerdict.NOT_REPLAYED
    assert block.reason.endswith(
        "nor can it be called as its own model called it: cos (args.1 [2, 1, 10, 8] torch.float32) has no "
        "derivable value: compare pairs it with the reference's position_embeddings.0 [1, 10, 8] "
        "torch.float32 only by order, their values differ (the port computes it another way)"
    ), block.reason


def test_a_block_called_positionally_without_padding_gets_the_ports_mask_of_ones(references, tmp_path):
    """GPT-2's blocks get ``attention_mask=None`` positionally (no keyword names it) when the batch pads
    nothing; the port's blocks get its ``[batch, tokens]`` mask of ones. The model's own mask lets every
    token through, so the port's mask of ones is what the reference's None stands for."""
    port, comparison = checked(references, tmp_path, gpt2_masked, "NONE")
    (block,) = replay_trace(tmp_path / "reference", port, ["transformer.h.0"], comparison=comparison).modules
    assert block.verdict is ReplayVerdict.CORRECT, block.reason
    assert "mask = the reference's unpadded batch" in block.called_as, block.called_as


def test_with_padding_the_block_gets_the_references_4d_mask_in_the_ports_form(references, tmp_path):
    port, comparison = checked(references, tmp_path, gpt2_masked, "NONE", left_padding=3)
    (block,) = replay_trace(tmp_path / "reference", port, ["transformer.h.0"], comparison=comparison).modules
    assert block.verdict is ReplayVerdict.CORRECT, block.reason
    assert block.called_as.endswith(
        "mask = the reference's args.2 [2, 1, 8, 8] torch.bool as [2, 8] torch.int64"
    )
