"""A damaged, foreign or other-version cache is only a miss: rebuilt, with identical results.

Two scans running at the same time over the same checkout and cache both write complete, correct output.
"""

import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from model_debugging.skips.incremental.snapshot import ScanSnapshot
from model_debugging.skips.work import entries as cache
from tests.support import synthetic
from tests.support.scanning import scan_json

EXAMPLES = 30
SCRIPT = Path(__file__).resolve().parents[3] / "utils" / "scan_skipped_tests.py"
SPEC = synthetic.random_checkout(random.Random(3), 12, common_tests=4, generation_tests=2)
EXPECTED = synthetic.expected_results(SPEC)


def _damaged(entry: bytes, key: str, damage: str, cut: float, noise: bytes, foreign: bytes) -> bytes:
    """``entry`` (the cache file of ``key``, perhaps damaged already) damaged once more."""
    if damage == "truncated":
        return entry[: int(len(entry) * cut)]
    if damage == "garbage":
        return noise
    if damage == "empty":
        return b""
    if damage == "other_key":  # a valid entry, but written for other content
        return foreign
    if damage == "other_type":  # the right key holding something that is not a record
        return pickle.dumps((key, {"records": "of another version"}))
    # Records of a module this version does not have (same length: the pickle stays well-formed).
    return entry.replace(b"model_debugging.skips.records.test_files", b"model_debugging.skips.recordz")


DAMAGES = st.sampled_from(["truncated", "garbage", "empty", "other_key", "other_type", "unknown_class"])


@settings(settings.get_profile("analyzer-robustness"), max_examples=EXAMPLES)
@given(
    damages=st.lists(st.tuples(DAMAGES, st.floats(0, 1), st.binary(max_size=64)), min_size=1, max_size=40),
    single_test=st.booleans(),
)
def test_damaged_cache_entries_are_rebuilt_with_identical_results(damages, single_test):
    with tempfile.TemporaryDirectory() as root:
        repo, cache_dir = synthetic.write_checkout(SPEC, Path(root) / "repo"), Path(root) / "cache"
        assert scan_json(repo, cache_dir=cache_dir, jobs=1) == (EXPECTED, [])
        entries = sorted(cache_dir.rglob("*.pickle"))
        snapshot = next(
            entry for entry in entries if isinstance(pickle.loads(entry.read_bytes())[1], ScanSnapshot)
        )
        damaged = set()
        for index, (damage, cut, noise) in enumerate(damages):
            entry = entries[index % len(entries)]
            foreign = entries[(index + 1) % len(entries)].read_bytes()
            before = entry.read_bytes()
            entry.write_bytes(_damaged(before, entry.stem, damage, cut, noise, foreign))
            if entry.read_bytes() != before:  # a cut at 100% or a no-op rename leaves it intact
                damaged.add(entry)
        name = "test_training" if single_test else None
        results, errors = scan_json(repo, cache_dir=cache_dir, jobs=1, test_method_name=name)
        assert errors == []
        assert results == (EXPECTED if name is None else {name: EXPECTED[name]})
        if (
            snapshot in damaged and name is None
        ):  # the full scan had to read every file's entry: damaged ones were written again
            reread = cache.ParseCache(cache_dir)
            for entry in entries:
                key = entry.stem
                assert reread.get_entry(key, object) is not None, entry


def test_entries_of_another_version_are_ignored(tmp_path, monkeypatch):
    repo = synthetic.write_checkout(SPEC, tmp_path / "repo")
    edited = synthetic.CheckoutSpec(SPEC.models[1:], SPEC.common_tests, SPEC.generation_tests)
    monkeypatch.setattr(cache, "analyzer_version", lambda: "an older analyzer")
    old, _ = scan_json(repo, cache_dir=tmp_path / "cache", jobs=1)
    monkeypatch.undo()
    # The old version's entries sit at the paths of the current keys too.
    for entry in sorted((tmp_path / "cache").rglob("*.pickle")):
        key, value = pickle.loads(entry.read_bytes())
        target = tmp_path / "cache" / key[::-1][:2] / f"{key[::-1]}.pickle"
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(pickle.dumps((key, value)))
    assert old == EXPECTED
    # the model's folder, as git rm -r
    shutil.rmtree((repo / synthetic.model_file(SPEC.models[0].name)).parent)
    assert scan_json(repo, cache_dir=tmp_path / "cache", jobs=1) == (
        synthetic.expected_results(edited),
        [],
    )


