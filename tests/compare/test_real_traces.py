"""End to end: traces recorded by model_debugging's own debugger, compared."""

import pytest
import torch
from torch import nn

from model_debugging import TraceError, compare_traces, model_addition_debugger_context
from model_debugging.compare.command import main


def trace(model, directory, *inputs, use_repr=False):
    with model_addition_debugger_context(
        model, debug_path=str(directory), do_prune_layers=False, use_repr=use_repr
    ):
        model(*inputs)
    return directory


@pytest.mark.integration
@pytest.mark.parametrize("use_repr", [False, True], ids=["full_tensors", "repr"])
def test_llama_with_a_perturbed_mlp_weight_diverges_at_that_projection(tmp_path, use_repr):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=100,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, config.vocab_size, (1, 8))
    reference = trace(model, tmp_path / "reference", input_ids, use_repr=use_repr)
    with torch.no_grad():
        model.model.layers[2].mlp.gate_proj.weight[0, 0] += 0.5
    candidate = trace(model, tmp_path / "candidate", input_ids, use_repr=use_repr)

    result = compare_traces(reference, candidate)
    assert result.mode == ("stats" if use_repr else "tensors")
    origin = result.divergence_origin
    assert origin.module_path == "LlamaForCausalLM.model.layers.2.mlp.gate_proj"
    assert all(module.status == "equal" for module in result.modules[: origin.index])
    assert result.modules[origin.index - 1].module_path == "LlamaForCausalLM.model.layers.2.mlp"
    assert result.first_input_divergence.module_path == "LlamaForCausalLM.model.layers.2.mlp.act_fn"
    assert not result.unmatched_reference and not result.unmatched_candidate


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in, self.act, self.fc_out = nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)

    def forward(self, x):
        return x + self.fc_out(self.act(self.fc_in(x)))


class Reference(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.layers, self.head = (
            nn.Linear(4, 8),
            nn.ModuleList([Block(), Block()]),
            nn.Linear(8, 2),
        )

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class PortBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.act, self.down = nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)

    def forward(self, x):
        return x + self.down(self.act(self.up(x)))


