"""What a user of model_addition_debugger_context sees: files, tree, and an untouched model."""

import json
import warnings
from dataclasses import dataclass

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format import reading


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, width)

    def forward(self, hidden, scale=1.0):
        return hidden + self.proj(self.norm(hidden)) * scale


class ToyModel(nn.Module):
    def __init__(self, width=8, layers=4):
        super().__init__()
        self.embed = nn.Embedding(20, width)
        self.layers = nn.ModuleList(Block(width) for _ in range(layers))
        self.head = nn.Linear(width, 3)

    def forward(self, input_ids, scale=1.0):
        hidden = self.embed(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, scale=scale)
        return self.head(hidden)


def read_trace(directory, name="ToyModel_debug_tree", kind="SUMMARY"):
    """The JSON file as upstream's readers see it."""
    return json.loads((directory / f"{name}_{kind}.json").read_text())


def module_paths(node):
    yield node["module_path"]
    for child in node.get("children", []):
        yield from module_paths(child)


def trace(model, tmp_path, *args, **context_kwargs):
    with model_addition_debugger_context(model, debug_path=tmp_path, **context_kwargs):
        return model(*args)


@pytest.fixture
def model():
    torch.manual_seed(0)
    return ToyModel()


@pytest.fixture
def input_ids():
    return torch.tensor([[1, 2, 3, 4, 5]])


def test_tree_keeps_first_and_last_layer_by_default(model, input_ids, tmp_path):
    trace(model, tmp_path, input_ids)
    root = read_trace(tmp_path)
    assert [child["module_path"] for child in root["children"]] == [
        "ToyModel.embed",
        "ToyModel.layers.0",
        "ToyModel.layers.3",
        "ToyModel.head",
    ]
    assert list(root) == ["module_path", "inputs", "children"]
    layer = root["children"][1]
    assert list(layer) == ["module_path", "inputs", "children"]  # outputs only on leaves
    assert [child["module_path"] for child in layer["children"]] == [
        "ToyModel.layers.0.norm",
        "ToyModel.layers.0.proj",
    ]
    assert layer["inputs"]["kwargs"] == {"scale": "1.0"}
    leaf = layer["children"][0]
    assert list(leaf) == ["module_path", "inputs", "outputs"]
    assert list(leaf["outputs"]) == ["shape", "dtype", "mean", "std", "min", "max"]
    assert leaf["outputs"]["shape"] == "torch.Size([1, 5, 8])"
    assert leaf["outputs"]["mean"].startswith("tensor(") and "e" in leaf["outputs"]["mean"]
    # what upstream does not record is read from the extra file
    nodes = {node.module_path: node for node in reading.read_trace(tmp_path).nodes}
    assert nodes["ToyModel"].module_class == f"{ToyModel.__module__}.ToyModel"
    assert nodes["ToyModel.layers.0"].module_class == f"{Block.__module__}.Block"
    norm = nodes["ToyModel.layers.0.norm"]
    assert norm.module_class == "torch.nn.modules.normalization.LayerNorm"
    assert [name for name, _ in norm.outputs[0].statistics] == [
        "mean",
        "std",
        "min",
        "max",
        "nan",
        "posinf",
        "neginf",
    ]


def test_no_pruning_keeps_every_layer(model, input_ids, tmp_path):
    trace(model, tmp_path, input_ids, do_prune_layers=False)
    paths = list(module_paths(read_trace(tmp_path)))
    assert [path for path in paths if path.count(".") == 2] == [f"ToyModel.layers.{i}" for i in range(4)]


def test_full_tensors_hold_scientific_repr_lines(model, input_ids, tmp_path):
    trace(model, tmp_path, input_ids)
    root = read_trace(tmp_path, kind="FULL_TENSORS")
    assert root["inputs"]["args"][0]["value"] == ["tensor([[1, 2, 3, 4, 5]])"]
    head_output = root["children"][-1]["outputs"]["value"]
    assert head_output[0].startswith("tensor([[[")
    assert "e-0" in head_output[0] or "e+0" in head_output[0]
    summary = read_trace(tmp_path)
    assert "value" not in json.dumps(summary)


