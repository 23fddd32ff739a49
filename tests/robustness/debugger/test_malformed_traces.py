"""Fuzzing the trace readers: every malformed trace is one line naming the file (and node), exit 2.

A real trace (use_repr=False, with function records, so it has an extra file and tensor files)
is copied and one of its files damaged the way a hand edit, another tool or a broken disk would:
a value of the wrong type where the format has a node, an input list, a tensor's statistics or
file name; an integer over Python's 4300-digit limit, a lone surrogate or nesting deeper than
Python reads, anywhere; a duplicated key; truncated or non-UTF-8 text; an extra file of another
trace; a tensor file cut short or overwritten. compare, view and replay then read it: each must
answer with exit 2 and one line naming the damaged file, never exit 0 or 1, never a traceback.
"""

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model_debugging.cli import main
from tests.test_output_paths import trace_toy

TOY = "tests.replay.toys:build_model"
FULL, SUMMARY, EXTRA = (f"Toy_debug_tree_{kind}.json" for kind in ("FULL_TENSORS", "SUMMARY", "EXTRA"))
HUGE, DEEP = "@@huge integer@@", "@@deep nesting@@"
FEW = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# JSON values of every type but the one the format wants there
NOT_A_STRING = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.just([]), st.just({"a": 1}))
NOT_AN_OBJECT = st.one_of(st.integers(-5, 5), st.booleans(), st.text(max_size=3), st.just([1]))
NOT_A_LIST = st.one_of(st.integers(-5, 5), st.booleans(), st.text(max_size=3), st.just({"a": 1}))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return trace_toy(tmp_path_factory.mktemp("fuzz") / "trace")


def nodes(tree):
    """The nodes of a trace or extra tree, in pre-order."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.get("children", [])))
    return found


def containers(value):
    """Every object and list inside ``value``, itself included."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            found.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


def tensor_entries(node):
    return [item for item in containers([node.get("inputs"), node.get("outputs")]) if "dtype" in item]


def put(data, tree, value):
    """Put ``value`` somewhere in ``tree``: as a new key of an object, or an item of a list."""
    target = data.draw(st.sampled_from(containers(tree)))
    if isinstance(target, dict):
        target[data.draw(st.sampled_from([*target, "fuzz"]))] = value
    elif target:
        target[data.draw(st.integers(0, len(target) - 1))] = value
    else:
        target.append(value)


def with_lone_surrogate(data, text):
    surrogate = chr(data.draw(st.integers(0xD800, 0xDFFF)))
    at = data.draw(st.integers(0, len(text)))
    return text[:at] + surrogate + text[at:]


def add_lone_surrogate(data, tree):
    """A lone surrogate in a string value or a key somewhere in ``tree``."""
    places = [
        (item, key)
        for item in containers(tree)
        for key in (item if isinstance(item, dict) else range(len(item)))
        if isinstance(item[key], str) or isinstance(key, str)
    ]
    item, key = data.draw(st.sampled_from(places))
    if isinstance(item[key], str) and data.draw(st.booleans()):
        item[key] = with_lone_surrogate(data, item[key])
    else:
        item[with_lone_surrogate(data, key)] = item.pop(key)


def damage_anywhere(data, tree):
    """A mutation any JSON reader must refuse, wherever it sits: the kind, and the tree to write."""
    kind = data.draw(st.sampled_from(["huge integer", "lone surrogate", "deep nesting"]))
    if kind == "huge integer":
        put(data, tree, HUGE)
    elif kind == "deep nesting":
        put(data, tree, DEEP)
    else:
        add_lone_surrogate(data, tree)
    return kind


def damage_trace_node(data, tree):
    """A value of the wrong type where upstream's format has one of a node's parts."""
    node = data.draw(st.sampled_from(nodes(tree)))
    choices = ["module_path", "inputs", "children"]
    if node.get("children"):
        choices.append("child")
    if tensor_entries(node):
        choices += ["statistic", "value"]
    part = data.draw(st.sampled_from(choices))
    if part == "module_path":
        node["module_path"] = data.draw(NOT_A_STRING)
    elif part == "inputs":
        node["inputs"] = data.draw(NOT_AN_OBJECT)
    elif part == "children":
        node["children"] = data.draw(NOT_A_LIST)
    elif part == "child":
        node["children"][data.draw(st.integers(0, len(node["children"]) - 1))] = data.draw(NOT_AN_OBJECT)
    else:
        entry = data.draw(st.sampled_from(tensor_entries(node)))
        if part == "statistic" and "mean" in entry:
            entry[data.draw(st.sampled_from(["mean", "std", "min", "max"]))] = data.draw(NOT_A_STRING)
        else:
            entry["value"] = data.draw(
                st.sampled_from([3, True, {"a": 1}, [1, 2], "tensor.bin", "../../outside.safetensors"])
            )
    return f"node {part}"


