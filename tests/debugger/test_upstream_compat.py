"""Our traces against transformers' own model_addition_debugger_context on a tiny Llama.

Deliberate differences, accounted for here: upstream leaves .safetensors files for pruned
layers and for the top-level outputs the tree drops (we do not write them), and upstream
leaves torch's print options changed (we restore them, so each run starts from the defaults).
"""

import json
import math
import re

import pytest
import torch
from safetensors.torch import load_file

from model_debugging import model_addition_debugger_context

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.integration

# our extra keys, which upstream does not write: tensor entries' float64 statistics, module calls' class
OUR_EXTRA_KEYS = frozenset({"statistics", "module_class"})
STAT_PATTERN = re.compile(r"tensor\((.*?)(, dtype=torch\.\w+)?\)$")


@pytest.fixture(scope="module")
def tiny_llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1000,
    )
    return transformers.LlamaForCausalLM(config).eval()


def run_both(model, tmp_path, **options):
    input_ids = torch.randint(0, 1000, (1, 12), generator=torch.Generator().manual_seed(1))
    saved = torch._tensor_str.get_printoptions()
    outputs = {}
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)  # upstream does not restore them
        with context(model, debug_path=tmp_path / name, **options):
            outputs[name] = model(input_ids=input_ids).logits
    torch.set_printoptions(**saved)
    torch.testing.assert_close(outputs["ours"], outputs["upstream"], rtol=0, atol=0)
    return tmp_path / "upstream", tmp_path / "ours"


def load(directory, kind):
    return upstream_keys_only(
        json.loads((directory / f"LlamaForCausalLM_debug_tree_{kind}.json").read_text())
    )


def upstream_keys_only(tree):
    """``tree`` without our extra keys (upstream does not write them)."""
    if isinstance(tree, dict):
        return {key: upstream_keys_only(value) for key, value in tree.items() if key not in OUR_EXTRA_KEYS}
    if isinstance(tree, list):
        return [upstream_keys_only(item) for item in tree]
    return tree


def assert_every_tensor_has_statistics(path):
    text = path.read_text()
    assert text.count('"statistics": {') == text.count('"dtype": "torch.') > 0


def assert_every_call_has_its_module_class(path, model):
    nodes = list(walk_nodes(json.loads(path.read_text())))
    for node in nodes:
        _, _, name = node["module_path"].partition(".")
        cls = type(model.get_submodule(name))
        assert node["module_class"] == f"{cls.__module__}.{cls.__qualname__}", node["module_path"]
    assert nodes[0]["module_class"] == "transformers.models.llama.modeling_llama.LlamaForCausalLM"


def walk_nodes(node):
    yield node
    for child in node.get("children", []):
        yield from walk_nodes(child)


def upstream_text(path):
    """The text upstream writes for our trace file ``path``: our keys it does not write removed."""
    return json.dumps(upstream_keys_only(json.loads(path.read_text())), indent=2)


def walk(node, path="root"):
    """Yield (where, key, value) for every leaf of a trace tree (list items have their index as key)."""
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
        if isinstance(value, (dict, list)):
            yield from walk(value, f"{path}/{key}")
        else:
            yield path, key, value


def module_paths(node):
    return [each["module_path"] for each in walk_nodes(node)]


def assert_same_summary(upstream, ours):
    assert list(module_paths(ours)) == list(module_paths(upstream))
    ours_leaves, upstream_leaves = list(walk(ours)), list(walk(upstream))
    assert [(where, key) for where, key, _ in ours_leaves] == [
        (where, key) for where, key, _ in upstream_leaves
    ]
    for (where, key, mine), (_, _, theirs) in zip(ours_leaves, upstream_leaves, strict=True):
        if key in ("mean", "std", "min", "max"):
            mine_match, theirs_match = STAT_PATTERN.match(mine), STAT_PATTERN.match(theirs)
            assert mine_match.group(2) == theirs_match.group(2), where
            assert math.isclose(
                float(mine_match.group(1)), float(theirs_match.group(1)), rel_tol=1e-3, abs_tol=1e-6
            ), where
        else:
            assert mine == theirs, (where, key)


