"""The record store keeps in memory only the records it is told to pin; the others come back on demand."""

import subprocess
import sys

from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.records.test_files import ParsedFile
from model_debugging.skips.work.entries import ParseCache

BERT = "tests/models/bert/test_modeling_bert.py"
ROBERTA = "tests/models/roberta/test_modeling_roberta.py"
BROKEN = "tests/models/broken/test_modeling_broken.py"
FILES = {
    BERT: """
        class BertModelTester:
            pass
    """,
    ROBERTA: """
        from ..bert.test_modeling_bert import BertModelTester


        class RobertaModelTester(BertModelTester):
            pass
    """,
    BROKEN: "def broken(:\n",
}


def _store(make_repo, tmp_path) -> tuple[RecordStore, ParseCache]:
    repo = make_repo(FILES)
    cache = ParseCache(tmp_path / "records")
    store = RecordStore(repo, cache, elide=[BERT, ROBERTA, BROKEN], jobs=1)
    imported = store.parse([BERT, ROBERTA, BROKEN], ("tests",))
    assert "tests.models.bert.test_modeling_bert" in imported
    return store, cache


def test_only_pinned_and_unparsable_records_stay_in_memory(make_repo, tmp_path):
    store, _ = _store(make_repo, tmp_path)
    assert set(store._pinned) == {BROKEN}  # an error record is small and not cached
    store.pin([BERT])
    assert set(store._pinned) == {BERT, BROKEN}
    view = store.view()
    assert "tests.models.roberta.test_modeling_roberta" in view
    assert view["tests.models.roberta.test_modeling_roberta"].class_named("RobertaModelTester") is not None
    assert set(store._pinned) == {BERT, BROKEN}  # loaded for the view, not kept by the store
    assert [error.path for error in store.errors()] == [BROKEN]


def test_a_record_whose_cache_entry_is_gone_is_parsed_again(make_repo, tmp_path):
    store, cache = _store(make_repo, tmp_path)
    first = store.get(ROBERTA)
    for entry in cache.directory.rglob("*.pickle"):
        entry.unlink()
    again = store.get(ROBERTA)
    assert isinstance(again, ParsedFile) and again == first


def test_parsing_in_full_replaces_an_elided_record(make_repo, tmp_path):
    repo = make_repo(
        {
            BERT: """
                import unittest


                class BertIntegrationTest(unittest.TestCase):
                    def test_x(self):
                        run()
            """
        }
    )
    store = RecordStore(repo, ParseCache(tmp_path / "records"), elide=[BERT], jobs=1)
    store.parse([BERT], ("tests",))
    assert store.get(BERT).class_named("BertIntegrationTest").elided
    store.parse_in_full([BERT])
    full = store.get(BERT).class_named("BertIntegrationTest")
    assert not full.elided and full.method("test_x") is not None


def test_parallel_workers_inherit_the_parser_from_the_parent(tmp_path):
    """The parent imports the parser before its workers fork: they do not import libcst each."""
    for index in range(8):
        (tmp_path / f"test_{index}.py").write_text("class ATest:\n    def test_x(self):\n        pass\n")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from model_debugging.skips.parse.batch import iter_parsed\n"
        f"paths = [f'test_{{index}}.py' for index in range(8)]\n"
        f"found = list(iter_parsed(Path({str(tmp_path)!r}), paths, cache=None, jobs=2))\n"
        "assert all(record.error is None for _, record, _ in found), found\n"
        "print('libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