def test_safetensors_mode_writes_one_file_per_recorded_tensor(model, input_ids, tmp_path):
    trace(model, tmp_path, input_ids, use_repr=False)
    root = read_trace(tmp_path, kind="FULL_TENSORS")
    embed = root["children"][0]
    assert embed["inputs"]["args"][0]["value"] == "./ToyModel.embed_inputs_args_0.safetensors"
    assert embed["outputs"]["value"] == "./ToyModel.embed_outputs.safetensors"
    expected = model.embed(torch.tensor([[1, 2, 3, 4, 5]]))
    torch.testing.assert_close(load_file(tmp_path / "ToyModel.embed_outputs.safetensors")["data"], expected)
    referenced = {path[2:] for path in _values(root)}
    on_disk = {path.name for path in tmp_path.glob("*.safetensors")}
    assert referenced == on_disk  # no files for pruned layers or for outputs the tree drops


def _values(node):
    if isinstance(node, dict):
        if isinstance(node.get("value"), str):
            yield node["value"]
        for item in node.values():
            yield from _values(item)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item)


def test_model_is_left_exactly_as_before(model, input_ids, tmp_path):
    before = {name: dict(vars(module)) for name, module in model.named_modules()}
    print_options = torch._tensor_str.get_printoptions()
    trace(model, tmp_path, input_ids)
    assert {name: dict(vars(module)) for name, module in model.named_modules()} == before
    assert all("forward" not in vars(module) for module in model.modules())
    assert torch._tensor_str.get_printoptions() == print_options


def test_forward_runs_without_grad(model, input_ids, tmp_path):
    output = trace(model, tmp_path, input_ids)
    assert not output.requires_grad
    assert model(input_ids).requires_grad  # and grad mode is back afterwards


class Exploding(nn.Module):
    def forward(self, hidden):
        raise ValueError(f"bad hidden of shape {tuple(hidden.shape)} at {object()}")


@pytest.mark.parametrize("prune", [True, False])
def test_exception_leaves_model_clean_and_writes_partial_trace(model, input_ids, tmp_path, prune):
    model.layers[2].proj = Exploding()
    before = {name: dict(vars(module)) for name, module in model.named_modules()}
    print_options = torch._tensor_str.get_printoptions()
    with pytest.raises(ValueError, match="bad hidden"):
        trace(model, tmp_path, input_ids, do_prune_layers=prune)
    assert {name: dict(vars(module)) for name, module in model.named_modules()} == before
    assert torch._tensor_str.get_printoptions() == print_options
    root = read_trace(tmp_path)
    expected_layers = (
        ["ToyModel.layers.0", "ToyModel.layers.2"] if prune else [f"ToyModel.layers.{i}" for i in range(3)]
    )
    assert [child["module_path"] for child in root["children"]] == ["ToyModel.embed", *expected_layers]
    failing_layer = root["children"][-1]
    assert failing_layer["module_path"] == "ToyModel.layers.2"
    raised = failing_layer["children"][-1]
    assert raised["module_path"] == "ToyModel.layers.2.proj"
    assert list(raised) == ["module_path", "inputs"]  # the exception is in the extra file
    exceptions = {node.module_path: node.exception for node in reading.read_trace(tmp_path).nodes}
    # only the module that raised carries it
    assert [path for path, exception in exceptions.items() if exception] == ["ToyModel.layers.2.proj"]
    assert exceptions["ToyModel.layers.2.proj"] == (
        "ValueError: bad hidden of shape (1, 5, 8) at <object object at 0xXXXXXXXX>"
    )
    assert raised["inputs"]["args"][0]["mean"].startswith(
        "tensor("
    )  # recorded even in a possibly pruned layer