@pytest.mark.parametrize("prune", [True, False])
def test_repr_traces_match_upstream(tiny_llama, tmp_path, prune):
    upstream_dir, ours_dir = run_both(tiny_llama, tmp_path, do_prune_layers=prune)
    assert_same_summary(load(upstream_dir, "SUMMARY"), load(ours_dir, "SUMMARY"))
    full_upstream, full_ours = load(upstream_dir, "FULL_TENSORS"), load(ours_dir, "FULL_TENSORS")
    assert_same_summary(full_upstream, full_ours)
    value_lines = [(where, line) for where, _, line in walk(full_ours) if where.endswith("/value")]
    assert len(value_lines) > 100
    assert value_lines == [
        (where, line) for where, _, line in walk(full_upstream) if where.endswith("/value")
    ]
    # in practice the whole text is identical
    assert_every_tensor_has_statistics(ours_dir / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json")
    assert_every_call_has_its_module_class(
        ours_dir / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json", tiny_llama
    )
    assert (
        upstream_text(ours_dir / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json")
        == (upstream_dir / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json").read_text()
    )


@pytest.mark.parametrize("prune", [True, False])
def test_safetensors_traces_match_upstream(tiny_llama, tmp_path, prune):
    upstream_dir, ours_dir = run_both(tiny_llama, tmp_path, do_prune_layers=prune, use_repr=False)
    assert_same_summary(load(upstream_dir, "SUMMARY"), load(ours_dir, "SUMMARY"))
    full_ours = load(ours_dir, "FULL_TENSORS")
    assert full_ours == load(upstream_dir, "FULL_TENSORS")
    assert_every_tensor_has_statistics(ours_dir / "LlamaForCausalLM_debug_tree_SUMMARY.json")
    assert_every_call_has_its_module_class(ours_dir / "LlamaForCausalLM_debug_tree_SUMMARY.json", tiny_llama)
    referenced = sorted(value[2:] for _, key, value in walk(full_ours) if key == "value")
    assert len(referenced) > 20
    for name in referenced:
        assert (ours_dir / name).read_bytes() == (upstream_dir / name).read_bytes(), name
        assert load_file(ours_dir / name)["data"] is not None
    # upstream also writes files the tree never points to (pruned layers, dropped top-level outputs)
    assert sorted(path.name for path in ours_dir.glob("*.safetensors")) == referenced
    assert {path.name for path in upstream_dir.glob("*.safetensors")} >= set(referenced)


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


@pytest.mark.parametrize("prune", [True, False])
def test_nested_layer_runs_match_upstream(tmp_path, prune):
    torch.manual_seed(0)
    model = Nested()
    hidden = torch.randn(2, 4)
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)
        with context(model, debug_path=tmp_path / name, do_prune_layers=prune):
            model(hidden.clone())
    torch.set_printoptions(**saved)
    for kind in ("SUMMARY", "FULL_TENSORS"):
        ours = upstream_text(tmp_path / "ours" / f"Nested_debug_tree_{kind}.json")
        assert ours == (tmp_path / "upstream" / f"Nested_debug_tree_{kind}.json").read_text()
    paths = list(module_paths(json.loads(ours)))
    kept_stages = (
        ["Nested.stages.0", "Nested.stages.3"] if prune else [f"Nested.stages.{i}" for i in range(4)]
    )
    assert [path for path in paths if re.fullmatch(r"Nested\.stages\.\d", path)] == kept_stages
    assert paths.count("Nested.shared") == 2


def test_module_called_twice_keeps_the_file_upstream_overwrites(tmp_path):
    """Upstream names both calls' files alike, so the second call overwrites the first's."""
    torch.manual_seed(0)
    model = Nested()
    saved = torch._tensor_str.get_printoptions()
    for name, context in (
        ("upstream", transformers.model_addition_debugger_context),
        ("ours", model_addition_debugger_context),
    ):
        torch.set_printoptions(**saved)
        with context(model, debug_path=tmp_path / name, use_repr=False):
            model(torch.randn(2, 4, generator=torch.Generator().manual_seed(2)))
    torch.set_printoptions(**saved)
    trees = {name: load_nested(tmp_path / name) for name in ("upstream", "ours")}
    first, second = (child for child in trees["ours"]["children"] if child["module_path"] == "Nested.shared")
    assert [child["module_path"] for child in trees["ours"]["children"]] == [
        child["module_path"] for child in trees["upstream"]["children"]
    ]
    assert second["inputs"]["args"][0]["value"] == "./Nested.shared_inputs_args_0__2.safetensors"
    upstream_file = (tmp_path / "upstream" / "Nested.shared_inputs_args_0.safetensors").read_bytes()
    ours_first = (tmp_path / "ours" / first["inputs"]["args"][0]["value"]).read_bytes()
    ours_second = (tmp_path / "ours" / second["inputs"]["args"][0]["value"]).read_bytes()
    assert upstream_file == ours_second != ours_first
    # apart from the renamed second-call files, the trees are identical
    renamed = json.dumps(trees["ours"]).replace("__2.safetensors", ".safetensors")
    assert json.loads(renamed) == trees["upstream"]


def load_nested(directory):
    return upstream_keys_only(json.loads((directory / "Nested_debug_tree_FULL_TENSORS.json").read_text()))
