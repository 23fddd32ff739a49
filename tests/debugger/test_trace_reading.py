import json
import math
import subprocess
import sys

import pytest
import torch

from model_debugging import TraceError, model_addition_debugger_context
from model_debugging.debugger.trace_format.entries import parse_shape, parse_stat
from model_debugging.debugger.trace_format.frame import load_trace
from model_debugging.debugger.trace_format.reading import read_trace
from tests.replay import toys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tensor(-8.9514e-01, device='cuda:0')", -0.89514),
        ("tensor(1.2345e-01)", 0.12345),
        ("tensor(0.)", 0.0),
        ("tensor(1.2500e-01, dtype=torch.bfloat16)", 0.125),
        ("tensor(-inf)", -math.inf),
        ("DTensor(...)", None),
        (None, None),
    ],
)
def test_parse_stat_reads_tensor_reprs(text, expected):
    assert parse_stat(text) == expected


def test_parse_stat_reads_nan():
    assert math.isnan(parse_stat("tensor(nan)"))


def test_parse_shape():
    assert parse_shape("torch.Size([1, 589, 3584])") == (1, 589, 3584)
    assert parse_shape("torch.Size([])") == ()
    assert parse_shape("[1, 2]") is None


def test_nodes_come_in_execution_order_with_depth_and_flattened_entries(tmp_path, toy_trace):
    trace = read_trace(toy_trace(tmp_path))
    assert [(node.module_path, node.depth, node.is_leaf) for node in trace.nodes] == [
        ("Toy", 0, False),
        ("Toy.embed", 1, True),
        ("Toy.block", 1, False),
        ("Toy.block.linear", 2, True),
        ("Toy.head", 1, True),
    ]
    root, embed = trace.nodes[0], trace.nodes[1]
    assert [record.sub_path for record in root.inputs] == ["kwargs.x"]
    assert root.outputs is None
    assert embed.outputs[0].sub_path == "" and embed.outputs[0].shape == (2, 4)
    assert embed.outputs[0].file == tmp_path.resolve() / "Toy.embed_outputs.safetensors"
    assert trace.mode == "tensors"


def test_nested_inputs_and_non_tensor_values_keep_their_sub_path(tmp_path, trace_writer):
    writer = trace_writer(tmp_path)
    cos, sin = torch.ones(2), torch.zeros(2)
    root = writer.node("Toy", {"args": [torch.ones(3)], "kwargs": {"use_cache": "True"}})
    root["inputs"]["kwargs"]["position_embeddings"] = [writer.tensor("cos", cos), writer.tensor("sin", sin)]
    root["outputs"] = {"logits": writer.tensor("logits", cos), "past": "None"}
    node = read_trace(writer.write(root)).nodes[0]
    assert [(r.sub_path, r.is_tensor) for r in node.inputs] == [
        ("args.0", True),
        ("kwargs.use_cache", False),
        ("kwargs.position_embeddings.0", True),
        ("kwargs.position_embeddings.1", True),
    ]
    assert [(r.sub_path, r.text) for r in node.outputs] == [("logits", None), ("past", "None")]


def test_repeated_module_calls_get_increasing_call_index(tmp_path, trace_writer):
    writer = trace_writer(tmp_path)
    x = torch.ones(2)
    leaf = [writer.node("Toy.shared", {"args": [x]}, x), writer.node("Toy.shared", {"args": [x]}, x)]
    trace = read_trace(writer.write(writer.node("Toy", {"args": [x]}, children=leaf)))
    assert [node.call_index for node in trace.nodes] == [0, 0, 1]


def test_repr_trace_and_summary_path_are_read(tmp_path, toy_trace):
    toy_trace(tmp_path, use_repr=True)
    (tmp_path / "Toy_debug_tree_FULL_TENSORS.json").unlink()
    trace = read_trace(tmp_path / "Toy_debug_tree_SUMMARY.json")
    assert trace.mode == "stats"
    assert trace.path.name == "Toy_debug_tree_SUMMARY.json"
    hidden = torch.randn(2, 4, generator=torch.Generator().manual_seed(0)) * 2  # the toy embed output
    assert dict(trace.nodes[1].outputs[0].stats)["std"] == pytest.approx(float(hidden.std()), rel=1e-4)