def damage_extra_node(data, tree):
    """A value of the wrong type in what the extra file records for a node, or a node of another trace."""
    node = data.draw(st.sampled_from(nodes(tree)))
    choices = ["module_class", "exception", "tensors", "children"]
    if not node.get("function"):  # a module call, which the trace has too (a function record is only here)
        choices.append("module_path")
    if node.get("tensors"):
        choices += ["statistics", "statistic", "file"]
    if node.get("function"):
        choices += ["function", "function inputs"]
    part = data.draw(st.sampled_from(choices))
    if part in ("module_class", "function"):
        node[part] = data.draw(NOT_A_STRING.filter(lambda value: value is not None))
    elif part == "exception":
        node["exception"] = data.draw(st.sampled_from([3, "boom", [1], {"type": 3}, {"message": []}]))
    elif part == "tensors":
        node["tensors"] = data.draw(NOT_A_LIST)
    elif part == "children":
        node["children"] = data.draw(NOT_A_LIST)
    elif part == "module_path":  # a call of another model
        node["module_path"] = data.draw(st.sampled_from(["Other", "Toy.elsewhere"]))
    elif part == "function inputs":
        node["inputs"] = data.draw(NOT_AN_OBJECT)
    else:
        item = data.draw(st.sampled_from(node["tensors"]))
        if part == "statistics":
            item["statistics"] = data.draw(NOT_AN_OBJECT)
        elif part == "statistic":
            item.setdefault("statistics", {})["mean"] = data.draw(
                st.sampled_from(["1.0", True, [1], {"x": 1}])
            )
        else:
            item["file"] = data.draw(st.sampled_from([3, None, "x.txt", "../../outside.safetensors"]))
    return f"extra {part}"


DOCUMENT_LEVEL = {"extra format", "extra version", "extra trace_files", "extra tree"}


def damage_extra_document(data, document):
    part = data.draw(
        st.sampled_from(["format", "version", "trace_files", "tree", "call missing", "call added"])
    )
    if part == "format":
        document["format"] = data.draw(st.sampled_from(["something else", 3, None]))
    elif part == "version":
        document["version"] = data.draw(st.sampled_from([2, 0, "1", None]))
    elif part == "trace_files":
        document["trace_files"] = data.draw(st.sampled_from([{"FULL_TENSORS": "0" * 64}, [], None]))
    elif part == "tree":
        document["tree"] = data.draw(NOT_AN_OBJECT)
    else:
        parent = data.draw(
            st.sampled_from([node for node in nodes(document["tree"]) if node.get("children")])
        )
        if part == "call missing":  # a module call the trace has (a function record is only here: not missed)
            calls = [index for index, child in enumerate(parent["children"]) if "function" not in child]
            parent["children"].pop(data.draw(st.sampled_from(calls)))
        else:
            parent["children"].append({"module_path": "Toy.added"})
    return f"extra {part}"


def serialized(tree):
    text = json.dumps(tree, indent=2)
    text = text.replace(json.dumps(HUGE), "9" * 4400)
    return text.replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000)


def damage_text(data, text):
    """Text no JSON reader takes: duplicated key, cut short, not UTF-8."""
    kind = data.draw(st.sampled_from(["duplicated key", "cut short", "not UTF-8"]))
    if kind == "duplicated key":
        at = data.draw(st.sampled_from([i for i in range(len(text)) if text.startswith('"module_path"', i)]))
        line = text[at : text.index("\n", at)]
        return kind, (text[:at] + line + " " + text[at:]).encode()
    data_bytes = text.encode()
    at = data.draw(st.integers(1, len(data_bytes) - 2))
    if kind == "cut short":
        return kind, data_bytes[:at]
    return kind, data_bytes[:at] + b"\xff" + data_bytes[at:]