def test_each_top_level_forward_gets_its_own_files(model, tmp_path):
    with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=False):
        model(torch.tensor([[1, 2]]))
        model(torch.tensor([[3, 4, 5]]))
    first = read_trace(tmp_path, kind="FULL_TENSORS")
    second = read_trace(tmp_path, name="ToyModel_debug_tree_2", kind="FULL_TENSORS")
    assert first["inputs"]["args"][0]["shape"] == "torch.Size([1, 2])"
    assert second["inputs"]["args"][0]["shape"] == "torch.Size([1, 3])"
    first_file = first["inputs"]["args"][0]["value"]
    second_file = second["inputs"]["args"][0]["value"]
    assert first_file != second_file
    assert load_file(tmp_path / first_file)["data"].tolist() == [[1, 2]]
    assert load_file(tmp_path / second_file)["data"].tolist() == [[3, 4, 5]]


class SharedTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(2, 2)

    def forward(self, x):
        return self.shared(self.shared(x) * 10)


def test_module_called_twice_keeps_both_records_and_files(tmp_path):
    model = SharedTwice()
    trace(model, tmp_path, torch.ones(1, 2), use_repr=False)
    root = read_trace(tmp_path, name="SharedTwice_debug_tree", kind="FULL_TENSORS")
    first, second = root["children"]
    assert first["module_path"] == second["module_path"] == "SharedTwice.shared"
    # as upstream's: both calls name one file, which holds the second call's tensor
    shared = "./SharedTwice.shared_inputs_args_0.safetensors"
    assert first["inputs"]["args"][0]["value"] == second["inputs"]["args"][0]["value"] == shared
    second_input = model.shared(torch.ones(1, 2)) * 10
    assert torch.equal(load_file(tmp_path / shared)["data"], second_input)
    # the first call's tensor is kept too, and our readers find it
    first_call, second_call = reading.read_trace(tmp_path).nodes[1:]
    assert first_call.inputs[0].file.name == "SharedTwice.shared_inputs_args_0__2.safetensors"
    assert load_file(first_call.inputs[0].file)["data"].tolist() == [[1.0, 1.0]]
    assert second_call.inputs[0].file == (tmp_path / shared).resolve()


