"""``model-debugging view``: where the page goes, and one clear line for each unusable input."""

from __future__ import annotations

import pytest

from model_debugging.cli import main
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
