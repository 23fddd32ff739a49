import json
import os
import time

import pytest

from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text, atomic_write_with


def test_json_round_trip_and_no_temp_files_left(tmp_path):
    target = atomic_write_json(tmp_path / "sub" / "out.json", {"a": [1, 2], "ü": "x"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": [1, 2], "ü": "x"}
    assert os.listdir(tmp_path / "sub") == ["out.json"]


def test_failed_serialization_keeps_previous_file(tmp_path):
    target = tmp_path / "out.json"
    atomic_write_text(target, "previous")
    with pytest.raises(TypeError):
        atomic_write_json(target, {"bad": object()})
    assert target.read_text() == "previous"
    assert os.listdir(tmp_path) == ["out.json"]


def test_new_file_gets_the_mode_open_would_give_and_existing_file_keeps_its_mode(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    fresh = atomic_write_text(tmp_path / "fresh.txt", "x")
    assert fresh.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    existing = tmp_path / "existing.txt"
    existing.write_text("old")
    existing.chmod(0o640)
    atomic_write_text(existing, "new")
    assert existing.stat().st_mode & 0o777 == 0o640


def test_a_write_removes_temporaries_left_by_killed_writers_but_not_recent_ones(tmp_path):
    target = tmp_path / "out.json"
    stale = tmp_path / ".out.json.abc123.tmp"
    recent = tmp_path / ".out.json.def456.tmp"
    other = tmp_path / ".other.json.abc123.tmp"
    for leftover in (stale, recent, other):
        leftover.write_text("partial")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic_write_json(target, {"a": 1})
    assert sorted(os.listdir(tmp_path)) == sorted([target.name, recent.name, other.name])


def test_names_up_to_the_file_system_limit_can_be_written(tmp_path):
    name = "é" * 120 + ".json"  # 245 bytes: a temporary named after it in full would not fit
    assert json.loads(atomic_write_json(tmp_path / name, [1]).read_text()) == [1]
    assert os.listdir(tmp_path) == [name]


def test_atomic_write_with_publishes_only_complete_files(tmp_path):
    target = tmp_path / "tensor.bin"
    atomic_write_with(target, lambda temporary: temporary.write_bytes(b"first"), durable=False)

    def fail_halfway(temporary):
        temporary.write_bytes(b"par")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write_with(target, fail_halfway)
    assert target.read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["tensor.bin"]


def test_atomic_write_with_keeps_the_mode_of_a_replaced_file(tmp_path):
    target = tmp_path / "tensor.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic_write_with(target, lambda temporary: temporary.write_bytes(b"new"))
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o640
