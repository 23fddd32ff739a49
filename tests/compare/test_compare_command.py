import json

from model_debugging.cli import main as cli_main
from model_debugging.compare.command import main


def test_equivalent_traces_exit_0(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path)
    assert main([str(tmp_path), str(tmp_path / "Toy_debug_tree_SUMMARY.json")]) == 0
    assert "result: EQUIVALENT within tolerance" in capsys.readouterr().out


def test_diverging_traces_exit_1_and_write_every_report(toy_traces, tmp_path, capsys):
    reference, candidate = toy_traces
    out = tmp_path / "out"
    out.mkdir()
    code = cli_main(
        [
            "compare",
            str(reference),
            str(candidate),
            "--markdown",
            str(out / "r.md"),
            "--json",
            str(out / "r.json"),
        ]
        + ["--plot", str(out / "r.png")]
    )
    assert code == 1
    printed = capsys.readouterr().out
    assert "divergence origin: Toy.head" in printed
    assert "Toy.head" in printed.split("Module calls that differ (1)")[1]
    assert json.loads((out / "r.json").read_text())["divergence_origin"]["module_path"] == "Toy.head"
    markdown = (out / "r.md").read_text()
    assert markdown.startswith("## Trace comparison")
    assert "| 4 | Toy.head | 0 | outputs differ |" in markdown
    assert (out / "r.png").read_bytes().startswith(b"\x89PNG")


def test_tolerance_flags(toy_traces):
    reference, candidate = toy_traces
    assert main([str(reference), str(candidate), "--atol", "10"]) == 0
    assert main([str(reference), str(candidate), "--atol", "0", "--rtol", "0.6"]) == 0


def test_rename_flag_and_config_file(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path / "a")
    toy_trace(tmp_path / "b", class_name="Port", block="stage")
    # calls on one side only are notes: the paired calls, the final output included, agree
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--no_align"]) == 0
    printed = capsys.readouterr().out
    assert "result: EQUIVALENT within tolerance" in printed
    assert "2 call(s) only in the candidate (Port.stage (and 1 call inside))" in printed
    assert (
        "could not align 1 reference call(s), first Toy.block: paths and rename rules only (--no_align); "
        "1 candidate call(s), first Port.stage: paths and rename rules only (--no_align)"
    ) in printed
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--no_align", "--rename", "^stage=block"]) == 0
    config = tmp_path / "renames.yaml"
    config.write_text("renames:\n  - pattern: '^stage'\n    replacement: block\n")
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--no_align", "--config", str(config)]) == 0


def test_inferred_rename_rules_saved_and_passed_back_pair_by_path(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path / "a")
    toy_trace(tmp_path / "b", class_name="Port", block="stage")
    saved = tmp_path / "inferred.yaml"
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--save_renames", str(saved)]) == 0
    assert "2 calls paired" in capsys.readouterr().out
    assert "  - pattern: '^stage$'\n    replacement: 'block'\n" in saved.read_text()
    assert "  - pattern: '^stage\\.linear$'\n    replacement: 'block.linear'\n" in saved.read_text()
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--no_align", "--config", str(saved)]) == 0


def test_repr_traces_say_only_statistics_were_compared(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path, use_repr=True)
    assert main([str(tmp_path), str(tmp_path)]) == 0
    assert "NOTE: only summary statistics" in capsys.readouterr().out


def test_unusable_input_exits_2_naming_the_file(toy_traces, tmp_path, capsys):
    reference, candidate = toy_traces
    assert main([str(reference), str(tmp_path / "nowhere")]) == 2
    assert f"{tmp_path / 'nowhere'}: no such file or directory" in capsys.readouterr().err
    (candidate / "Toy.head_outputs.safetensors").unlink()
    assert main([str(reference), str(candidate)]) == 2
    assert (
        "Toy.head_outputs.safetensors: tensor file named in the trace is missing" in capsys.readouterr().err
    )


def test_bad_rules_and_arguments_exit_2(toy_traces, tmp_path, capsys):
    reference, candidate = toy_traces
    assert main([str(reference), str(candidate), "--rename", "a(=b"]) == 2
    assert "rename rule 'a(=b': invalid regular expression" in capsys.readouterr().err
    config = tmp_path / "bad.yaml"
    config.write_text("renames: 3\n")
    assert main([str(reference), str(candidate), "--config", str(config)]) == 2
    assert f"{config}:1: key 'renames': expected list" in capsys.readouterr().err
    assert main([str(reference), str(candidate), "--atol", "-1"]) == 2
    assert "must be a number >= 0" in capsys.readouterr().err


def test_ignore_silences_calls_on_one_side_only(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path / "a")
    toy_trace(tmp_path / "b", class_name="Port", block="stage")
    assert (
        main(
            [
                str(tmp_path / "a"),
                str(tmp_path / "b"),
                "--no_align",
                "--ignore",
                r"\.stage",
                "--ignore",
                r"\.block",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "only in the candidate" not in printed and "could not align" not in printed
    assert "notes: 4 call(s) on one side only silenced by --ignore" in printed
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--ignore", "a(b"]) == 2
    assert "--ignore: invalid regular expression 'a(b'" in capsys.readouterr().err


def test_terminal_output_fits_the_columns(toy_traces, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "48")
    assert main([str(path) for path in toy_traces]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 48
    assert any(line.startswith("divergence origin: Toy.head") for line in lines)
    table = lines[lines.index("Module calls that differ (1)") + 2 :]
    assert table[0].split() == ["index", "module_path", "status", "max_abs_diff"]  # what fits
    assert table[2].split()[:2] == ["4", "Toy.head"]
