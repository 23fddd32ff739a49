"""Module paths that moved in the layout change keep working for one release, with a warning."""

import importlib

import pytest

import model_debugging

MOVED = [
    ("model_debugging.debugger.compare", "compare_traces", "model_debugging.compare.engine"),
    ("model_debugging.debugger.compare_command", "main", "model_debugging.compare.command"),
    ("model_debugging.debugger.renames", "parse_rename_rule", "model_debugging.compare.renames"),
    ("model_debugging.reporting.traces", "read_trace", "model_debugging.debugger.trace_format"),
    ("model_debugging.reporting.traces", "STAT_NAMES", "model_debugging.debugger.trace_format"),
    ("model_debugging.debugger.writer", "trace_paths", "model_debugging.debugger.trace_format.writing"),
    (
        "model_debugging.debugger.json_text",
        "dumps_indented",
        "model_debugging.debugger.trace_format.json_text",
    ),
    ("model_debugging.debugger.naming", "FileNameRegistry", "model_debugging.debugger.trace_format.names"),
    (
        "model_debugging.debugger.tensor_files",
        "write_tensor_file",
        "model_debugging.debugger.trace_format.tensor_files",
    ),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_old_path_warns_and_gives_the_same_object(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}; import {name} from there"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_unknown_names_are_attribute_errors():
    module = importlib.import_module("model_debugging.debugger.compare")
    with pytest.raises(AttributeError), pytest.warns(DeprecationWarning):
        module.no_such_name  # noqa: B018


def test_top_level_compare_traces_is_the_new_home():
    from model_debugging.compare.engine import compare_traces

    assert model_debugging.compare_traces is compare_traces
