import json
import subprocess
import sys
from pathlib import Path

from model_debugging.cli import main as cli_main
from model_debugging.skips.report.command import main

from .conftest import ONE_ANALYZER, scan_result

ROOT = Path(__file__).resolve().parents[3]
PREVIOUS = {
    "test_inputs_embeds": (["bert", "llama"], {"vit": "ViT | no inputs_embeds"}),
    "test_training": (["bert", "llama", "vit"], {}),
    "test_old_api": (["bert"], {"llama": "removed"}),
}
CURRENT = {
    "test_inputs_embeds": (["bert"], {"vit": "ViT | no inputs_embeds", "llama": "uses cache only"}),
    "test_training": (["bert", "llama", "vit"], {}),
    "test_new_thing": (["bert"], {"vit": "not yet"}),
}


def test_markdown_lists_every_change(write_scan, tmp_path, capsys):
    out = tmp_path / "trend.md"
    code = main(
        [
            "--previous",
            write_scan("old", PREVIOUS),
            "--current",
            write_scan("new", CURRENT),
            "--markdown",
            str(out),
        ]
    )
    assert code == 0
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith("## Skipped tests trend\n")
    assert (
        "New skips: 1 (0 by new models); skips gone: 0 (0 with removed models); now decided: 0; "
        "now undecided: 0; new tests: 1; removed tests: 1." in markdown
    )
    assert "### Skipped proportion changed (1)" in markdown
    assert "| test_inputs_embeds | common | 33.3% | 66.7% | +33.3% | 0 | 0 |" in markdown
    assert "| test_inputs_embeds | llama | ran | uses cache only |" in markdown
    assert "| test_old_api | llama | removed | model removed |" not in markdown  # llama still exists
    assert "| test_old_api | common | 1/2 | 0 | 50.0% |" in markdown  # under removed tests
    assert (
        "### New common tests (1)" in markdown and "| test_new_thing | common | 1/2 | 0 | 50.0% |" in markdown
    )
    assert "| test_inputs_embeds | common | 2/3 | 0 | 66.7% |" in markdown  # headline
    terminal = capsys.readouterr().out
    assert "Skipped proportion changed (1)" in terminal and "uses cache only" in terminal


def test_row_counts_come_from_the_config(write_scan, tmp_path):
    config = tmp_path / "report.yaml"
    config.write_text("report:\n  headline_rows: 1\n", encoding="utf-8")
    out = tmp_path / "trend.md"
    main(["--current", write_scan("new", CURRENT), "--markdown", str(out), "--config", str(config)])
    markdown = out.read_text(encoding="utf-8")
    assert "No previous result to compare with" in markdown
    assert "| test_inputs_embeds | common | 2/3 | 0 | 66.7% |" in markdown
    assert "test_new_thing" not in markdown
    assert "_… and 2 more (showing 1 of 3)_" in markdown