def refresh_checksums(directory):
    """Tie the extra file to the trace JSON as it is now, as if they had been written together."""
    extra = directory / EXTRA
    document = json.loads(extra.read_text())
    for kind, name in (("FULL_TENSORS", FULL), ("SUMMARY", SUMMARY)):
        if (directory / name).exists():
            document["trace_files"][kind] = hashlib.sha256((directory / name).read_bytes()).hexdigest()
    extra.write_text(json.dumps(document))


def assert_refused(capsys, commands, damaged, node_level):
    for command in commands:
        code = main(command)
        captured = capsys.readouterr()
        assert code == 2, (command, captured.err, captured.out[-300:])
        lines = captured.err.splitlines()
        assert len(lines) == 1, captured.err
        assert lines[0].startswith(f"model-debugging {command[0]}: error: "), lines[0]
        assert damaged in lines[0], lines[0]
        if node_level:
            assert "node #" in lines[0], lines[0]


def commands(directory, pristine):
    return [
        ["compare", str(directory), str(pristine)],
        ["view", str(directory), "--output", str(directory / "page.html")],
        ["replay", str(directory), "--model", TOY],
    ]


@FEW
@given(data=st.data())
def test_a_damaged_trace_json_is_refused_naming_the_file_and_node(pristine, capsys, data):
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(shutil.copytree(pristine, Path(scratch) / "trace"))
        read = FULL
        if data.draw(st.booleans()):  # a trace of which only the summary is left
            (directory / FULL).unlink()
            read = SUMMARY
        tree = json.loads((directory / read).read_text())
        how = data.draw(st.sampled_from(["node", "anywhere", "text"]))
        if how == "text":
            kind, damaged = damage_text(data, serialized(tree))
        else:
            kind = damage_trace_node(data, tree) if how == "node" else damage_anywhere(data, tree)
            damaged = serialized(tree).encode()
        (directory / read).write_bytes(damaged)
        if data.draw(st.booleans()):
            (directory / EXTRA).unlink()  # as upstream's debugger leaves it
        else:
            refresh_checksums(directory)
        node_level = kind.startswith("node") or kind in ("huge integer", "lone surrogate")
        assert_refused(capsys, commands(directory, pristine), read, node_level)


@FEW
@given(data=st.data())
def test_a_damaged_extra_file_is_refused_naming_it(pristine, capsys, data):
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(shutil.copytree(pristine, Path(scratch) / "trace"))
        document = json.loads((directory / EXTRA).read_text())
        how = data.draw(st.sampled_from(["node", "document", "anywhere", "text"]))
        if how == "text":
            kind, damaged = damage_text(data, serialized(document))
        else:
            if how == "node":
                kind = damage_extra_node(data, document["tree"])
            elif how == "document":
                kind = damage_extra_document(data, document)
            else:
                kind = damage_anywhere(data, document)
            damaged = serialized(document).encode()
        (directory / EXTRA).write_bytes(damaged)
        node_level = kind.startswith("extra") and kind not in DOCUMENT_LEVEL
        assert_refused(capsys, commands(directory, pristine), EXTRA, node_level)


@settings(FEW, max_examples=15)
@given(data=st.data())
def test_a_damaged_tensor_file_is_refused_by_the_commands_that_read_it(pristine, capsys, data):
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(shutil.copytree(pristine, Path(scratch) / "trace"))
        name = data.draw(st.sampled_from(sorted(path.name for path in directory.glob("*.safetensors"))))
        content = (directory / name).read_bytes()
        damage = data.draw(st.sampled_from(["cut short", "garbage", "huge header", "empty"]))
        if damage == "cut short":
            content = content[: data.draw(st.integers(0, len(content) - 1))]
        elif damage == "garbage":
            content = data.draw(st.binary(min_size=1, max_size=64))
        elif damage == "huge header":
            content = (2**62).to_bytes(8, "little") + content[8:]
        else:
            content = b""
        (directory / name).write_bytes(content)
        # view reads no tensor file; compare (tensors mode) and replay read every one
        assert_refused(capsys, commands(directory, pristine)[::2], name, node_level=False)