def test_summary_path_reads_its_full_tensors_sibling(tmp_path, toy_trace):
    toy_trace(tmp_path)
    trace = read_trace(tmp_path / "Toy_debug_tree_SUMMARY.json")
    assert trace.path.name == "Toy_debug_tree_FULL_TENSORS.json"
    assert trace.mode == "tensors"


def test_directory_with_several_traces_lists_them(tmp_path, toy_trace):
    toy_trace(tmp_path)
    toy_trace(tmp_path, class_name="Other")
    with pytest.raises(
        TraceError, match=r"2 traces .*Other_debug_tree_FULL_TENSORS.json, Toy_debug_tree_FULL_TENSORS.json"
    ):
        read_trace(tmp_path)
    assert read_trace(tmp_path / "Other_debug_tree_SUMMARY.json").root_path == "Other"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        (json.dumps({"inputs": {}}), "node #0 \\(the root\\) is not an object"),
    ],
)
def test_broken_trace_file_is_named(tmp_path, content, message):
    path = tmp_path / "Toy_debug_tree_SUMMARY.json"
    path.write_text(content)
    with pytest.raises(TraceError, match=message) as caught:
        read_trace(tmp_path)
    assert str(path) in str(caught.value)


def test_empty_directory_and_missing_path(tmp_path):
    with pytest.raises(TraceError, match="no '\\*_SUMMARY.json'"):
        read_trace(tmp_path)
    with pytest.raises(TraceError, match="no such file"):
        read_trace(tmp_path / "missing_SUMMARY.json")


def test_tensor_file_outside_the_trace_directory_is_refused(tmp_path, trace_writer):
    writer = trace_writer(tmp_path)
    root = writer.node("Toy", {"args": [torch.ones(2)]})
    root["inputs"]["args"][0]["value"] = "../../etc/passwd.safetensors"
    with pytest.raises(TraceError, match="outside the trace directory"):
        read_trace(writer.write(root))


def test_load_trace_has_one_row_per_module_call(tmp_path, toy_trace):
    frame = load_trace(toy_trace(tmp_path))
    assert list(frame["module_path"]) == ["Toy", "Toy.embed", "Toy.block", "Toy.block.linear", "Toy.head"]
    embed = frame.iloc[1]
    assert embed["output_shapes"] == {"": (2, 4)}
    assert embed["output_dtypes"] == {"": "torch.float32"}
    assert embed["input_shapes"] == {"args.0": (2, 4)}
    assert frame.loc[frame.module_path == "Toy.block", "output_shapes"].iloc[0] is None
    assert not math.isnan(embed["mean"]) and embed["min"] <= embed["mean"] <= embed["max"]


