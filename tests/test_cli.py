import subprocess
import sys

from model_debugging.cli import main


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
