"""``model-debugging view``: where the page goes, and one clear line for each unusable input."""

from __future__ import annotations

import subprocess

import pytest

from model_debugging.cli import main
from model_debugging.explorer import command
from tests.explorer.traces import ToySpec, write_toy_trace


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return write_toy_trace(tmp_path_factory.mktemp("trace"))


def test_writes_trace_html_in_the_trace_directory(trace, capsys):
    assert main(["view", str(trace)]) == 0
    page = trace / "trace.html"
    assert f"wrote {page}" in capsys.readouterr().out
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_trace_file_gets_a_page_named_after_it(trace):
    assert main(["view", str(trace / "ToyModel_debug_tree_SUMMARY.json")]) == 0
    assert (trace / "ToyModel_debug_tree.html").is_file()


def test_compare_with_renames_from_a_file(tmp_path):
    reference = write_toy_trace(tmp_path / "reference", ToySpec(extra={"final": 1.0}))
    candidate = write_toy_trace(tmp_path / "candidate", ToySpec(factors=[1.0, 2.0, 1.0], extra={"last": 1.0}))
    renames = tmp_path / "renames.yaml"
    renames.write_text(
        "renames:\n  - pattern: extra\\.last\n    replacement: extra.final\n", encoding="utf-8"
    )
    page = tmp_path / "diff.html"
    arguments = ["view", str(reference), "--compare", str(candidate), "--output", str(page)]
    assert main([*arguments, "--config", str(renames)]) == 0
    text = page.read_text(encoding="utf-8")
    assert '"candidatePath":"ToyModel.extra.last"' in text and "module calls only in the" not in text
    assert "divergence origin: ToyModel.layers.1.scale" in text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["{missing}"], "{missing}: no such file or directory"),
        (["{trace}", "--rename", "a=b"], "--rename, --config and --no_align need --compare"),
        (["{trace}", "--compare", "{trace}", "--config", "{missing}.yaml"], "{missing}.yaml"),
        (
            ["{trace}", "--compare", "{trace}", "--rename", "(=x"],
            "rename rule '(=x': invalid regular expression",
        ),
        (
            ["{trace}", "--output", "{missing}/page.html"],
            "--output {missing}/page.html: the directory {missing} does not exist",
        ),
        (["{broken}"], "invalid JSON at line 1"),
        (["{trace}", "--output", "{trace}"], "--output {trace} is a directory; give a file name"),
    ],
)
def test_unusable_input_exits_2_with_one_line_and_keeps_the_old_page(
    trace, tmp_path, capsys, arguments, message
):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "X_debug_tree_SUMMARY.json").write_text("{not json", encoding="utf-8")
    (broken / "trace.html").write_text("old page", encoding="utf-8")
    names = {"trace": trace, "missing": tmp_path / "missing", "broken": broken}
    assert main(["view", *(argument.format(**names) for argument in arguments)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("model-debugging view: error: ") and error.count("\n") == 1
    assert message.format(**names) in error
    assert (broken / "trace.html").read_text(encoding="utf-8") == "old page"


def _takes_new_files(folder) -> bool:
    try:
        (folder / "probe").touch()
    except OSError:
        return False
    (folder / "probe").unlink()
    return True


@pytest.fixture
def read_only_trace(tmp_path):
    """A trace in a folder that refuses new files: by its mode, or for root (whom modes do not stop)
    by the immutable attribute, where the file system and the process's capabilities allow it."""
    folder = write_toy_trace(tmp_path / "shared")
    folder.chmod(0o555)
    immutable = False
    if _takes_new_files(folder):
        immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        if not immutable:
            folder.chmod(0o755)
            pytest.skip("running as root where chattr +i is not available: no folder refuses new files")
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def _page_not_written(folder, capsys) -> str:
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert sorted(path.name for path in folder.iterdir()) == [
        "ToyModel_debug_tree_EXTRA.json",
        "ToyModel_debug_tree_FULL_TENSORS.json",
        "ToyModel_debug_tree_SUMMARY.json",
    ]  # no page, no temporary file, no probe left
    return error


def test_a_read_only_trace_folder_is_named_and_output_suggested(read_only_trace, capsys):
    # it said "the page .../trace.html: cannot create files in ...: Permission denied" and stopped there
    assert main(["view", str(read_only_trace)]) == 2
    error = _page_not_written(read_only_trace, capsys)
    assert error.startswith("model-debugging view: error: the page ")  # its path shortened when long
    assert f": cannot create files in {read_only_trace}: " in error
    assert error.endswith("; write the page elsewhere with --output PATH\n")


def test_a_trace_folder_that_turns_read_only_after_the_check_suggests_output(
    read_only_trace, capsys, monkeypatch
):
    monkeypatch.setattr(command, "_output_problem", lambda args: None)  # as if it changed meanwhile
    assert main(["view", str(read_only_trace)]) == 2
    error = _page_not_written(read_only_trace, capsys)
    assert error.startswith(f"model-debugging view: error: cannot write the page {read_only_trace}")
    assert error.endswith("; write the page elsewhere with --output PATH\n")


def test_a_read_only_trace_folder_is_no_problem_with_output(read_only_trace, tmp_path):
    assert main(["view", str(read_only_trace), "--output", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