class HostileKeys(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Identity()

    def forward(self, x):
        return self.inner({"../../escape": x, "a/b\\c:d": x, "CON": x, "x" * 400: x, "A": x, "a": x})


def test_no_file_name_escapes_debug_path(tmp_path):
    debug_dir = tmp_path / "debug"
    trace(HostileKeys(), debug_dir, torch.ones(2), use_repr=False)
    assert not list(tmp_path.glob("*.safetensors"))
    files = list(debug_dir.glob("*.safetensors"))
    root = read_trace(debug_dir, name="HostileKeys_debug_tree", kind="FULL_TENSORS")
    values = list(_values(root))
    assert len(values) == len(set(values)) == len(files) == 13  # the root input and 6 keys in, 6 out
    assert len({value.casefold() for value in values}) == 13  # distinct on case-insensitive file systems
    for value in values:
        name = value[2:]
        assert "/" not in name and "\\" not in name and ":" not in name
        assert len(name.encode()) <= 255
        assert (debug_dir / name).resolve().parent == debug_dir.resolve()


@dataclass
class Batch:
    ids: torch.Tensor
    note: str


class Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = nn.Identity()

    def forward(self, batch, mask=None, count=3):
        self.leaf(torch.empty(0, 4))
        self.leaf(torch.tensor([True, False]))
        self.leaf(torch.tensor([float("nan"), float("inf"), 1.0]))
        self.leaf(torch.tensor([2.5]))
        return {"ids": batch.ids, "none": None, "pair": (count, "text")}


def test_odd_values_do_not_crash(tmp_path):
    trace(Odd(), tmp_path, Batch(torch.arange(3), "hi"), use_repr=True)
    root = read_trace(tmp_path, name="Odd_debug_tree", kind="FULL_TENSORS")
    assert root["inputs"]["args"][0].startswith("Batch(ids=tensor([0, 1, 2]), note='hi')")
    empty, boolean, special, single = (child["outputs"] for child in root["children"])
    assert empty == {
        "shape": "torch.Size([0, 4])",
        "dtype": "torch.float32",
        "value": ["tensor([], size=(0, 4))"],
    }
    assert boolean == {"shape": "torch.Size([2])", "dtype": "torch.bool", "value": ["tensor([ True, False])"]}
    boolean_record = reading.read_trace(tmp_path).nodes[2].outputs[0]
    assert boolean_record.statistics == (("min", 0), ("max", 1), ("sum", 1), ("weighted_sum", 1))
    assert special["mean"] == "tensor(nan)" and special["max"] == "tensor(nan)"
    assert special["value"] == ["tensor([       nan,        inf, 1.0000e+00])"]
    assert single["std"] == "tensor(nan)" and single["mean"] == "tensor(2.5000e+00)"


def test_leaf_model_records_its_outputs(tmp_path):
    trace(nn.Linear(2, 2), tmp_path, torch.ones(1, 2), use_repr=False)
    root = read_trace(tmp_path, name="Linear_debug_tree", kind="FULL_TENSORS")
    assert list(root) == ["module_path", "inputs", "outputs"]
    assert root["outputs"]["value"] == "./Linear_outputs.safetensors"
    assert reading.read_trace(tmp_path).nodes[0].module_class == "torch.nn.modules.linear.Linear"


def test_unusable_debug_path_fails_before_the_forward(model, tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a directory")
    with (
        pytest.raises(ValueError, match="file.txt"),
        model_addition_debugger_context(model, debug_path=a_file / "sub"),
    ):
        pytest.fail("the context must not be entered")
    assert "forward" not in vars(model)


def test_current_directory_is_the_default(model, input_ids, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with model_addition_debugger_context(model):
        model(input_ids)
    assert (tmp_path / "ToyModel_debug_tree_SUMMARY.json").exists()
    assert (tmp_path / "ToyModel_debug_tree_FULL_TENSORS.json").exists()


class TakesValue(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = AttendLike()

    def forward(self, x):
        return self.attend(query=x, value=x * 2)


class AttendLike(nn.Module):
    def forward(self, query, value):
        return query + value


def test_an_input_named_value_leaves_the_summary_as_upstream_strips_it_and_is_read_from_the_full_file(
    tmp_path,
):
    trace(TakesValue(), tmp_path, torch.ones(2))
    (attend,) = read_trace(tmp_path, name="TakesValue_debug_tree")["children"]
    assert list(attend["inputs"]["kwargs"]) == ["query"]  # upstream drops every "value" key
    (full,) = read_trace(tmp_path, name="TakesValue_debug_tree", kind="FULL_TENSORS")["children"]
    assert list(full["inputs"]["kwargs"]) == ["query", "value"]
    node = reading.read_trace(tmp_path / "TakesValue_debug_tree_SUMMARY.json").nodes[1]
    assert [(record.sub_path, record.shape) for record in node.inputs] == [
        ("kwargs.query", (2,)),
        ("kwargs.value", (2,)),
    ]


class BrokenRepr:
    def __repr__(self):
        raise RuntimeError("half-built")


class TakesAnything(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = nn.Identity()

    def forward(self, x, extra):
        return self.leaf(x)


def test_an_input_whose_repr_raises_is_recorded_not_fatal(tmp_path):
    trace(TakesAnything(), tmp_path, torch.ones(1), BrokenRepr())
    root = read_trace(tmp_path, name="TakesAnything_debug_tree")
    assert root["inputs"]["args"][1] == "<BrokenRepr object; repr() raised RuntimeError: half-built>"


class FirstHalf(nn.Module):
    def forward(self, x):
        return x[..., : x.shape[-1] // 2]  # a view into a larger storage


class StopsEarly(nn.Module):
    """Runs 3 of its 4 layers and scales each layer's output in place; with ``as_views``, each layer
    returns the first half of a wider projection, a view."""

    def __init__(self, as_views=False):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.Linear(2, 4), FirstHalf()) if as_views else nn.Sequential(nn.Linear(2, 2))
            for _ in range(4)
        )

    def forward(self, hidden):
        for layer in self.layers[:3]:
            hidden = layer(hidden)
            hidden.mul_(2)
        return hidden


def test_an_unexpected_last_layer_keeps_the_values_it_returned_before_a_change_in_place(tmp_path):
    torch.manual_seed(0)
    model = StopsEarly()
    with torch.no_grad():
        before_change = model.layers[2](2 * model.layers[1](2 * model.layers[0](torch.ones(1, 2))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trace(model, tmp_path, torch.ones(1, 2), use_repr=False)
    root = read_trace(tmp_path, name="StopsEarly_debug_tree")
    assert [child["module_path"] for child in root["children"]] == [
        "StopsEarly.layers.0",
        "StopsEarly.layers.2",
    ]
    recorded = load_file(tmp_path / "StopsEarly.layers.2.0_outputs.safetensors")["data"]
    assert torch.equal(recorded, before_change)


def test_warns_when_an_unexpected_last_layer_returned_a_view_modified_in_place(tmp_path):
    with pytest.warns(
        UserWarning, match=r"StopsEarly\.layers\.2\.1_outputs: the tensor was modified in place"
    ):
        trace(StopsEarly(as_views=True), tmp_path, torch.ones(1, 2))
    root = read_trace(tmp_path, name="StopsEarly_debug_tree")
    assert [child["module_path"] for child in root["children"]] == [
        "StopsEarly.layers.0",
        "StopsEarly.layers.2",
    ]


def test_inference_mode_forward_is_traced(model, input_ids, tmp_path):
    with torch.inference_mode():
        trace(model, tmp_path, input_ids)
    assert [child["module_path"] for child in read_trace(tmp_path)["children"]][-2:] == [
        "ToyModel.layers.3",
        "ToyModel.head",
    ]


class SparseOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = nn.Identity()

    def forward(self, x):
        return self.leaf(x.to_sparse())


def test_tensor_safetensors_cannot_hold_keeps_its_repr(tmp_path):
    trace(SparseOut(), tmp_path, torch.eye(2), use_repr=False)
    root = read_trace(tmp_path, name="SparseOut_debug_tree", kind="FULL_TENSORS")
    assert root["inputs"]["args"][0]["value"] == "./SparseOut_inputs_args_0.safetensors"
    (leaf,) = root["children"]
    assert leaf["outputs"]["value"][0].startswith("tensor(indices=tensor([[0, 1],")
    assert "mean" not in leaf["outputs"]


class LastBlockTwice(ToyModel):
    """Runs every layer, then the last one again: its first call turns out to be a middle block."""

    def forward(self, input_ids, scale=1.0):
        hidden = self.embed(input_ids)
        for layer in [*self.layers, self.layers[-1]]:
            hidden = layer(hidden, scale=scale)
        return self.head(hidden)


@pytest.mark.parametrize("use_repr", [True, False])
def test_last_block_called_again_leaves_no_file_of_its_first_call(input_ids, tmp_path, use_repr):
    torch.manual_seed(0)
    model = LastBlockTwice()
    trace(model, tmp_path, input_ids, use_repr=use_repr)
    root = read_trace(tmp_path, name="LastBlockTwice_debug_tree", kind="FULL_TENSORS")
    layers = [child["module_path"] for child in root["children"] if ".layers." in child["module_path"]]
    assert layers == ["LastBlockTwice.layers.0", "LastBlockTwice.layers.3"]
    last_input = root["children"][2]["inputs"]["args"][0]
    hidden = model.embed(input_ids)
    for layer in model.layers:
        hidden = layer(hidden)
    if use_repr:  # the second call's input: the output of the first call of layers.3
        torch.set_printoptions(sci_mode=True, linewidth=120)
        expected = repr(hidden.detach())
        torch.set_printoptions(profile="default")
        assert "\n".join(last_input["value"]) == expected
    else:
        torch.testing.assert_close(load_file(tmp_path / last_input["value"][2:])["data"], hidden)
        referenced = {path[2:] for path in _values(root)}
        assert referenced == {path.name for path in tmp_path.glob("*.safetensors")}
