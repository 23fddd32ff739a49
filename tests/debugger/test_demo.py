"""`make demo`'s debugger step: traces the bundled toy model and shows where the files are."""

import importlib.util
from pathlib import Path

DEMO = Path(__file__).parents[2] / "examples" / "trace_tiny_model.py"


def test_demo_writes_trace_and_prints_tree(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("trace_tiny_model", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)

    assert demo.main(["--output_dir", str(tmp_path / "out")]) == 0

    printed = capsys.readouterr().out
    assert str(tmp_path / "out" / "TinyDecoder_debug_tree_SUMMARY.json") in printed
    assert (tmp_path / "out" / "TinyDecoder_debug_tree_FULL_TENSORS.json").exists()
    assert "    TinyDecoder.layers.3\n" in printed and "TinyDecoder.layers.1\n" not in printed
    assert "TinyDecoder.lm_head  -> torch.Size([1, 16, 100])" in printed
