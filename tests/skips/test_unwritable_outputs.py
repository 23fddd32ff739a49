"""Outputs of scan, report and check-skips that cannot be written: one line naming the option and the
path, exit 2, before any work.

A folder is tried by creating a file in it: root may write everywhere by ``os.access``, yet /sys
refuses new files and /proc has no folder to make. A write that fails later all the same names
the option and the path asked for, never a temporary file.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from model_debugging.cli import main
from model_debugging.reporting.atomic import atomic_write_text
from tests.skips.conftest import COMMON, write_tree

SYS_FOLDER, PROC_FOLDER = Path("/sys/kernel"), Path("/proc")
needs_sys = pytest.mark.skipif(not SYS_FOLDER.is_dir(), reason="no /sys/kernel on this system (Linux only)")
needs_proc = pytest.mark.skipif(not PROC_FOLDER.is_dir(), reason="no /proc on this system (Linux only)")
MODEL = "from ...test_modeling_common import ModelTesterMixin\n\nclass BertModelTest(ModelTesterMixin):\n    pass\n"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    files = {"tests/test_modeling_common.py": COMMON, "tests/models/bert/test_modeling_bert.py": MODEL}
    return write_tree(tmp_path_factory.mktemp("checkout") / "repo", files)


@pytest.fixture(scope="module")
def scan_result(checkout, tmp_path_factory) -> Path:
    output_dir = tmp_path_factory.mktemp("scanned")
    assert main(["scan", "--repo", str(checkout), "--output_dir", str(output_dir), "--no_cache"]) == 0
    return output_dir / "all_tests_scan_result.json"


def one_line_error(capsys, prog: str, expected: str) -> None:
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing done before the error
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"model-debugging {prog}: error: "), (
        captured
    )
    assert expected in captured.err, captured.err
    assert ".tmp" not in captured.err


@needs_sys
def test_scan_into_a_folder_that_takes_no_file_is_refused_before_the_scan(checkout, capsys):
    assert main(["scan", "--repo", str(checkout), "--output_dir", str(SYS_FOLDER), "--no_cache"]) == 2
    one_line_error(capsys, "scan", f"--output_dir {SYS_FOLDER}: cannot create files in {SYS_FOLDER}: ")


@needs_proc
def test_scan_into_a_folder_that_cannot_be_made_is_refused_before_the_scan(checkout, capsys):
    assert (
        main(
            ["scan", "--repo", str(checkout), "--output_dir", "/proc/x", "--test_method_name", "test_forward"]
        )
        == 2
    )
    one_line_error(capsys, "scan", "--output_dir /proc/x: cannot create the folder /proc/x: ")


@needs_proc
@pytest.mark.parametrize("option", ["--markdown", "--csv", "--plot"])
def test_report_outputs_where_no_file_can_be_made_are_refused(scan_result, capsys, option):
    assert main(["report", "--current", str(scan_result), option, "/proc/x.out.png"]) == 2
    one_line_error(capsys, "report", f"{option} /proc/x.out.png: cannot create files in /proc: ")


def test_report_refuses_a_plot_format_matplotlib_cannot_write(scan_result, tmp_path, capsys):
    plot = tmp_path / "p.txt"
    assert main(["report", "--current", str(scan_result), "--plot", str(plot)]) == 2
    one_line_error(capsys, "report", f"--plot {plot}: matplotlib cannot write .txt files (")
    assert not plot.exists()


def test_a_plot_without_an_extension_is_a_png(scan_result, tmp_path):
    assert main(["report", "--current", str(scan_result), "--plot", str(tmp_path / "plot")]) == 0
    assert (tmp_path / "plot").read_bytes().startswith(b"\x89PNG")


@needs_sys
def test_check_skips_refuses_markdown_where_no_file_can_be_made_before_scanning(tmp_path, capsys):
    target = SYS_FOLDER / "x.md"
    assert main(["check-skips", "--repo", str(tmp_path), "--base", "main", "--markdown", str(target)]) == 2
    one_line_error(capsys, "check-skips", f"--markdown {target}: cannot create files in {SYS_FOLDER}: ")


def test_the_check_leaves_no_folder_behind_when_the_command_stops_on_another_input(tmp_path, capsys):
    target = tmp_path / "new" / "reports" / "trend.md"
    assert main(["report", "--current", str(tmp_path / "missing.json"), "--markdown", str(target)]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_after_the_checks_names_the_option_and_the_path(scan_result, tmp_path):
    fifo = tmp_path / "trend.md"  # checked fine, but its reader never came
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "model_debugging.cli", "report", "--current", str(scan_result)]
    run = subprocess.run([*command, "--markdown", str(fifo)], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert (
        run.stderr
        == f"model-debugging report: error: cannot write --markdown {fifo}: no process is reading this FIFO\n"
    )


@needs_proc
def test_the_atomic_writer_names_the_file_asked_for_not_its_temporary_file():
    with pytest.raises(OSError) as raised:
        atomic_write_text("/proc/x.csv", "test,skipped\n")
    assert raised.value.filename == "/proc/x.csv"
    assert isinstance(raised.value, FileNotFoundError)
