import subprocess
import sys

import pytest

from model_debugging.cli import SUBCOMMANDS, main


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "scan" in out and "compare" in out


def test_unknown_command_exits_2(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_importing_package_does_not_import_torch():
    code = "import sys, model_debugging, model_debugging.reporting, model_debugging.config; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


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


def test_reporting_names_import_lazily():
    code = (
        "import sys\n"
        "from model_debugging.reporting import atomic_write_json\n"
        "print('pandas' in sys.modules, 'matplotlib' in sys.modules)\n"
        "import model_debugging.reporting as reporting\n"
        "[getattr(reporting, name) for name in reporting.__all__]\n"
        "print('pandas' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False", "True"]


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
