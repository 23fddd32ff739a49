"""debug_port in half precision: a float32 copy of the reference measures the reference's own
rounding at every recorded tensor, so compare tells rounding grown through the layers of a correct
port from a bug of a few percent, and names the bug where it is made."""

import pytest
import torch

from model_debugging import debug_port
from model_debugging.compare.command import main as compare_main
from model_debugging.porting.api import DebugPortError
from tests.ports import llama

pytestmark = pytest.mark.integration
transformers = pytest.importorskip("transformers")


def _models(layers: int, hidden: int = 256, scale: float = 1.0):
    config = transformers.LlamaConfig(
        vocab_size=99, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    reference = transformers.LlamaModel(config).eval()
    port = llama.port(reference, attention_output_scale=scale).to(torch.bfloat16)
    return reference.to(torch.bfloat16), port


def _inputs(tokens: int = 16) -> dict:
    input_ids = torch.randint(0, 99, (2, tokens), generator=torch.Generator().manual_seed(0))
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}


@pytest.mark.parametrize("layers", [2, 8, 12])
def test_a_correct_bfloat16_port_is_equivalent_by_compare_itself(tmp_path, capsys, monkeypatch, layers):
    monkeypatch.setenv("COLUMNS", "1000")  # the report's lines unwrapped
    reference, port = _models(layers)
    result = debug_port(reference, port, _inputs(), output_dir=tmp_path)
    assert result.comparison.calls_agree and result.outputs_match
    assert result.replay is None  # compare decided: no bisection ran
    assert "1e-05 + 4 * the reference's own rounding there" in result.comparison.tolerance_basis
    printed = capsys.readouterr().out
    assert printed.rstrip().endswith("verdict: EQUIVALENT")
    # the summary names the tolerance used: the noise floor, the derived one only for the rest
    (compared,) = [line for line in printed.splitlines() if line.startswith("compared ")]
    assert (
        " paired calls with the reference's own rounding: each tensor within atol=1e-05 + 4 * its largest "
        in (compared)
    )
    assert compared.endswith(
        "difference from the reference's float32 run, rtol=0.0001 (atol=1e-05 + 0.0625108 * rms(reference "
        "tensor), rtol=0.0625108 for tensors that run did not record)"
    ), compared


@pytest.mark.parametrize(("layers", "scale"), [(2, 0.5), (2, 0.9), (2, 0.95), (2, 0.97), (12, 0.97)])
def test_an_attention_output_scaled_by_a_few_percent_is_named_at_self_attn(tmp_path, capsys, layers, scale):
    reference, port = _models(layers, scale=scale)
    result = debug_port(reference, port, _inputs(), output_dir=tmp_path)
    assert result.comparison.divergence_origin.module_path == "LlamaModel.layers.0.self_attn"
    assert not result.equivalent and result.replay is None
    assert capsys.readouterr().out.rstrip().endswith("verdict: NOT EQUIVALENT")


