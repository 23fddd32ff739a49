"""Our traces against transformers' own model_addition_debugger_context: the same files, byte for byte.

The JSON files are compared whole, with nothing stripped, and every tensor file upstream's JSON
names is compared bit for bit. Deliberate differences, accounted for here: upstream also leaves
.safetensors files for pruned layers and for the top-level outputs the tree drops (we do not
write them), and upstream leaves torch's print options changed (we restore them, so each run
starts from the defaults). What we record beyond upstream is in our extra file.
"""

import copy
import functools
import json
import re

import pytest
import torch
from safetensors.torch import load_file

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.integration


def run_both(model, tmp_path, record_functions=(), **options):
    """Trace ``model`` with upstream's context and ours (recording ``record_functions``, which upstream cannot)."""
    input_ids = torch.randint(0, 1000, (1, 12), generator=torch.Generator().manual_seed(1))
    saved = torch._tensor_str.get_printoptions()
    outputs = {}
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", functools.partial(model_addition_debugger_context, record_functions=record_functions)),
    ):
        torch.set_printoptions(**saved)  # upstream does not restore them
        with context(model, debug_path=tmp_path / name, **options):
            outputs[name] = model(input_ids=input_ids).logits
    torch.set_printoptions(**saved)
    torch.testing.assert_close(outputs["ours"], outputs["upstream"], rtol=0, atol=0)
    return tmp_path / "upstream", tmp_path / "ours"


def assert_same_files(upstream_dir, ours_dir, class_name):
    """Both JSON files byte for byte, and every tensor file upstream's JSON names bit for bit."""
    referenced = set()
    for kind in ("SUMMARY", "FULL_TENSORS"):
        name = f"{class_name}_debug_tree_{kind}.json"
        text = (ours_dir / name).read_text()
        assert text == (upstream_dir / name).read_text(), name
        referenced |= set(re.findall(r'"value": "\./([^"]+\.safetensors)"', text))
    for name in sorted(referenced):
        assert (ours_dir / name).read_bytes() == (upstream_dir / name).read_bytes(), name
    return referenced


def walk_nodes(node):
    yield node
    for child in node.get("children", []):
        yield from walk_nodes(child)


def module_paths(node):
    return [each["module_path"] for each in walk_nodes(node)]


def assert_our_records_are_read(directory, model):
    """What upstream does not write, read back: each call's module class, each tensor's statistics."""
    nodes = read_trace(directory).nodes
    for node in nodes:
        _, _, name = node.module_path.partition(".")
        cls = type(model.get_submodule(name))
        assert node.module_class == f"{cls.__module__}.{cls.__qualname__}", node.module_path
        for record in (record for record in node.records if record.is_tensor):
            assert dict(record.statistics).keys() >= {"min", "max"}, (node.module_path, record.sub_path)
    assert nodes[0].module_class == f"{type(model).__module__}.{type(model).__qualname__}"
    assert sum(len(node.records) for node in nodes) > 20


