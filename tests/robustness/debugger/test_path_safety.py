"""Hostile module names, dict keys and class names never put a file outside ``debug_path``.

Every file the debugger writes must lie inside ``debug_path``, have a name that Linux, macOS and
Windows all accept, and not collide with another file on a case-insensitive, Unicode-normalizing
file system (macOS, Windows), where a collision would silently overwrite a record.
"""

import json
import os
import tempfile
import unicodedata
from pathlib import Path

import torch
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context

WINDOWS_RESERVED_CHARACTERS = set('<>:"/\\|?*')
# CON, PRN, AUX, NUL, COM0-9, LPT0-9 and the superscript-digit variants, with or without extension.
WINDOWS_DEVICE_NAMES = {"CON", "PRN", "AUX", "NUL"} | {
    f"{port}{digit}" for port in ("COM", "LPT") for digit in "0123456789¹²³"
}
HOSTILE_NAMES = [
    "..",
    ".",
    "../../escape",
    "/",
    "/etc/passwd",
    "\\",
    "..\\..\\escape",
    "\x00",
    "a\x00b",
    "CON",
    "con",
    "NUL",
    "COM1",
    "com¹",
    "LPT0",
    "AUX.txt",
    "CON ",
    "name.",
    "name ",
    " . ",
    "x" * 400,
    "é" * 150,
    "Straße",
    "STRASSE",
    "e\u0301",
    "\u00e9",
    "\ud800",
    "\U0001f600" * 70,
    "a:b*c?d|e<f>g",
    "\t\n\r",
]
names = st.one_of(
    st.sampled_from(HOSTILE_NAMES),
    st.text(st.characters(codec=None), min_size=1, max_size=80),
    st.text(st.characters(categories=["Cs", "Cc", "Lu", "Ll", "So"]), min_size=1, max_size=300),
)
keys = st.one_of(names, st.integers(-3, 3), st.none(), st.tuples(names, st.integers()))


class KeyedLeaf(nn.Module):
    """Takes hostile keyword arguments, returns a dict with hostile keys."""

    def __init__(self, output_keys):
        super().__init__()
        self.output_keys = output_keys

    def forward(self, hidden, **extra):
        return {key: hidden + index for index, key in enumerate(self.output_keys)}


class Root(nn.Module):
    def forward(self, hidden, input_names):
        outputs = []
        for child in self._modules.values():
            outputs.append(child(hidden, **{name: hidden for name in input_names}))
        return outputs


def build_model(class_name, module_names, output_keys):
    # Python refuses NUL and lone surrogates in class names; such a model cannot exist
    try:
        model = type(class_name, (Root,), {})()
    except (ValueError, UnicodeEncodeError):
        assume(False)
    for name in module_names:
        # add_module refuses names with "." (and "" or existing attributes); a model can still hold them
        model._modules[name] = KeyedLeaf(output_keys)
    return model


def portable_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid file name on Linux, macOS or Windows (None if it is)."""
    if name in ("", ".", ".."):
        return "empty or a directory reference"
    if any(character in WINDOWS_RESERVED_CHARACTERS or ord(character) < 32 for character in name):
        return "reserved character"
    if name[-1] in ". ":
        return "trailing dot or space (Windows drops it)"
    if name.split(".", 1)[0].rstrip(" ").upper() in WINDOWS_DEVICE_NAMES:
        return "Windows device name"
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        return "lone surrogate (not valid UTF-8)"
    if len(encoded) > 255 or len(name.encode("utf-16-le")) // 2 > 255:
        return "longer than 255 bytes / UTF-16 units"
    return None


def case_insensitive_form(name: str) -> str:
    """The name as a case-insensitive, normalizing file system (APFS, NTFS) compares it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def tensor_entries(node):
    if isinstance(node, dict):
        if "shape" in node and "dtype" in node:
            yield node
        else:
            for value in node.values():
                yield from tensor_entries(value)
    elif isinstance(node, list):
        for value in node:
            yield from tensor_entries(value)


@settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    class_name=names,
    module_names=st.lists(names, min_size=1, max_size=3, unique=True),
    input_names=st.lists(names.filter(lambda name: name != "hidden"), max_size=2, unique=True),
    output_keys=st.lists(keys, min_size=1, max_size=3, unique=True),
    forwards=st.integers(1, 2),
)
@example(  # same name once composed, once decomposed; Windows device names Windows added later
    class_name="Model",
    module_names=["e\u0301", "\u00e9", "COM0", "lpt¹"],
    input_names=[],
    output_keys=[0],
    forwards=1,
)
def test_every_file_is_inside_debug_path_with_a_portable_unique_name(
    class_name, module_names, input_names, output_keys, forwards
):
    model = build_model(class_name, module_names, output_keys)
    hidden = torch.arange(3.0)
    with tempfile.TemporaryDirectory() as scratch:
        debug_path = Path(scratch) / "debug"
        with model_addition_debugger_context(model, debug_path=debug_path, use_repr=False):
            for _ in range(forwards):
                model(hidden, input_names)

        written = [Path(root, file) for root, _, files in os.walk(scratch) for file in files]
        assert all(path.parent == debug_path for path in written), written
        file_names = [path.name for path in written]
        assert {name: portable_name_problem(name) for name in file_names if portable_name_problem(name)} == {}
        assert len({case_insensitive_form(name) for name in file_names}) == len(file_names)

        traces = [path for path in written if path.name.endswith("_FULL_TENSORS.json")]
        assert len(traces) == forwards
        referenced = []
        for trace in traces:
            entries = list(tensor_entries(json.loads(trace.read_text())))
            referenced += [entry["value"] for entry in entries]
        tensor_files = sorted(name for name in file_names if name.endswith(".safetensors"))
        # one file per recorded tensor, each referenced as ./<name> and holding the tensor
        assert sorted(value.removeprefix("./") for value in referenced) == tensor_files
        assert all(value.startswith("./") and "/" not in value[2:] for value in referenced)
        for name in tensor_files:
            assert load_file(debug_path / name)["data"].shape == hidden.shape