def test_a_changed_analyzer_reads_no_entry_an_older_one_wrote(monkeypatch):
    """An upgrade that changes a parse rule must not answer from records the old rule made (a scan
    after an upgrade kept 88 stale verdicts of the 2026 tree when the key named a hand-bumped format)."""
    current = cache.cache_key("tests/models/bert/test_modeling_bert.py", b"source")
    monkeypatch.setattr(cache, "analyzer_version", lambda: "an older analyzer")
    assert cache.cache_key("tests/models/bert/test_modeling_bert.py", b"source") != current


def test_an_edit_anywhere_in_the_analyzer_makes_another_analyzer(monkeypatch):
    """The cache's own folder is not the analyzer: an edited parse rule or interpreter module, or a
    module of the project the analyzer imports (what counts as an assertion), must change the
    version the entries are keyed on too."""
    digest = cache.analyzer_version.__wrapped__  # computed afresh, not the process's kept answer
    current = digest()
    read = cache._read
    for edited in ("body_skip.py", "statements.py", "assertions.py"):  # parse/rules/, interp/, outside skips/
        monkeypatch.setattr(
            cache,
            "_read",
            lambda folder, name, edited=edited: read(folder, name) + b"#" * name.endswith(edited),
        )
        assert digest() != current


def test_a_reworded_report_is_the_same_analyzer(monkeypatch):
    """The PR check and the trend report (``skips/report/``) read results and decide no verdict. An
    edit of their wording made another analyzer: every cache entry missed, and the weekly trend said
    "The analyzer changed between the two scans" and scanned last week's commit again."""
    digest = cache.analyzer_version.__wrapped__
    current = digest()
    read = cache._read
    for edited in ("pr_check/report.py", "trend_report.py"):
        monkeypatch.setattr(
            cache,
            "_read",
            lambda folder, name, edited=edited: (
                read(folder, name)
                + b"#" * os.path.join(folder, name).endswith(os.path.join("report", edited))
            ),
        )
        assert digest() == current


def _scan_command(repo: Path, output: Path, cache_dir: Path) -> list[str]:
    return [
        sys.executable,
        str(SCRIPT),
        "--repo",
        str(repo),
        "--output_dir",
        str(output),
        "--cache_dir",
        str(cache_dir),
    ]


def test_two_concurrent_scans_over_one_checkout_and_cache_both_write_complete_results(tmp_path):
    spec = synthetic.random_checkout(random.Random(5), 60, common_tests=10, generation_tests=3)
    repo = synthetic.write_checkout(spec, tmp_path / "repo")
    expected = synthetic.expected_results(spec)
    for round_ in ("cold", "warm"):
        outputs = [tmp_path / round_ / "a", tmp_path / round_ / "b", tmp_path / round_ / "shared"]
        commands = [
            _scan_command(repo, outputs[0], tmp_path / "cache") + ["--jobs", "1"],
            _scan_command(repo, outputs[1], tmp_path / "cache") + ["--jobs", "2"],
            _scan_command(repo, outputs[2], tmp_path / "cache") + ["--jobs", "1"],
            _scan_command(repo, outputs[2], tmp_path / "cache") + ["--jobs", "1"],
        ]
        running = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for command in commands
        ]
        for process in running:
            _, stderr = process.communicate(timeout=120)
            assert process.returncode == 0, stderr.decode()
        for output in outputs:
            assert json.loads((output / "all_tests_scan_result.json").read_text()) == expected
            assert json.loads((output / "all_tests_scan_errors.json").read_text()) == []
            assert sorted(path.name for path in output.iterdir()) == [
                "all_tests_scan_errors.json",
                "all_tests_scan_result.json",
            ]
