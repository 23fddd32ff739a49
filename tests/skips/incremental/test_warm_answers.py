"""A scan run again on an unchanged checkout is answered from what the last one kept, a single test
as well as a full scan, without reading the unchanged files again; any edit is seen."""

import os
import subprocess
import sys
import time
from pathlib import Path

from model_debugging.skips.incremental import memory, stat_index
from model_debugging.skips.incremental.memory import ScanStats
from tests.skips.conftest import write_tree
from tests.skips.incremental.test_rescan import GAMMA_WITH_EMBEDS
from tests.skips.models.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)
from tests.support.scanning import scan_json

HOUR = 3600


def _scan(repo, cache_dir, test=None):
    stats = ScanStats()
    results, errors = scan_json(repo, cache_dir=cache_dir, jobs=1, stats=stats, test_method_name=test)
    return results, errors, stats


def _settle(root: Path, monkeypatch) -> None:
    """Date every file an hour back, as a checkout not edited for a while has it (its change time
    stays now: the index is told to trust files of any age)."""
    then = time.time() - HOUR
    for path in root.rglob("*.py"):
        os.utime(path, (then, then))
    monkeypatch.setattr(stat_index, "SETTLED_NS", -HOUR * 10**9)


def test_a_single_test_scanned_again_is_answered_from_its_snapshot(checkout, tmp_path):  # noqa: F811
    cache = tmp_path / "cache"
    first, errors, stats = _scan(checkout, cache, "test_inputs_embeds")
    assert stats.answer == "full"

    again, errors_again, stats = _scan(checkout, cache, "test_inputs_embeds")

    assert (stats.answer, stats.models_evaluated) == ("snapshot", 0)
    assert (again, errors_again) == (first, errors)
    whole, _, _ = _scan(checkout, tmp_path / "whole")
    assert again["test_inputs_embeds"] == whole["test_inputs_embeds"]


def test_a_single_test_snapshot_is_not_answered_after_a_library_edit(checkout, tmp_path):  # noqa: F811
    cache = tmp_path / "cache"
    before, _, _ = _scan(checkout, cache, "test_inputs_embeds")
    write_tree(checkout, {"src/transformers/models/gamma/modeling_gamma.py": GAMMA_WITH_EMBEDS})

    after, errors, stats = _scan(checkout, cache, "test_inputs_embeds")

    assert stats.answer == "full"
    assert (
        after["test_inputs_embeds"]["models_ran"]
        == ["alpha", "beta"]
        != before["test_inputs_embeds"]["models_ran"]
    )
    assert (after, errors) == _scan(checkout, tmp_path / "cold", "test_inputs_embeds")[:2]


def test_a_warm_scan_of_settled_files_reads_none_of_them_again(checkout, tmp_path, monkeypatch):  # noqa: F811
    _settle(checkout, monkeypatch)
    before, _, _ = _scan(checkout, tmp_path / "cache")

    def refuse(path):
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(memory, "read_source", refuse)
    monkeypatch.setattr(Path, "read_bytes", refuse)
    results, _, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, results) == ("snapshot", before)


def test_an_edit_that_keeps_the_size_and_the_modification_time_is_seen(checkout, tmp_path, monkeypatch):  # noqa: F811
    """The file's change time and inode are compared too: a tool restoring the modification time
    after an edit of the same length (a ``git checkout`` of another revision can) is not missed."""
    _settle(checkout, monkeypatch)
    _scan(checkout, tmp_path / "cache")
    test_file = checkout / "tests/models/beta/test_modeling_beta.py"
    source, status = test_file.read_text(), test_file.stat()
    edited = source.replace("class BetaModelTest", "class BetaModelTezt")
    assert len(edited) == len(source) != 0 and edited != source
    test_file.write_text(edited)
    os.utime(test_file, ns=(status.st_atime_ns, status.st_mtime_ns))

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)  # beta, whose file changed
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


def _modules_a_scan_loads(repo: Path, cache_dir: Path) -> set[str]:
    """The modules a scan of ``repo`` with ``cache_dir`` loads, run in a fresh process."""
    script = (
        "import sys\n"
        "from model_debugging import scan_repository\n"
        f"scan_repository({str(repo)!r}, cache_dir={str(cache_dir)!r}, jobs=1)\n"
        "print('\\n'.join(sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    return set(run.stdout.split())


def test_a_scan_answered_from_its_snapshot_imports_no_evaluator(checkout, tmp_path):  # noqa: F811
    """The warm answer is the fast path: it loads neither libcst nor the evaluating code."""
    _modules_a_scan_loads(checkout, tmp_path / "cache")

    loaded = _modules_a_scan_loads(checkout, tmp_path / "cache")

    evaluating = ("model_debugging.skips.decide.scan", "model_debugging.skips.interp")
    assert sorted(name for name in loaded if name == "libcst" or name.startswith(evaluating)) == []


def test_a_rescan_after_a_library_edit_imports_no_libcst(checkout, tmp_path):  # noqa: F811
    """Every test file's record comes from the cache: only the library's edited file is read again."""
    _modules_a_scan_loads(checkout, tmp_path / "cache")
    with open(checkout / "src/transformers/modeling_utils.py", "a", encoding="utf-8") as library:
        library.write("\n# an edit\n")

    loaded = _modules_a_scan_loads(checkout, tmp_path / "cache")

    assert "libcst" not in loaded
    assert "model_debugging.skips.interp.statements" in loaded  # evaluated again, unparsed