def test_the_compare_command_takes_the_float32_trace_as_noise_from(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # the report's lines unwrapped
    reference, port = _models(2)
    debug_port(reference, port, _inputs(), output_dir=tmp_path / "run", verbose=False)
    traces = [str(tmp_path / "run" / name) for name in ("reference", "port")]
    # with the tolerance derived from the dtype alone, the rounding of two layers crosses it
    assert compare_main(traces) == 1
    assert " paired calls with atol=1e-05 + 0.0625108 * rms(reference tensor), rtol=0.0625108\n" in (
        capsys.readouterr().out
    )
    assert compare_main([*traces, "--noise_from", str(tmp_path / "run" / "reference_float32")]) == 0
    assert " paired calls with the reference's own rounding: " in capsys.readouterr().out
    assert compare_main([*traces, "--noise_from", traces[1]]) == 2  # the port's trace: no float32 run
    assert "it is no float32 run of that reference" in capsys.readouterr().err


def test_the_reference_model_is_left_exactly_as_it_was(tmp_path):
    reference, port = _models(2, hidden=32)
    reference.layers[1].train()  # a mode of its own, kept
    reference.norm.weight.requires_grad_(False)
    seen = []
    hook = reference.norm.register_forward_hook(lambda module, args, output: seen.append(output.dtype))
    parameters = dict(reference.named_parameters())
    before = {name: (tensor, tensor.clone(), tensor.requires_grad) for name, tensor in parameters.items()}
    buffers = {name: (tensor.dtype, tensor.clone()) for name, tensor in reference.named_buffers()}
    modes = {name: module.training for name, module in reference.named_modules()}
    hooks = {
        name: (
            dict(module._forward_hooks),
            dict(module._forward_pre_hooks),
            vars(module).keys() - {"training"},
        )
        for name, module in reference.named_modules()
    }

    debug_port(reference, port, _inputs(), output_dir=tmp_path, verbose=False)

    assert (tmp_path / "reference_float32").is_dir()
    # the copy keeps the reference's hooks (they may be part of what it computes): it runs them too
    assert seen == [torch.bfloat16, torch.float32]
    for name, tensor in reference.named_parameters():
        same, values, requires_grad = before[name]
        assert tensor is same and tensor.dtype == torch.bfloat16 and tensor.device.type == "cpu"
        assert torch.equal(tensor, values) and tensor.requires_grad is requires_grad
    assert parameters.keys() == dict(reference.named_parameters()).keys()
    assert {name: (t.dtype, t) for name, t in reference.named_buffers()}.keys() == buffers.keys()
    for name, tensor in reference.named_buffers():
        assert tensor.dtype == buffers[name][0] and torch.equal(tensor, buffers[name][1])
    assert {name: module.training for name, module in reference.named_modules()} == modes
    assert {
        name: (
            dict(module._forward_hooks),
            dict(module._forward_pre_hooks),
            vars(module).keys() - {"training"},
        )
        for name, module in reference.named_modules()
    } == hooks
    hook.remove()


def test_half_precision_inputs_are_upcast_for_the_float32_copy(tmp_path):
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8)).to(torch.bfloat16)
    port = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8)).to(torch.bfloat16)
    port.load_state_dict(reference.state_dict())
    features = torch.randn(2, 5, 4, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    result = debug_port(reference, port, (features,), output_dir=tmp_path, verbose=False)
    assert result.equivalent and "its float32 run" in result.comparison.tolerance_basis


class _BFloat16Only(torch.nn.Linear):
    def forward(self, features):
        if features.dtype is not torch.bfloat16:
            raise TypeError(f"bfloat16 only, got {features.dtype}")
        return super().forward(features)


def test_a_float32_copy_that_raises_leaves_the_derived_tolerance_and_says_so(tmp_path, capsys):
    torch.manual_seed(0)
    reference = _BFloat16Only(4, 3).to(torch.bfloat16)
    features = torch.ones(2, 4, dtype=torch.bfloat16)
    result = debug_port(reference, reference, [features], output_dir=tmp_path)
    assert result.equivalent and "float32 run" not in result.comparison.tolerance_basis
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "the float32 copy of the reference raised TypeError: bfloat16 only, got torch.float32: no noise floor"
        in printed
    )


def test_a_reference_that_cannot_be_copied_leaves_the_derived_tolerance_and_says_so(tmp_path, capsys):
    reference = torch.nn.Linear(4, 3).to(torch.bfloat16)
    reference.scale = torch.ones(3, requires_grad=True) * 2  # not a graph leaf: deepcopy refuses it
    result = debug_port(reference, reference, torch.ones(2, 4, dtype=torch.bfloat16), output_dir=tmp_path)
    assert result.equivalent and "float32 run" not in result.comparison.tolerance_basis
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "the float32 copy of the reference raised RuntimeError when copied: Only Tensors created" in printed
    )


def test_float32_noise_for_a_float32_reference_is_refused_before_any_work(tmp_path):
    reference = torch.nn.Linear(4, 3)
    with pytest.raises(
        DebugPortError, match="float32_noise=True: the reference holds no float16 or bfloat16"
    ):
        debug_port(reference, reference, torch.ones(1, 4), output_dir=tmp_path / "out", float32_noise=True)
    assert not (tmp_path / "out").exists()
