"""The trace JSON writer must produce exactly what json.dumps(indent=2) produces."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from model_debugging.debugger.trace_format.json_text import dumps_indented, dumps_trace_texts
from model_debugging.debugger.trace_format.records import TensorEntry

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
# lists of strings alone: a tensor's repr lines
lines = st.lists(st.text(), min_size=1, max_size=6)
values = st.recursive(
    scalars | lines,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=30,
)
# tensor entries, with or without a value, anywhere in a tree
entry_keys = st.sampled_from(["shape", "dtype", "value", "mean", "statistics"])
trees = st.recursive(
    scalars | lines,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=4)
        | st.dictionaries(entry_keys, inner, max_size=4).map(TensorEntry)
    ),
    max_leaves=30,
)


def without_values(value):
    """The summary's tree as upstream strips it: no object keeps a "value" key."""
    if isinstance(value, dict):
        return {key: without_values(item) for key, item in value.items() if key != "value"}
    if isinstance(value, (list, tuple)):
        return [without_values(item) for item in value]
    return value


@settings(max_examples=300, deadline=None)
@given(values)
def test_same_text_as_json_dumps(value):
    assert dumps_indented(value) == json.dumps(value, indent=2)


def test_tuples_and_nested_empties():
    value = {"a": (1, [], {}), "b": [{"c": None}], "é": "tensor([1.0000e+00])\u2028"}
    assert dumps_indented(value) == json.dumps(value, indent=2)


@settings(max_examples=300, deadline=None)
@given(trees)
def test_full_and_summary_texts_in_one_walk(tree):
    full, summary = dumps_trace_texts(tree)
    assert full == json.dumps(tree, indent=2)
    assert summary == json.dumps(without_values(tree), indent=2)
