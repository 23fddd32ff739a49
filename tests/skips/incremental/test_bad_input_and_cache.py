"""Unparsable files are reported and skipped; the cache never changes the answer."""

import pickle

from model_debugging.skips.parse import test_file as parse
from model_debugging.skips.work.entries import ParseCache

MODEL = """
import unittest
from ...test_modeling_common import ModelTesterMixin

class GoodModelTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
"""


def test_bad_files_are_reported_and_the_scan_goes_on(make_repo, scan, monkeypatch):
    monkeypatch.setattr(parse, "MAX_FILE_BYTES", 10_000)
    repo = make_repo(
        {
            "tests/models/good/test_modeling_good.py": MODEL,
            "tests/models/syntax/test_modeling_syntax.py": "import unittest\n\nclass Broken(:\n    pass\n",
            "tests/models/latin1/test_modeling_latin1.py": b'NAME = "caf\xe9"\nimport unittest\n',
            "tests/models/huge/test_modeling_huge.py": "x = 1\n" * 5_000,
        }
    )
    results = scan(repo)
    assert results["test_attention_outputs"]["models_skipped"] == ["good"]
    errors = {error["path"]: error for error in scan.errors}
    assert set(errors) == {
        "tests/models/syntax/test_modeling_syntax.py",
        "tests/models/latin1/test_modeling_latin1.py",
        "tests/models/huge/test_modeling_huge.py",
    }
    assert errors["tests/models/syntax/test_modeling_syntax.py"]["message"].startswith("syntax error")
    assert errors["tests/models/syntax/test_modeling_syntax.py"]["line"] == 3
    assert errors["tests/models/latin1/test_modeling_latin1.py"]["message"].startswith("cannot decode: ")
    assert errors["tests/models/latin1/test_modeling_latin1.py"]["line"] == 1
    assert "too large" in errors["tests/models/huge/test_modeling_huge.py"]["message"]


def test_warm_damaged_and_stale_caches_give_identical_results(make_repo, scan, tmp_path):
    repo = make_repo({"tests/models/good/test_modeling_good.py": MODEL})
    cache_dir = tmp_path / "cache"
    cold = scan(repo, cache_dir=cache_dir)
    entries = sorted(cache_dir.rglob("*.pickle"))
    # two common files, the model file, the snapshot of the whole scan with its per-model memory and
    # the models' outcomes, and the common files' definitions as the run-time evaluator reads them
    assert len(entries) == 7
    assert scan(repo, cache_dir=cache_dir) == cold
    assert scan(repo, cache_dir=cache_dir, test_method_name="test_forward") == {
        "test_forward": cold["test_forward"]
    }

    stale_key, stale = pickle.loads(entries[1].read_bytes())
    entries[0].write_bytes(b"\x80\x05garbage")  # damaged
    entries[1].write_bytes(pickle.dumps(("another-key", stale)))  # written for other content
    for entry in entries[2:]:
        entry.write_bytes(pickle.dumps((pickle.loads(entry.read_bytes())[0], "not a record")))
    assert scan(repo, cache_dir=cache_dir) == cold
    assert ParseCache(cache_dir).get_entry(stale_key, object) is not None


def test_an_edited_file_is_parsed_again(make_repo, scan, tmp_path):
    repo = make_repo({"tests/models/good/test_modeling_good.py": MODEL})
    assert scan(repo)["test_attention_outputs"]["models_skipped"] == ["good"]
    path = repo / "tests/models/good/test_modeling_good.py"
    path.write_text(path.read_text().replace("has_attentions = False", "has_attentions = True"))
    assert scan(repo)["test_attention_outputs"]["models_ran"] == ["good"]


def test_parallel_parsing_gives_the_same_result(make_repo, scan):
    files = {
        f"tests/models/m{index}/test_modeling_m{index}.py": MODEL.replace("GoodModelTest", f"M{index}Test")
        for index in range(10)
    }
    repo = make_repo(files)
    serial = scan(repo, jobs=1, use_cache=False)
    assert scan(repo, jobs=2, use_cache=False) == serial
    assert len(serial["test_attention_outputs"]["models_skipped"]) == 10


def test_default_cache_dir_honours_xdg_cache_home(monkeypatch, tmp_path):
    from model_debugging.skips.work.entries import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "model-debugging" / "scan"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "model-debugging" / "scan"