class Port(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj_in, self.h, self.lm_head = (
            nn.Linear(4, 8),
            nn.ModuleList([PortBlock(), PortBlock()]),
            nn.Linear(8, 2),
        )

    def forward(self, x):
        x = self.proj_in(x)
        for block in self.h:
            x = block(x)
        return self.lm_head(x)


PORT_RENAMES = [
    r"^h\.(\d+)=layers.\1",
    r"\.up$=.fc_in",
    r"\.down$=.fc_out",
    "^proj_in$=embed",
    "^lm_head$=head",
]


@pytest.fixture
def reference_and_port(tmp_path):
    torch.manual_seed(0)
    reference = Reference().eval()
    port = Port().eval()
    # same construction order, so both state dicts list the same weights in the same order
    port.load_state_dict(dict(zip(port.state_dict(), reference.state_dict().values(), strict=True)))
    x = torch.randn(3, 4)
    return trace(reference, tmp_path / "reference", x), trace(port, tmp_path / "port", x)


def test_same_weights_under_other_names_compare_equal_with_rename_rules(reference_and_port):
    reference, port = reference_and_port
    result = compare_traces(reference, port, rename=PORT_RENAMES)
    assert result.equivalent
    assert [module.candidate_path for module in result.modules][:3] == ["Port", "Port.proj_in", "Port.h.0"]
    assert main([str(reference), str(port), *(f"--rename={rule}" for rule in PORT_RENAMES)]) == 0


def test_without_rename_rules_the_calls_are_aligned_and_the_rules_inferred(reference_and_port, tmp_path):
    result = compare_traces(*reference_and_port)
    assert result.equivalent
    assert [module.candidate_path for module in result.modules][:3] == ["Port", "Port.proj_in", "Port.h.0"]
    assert {module.alignment.value for module in result.modules[1:]} == {"inferred"}
    (tmp_path / "inferred.yaml").write_text(result.alignment.rename_rules_yaml)
    renamed = compare_traces(*reference_and_port, rename=tmp_path / "inferred.yaml", align=False)
    assert renamed.equivalent and len(renamed.modules) == len(result.modules)


def test_with_no_align_and_no_rename_rules_the_unmatched_modules_are_listed(reference_and_port):
    result = compare_traces(*reference_and_port, align=False)
    assert not result.equivalent
    assert {"Reference.embed", "Reference.layers.1.fc_out"} <= set(result.unmatched_reference)
    assert {"Port.proj_in", "Port.h.1.down"} <= set(result.unmatched_candidate)
    assert [module.module_path for module in result.modules] == ["Reference"]


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(4, 4)

    def forward(self, x):
        return self.shared(self.shared(x))


class Guard(nn.Module):
    armed = False

    def forward(self, x):
        if self.armed:
            raise ValueError("non-finite activations")
        return x.clamp(-1, 1)


class Guarded(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.guard, self.head = nn.Linear(4, 4), Guard(), nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.guard(self.embed(x)))


def test_a_module_called_twice_is_matched_call_by_call(tmp_path):
    torch.manual_seed(0)
    model = Twice().eval()
    x = torch.randn(4, 4)
    reference = trace(model, tmp_path / "a", x)
    with torch.no_grad():
        model.shared.bias += 1.0
    candidate = trace(model, tmp_path / "b", x)
    result = compare_traces(reference, candidate)
    assert [(m.module_path, m.call_index, m.status) for m in result.modules] == [
        ("Twice", 0, "equal"),
        ("Twice.shared", 0, "outputs differ"),
        ("Twice.shared", 1, "inputs differ"),
    ]


def test_a_module_that_raised_is_the_divergence_origin(tmp_path):
    torch.manual_seed(0)
    model = Guarded().eval()
    x = torch.randn(4, 4)
    reference = trace(model, tmp_path / "a", x)
    model.guard.armed = True
    with pytest.raises(ValueError, match="non-finite activations"):
        trace(model, tmp_path / "b", x)
    result = compare_traces(reference, tmp_path / "b")
    assert result.divergence_origin.module_path == "Guarded.guard"
    assert result.divergence_origin.details[0] == (
        "candidate raised ValueError: non-finite activations (the reference did not raise)"
    )
    assert result.unmatched_reference == ("Guarded.head",)


def test_later_forwards_in_one_context_are_separate_traces_to_choose_from(tmp_path):
    model = Twice().eval()
    with model_addition_debugger_context(model, debug_path=str(tmp_path), use_repr=False):
        model(torch.ones(4, 4))
        model(torch.zeros(4, 4))
    with pytest.raises(TraceError, match="2 traces in this directory"):
        compare_traces(tmp_path, tmp_path)
    first, second = tmp_path / "Twice_debug_tree_SUMMARY.json", tmp_path / "Twice_debug_tree_2_SUMMARY.json"
    assert compare_traces(first, first).equivalent
    assert compare_traces(first, second).divergence_origin is None
    assert compare_traces(first, second).first_input_divergence.module_path == "Twice"


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.signal, self.gate = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        signal = self.signal(x)
        return signal * torch.sigmoid(self.gate(x))


class GateFirst(nn.Module):
    """The same function, its projections named otherwise and called in the other order."""

    def __init__(self):
        super().__init__()
        self.value, self.weighting = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        weighting = torch.sigmoid(self.weighting(x))
        return self.value(x) * weighting


def test_same_shaped_calls_made_in_another_order_pair_by_their_values(tmp_path):
    torch.manual_seed(0)
    reference, port = Gated().eval(), GateFirst().eval()
    port.load_state_dict({"value.weight": reference.signal.weight, "value.bias": reference.signal.bias,
                          "weighting.weight": reference.gate.weight, "weighting.bias": reference.gate.bias})  # fmt: skip
    x = torch.randn(3, 4)
    result = compare_traces(trace(reference, tmp_path / "a", x), trace(port, tmp_path / "b", x))
    assert result.equivalent
    assert [(m.module_path, m.candidate_path) for m in result.modules[1:]] == [
        ("Gated.signal", "GateFirst.value"),
        ("Gated.gate", "GateFirst.weighting"),
    ]


class Stack(nn.Module):
    def __init__(self, layers: int = 4):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class OtherStack(Stack):
    """The same module paths under another class name."""


def test_traces_pruned_differently_or_of_other_classes_with_the_same_paths_are_warned_about(tmp_path):
    torch.manual_seed(0)
    model, x = Stack().eval(), torch.randn(2, 8)
    with model_addition_debugger_context(model, debug_path=str(tmp_path / "pruned"), use_repr=False):
        model(x)
    whole = trace(model, tmp_path / "whole", x)
    result = compare_traces(whole, tmp_path / "pruned")
    assert result.warnings == (
        "only the candidate trace was pruned (numbered layers are missing): trace both with the same "
        "do_prune_layers (False compares every layer)",
    )
    assert f"warning: {result.warnings[0]}" in result.summary_lines()
    other = OtherStack().eval()
    other.load_state_dict(model.state_dict())
    (warning,) = compare_traces(whole, trace(other, tmp_path / "other", x)).warnings
    assert warning.startswith(
        "the traces come from different model classes (tests.compare.test_real_traces.Stack"
    )
    assert compare_traces(whole, whole).warnings == ()