@pytest.mark.parametrize("prune", [True, False])
def test_repr_traces_match_upstream(tiny_llama, tmp_path, prune):
    upstream_dir, ours_dir = run_both(tiny_llama, tmp_path, do_prune_layers=prune)
    assert_same_files(upstream_dir, ours_dir, "LlamaForCausalLM")
    full = (ours_dir / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json").read_text()
    assert full.count('"value": [') > 50
    assert_our_records_are_read(ours_dir, tiny_llama)


@pytest.mark.parametrize("prune", [True, False])
def test_safetensors_traces_match_upstream(tiny_llama, tmp_path, prune):
    upstream_dir, ours_dir = run_both(tiny_llama, tmp_path, do_prune_layers=prune, use_repr=False)
    referenced = assert_same_files(upstream_dir, ours_dir, "LlamaForCausalLM")
    assert len(referenced) > 20
    assert all(load_file(ours_dir / name)["data"] is not None for name in referenced)
    # upstream also writes files the tree never points to (pruned layers, dropped top-level outputs)
    assert {path.name for path in ours_dir.glob("*.safetensors")} == referenced
    assert {path.name for path in upstream_dir.glob("*.safetensors")} >= referenced
    assert_our_records_are_read(ours_dir, tiny_llama)


@pytest.mark.parametrize("use_repr", [True, False])
def test_bfloat16_traces_match_upstream(tiny_llama, tmp_path, use_repr):
    # its statistics are computed off the forward's thread, by torch's own ops as upstream's are
    dtype = torch.bfloat16
    model = copy.deepcopy(tiny_llama).to(dtype)
    upstream_dir, ours_dir = run_both(model, tmp_path, do_prune_layers=False, use_repr=use_repr)
    assert_same_files(upstream_dir, ours_dir, "LlamaForCausalLM")
    assert f'"dtype": "{dtype}"' in (ours_dir / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text()
    assert_our_records_are_read(ours_dir, model)


@pytest.mark.parametrize("use_repr", [True, False])
def test_function_records_leave_upstreams_files_as_upstream_writes_them(tiny_llama, tmp_path, use_repr):
    functions = ["apply_rotary_pos_emb", "torch.matmul"]
    upstream_dir, ours_dir = run_both(
        tiny_llama, tmp_path, functions, do_prune_layers=False, use_repr=use_repr
    )
    assert_same_files(upstream_dir, ours_dir, "LlamaForCausalLM")
    recorded = [node for node in read_trace(ours_dir).nodes if node.function is not None]
    assert len([node for node in recorded if node.function.endswith(".apply_rotary_pos_emb")]) == 3
    assert recorded[0].module_path == "LlamaForCausalLM.model.layers.0.self_attn.apply_rotary_pos_emb"
    assert all(record.statistics for node in recorded for record in node.records if record.is_tensor)


class Attend(torch.nn.Module):
    def forward(self, query, value):
        return query + value


class Product(torch.nn.Module):
    """A leaf module calling a function that is recorded: upstream's files keep its outputs."""

    def forward(self, hidden):
        return torch.matmul(hidden, hidden.T)


class TakesValue(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = Attend()
        self.product = Product()

    def forward(self, hidden):
        return self.product(self.attend(query=hidden, value=hidden * 2))


@pytest.mark.parametrize("use_repr", [True, False])
def test_an_input_named_value_and_a_recorded_call_in_a_leaf_module_match_upstream(tmp_path, use_repr):
    model = TakesValue()
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", functools.partial(model_addition_debugger_context, record_functions=["torch.matmul"])),
    ):
        torch.set_printoptions(**saved)
        with context(model, debug_path=tmp_path / name, use_repr=use_repr):
            model(torch.ones(2, 3))
    torch.set_printoptions(**saved)
    assert_same_files(tmp_path / "upstream", tmp_path / "ours", "TakesValue")
    _, attend, product, matmul = read_trace(tmp_path / "ours").nodes
    assert [record.sub_path for record in attend.inputs] == ["kwargs.query", "kwargs.value"]
    assert (product.is_leaf, [record.shape for record in product.outputs]) == (False, [(2, 2)])
    assert (matmul.module_path, matmul.function) == ("TakesValue.product.matmul", "torch.matmul")


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, hidden):
        return self.proj(hidden)


class Stage(torch.nn.Module):
    """A numbered layer holding its own run of numbered blocks and a numbered Sequential."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Inner() for _ in range(4))
        self.mix = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))

    def forward(self, hidden):
        for block in self.blocks:
            hidden = block(hidden)
        return self.mix(hidden)


class Nested(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = torch.nn.ModuleList(Stage() for _ in range(4))
        self.shared = Inner()

    def forward(self, hidden):
        for stage in self.stages:
            hidden = stage(hidden)
            hidden.mul_(2)  # modifies the recorded output of the stage's last leaf in place
        hidden = self.shared(hidden)
        return self.shared(hidden)


def run_nested(model, tmp_path, **options):
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)  # upstream does not restore them
        with context(model, debug_path=tmp_path / name, **options):
            model(torch.randn(2, 4, generator=torch.Generator().manual_seed(2)))
    torch.set_printoptions(**saved)
    return tmp_path / "upstream", tmp_path / "ours"


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize("prune", [True, False])
def test_nested_layer_runs_match_upstream(tmp_path, prune, use_repr):
    torch.manual_seed(0)
    model = Nested()
    upstream_dir, ours_dir = run_nested(model, tmp_path, do_prune_layers=prune, use_repr=use_repr)
    assert_same_files(upstream_dir, ours_dir, "Nested")
    paths = module_paths(json.loads((ours_dir / "Nested_debug_tree_SUMMARY.json").read_text()))
    kept_stages = (
        ["Nested.stages.0", "Nested.stages.3"] if prune else [f"Nested.stages.{i}" for i in range(4)]
    )
    assert [path for path in paths if re.fullmatch(r"Nested\.stages\.\d", path)] == kept_stages
    assert paths.count("Nested.shared") == 2


def test_module_called_twice_keeps_the_record_upstream_overwrites(tmp_path):
    """Upstream names both calls' files alike: its file holds the second call's tensor, and so does ours.

    The first call's tensor, which upstream loses, is kept in a file our extra file names.
    """
    torch.manual_seed(0)
    model = Nested()
    upstream_dir, ours_dir = run_nested(model, tmp_path, use_repr=False)
    assert_same_files(upstream_dir, ours_dir, "Nested")
    first, second = (node for node in read_trace(ours_dir).nodes if node.module_path == "Nested.shared")
    assert second.inputs[0].file == (ours_dir / "Nested.shared_inputs_args_0.safetensors").resolve()
    assert first.inputs[0].file.name == "Nested.shared_inputs_args_0__2.safetensors"
    # the first call's input is the last stage's output, doubled in place afterwards
    first_input, second_input = (load_file(call.inputs[0].file)["data"] for call in (first, second))
    # recomputed on an aligned copy: safetensors' loaded tensor starts 8 bytes past a 64-byte
    # boundary, and on some CPUs (AMD EPYC here) the matrix product then rounds differently
    assert torch.equal(second_input, model.shared(first_input.clone()))


class Bump(torch.nn.Module):
    def forward(self, hidden):
        return hidden.add_(1)


class HalvesItsInput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.bump = Bump()

    def forward(self, hidden):
        hidden.mul_(0.5)
        return self.bump(self.proj(hidden))


class ChangesInputsInPlace(torch.nn.Module):
    """Runs 3 of its 4 layers (the third is kept by pruning after all); each changes its input in place."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(HalvesItsInput() for _ in range(4))

    def forward(self, hidden):
        for layer in self.layers[:3]:
            hidden = layer(hidden)
        return hidden


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize("prune", [True, False])
def test_inputs_changed_in_place_are_recorded_as_they_were_and_listed_in_our_file(tmp_path, prune, use_repr):
    torch.manual_seed(0)
    model = ChangesInputsInPlace()
    upstream_dir, ours_dir = run_nested(model, tmp_path, do_prune_layers=prune, use_repr=use_repr)
    assert_same_files(upstream_dir, ours_dir, "ChangesInputsInPlace")
    changed = {node.module_path: node.inputs_modified for node in read_trace(ours_dir).nodes}
    layers = [0, 2] if prune else [0, 1, 2]
    assert changed == {
        "ChangesInputsInPlace": ("args.0",),  # the model's input, halved by its first layer
        **{f"ChangesInputsInPlace.layers.{i}": ("args.0",) for i in layers},
        **{f"ChangesInputsInPlace.layers.{i}.proj": () for i in layers},
        **{f"ChangesInputsInPlace.layers.{i}.bump": ("args.0",) for i in layers},
    }


def _tiny_architecture(name):
    """A tiny randomly initialised model of another kind than Llama's, and inputs for its forward."""
    ids = torch.randint(0, 99, (2, 7), generator=torch.Generator().manual_seed(0))
    features = torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(0))
    images = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    if name == "bert":  # an encoder with an attention mask and a pooler
        config = transformers.BertConfig(
            vocab_size=99, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37
        )
        return transformers.BertForSequenceClassification(config), {
            "input_ids": ids,
            "attention_mask": ids > 3,
        }
    if name == "t5":  # an encoder-decoder with relative position biases shared between blocks
        config = transformers.T5Config(
            vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=3, num_heads=4, decoder_start_token_id=0
        )
        return transformers.T5ForConditionalGeneration(config), {
            "input_ids": ids,
            "decoder_input_ids": ids[:, :5],
        }
    if name == "vit":  # images in, patches as tokens
        config = transformers.ViTConfig(
            image_size=16,
            patch_size=4,
            hidden_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            intermediate_size=37,
        )
        return transformers.ViTForImageClassification(config), {"pixel_values": images}
    if name == "mixtral":  # a mixture of experts: router logits, experts called on a few tokens each
        config = transformers.MixtralConfig(
            vocab_size=99,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_local_experts=4,
            num_experts_per_tok=2,
        )
        return transformers.MixtralForCausalLM(config), {"input_ids": ids}
    config = transformers.WhisperConfig(  # speech: convolutions over features, an encoder-decoder
        vocab_size=99,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=37,
        decoder_ffn_dim=37,
        num_mel_bins=8,
        max_source_positions=16,
        max_target_positions=20,
        pad_token_id=0,
        decoder_start_token_id=1,
    )
    return transformers.WhisperForConditionalGeneration(config), {
        "input_features": features,
        "decoder_input_ids": ids[:, :5],
    }


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize("architecture", ["bert", "t5", "vit", "mixtral", "whisper"])
def test_other_architectures_match_upstream(tmp_path, architecture, use_repr):
    """A porter traces whatever they port: encoders, encoder-decoders, vision, experts, speech."""
    model, inputs = _tiny_architecture(architecture)
    model.eval()
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)  # upstream does not restore them
        with context(model, debug_path=tmp_path / name, use_repr=use_repr):
            model(**inputs)
    torch.set_printoptions(**saved)
    assert_same_files(tmp_path / "upstream", tmp_path / "ours", type(model).__name__)
    assert_our_records_are_read(tmp_path / "ours", model)


