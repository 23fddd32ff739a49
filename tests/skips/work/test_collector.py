"""What a scan leaves to Python's cyclic garbage collector: no syntax tree in cycles, its state as found."""

import ast
import gc

from model_debugging.skips.parse.library.read import read_library_file
from tests.skips.conftest import verdicts

MODELING = """
class PairModel(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.layers = nn.ModuleList([PairLayer(config) for _ in range(config.num_layers)])
        self._init_heads(config)

    def _init_heads(self, config):
        if config.use_head:
            self.head = nn.Linear(config.hidden_size, 2)
"""


def test_reading_a_library_file_leaves_no_syntax_tree_in_a_cycle():
    """A tree held by a reference cycle lives until the next full collection, and every collection
    meanwhile walks it: over the whole library that was a quarter of the reading time."""
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        (model,) = read_library_file("modeling_pair.py", MODELING).classes
        gc.collect()
        trees_in_cycles = [item for item in gc.garbage if isinstance(item, ast.AST)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if collecting:
            gc.enable()
    assert [call.callee for call in model.init_calls if call.callee == "nn.Linear"] == ["nn.Linear"]
    assert trees_in_cycles == []


def test_a_scan_gives_the_collector_back_as_it_found_it(make_repo, scan):
    """The scan pauses collections and sets what it keeps aside; a program calling it gets its
    collector back enabled, with nothing left frozen."""
    repo = make_repo(
        {
            "tests/models/bert/test_modeling_bert.py": """
                from ...test_modeling_common import ModelTesterMixin

                class BertModelTest(ModelTesterMixin, unittest.TestCase):
                    test_resize_embeddings = False
            """
        }
    )
    frozen = gc.get_freeze_count()
    results = scan(repo)
    assert verdicts(results, "test_resize_tokens_embeddings")["skipped"] == ["bert"]
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
