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
