"""A ``debug_path`` that cannot be written (read-only, full) gives a clear error and no half-written JSON."""

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format import tensor_files
from model_debugging.reporting import atomic

CHILD = Path(__file__).with_name("file_size_limit_child.py")


class Block(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, hidden):
        return self.proj(hidden)


class SmallModel(nn.Module):
    def __init__(self, fail=False):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))
        self.fail = fail

    def forward(self, hidden):
        for layer in self.layers:
            hidden = layer(hidden)
        if self.fail:
            raise ValueError("the model's own error")
        return hidden


def can_create_files_in(directory: Path) -> bool:
    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


@pytest.fixture
def read_only_directory(tmp_path):
    directory = tmp_path / "read_only"
    directory.mkdir()
    directory.chmod(0o555)
    if not can_create_files_in(directory):
        yield directory
        directory.chmod(0o755)
        return
    directory.chmod(0o755)
    # root ignores permission bits; pseudo file systems refuse new files even to root
    for candidate in (Path("/sys/kernel"), Path("/proc/self")):
        if candidate.is_dir() and not can_create_files_in(candidate):
            yield candidate
            return
    pytest.skip("running as root and no directory refuses writes (no /sys or /proc)")


def no_instance_forwards(model):
    return all("forward" not in vars(module) for module in model.modules())


@pytest.mark.parametrize("subdirectory", [None, "new"])
def test_read_only_debug_path_fails_before_anything_is_patched(read_only_directory, subdirectory):
    debug_path = read_only_directory / subdirectory if subdirectory else read_only_directory
    before = set(read_only_directory.iterdir())
    model = SmallModel()
    with (
        pytest.raises(ValueError, match="is not a usable directory") as raised,
        model_addition_debugger_context(model, debug_path=debug_path),
    ):
        model(torch.ones(4))
    assert str(debug_path) in str(raised.value)
    assert no_instance_forwards(model)
    assert set(read_only_directory.iterdir()) == before


class FaultPlan:
    """Makes the ``fail_at``-th low-level write (JSON text or tensor file) fail with ``error_number``."""

    def __init__(self, fail_at, error_number):
        self.fail_at = fail_at
        self.error_number = error_number
        self.writes = 0

    def check(self):
        self.writes += 1
        if self.writes == self.fail_at + 1:
            raise OSError(self.error_number, os.strerror(self.error_number))


class FaultyHandle:
    """A file handle that writes half its data before the fault, like a disk filling up mid-write."""

    def __init__(self, handle, plan):
        self._handle = handle
        self._plan = plan

    def write(self, data):
        try:
            self._plan.check()
        except OSError:
            self._handle.write(data[: len(data) // 2])
            self._handle.flush()
            raise
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self._handle.__exit__(*exc_info)


class FaultyOs:
    """``os`` as the atomic writer sees it, with file handles that fail on plan."""

    def __init__(self, plan):
        self._plan = plan

    def fdopen(self, *args, **kwargs):
        return FaultyHandle(os.fdopen(*args, **kwargs), self._plan)

    def __getattr__(self, name):
        return getattr(os, name)


def install_faults(monkeypatch, plan):
    monkeypatch.setattr(atomic, "os", FaultyOs(plan))
    real_write = tensor_files._write_safetensors

    def faulty_write(path, data):
        plan.check()
        real_write(path, data)

    monkeypatch.setattr(tensor_files, "_write_safetensors", faulty_write)


def assert_no_partial_files(debug_path):
    names = [path.name for path in debug_path.iterdir()]
    assert not [name for name in names if name.startswith(".")], names  # atomic writes' temp files
    for path in debug_path.glob("*_debug_tree_*.json"):  # complete, or not there
        tree = json.loads(path.read_text())
        assert tree.get("tree", tree)["module_path"] == "SmallModel"  # the extra file holds its own tree
    for path in debug_path.glob("*.safetensors"):
        assert load_file(path)["data"].numel() == 4


def cause_chain(error):
    while error is not None:
        yield error
        error = error.__cause__


@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(
    fail_at=st.integers(0, 24),
    error_number=st.sampled_from([errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO]),
    use_repr=st.booleans(),
    model_fails=st.sampled_from([False, False, False, True]),
)
def test_a_write_failing_mid_trace_gives_a_clear_error_and_no_partial_json(
    fail_at, error_number, use_repr, model_fails
):
    plan = FaultPlan(fail_at, error_number)
    model = SmallModel(fail=model_fails)
    with pytest.MonkeyPatch.context() as monkeypatch, tempfile.TemporaryDirectory() as scratch:
        debug_path = Path(scratch)
        install_faults(monkeypatch, plan)
        try:
            with model_addition_debugger_context(model, debug_path=debug_path, use_repr=use_repr):
                for _ in range(2):  # a fault in the second forward must leave the first trace intact
                    model(torch.ones(4))
        except ValueError as raised:
            event("the model raised (its error wins over the write fault)")
            assert model_fails and str(raised) == "the model's own error"  # the model's error wins
        except OSError as raised:
            event("a write failed")
            assert not model_fails
            message = str(raised)
            assert scratch in message and os.strerror(error_number) in message, message
            assert any(getattr(error, "errno", None) == error_number for error in cause_chain(raised))
        else:
            event("no write failed")
            assert plan.writes <= fail_at and not model_fails  # no fault was reached
        assert no_instance_forwards(model)
        assert_no_partial_files(debug_path)


def test_a_real_file_size_limit_gives_a_clear_error_and_no_partial_json(tmp_path):
    """The kernel refuses writes past RLIMIT_FSIZE (EFBIG), for JSON and for safetensors' own writes."""
    result = subprocess.run(
        [sys.executable, str(CHILD), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    assert set(outcomes) == {"use_repr=True", "use_repr=False"}
    for outcome in outcomes.values():
        assert outcome["error_type"] == "OSError"
        assert "File too large" in outcome["error"] and str(tmp_path) in outcome["error"]
        assert outcome["model_untouched"]
        assert outcome["partial_files"] == []


def test_debug_path_under_a_file_fails_before_anything_is_patched(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    model = SmallModel()
    with (
        pytest.raises(ValueError, match="is not a usable directory"),
        model_addition_debugger_context(model, debug_path=blocker / "debug"),
    ):
        model(torch.ones(4))
    assert no_instance_forwards(model)
    assert blocker.read_text() == "not a directory"
