"""Where a trace lands when the user's script moves around: ``debug_path`` means what it meant at entry."""

import os

import pytest
import torch

from model_debugging import model_addition_debugger_context, read_trace

pytest.importorskip("transformers")


def test_a_relative_debug_path_stays_where_it_was_when_the_script_changes_directory(
    tiny_llama, tmp_path, monkeypatch
):
    # a FileNotFoundError from inside the forward ('rel/LlamaForCausalLM_debug_tree_INCOMPLETE'), no trace
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    with model_addition_debugger_context(tiny_llama, debug_path="trace", use_repr=False):
        os.chdir("data")  # e.g. to load the inputs
        tiny_llama(torch.tensor([[1, 2, 3]]))

    assert read_trace(tmp_path / "trace").nodes[0].module_path == "LlamaForCausalLM"
    assert os.listdir(tmp_path / "data") == []


def test_the_default_debug_path_is_the_directory_current_at_entry(tiny_llama, tmp_path, monkeypatch):
    # the trace was written into the directory the forward ran in
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    with model_addition_debugger_context(tiny_llama):
        os.chdir("data")
        tiny_llama(torch.tensor([[1, 2, 3]]))

    assert (tmp_path / "LlamaForCausalLM_debug_tree_SUMMARY.json").is_file()
    assert os.listdir(tmp_path / "data") == []


def test_a_dangling_link_as_debug_path_is_named_with_what_it_points_to(tiny_llama, tmp_path):
    # it said "[Errno 17] File exists: '.../trace'" about a path where nothing exists
    (tmp_path / "trace").symlink_to(tmp_path / "unmounted" / "traces")

    with (
        pytest.raises(ValueError) as raised,
        model_addition_debugger_context(tiny_llama, debug_path=tmp_path / "trace"),
    ):
        pytest.fail("the context must not be entered")

    assert str(raised.value) == (
        f"debug_path={tmp_path / 'trace'!r} is not a usable directory: it is a symbolic link to "
        f"{str(tmp_path / 'unmounted' / 'traces')!r}, which does not exist"
    )
    assert not (tmp_path / "unmounted").exists()


def test_nested_contexts_writing_tensor_files_into_one_directory_leave_no_temporary_files(
    tiny_llama, tmp_path
):
    # 107 files '.LlamaForCausalLM.model.norm_inputs_args_0.safetensors.<pid>.link' were left behind
    with (
        model_addition_debugger_context(tiny_llama, debug_path=tmp_path, use_repr=False),
        model_addition_debugger_context(tiny_llama, debug_path=tmp_path, use_repr=False),
    ):
        tiny_llama(torch.tensor([[1, 2, 3]]))

    assert [name for name in os.listdir(tmp_path) if name.startswith(".")] == []
    assert read_trace(tmp_path).nodes[0].module_path == "LlamaForCausalLM"


@pytest.mark.parametrize("use_repr", [True, False])
def test_a_bytes_debug_path_is_taken_as_os_functions_take_it(tiny_llama, tmp_path, use_repr):
    # TypeError: argument should be a str object or an os.PathLike object returning str, not <class 'bytes'>
    target = os.fsencode(tmp_path) + b"/trace-\xff"  # not UTF-8: only bytes (or surrogates) name it
    with model_addition_debugger_context(tiny_llama, debug_path=target, use_repr=use_repr):
        tiny_llama(torch.tensor([[1, 2, 3]]))

    trace = read_trace(tmp_path / os.fsdecode(b"trace-\xff"))
    assert trace.nodes[0].module_path == "LlamaForCausalLM"
    assert trace.mode == ("stats" if use_repr else "tensors")


@pytest.mark.parametrize(
    ("debug_path", "message"),
    [
        (3, "debug_path=3 is not a path: expected a str, bytes or os.PathLike, not int"),
        ("tr\0ce", "debug_path='tr\\x00ce' is not a usable directory: embedded null byte"),
    ],
)
def test_a_debug_path_that_is_no_path_is_refused_naming_it(
    tiny_llama, tmp_path, monkeypatch, debug_path, message
):
    # TypeError: argument should be a str object ..., not <class 'int'>; ValueError: embedded null byte
    monkeypatch.chdir(tmp_path)
    with (
        pytest.raises(ValueError) as raised,
        model_addition_debugger_context(tiny_llama, debug_path=debug_path),
    ):
        pytest.fail("the context must not be entered")

    assert str(raised.value) == message
    assert os.listdir(tmp_path) == []


def test_an_existing_file_as_debug_path_is_named_as_a_file(tiny_llama, tmp_path):
    # it said "[Errno 17] File exists: '.../notes.txt'", as if existing were the problem
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with (
        pytest.raises(ValueError) as raised,
        model_addition_debugger_context(tiny_llama, debug_path=tmp_path / "notes.txt"),
    ):
        pytest.fail("the context must not be entered")

    assert str(raised.value) == (
        f"debug_path={tmp_path / 'notes.txt'!r} is not a usable directory: it is a file, not a directory"
    )
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"
