"""A scan result records what made it: the analyzer, its settings and the commit it read, in every
entry (upstream's keys and ``pd.read_json(path).T`` unchanged)."""

import json
import shutil

import pandas as pd

from model_debugging import __version__, scan_repository
from model_debugging.skips.command import main as scan
from model_debugging.skips.incremental.memory import ScanStats
from model_debugging.skips.results.provenance import settings_digest
from model_debugging.skips.source.settings import DEFAULT_SETTINGS
from model_debugging.skips.work.entries import analyzer_version

from .git_trees import git, write

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am")


def scanned(repo, output, *options) -> dict:
    assert scan(["--repo", str(repo), "--output_dir", str(output), *options]) == 0
    name = "all_tests_scan_result.json" if not options else f"scan_{options[-1]}.json"
    return json.loads((output / name).read_text(encoding="utf-8"))


def test_every_entry_records_the_analyzer_and_the_commit_after_upstream_s_keys(whole_tree, tmp_path):
    result = scanned(whole_tree, tmp_path / "scan")
    expected = {
        "package_version": __version__,
        "analyzer_digest": analyzer_version(),
        "settings_digest": settings_digest(DEFAULT_SETTINGS),
        "commit": git(whole_tree, "rev-parse", "HEAD").strip(),
    }
    assert [entry["provenance"] for entry in result.values()] == [expected] * len(result)
    assert all(list(entry)[-1] == "provenance" for entry in result.values())
    frame = pd.read_json(tmp_path / "scan" / "all_tests_scan_result.json").T
    assert frame.loc["test_forward", "models_ran"] == ["alpha", "beta", "gamma"]
    single = scanned(whole_tree, tmp_path / "one", "--test_method_name", "test_forward")
    assert single["provenance"] == expected


def test_a_checkout_that_is_not_its_commit_records_no_commit(whole_tree, tmp_path):
    def commit_of_scan() -> str | None:
        (result,) = {
            json.dumps(entry["provenance"]) for entry in scanned(whole_tree, tmp_path / "s").values()
        }
        return json.loads(result)["commit"]

    head = git(whole_tree, "rev-parse", "HEAD").strip()
    write(whole_tree, {"README.md": "edited: not a file the scan reads\n"})
    assert commit_of_scan() == head
    write(whole_tree, {"tests/models/beta/notes.py": "x = 1\n"})  # untracked, under tests/
    assert commit_of_scan() is None
    (whole_tree / "tests" / "models" / "beta" / "notes.py").unlink()
    write(whole_tree, {"src/transformers/__init__.py": "# edited\n"})
    assert commit_of_scan() is None
    exported = tmp_path / "exported"
    shutil.copytree(whole_tree, exported, ignore=shutil.ignore_patterns(".git"))
    (result,) = {
        json.dumps(entry["provenance"]["commit"]) for entry in scanned(exported, tmp_path / "e").values()
    }
    assert result == "null"  # no git checkout of its own (an exported tree, or a folder of another one)


def test_a_result_answered_from_the_cache_records_the_commit_scanned_now(whole_tree, tmp_path):
    cache = tmp_path / "cache"
    first = scan_repository(whole_tree, cache_dir=cache)
    write(whole_tree, {"README.md": "a commit that changes no scanned file\n"})
    git(whole_tree, *COMMIT, "readme")
    stats = ScanStats()
    second = scan_repository(whole_tree, cache_dir=cache, stats=stats)
    assert stats.answer == "snapshot"  # the same verdicts, kept
    assert second.provenance.commit == git(whole_tree, "rev-parse", "HEAD").strip() != first.provenance.commit
