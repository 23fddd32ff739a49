"""``kill -9`` of a scan at any moment never leaves a partial ``all_tests_scan_result.json``.

The file is then either the previous one, byte for byte, or a complete and correct new result; the
cache the killed run was writing still gives the right answer.
"""

import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from model_debugging.skips.command import ERRORS_FILE, RESULT_FILE
from model_debugging.skips.command import main as scan_command
from tests.support import synthetic
from tests.support.scanning import scan_json

# Random moments (a fraction of one cold scan's duration), spread over start-up, parsing, cache writes
# and the final write; a fresh cache makes the run cold, the shared one warm after the first runs.
_MOMENTS = random.Random(0)
KILLS = [(round(_MOMENTS.uniform(0.05, 1.0), 3), False, _MOMENTS.random() < 0.5) for _ in range(10)]
KILLS += [(0.0, True, True), (0.0, True, False)]  # halfway through writing the result file
SCRIPT = Path(__file__).resolve().parents[3] / "utils" / "scan_skipped_tests.py"
SPEC = synthetic.random_checkout(random.Random(11), 120, common_tests=10, generation_tests=3)
PREVIOUS_SPEC = synthetic.CheckoutSpec(SPEC.models[:5], SPEC.common_tests, SPEC.generation_tests)
# Runs the command with the write of the result file stopping halfway (flushed to the temporary file).
HALF_WRITE_THEN_WAIT = """
import os, sys, time
from model_debugging.reporting import atomic

class HalfThenWait:
    def __init__(self, handle):
        self.handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.handle.close()

    def write(self, data):
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        print("HALF-WRITTEN", flush=True)
        time.sleep(60)

original = atomic._write_atomically
real_fdopen = os.fdopen

def stalled(path, data):
    if str(path).endswith("{result}"):  # the temporary file of the result is opened with os.fdopen
        atomic.os.fdopen = lambda *args, **kwargs: HalfThenWait(real_fdopen(*args, **kwargs))
    return original(path, data)

atomic._write_atomically = stalled
from model_debugging.skips.command import main
sys.exit(main(sys.argv[1:]))
""".replace("{result}", RESULT_FILE)


@pytest.fixture(scope="module")
def checkout():
    """(new checkout, output dir holding the previous result, the previous files' bytes, seconds per cold scan)."""
    with tempfile.TemporaryDirectory() as root:
        root = Path(root)
        old = synthetic.write_checkout(PREVIOUS_SPEC, root / "old")
        output = root / "output"
        assert (
            scan_command(["--repo", str(old), "--output_dir", str(output), "--no_cache", "--jobs", "1"]) == 0
        )
        previous = {name: (output / name).read_bytes() for name in (RESULT_FILE, ERRORS_FILE)}
        repo = synthetic.write_checkout(SPEC, root / "repo")
        start = time.monotonic()
        _run(repo, root / "timing", root / "timing-cache").wait(timeout=120)
        yield repo, output, previous, time.monotonic() - start


def _run(repo: Path, output: Path, cache_dir: Path, *, stall: bool = False) -> subprocess.Popen:
    program = ["-c", HALF_WRITE_THEN_WAIT] if stall else [str(SCRIPT)]
    arguments = [
        "--repo",
        str(repo),
        "--output_dir",
        str(output),
        "--cache_dir",
        str(cache_dir),
        "--jobs",
        "2",
    ]
    return subprocess.Popen(
        [sys.executable, *program, *arguments], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


def _kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()


@pytest.mark.parametrize(("moment", "during_final_write", "fresh_cache"), KILLS)
def test_a_killed_scan_leaves_the_previous_result_or_a_complete_one(
    checkout, moment, during_final_write, fresh_cache
):
    repo, output, previous, duration = checkout
    for name, content in previous.items():
        (output / name).write_bytes(content)
    with tempfile.TemporaryDirectory() as private_cache:
        cache_dir = Path(private_cache) if fresh_cache else output.parent / "shared-cache"
        process = _run(repo, output, cache_dir, stall=during_final_write)
        if during_final_write:
            while process.stdout.readline().strip() != b"HALF-WRITTEN":
                assert process.poll() is None, "the stalled scan ended before writing its result"
        else:
            time.sleep(moment * duration)
        _kill(process)

        expected = synthetic.expected_results(SPEC)
        result = (output / RESULT_FILE).read_bytes()
        if during_final_write:
            assert result == previous[RESULT_FILE]
        elif result != previous[RESULT_FILE]:  # the run got as far as replacing it: all of it is there
            assert json.loads(result) == expected
        errors = (output / ERRORS_FILE).read_bytes()
        assert errors == previous[ERRORS_FILE] or json.loads(errors) == []
        # Whatever the killed run left in the cache is only ever a miss.
        assert scan_json(repo, cache_dir=cache_dir, jobs=1) == (expected, [])


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, read from /proc."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        state, parent = fields[0], int(fields[1])
        if parent == pid and state != "Z":
            children.append(int(stat.parent.name))
    return children


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for_new_workers(process: subprocess.Popen, earlier: set[int]) -> list[int]:
    """The scan's live workers once one appears that is not in ``earlier`` (a later phase's pool)."""
    deadline = time.monotonic() + 60
    while True:
        workers = _children(process.pid)
        if workers and not earlier & set(workers):
            return workers
        assert process.poll() is None, "the scan ended before starting the expected workers"
        assert time.monotonic() < deadline, "no worker of the expected phase started"
        time.sleep(0.01)


def _assert_exit_after_kill(process: subprocess.Popen, workers: list[int]) -> None:
    _kill(process)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)], "workers outlived the killed scan"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process parents from /proc (Linux)")
def test_parsing_workers_of_a_killed_scan_exit(checkout):
    repo, output, _, _ = checkout
    with tempfile.TemporaryDirectory() as fresh_cache:
        process = _run(repo, output.parent / "killed-output", Path(fresh_cache))
        _assert_exit_after_kill(process, _wait_for_new_workers(process, set()))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process parents from /proc (Linux)")
def test_evaluation_workers_of_a_killed_scan_exit(checkout):
    """The models are evaluated in processes forked after parsing: killed then, they end too."""
    repo, output, _, _ = checkout
    with tempfile.TemporaryDirectory() as fresh_cache:
        process = _run(repo, output.parent / "killed-output", Path(fresh_cache))
        parsing = set(_wait_for_new_workers(process, set()))
        _assert_exit_after_kill(process, _wait_for_new_workers(process, parsing))