def test_bad_json_names_the_file_and_line(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "test_a": {,\n}', encoding="utf-8")
    assert main(["--current", str(broken)]) == 2
    assert f"{broken}:2:" in capsys.readouterr().err


def test_bad_config_names_the_key(write_scan, tmp_path, capsys):
    config = tmp_path / "report.yaml"
    config.write_text("report:\n  min_proportion_change: 3\n", encoding="utf-8")
    assert main(["--current", write_scan("new", CURRENT), "--config", str(config)]) == 2
    assert "key 'report.min_proportion_change'" in capsys.readouterr().err


def test_csv_and_plot_outputs(write_scan, tmp_path):
    csv, plot = tmp_path / "scan.csv", tmp_path / "scan.png"
    main(["--current", write_scan("new", CURRENT), "--csv", str(csv), "--plot", str(plot)])
    assert csv.read_text(encoding="utf-8").splitlines()[0].startswith("test,origin,models_ran,")
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_script_and_cli_subcommand(write_scan, tmp_path):
    current = write_scan("new", CURRENT)
    script = subprocess.run(
        [sys.executable, str(ROOT / "utils" / "skip_report.py"), "--current", current],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Most skipped tests (3)" in script.stdout
    assert cli_main(["report", "--current", current]) == 0


def test_undecided_pairs_have_sections_of_their_own_and_shares_say_n_a(write_scan, tmp_path):
    previous = {
        "test_compile": ([], {}, {"bert": "torch version", "llama": "torch version"}),
        "test_integration": ([], {}),
    }
    current = {
        "test_compile": (["bert"], {"llama": "no compile class"}, {}),
        "test_sdpa": ([], {}, {"bert": "`x` is only known at run time"}),
        "test_integration": ([], {}),
    }
    out = tmp_path / "trend.md"
    main(
        [
            "--previous",
            write_scan("old", previous),
            "--current",
            write_scan("new", current),
            "--markdown",
            str(out),
        ]
    )
    markdown = out.read_text(encoding="utf-8")
    assert "### Newly skipped (0)" in markdown
    assert "### Now decided (undecided before) (2)" in markdown
    assert "| test_compile | llama | skipped | no compile class | torch version |" in markdown
    assert "| test_compile | common | n/a | 50.0% | n/a | 2 | 0 |" in markdown
    assert "| test_sdpa | common | 0/0 | 1 | n/a |" in markdown  # headline and new tests
    assert "test_integration" not in markdown
    assert "3 common tests (2 apply to some model)" in markdown


def test_a_result_that_is_not_utf8_text_is_one_line_naming_the_file(write_scan, tmp_path, capsys):
    """A file saved by a tool in another encoding (or a binary) as last week's result."""
    other = tmp_path / "last_week.json"
    other.write_bytes(b'\xff\xfe{\x00"\x00')  # UTF-16, as PowerShell's Out-File writes
    assert main(["--previous", str(other), "--current", write_scan("new", CURRENT)]) == 2
    err = capsys.readouterr().err
    assert f"{other}: not a scan result: byte 0 is not UTF-8 (0xff)" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_folder_given_as_the_result_is_one_line_naming_it(write_scan, tmp_path, capsys, monkeypatch):
    """`--previous .` run from the folder the previous result was downloaded into."""
    monkeypatch.chdir(tmp_path)
    assert main(["--previous", ".", "--current", write_scan("new", CURRENT)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "model-debugging report: error: .: cannot read scan result: Is a directory"


def test_a_previous_result_holding_no_test_is_said_to_be_empty(write_scan, tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    out = tmp_path / "trend.md"
    assert (
        main(["--previous", str(empty), "--current", write_scan("new", CURRENT), "--markdown", str(out)]) == 0
    )
    said = "Previous scan: 0 common tests (it holds no test: a wrong file? every test reads as new)."
    assert said in capsys.readouterr().out and said in out.read_text(encoding="utf-8")
    assert main(["--previous", write_scan("old", PREVIOUS), "--current", write_scan("new", CURRENT)]) == 0
    assert "holds no test" not in capsys.readouterr().out


def test_newly_skipped_says_what_each_pair_was_before(tmp_path):
    """A pair skipped now that did not apply before (or that an upstream-style result does not list)
    is not one that ran: the section says what each pair was (on the 2025 and 2026 snapshots, 10 of
    the 67 newly skipped pairs of existing models did not apply before)."""
    previous = scan_result({"test_inputs_embeds": (["bert", "llama", "t5"], {})})
    previous["test_inputs_embeds"]["models_not_applicable"] = ["vit"]
    previous["test_training"] = scan_result({"test_training": (["bert", "llama", "vit"], {})})[
        "test_training"
    ]
    current = scan_result(
        {
            "test_inputs_embeds": (
                ["bert", "t5"],
                {"llama": "uses cache", "vit": "no embeddings", "gemma": "new"},
            ),
            "test_training": (["bert", "llama"], {"t5": "frozen"}),
        }
    )
    paths = []
    for name, result in (("old", previous), ("new", current)):
        paths.append(tmp_path / f"{name}.json")
        made = {test: {**entry, "provenance": ONE_ANALYZER} for test, entry in result.items()}
        paths[-1].write_text(json.dumps(made), encoding="utf-8")
    out = tmp_path / "trend.md"
    assert main(["--previous", str(paths[0]), "--current", str(paths[1]), "--markdown", str(out)]) == 0
    newly = out.read_text(encoding="utf-8").split("### Newly skipped (4)", 1)[1].split("###", 1)[0]
    assert [line for line in newly.splitlines() if line.startswith("|")] == [
        "| test | model | before | reason |",
        "| --- | --- | --- | --- |",
        "| test_inputs_embeds | llama | ran | uses cache |",
        "| test_inputs_embeds | vit | not applicable | no embeddings |",
        "| test_training | t5 | not listed | frozen |",  # t5 is a model of the previous result
        "| test_inputs_embeds | gemma | new model | new |",
    ]
