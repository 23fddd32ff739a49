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


def test_demo_given_a_file_as_output_dir_says_so_in_one_line(tmp_path, capsys):
    # it ended in a traceback and exit 1
    spec = importlib.util.spec_from_file_location("trace_tiny_model", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")

    assert demo.main(["--output_dir", str(taken)]) == 2

    err = capsys.readouterr().err  # the program's name is argv[0]: pytest's here
    assert err.count("\n") == 1 and err.endswith(
        f": error: --output_dir: debug_path={str(taken)!r} is not a usable directory: "
        f"[Errno 17] File exists: {str(taken)!r}\n"
    )
    assert taken.read_text() == "mine"
