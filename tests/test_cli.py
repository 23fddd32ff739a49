import json
import subprocess
import sys
from pathlib import Path

import pytest

import model_debugging.skips
from model_debugging.cli import SUBCOMMANDS, main


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "scan" in out and "compare" in out


def test_no_command_prints_the_usage_to_stderr_and_exits_2(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: model-debugging <command>")


def test_unknown_command_exits_2(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_the_analyzer_and_its_reports_never_import_torch():
    code = (
        "import sys, model_debugging, model_debugging.skips, model_debugging.skips.command, "
        "model_debugging.skips.report.command, model_debugging.skips.report.pr_check.command\n"
        "print('torch' in sys.modules, 'safetensors' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


# a fresh interpreter where torch and safetensors cannot be imported, as in the base install
WITHOUT_TORCH = "import sys; sys.modules['torch'] = sys.modules['safetensors'] = None\n"


@pytest.mark.parametrize("command", ["compare", "view", "replay", "debug-port"])
def test_a_command_needing_the_debugger_extra_says_how_to_install_it(command):
    code = WITHOUT_TORCH + f"from model_debugging.cli import main; sys.exit(main([{command!r}, '--help']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"model-debugging {command}: error: this needs torch, which the base install leaves out: "
        "install the debugger extra (pip install 'model-debugging[debugger]')\n"
    )


def test_a_public_name_needing_the_debugger_extra_says_how_to_install_it():
    code = WITHOUT_TORCH + "from model_debugging import compare_traces"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "ModuleNotFoundError: model_debugging.compare_traces: this needs torch, which the base install "
        "leaves out: install the debugger extra (pip install 'model-debugging[debugger]')"
    )


def test_output_piped_into_head_ends_without_traceback():
    # a subcommand printing ~2 MB into `head -c 10`, which closes the pipe early
    script = (
        "import sys, model_debugging.cli as cli\n"
        "cli.SUBCOMMANDS['shout'] = ('builtins:print', 'prints its arguments')\n"
        "sys.exit(cli.main(['shout'] + ['y' * 100] * 20000))\n"
    )
    result = subprocess.run(
        f'"{sys.executable}" -c "$SCRIPT" | head -c 10',
        shell=True,
        capture_output=True,
        text=True,
        env={"SCRIPT": script, "PATH": "/usr/bin:/bin"},
    )
    assert result.stdout == "['yyyyyyyy"
    assert "Traceback" not in result.stderr


def test_writing_json_imports_no_pandas_or_matplotlib():
    code = (
        "import sys\n"
        "from model_debugging.reporting.atomic import atomic_write_json\n"
        "print('pandas' in sys.modules, 'matplotlib' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


ALL_COMMANDS = sorted(SUBCOMMANDS)


def exit_code(argv: list[str]) -> int:
    """What ``model-debugging ARGV`` exits with (argparse exits; some commands return the code)."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_every_command_has_help_named_after_the_command(command, capsys):
    assert exit_code([command, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: model-debugging {command} ")


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_a_bad_argument_is_one_line_and_exit_2(command, capsys):
    assert exit_code([command, "--no_such_option", "x" * 5000]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"model-debugging {command}: error: ")


@pytest.mark.parametrize(
    "command", [["compare", "a", "b"], ["replay", "a", "--model", "b.py"], ["debug-port", "a.py"]]
)
@pytest.mark.parametrize(("option", "value"), [("--atol", "abc"), ("--rtol", "-1"), ("--atol", "nan")])
def test_a_bad_tolerance_names_the_option_and_the_value(command, option, value, capsys):
    # replay said "invalid _tolerance value: '-1'", compare and debug-port did for 'abc': the name
    # of a function of ours instead of what a tolerance must be
    assert exit_code([*command, option, value]) == 2
    assert capsys.readouterr().err == (
        f"model-debugging {command[0]}: error: argument {option}: must be a number >= 0, got {value!r}\n"
    )


@pytest.mark.parametrize(
    ("command", "defaults"),
    [
        ("scan", "scan_skipped_tests.yaml"),
        ("report", "skip_report.yaml"),
        ("check-skips", "skip_report.yaml"),
    ],
)
def test_print_default_config_gives_an_editable_copy_of_the_built_in_config(command, defaults, capsys):
    assert exit_code([command, "--print_default_config"]) == 0
    printed = capsys.readouterr().out
    assert printed == (Path(model_debugging.skips.__file__).parent / "defaults" / defaults).read_text()
    assert printed.startswith("#")  # the keys come with their comments
    # its header names the command that printed it (the scan's named only the utils/ script)
    assert f"`model-debugging {command}`" in "".join(printed.splitlines(keepends=True)[:3])


def test_a_printed_default_config_edited_and_passed_back_is_used(tmp_path, capsys):
    assert exit_code(["report", "--print_default_config"]) == 0
    config = tmp_path / "report.yaml"
    config.write_text(capsys.readouterr().out.replace("headline_rows: 20", "headline_rows: 1"))
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps({name: RESULT_ENTRY for name in ("test_a", "test_b")}))
    assert exit_code(["report", "--current", str(scan), "--config", str(config)]) == 0
    headline = capsys.readouterr().out.split("Most skipped tests")[1]
    assert "test_a" in headline and "test_b" not in headline


RESULT_ENTRY = {
    "origin": "common",
    "models_ran": ["bert"],
    "models_skipped": ["llama"],
    "skipped_proportion": 0.5,
    "reasons_skipped": ["llama: no"],
}
