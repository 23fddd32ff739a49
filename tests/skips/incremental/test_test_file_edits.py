"""A warm scan after test files changed evaluates again only the models whose evaluation read a
changed file (their own, another model's test class they build on, directly or not), the new models,
and all of them when the common test file changed; its result and errors are a cold scan's, byte for
byte."""

import json
import shutil

import pytest

from model_debugging.skips.incremental.memory import ScanStats
from tests.skips.report.git_trees import build_whole_tree, edit, write
from tests.support.scanning import scan_json

# delta's test class is alpha's (imported from alpha's file); epsilon's is delta's: epsilon reads
# alpha's file through delta's
IMPORTERS = {
    "tests/models/delta/__init__.py": "",
    "tests/models/delta/test_modeling_delta.py": """
        from transformers import DeltaModel

        from ..alpha.test_modeling_alpha import AlphaModelTest


        class DeltaModelTest(AlphaModelTest):
            all_model_classes = (DeltaModel,) if is_torch_available() else ()
    """,
    "tests/models/epsilon/__init__.py": "",
    "tests/models/epsilon/test_modeling_epsilon.py": """
        from transformers import EpsilonModel

        from ..delta.test_modeling_delta import DeltaModelTest


        class EpsilonModelTest(DeltaModelTest):
            all_model_classes = (EpsilonModel,) if is_torch_available() else ()
    """,
    "src/transformers/models/delta/modeling_delta.py": """
        class DeltaModel(PreTrainedModel):
            _supports_sdpa = True

            def forward(self, input_ids=None):
                pass
    """,
    "src/transformers/models/epsilon/modeling_epsilon.py": """
        class EpsilonModel(PreTrainedModel):
            def forward(self, input_ids=None, inputs_embeds=None):
                pass
    """,
}
ALPHA = "tests/models/alpha/test_modeling_alpha.py"
BETA = "tests/models/beta/test_modeling_beta.py"
FORWARD = "    def test_forward(self):\n        check_outputs(self)"
SKIPPED_FORWARD = '    @unittest.skip("flaky on CPU")\n' + FORWARD
EMBEDS_SKIP = '    @unittest.skip("the encoder takes no embeddings")\n'


def _copy_model(repo, source: str, name: str) -> None:
    """A new model folder copied from ``source``'s, its files renamed, as a contributor starts one."""
    folder = repo / "tests/models" / name
    shutil.copytree(repo / "tests/models" / source, folder)
    for path in folder.glob(f"*{source}*.py"):
        path.rename(path.with_name(path.name.replace(source, name)))


def _append(repo, path: str, text: str) -> None:
    with open(repo / path, "a", encoding="utf-8") as handle:
        handle.write(text)


EDITS = [  # (what, edit, answer, the models evaluated again)
    ("a skip added to beta", lambda repo: edit(repo, BETA, "TestCase):\n", 'TestCase):\n    @unittest.skip("slow")\n    def test_sdpa(self):\n        pass\n'), "rescan", {"beta"}),
    ("a skip added to alpha's class, which delta and epsilon build on", lambda repo: edit(repo, ALPHA, FORWARD, SKIPPED_FORWARD), "rescan", {"alpha", "delta", "epsilon"}),
    ("a skip removed from alpha's other class", lambda repo: edit(repo, ALPHA, EMBEDS_SKIP, ""), "rescan", {"alpha", "delta", "epsilon"}),
    ("a new model copied from beta", lambda repo: _copy_model(repo, "beta", "zeta"), "rescan", {"zeta"}),
    ("one of gamma's two test files deleted", lambda repo: (repo / "tests/models/gamma/test_modeling_gamma_backbone.py").unlink(), "rescan", {"gamma"}),
    ("the new model's test file deleted", lambda repo: (repo / "tests/models/zeta/test_modeling_zeta.py").unlink(), "rescan", set()),
    ("alpha's file stops parsing", lambda repo: _append(repo, ALPHA, "\ndef half_written(:\n"), "rescan", {"alpha", "delta", "epsilon"}),
    ("alpha's file fixed", lambda repo: edit(repo, ALPHA, "\ndef half_written(:\n", "\n"), "rescan", {"alpha", "delta", "epsilon"}),
    ("beta's test and gamma's library file edited together", lambda repo: (edit(repo, BETA, '@unittest.skip("slow")\n', ""), edit(repo, "src/transformers/models/gamma/modeling_gamma.py", "inputs_embeds=None", "embeddings=None")), "rescan", {"beta", "gamma"}),
    ("a comment in the common test file", lambda repo: _append(repo, "tests/test_modeling_common.py", "# reviewed\n"), "full", {"alpha", "beta", "gamma", "delta", "epsilon"}),
]  # fmt: skip


@pytest.fixture
def tree(tmp_path):
    repo = build_whole_tree(tmp_path / "repo")
    write(repo, IMPORTERS)
    return repo


def test_after_each_test_file_edit_only_the_models_it_concerns_are_evaluated_and_the_scan_is_the_cold_one(
    tree, tmp_path
):
    cache = tmp_path / "cache"
    scan_json(tree, cache_dir=cache, jobs=1)
    for what, change, answer, concerned in EDITS:
        change(tree)
        stats = ScanStats()
        warm = scan_json(tree, cache_dir=cache, jobs=1, stats=stats)
        cold = scan_json(tree, use_cache=False, jobs=1)
        assert json.dumps(warm) == json.dumps(cold), what
        assert (stats.answer, stats.models_evaluated) == (answer, len(concerned)), what


def test_a_file_that_stops_parsing_is_reported_with_the_models_that_import_it(tree, tmp_path):
    """The errors of the models kept as they were stay in the errors file; those of the models
    evaluated again are theirs now."""
    cache = tmp_path / "cache"
    scan_json(tree, cache_dir=cache, jobs=1)
    _append(tree, ALPHA, "\ndef half_written(:\n")
    _, errors = scan_json(tree, cache_dir=cache, jobs=1)
    assert [(error["path"], "cause" in error) for error in errors] == [
        (ALPHA, False),
        ("tests/models/delta/test_modeling_delta.py", True),
        ("tests/models/epsilon/test_modeling_epsilon.py", True),
    ]
    _append(tree, BETA, "# beta edited: alpha, delta and epsilon keep their errors\n")
    stats = ScanStats()
    assert scan_json(tree, cache_dir=cache, jobs=1, stats=stats)[1] == errors
    assert stats.models_evaluated == 1
