"""The examples of the transformers pages on these tools, run as written with only the package prefix changed.

Pages: "Model debugging toolboxes" (transformers docs), the debugger's reference page, and the page on
the output-capturing decorators (its patch-registry example; its model example is a fragment of a
modeling file with package-relative imports, so it is not run). Pretrained checkpoints and processors
need a download, so each model here is built from a tiny config of the same architecture, and the
inputs a processor would give are built by hand.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
import transformers

pytestmark = pytest.mark.integration

MINI_CHECKOUT = Path(__file__).parents[2] / "examples" / "mini_transformers"


@pytest.fixture(scope="module")
def tiny_llava():
    torch.manual_seed(673)
    text = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=120,
    )
    vision = transformers.CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=16,
        patch_size=8,
        projection_dim=16,
    )
    config = transformers.LlavaConfig(
        vision_config=vision, text_config=text, image_token_index=100, image_seq_length=4
    )
    model = transformers.LlavaForConditionalGeneration(config).eval()
    # what the processor returns for "<image>Describe this image." and one image: 4 image tokens for 4 patches
    input_ids = torch.tensor([[1, 100, 100, 100, 100, 17, 42, 9]])
    inputs = {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(input_ids),
        "pixel_values": torch.randn(1, 3, 16, 16),
    }
    return model, inputs


def test_trace_a_vision_language_model_with_model_forward(tiny_llava, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model, inputs = tiny_llava
    from model_debugging.model_debugging_utils import model_addition_debugger_context

    with model_addition_debugger_context(
        model,
        debug_path="optional_path_to_your_directory",
        do_prune_layers=False,  # This will output ALL the layers of a model.
    ):
        output = model.forward(**inputs)

    assert output.logits.shape == (1, 8, 120)
    directory = tmp_path / "optional_path_to_your_directory"
    root = json.loads((directory / "LlavaForConditionalGeneration_debug_tree_SUMMARY.json").read_text())
    assert root["module_path"] == "LlavaForConditionalGeneration"
    assert set(root["inputs"]["kwargs"]) == {"input_ids", "attention_mask", "pixel_values"}
    assert (directory / "LlavaForConditionalGeneration_debug_tree_FULL_TENSORS.json").is_file()


def test_save_tensors_to_disk_with_use_repr_false(tiny_llava, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model, inputs = tiny_llava
    from model_debugging import model_addition_debugger_context

    with model_addition_debugger_context(
        model,
        debug_path="optional_path_to_your_directory",
        do_prune_layers=False,
        use_repr=False,  # Defaults to True
    ):
        output = model.forward(**inputs)

    directory = tmp_path / "optional_path_to_your_directory"
    full = json.loads((directory / "LlavaForConditionalGeneration_debug_tree_FULL_TENSORS.json").read_text())
    value = full["inputs"]["kwargs"]["pixel_values"]["value"]
    assert value.startswith("./") and value.endswith(".safetensors")
    assert (directory / value).is_file()
    assert output.logits is not None


def test_pandas_view_of_a_scan_result(tmp_path, monkeypatch):
    command = [
        sys.executable,
        "-m",
        "model_debugging.cli",
        "scan",
        "--repo",
        str(MINI_CHECKOUT),
        "--output_dir",
        str(tmp_path),
        "--no_cache",
    ]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)
    monkeypatch.chdir(tmp_path)

    df = pd.read_json("all_tests_scan_result.json").T
    ranked = df.sort_values(by=["skipped_proportion"], ascending=False)

    assert {"origin", "models_ran", "models_skipped", "skipped_proportion", "reasons_skipped"} <= set(
        df.columns
    )
    proportions = ranked["skipped_proportion"].astype(float).tolist()
    assert proportions == sorted(proportions, reverse=True) and proportions[0] > 0


class PortedModel(torch.nn.Module):
    """A port whose forward receives a helper object, as "OriginalModel()"/"HFModel()" on the reference page."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, inputs, helper=None):
        return self.proj(inputs)


class Helper:
    pass  # default repr: "<...Helper object at 0x7f...>"


def test_memory_addresses_in_input_reprs_are_sanitized(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from model_debugging import model_addition_debugger_context

    torch.manual_seed(0)
    inputs = torch.randn(1, 4)
    helper = Helper()
    assert re.search(r"object at 0x[0-9a-f]+", repr(helper))
    original_model = PortedModel()
    with model_addition_debugger_context(
        original_model,
        debug_path="./original",
        use_repr=True,
    ):
        out1 = original_model(inputs, helper=helper)

    text = (tmp_path / "original" / "PortedModel_debug_tree_SUMMARY.json").read_text()
    assert "object at 0xXXXXXXXX" in text
    assert not re.search(r"0x(?!XXXXXXXX)[0-9a-fA-F]+", text)
    assert out1.shape == (1, 4)


class SequentialExperts(torch.nn.Module):
    pass


class FusedAttention(torch.nn.Module):
    pass


class CustomLlamaAttention(torch.nn.Module):
    pass


def test_register_and_unregister_patch_mappings():
    from model_debugging.monkey_patching import register_patch_mapping, unregister_patch_mapping

    # Exact name – replaces only Qwen2MoeExperts
    register_patch_mapping({"Qwen2MoeExperts": SequentialExperts})
    # Regex – replaces every class whose name ends in "Attention"
    register_patch_mapping({".*Attention$": FusedAttention})
    # Anchored version – only matches Llama2Attention, Llama3Attention, …
    register_patch_mapping({"^Llama\\d+Attention$": CustomLlamaAttention})
    # Same way, custom keys can be removed from the registry by passing the name that was registered
    unregister_patch_mapping(["Qwen2MoeExperts", ".*Attention$"])

    from model_debugging.monkey_patching import get_patch_mapping

    assert get_patch_mapping() == {"^Llama\\d+Attention$": CustomLlamaAttention}