@pytest.mark.parametrize("use_repr", [True, False])
def test_gpt2_training_in_half_precision_with_a_cache_and_a_loss_matches_upstream(tmp_path, use_repr):
    """GPT-2's Conv1D, dropout drawing random numbers, float16, a DynamicCache and a 0-dim loss
    among the outputs, attentions and hidden states requested: what a porter's training check traces."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=99, n_embd=32, n_layer=3, n_head=4, n_positions=16)
    model = transformers.GPT2LMHeadModel(config).to(torch.float16).train()
    ids = torch.randint(0, 99, (2, 7), generator=torch.Generator().manual_seed(0))
    inputs = {"input_ids": ids, "labels": ids, "use_cache": True, "output_attentions": True}
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)  # upstream does not restore them
        torch.manual_seed(1)  # the same dropout masks
        with context(model, debug_path=tmp_path / name, use_repr=use_repr):
            model(**inputs, output_hidden_states=True)
    torch.set_printoptions(**saved)
    assert_same_files(tmp_path / "upstream", tmp_path / "ours", "GPT2LMHeadModel")
    assert_our_records_are_read(tmp_path / "ours", model)
    summary = (tmp_path / "ours" / "GPT2LMHeadModel_debug_tree_SUMMARY.json").read_text()
    assert (
        '"dtype": "torch.float16"' in summary
        and "GPT2LMHeadModel.transformer.h.0.attn.resid_dropout" in summary
    )
