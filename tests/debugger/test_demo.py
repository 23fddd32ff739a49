"""`make demo`'s debugger step: traces the bundled toy model and shows where the files are."""

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

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
        "it is a file, not a directory\n"
    )
    assert taken.read_text() == "mine"


def test_make_demo_ends_saying_what_it_made_and_what_comes_next():
    # it ended on the scan's "syntax error: invalid syntax" of the mini tree's deliberately broken model
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on PATH")
    recipe = subprocess.run(
        [make, "--dry-run", "--always-make", "demo"],
        cwd=DEMO.parents[1],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ending = recipe[recipe.index("scan_skipped_tests.py") :]
    assert "demo_output/debugger/" in ending and "trace.html" in ending
    assert "tiny_broken's syntax error is there on purpose" in ending
    assert "README.md" in ending
