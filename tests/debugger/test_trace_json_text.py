"""The trace JSON writer must produce exactly what json.dumps(indent=2) produces."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from model_debugging.debugger.trace_format.json_text import dumps_indented

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_same_text_as_json_dumps(value):
    assert dumps_indented(value) == json.dumps(value, indent=2)


def test_tuples_and_nested_empties():
    value = {"a": (1, [], {}), "b": [{"c": None}], "é": "tensor([1.0000e+00])\u2028"}
    assert dumps_indented(value) == json.dumps(value, indent=2)
