"""A writer killed with SIGKILL in the middle of an atomic write leaves the previous file intact."""

import os
import signal
import subprocess
import sys
import time

import pytest

SIZE = 16 * 1024 * 1024
# rewrites the target forever, alternating two payloads of the same size
WRITER = f"""
import sys
from model_debugging.reporting.atomic import atomic_write_bytes
target = sys.argv[1]
payloads = [b"A" * {SIZE}, b"B" * {SIZE}]
print("ready", flush=True)
i = 0
while True:
    atomic_write_bytes(target, payloads[i % 2])
    i += 1
"""


def _kill_while_temp_file_exists(writer: subprocess.Popen, directory, timeout: float = 10.0) -> bool:
    """SIGKILL ``writer`` as soon as a temporary file shows up; True if it was caught mid-write."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(name.endswith(".tmp") for name in os.listdir(directory)):
            writer.send_signal(signal.SIGKILL)
            return True
    writer.send_signal(signal.SIGKILL)
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_kill_mid_write_keeps_previous_file(tmp_path):
    target = tmp_path / "result.bin"
    target.write_bytes(b"P" * SIZE)
    caught = 0
    for _ in range(8):  # until three kills landed mid-write; a loaded machine may miss a window
        if caught == 3:
            break
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout.readline().strip() == "ready"
        caught += _kill_while_temp_file_exists(writer, tmp_path)
        writer.wait()
        assert writer.returncode == -signal.SIGKILL
        data = target.read_bytes()
        assert len(data) == SIZE and data in (b"P" * SIZE, b"A" * SIZE, b"B" * SIZE)
        for leftover in tmp_path.glob(".*.tmp"):  # a killed writer cannot clean up its temp file
            leftover.unlink()
    assert caught == 3, "the writer was not killed while a temporary file existed"