def test_reading_traces_does_not_import_torch(tmp_path, toy_trace):
    toy_trace(tmp_path)
    code = (
        "import sys; from model_debugging.debugger.trace_format.frame import load_trace; "
        f"load_trace({str(tmp_path)!r}); assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_module_calls_are_read_with_their_class(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    with model_addition_debugger_context(model, debug_path=tmp_path):
        model(torch.ones(1, 2))
    trace = read_trace(tmp_path)
    assert [(node.module_path, node.module_class) for node in trace.nodes] == [
        ("Sequential", "torch.nn.modules.container.Sequential"),
        ("Sequential.0", "torch.nn.modules.linear.Linear"),
        ("Sequential.1", "torch.nn.modules.activation.ReLU"),
    ]
    assert list(load_trace(tmp_path)["module_class"]) == [node.module_class for node in trace.nodes]


@pytest.mark.parametrize("recorded", [None, ""])
def test_a_missing_module_class_reads_as_not_recorded(tmp_path, trace_writer, recorded):
    writer = trace_writer(tmp_path)
    extra = {} if recorded is None else {"module_class": recorded}
    (node,) = read_trace(writer.write(writer.node("Toy", {"args": [torch.ones(2)]}, **extra))).nodes
    assert node.module_class is None


@pytest.mark.parametrize("recorded", [3, ["Linear"]])
def test_a_module_class_of_another_type_is_an_error_naming_the_node(tmp_path, trace_writer, recorded):
    writer = trace_writer(tmp_path)
    path = writer.write(writer.node("Toy", {"args": [torch.ones(2)]}, module_class=recorded))
    with pytest.raises(TraceError, match=r"Toy_debug_tree_FULL_TENSORS.json: node #0 'Toy': module_class is"):
        read_trace(path)


def function_trace(directory):
    """A trace of a model whose block calls a recorded function, as the debugger writes it."""
    model = toys.build_model()
    with model_addition_debugger_context(
        model, debug_path=directory, use_repr=False, record_functions=["scale_and_shift"]
    ):
        model(toys.toy_inputs())
    return directory


def test_what_upstream_does_not_record_comes_from_the_extra_file_and_is_gone_without_it(tmp_path):
    trace = read_trace(function_trace(tmp_path))
    helper = next(node for node in trace.nodes if node.function is not None)
    assert helper.module_path == "Toy.blocks.0.scale_and_shift" and helper.is_leaf
    assert all(node.module_class for node in trace.nodes if node.function is None)
    assert all(record.statistics for node in trace.nodes for record in node.records if record.is_tensor)
    (tmp_path / "Toy_debug_tree_EXTRA.json").unlink()  # a trace as upstream's debugger leaves it
    plain = read_trace(tmp_path)
    assert [node.module_path for node in plain.nodes] == [
        node.module_path for node in trace.nodes if node.function is None
    ]
    assert not any(node.module_class or node.function for node in plain.nodes)
    assert not any(record.statistics for node in plain.nodes for record in node.records)
    assert plain.mode == trace.mode == "tensors"


def test_a_trace_of_an_older_version_with_our_keys_inline_reads_the_same(tmp_path):
    trace = read_trace(function_trace(tmp_path / "new"))
    full = json.loads(trace.path.read_text())
    extra = json.loads((tmp_path / "new" / "Toy_debug_tree_EXTRA.json").read_text())["tree"]

    def inline(node, ours):  # how versions before the extra file wrote a trace
        node.update((key, ours[key]) for key in ("module_class", "function", "exception") if key in ours)
        entries = list(_entries([node.get("inputs"), node.get("outputs")]))
        for entry, item in zip(entries, ours.get("tensors", []), strict=False):
            entry.update(item)
        children = iter(node.get("children", []))
        node["children"] = [
            inline(
                {key: extra_child[key] for key in ("module_path", "inputs", "outputs") if key in extra_child}
                if "function" in extra_child
                else next(children),
                extra_child,
            )
            for extra_child in ours.get("children", [])
        ]
        if not node["children"]:
            del node["children"]
        return node

    old = tmp_path / "old"
    old.mkdir()
    for path in (tmp_path / "new").glob("*.safetensors"):
        (old / path.name).write_bytes(path.read_bytes())
    (old / "Toy_debug_tree_FULL_TENSORS.json").write_text(json.dumps(inline(full, extra), indent=2))
    assert described(read_trace(old)) == described(trace)


def described(trace):
    """Everything read for each node, with tensor files by name (the two traces are in two directories)."""
    return [
        (
            node.module_path, node.depth, node.call_index, node.is_leaf, node.function, node.module_class,
            [(r.sub_path, r.shape, r.dtype, r.stats, r.statistics, r.file.name if r.file else r.text) for r in node.records],
        )
        for node in trace.nodes
    ]  # fmt: skip


def _entries(value):
    if isinstance(value, dict):
        if "dtype" in value:
            yield value
        else:
            for item in value.values():
                yield from _entries(item)
    elif isinstance(value, list):
        for item in value:
            yield from _entries(item)


def test_an_extra_file_of_other_trace_files_is_refused_naming_it(tmp_path):
    function_trace(tmp_path)
    full = tmp_path / "Toy_debug_tree_FULL_TENSORS.json"
    full.write_text(full.read_text().replace("Toy.head", "Toy.tail"))  # as another tool rewriting it
    with pytest.raises(TraceError, match="Toy_debug_tree_EXTRA.json: was written with another"):
        read_trace(tmp_path)


def test_an_extra_file_recording_another_call_is_refused_naming_the_node(tmp_path):
    function_trace(tmp_path)
    extra_path = tmp_path / "Toy_debug_tree_EXTRA.json"
    document = json.loads(extra_path.read_text())
    document["tree"]["children"][-1]["module_path"] = "Toy.tail"
    extra_path.write_text(json.dumps(document))
    with pytest.raises(TraceError, match=r"EXTRA.json: node #\d+ 'Toy': records a call of 'Toy.tail' where"):
        read_trace(tmp_path)
