"""Every entry point as a user runs it: output piped into a reader that went away, and Ctrl-C.

``model-debugging scan | head -2`` must still write the scan's files and exit with the scan's
code; Ctrl-C is one line and exit 130. Each case runs the command in its own process, on a real
pipe whose read end is closed before the command starts (every write to it fails with EPIPE, as
after ``head`` has exited) or on a FIFO nobody writes.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from model_debugging.cli import main
from model_debugging.skips.work.pool import worker_pool
from tests.skips.conftest import COMMON, write_tree

PROJECT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "model_debugging.cli"]
MODEL = "from ...test_modeling_common import ModelTesterMixin\n\nclass BertModelTest(ModelTesterMixin):\n    pass\n"


@pytest.fixture(scope="module")
def scan_result(tmp_path_factory) -> Path:
    """A scan result of a small checkout, as ``model-debugging scan`` writes it."""
    root = tmp_path_factory.mktemp("scanned")
    files = {"tests/test_modeling_common.py": COMMON, "tests/models/bert/test_modeling_bert.py": MODEL}
    repo = write_tree(root / "repo", files)
    assert main(["scan", "--repo", str(repo), "--output_dir", str(root), "--no_cache"]) == 0
    return root / "all_tests_scan_result.json"


def run_into_closed_pipe(command: list[str], cwd: Path) -> int:
    """Run ``command`` with stdout and stderr on a pipe nobody reads any more; its exit code."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(command, stdout=write_end, stderr=write_end, cwd=cwd, check=False).returncode
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "entry", [[*CLI, "scan"], [sys.executable, str(PROJECT / "utils/scan_skipped_tests.py")]]
)
def test_a_scan_piped_into_a_closed_reader_writes_its_files_and_exits_0(tmp_path, entry):
    files = {"tests/test_modeling_common.py": COMMON, "tests/models/bert/test_modeling_bert.py": MODEL}
    repo = write_tree(tmp_path / "repo", files)
    command = [*entry, "--repo", str(repo), "--output_dir", "out", "--no_cache", "--summary"]
    assert run_into_closed_pipe(command, tmp_path) == 0
    assert "test_forward" in json.loads((tmp_path / "out" / "all_tests_scan_result.json").read_text())
    assert (tmp_path / "out" / "all_tests_scan_errors.json").is_file()


@pytest.mark.parametrize("entry", [[*CLI, "report"], [sys.executable, str(PROJECT / "utils/skip_report.py")]])
def test_a_report_piped_into_a_closed_reader_writes_every_file(tmp_path, scan_result, entry):
    shutil.copy(scan_result, tmp_path / "scan.json")
    outputs = ["--markdown", "r/trend.md", "--csv", "r/trend.csv", "--plot", "r/plot.png"]
    command = [*entry, "--previous", "scan.json", "--current", "scan.json", *outputs]
    assert run_into_closed_pipe(command, tmp_path) == 0
    assert sorted(path.name for path in (tmp_path / "r").iterdir()) == ["plot.png", "trend.csv", "trend.md"]


def test_a_file_written_to_dev_stdout_of_a_closed_pipe_is_dropped_and_the_others_written(
    tmp_path, scan_result
):
    shutil.copy(scan_result, tmp_path / "scan.json")
    command = [*CLI, "report", "--current", "scan.json", "--markdown", "/dev/stdout", "--csv", "trend.csv"]
    assert run_into_closed_pipe(command, tmp_path) == 0
    assert "test_forward" in (tmp_path / "trend.csv").read_text()


def test_the_list_of_commands_into_a_closed_pipe_exits_0(tmp_path):
    # `model-debugging --help | head -1` ended in a BrokenPipeError traceback and exit 1
    assert run_into_closed_pipe([*CLI, "--help"], tmp_path) == 0


def test_a_usage_error_into_a_closed_pipe_keeps_its_exit_code(tmp_path):
    assert run_into_closed_pipe([*CLI, "report", "--current", "missing.json"], tmp_path) == 2


def test_piped_into_head_the_reader_gets_the_first_line_and_the_files_are_written(tmp_path, scan_result):
    shutil.copy(scan_result, tmp_path / "scan.json")
    command = " ".join([*CLI, "report", "--current", "scan.json", "--markdown", "trend.md"])
    result = subprocess.run(
        f"{command} | head -1; echo rc=${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.splitlines()[-1] == "rc=0", result
    assert len(result.stdout.splitlines()) == 2 and "Traceback" not in result.stderr
    assert (tmp_path / "trend.md").is_file()


def _reading(pid: int) -> bool:
    """Whether process ``pid`` sleeps in a read (Linux names the kernel function in ``wchan``); True
    where it is not told."""
    try:
        return "read" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return True


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    fifo = tmp_path / "scan.json"  # e.g. <(slow command): the report waits for its writer
    os.mkfifo(fifo)
    # as from a terminal: a command started in the background of a shell (nohup, `&`, some CI
    # runners) inherits SIGINT ignored, and Python then leaves Ctrl-C ignored too
    process = subprocess.Popen(
        [*CLI, "report", "--current", str(fifo)],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # the FIFO can be opened for writing once the report has opened it for reading
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
        # Ctrl-C once the report waits in read(): one landing between its open() of the FIFO and that
        # read() runs Python's handler while no system call is interrupted, and the read then waits
        # for the writer for ever (the test's writer closes only after the report exits)
        while not _reading(process.pid):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, error = process.communicate(timeout=60)
        os.close(writer)
    finally:
        process.kill()
    assert process.returncode == 130
    assert error == "model-debugging report: interrupted\n"


def test_a_worker_pool_left_by_an_exception_drops_the_tasks_not_started():
    with pytest.raises(KeyboardInterrupt), worker_pool(1) as pool:
        futures = [pool.submit(time.sleep, 0.05) for _ in range(40)]
        futures[0].result()
        raise KeyboardInterrupt  # Ctrl-C while the scan waits on its workers
    assert futures[-1].cancelled()
