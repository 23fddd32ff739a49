"""A warm scan after a library change evaluates again only the models whose verdicts read the change,
and gives exactly what a cold scan of the changed checkout gives."""

import shutil

from model_debugging.skips.rescan import ScanStats
from tests.skips.conftest import write_tree
from tests.skips.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)
from tests.support.scanning import scan_json

# gamma's base class gives beta its forward (inheritance across files): with inputs_embeds, beta runs
# test_inputs_embeds
GAMMA_WITH_EMBEDS = """
    class GammaPreTrainedModel(PreTrainedModel):
        def forward(self, input_ids=None, inputs_embeds=None):
            pass
"""


def _scan(repo, cache_dir):
    stats = ScanStats()
    results, errors = scan_json(repo, cache_dir=cache_dir, jobs=1, stats=stats)
    return results, errors, stats


def test_a_change_to_an_inherited_file_reevaluates_the_model_that_read_it(checkout, tmp_path):  # noqa: F811
    _scan(checkout, tmp_path / "cache")
    write_tree(checkout, {"src/transformers/models/gamma/modeling_gamma.py": GAMMA_WITH_EMBEDS})

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)  # beta; alpha never read gamma
    assert results["test_inputs_embeds"]["models_ran"] == ["alpha", "beta"]
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


def test_a_change_no_verdict_read_evaluates_nothing_again(checkout, tmp_path):  # noqa: F811
    before, _, _ = _scan(checkout, tmp_path / "cache")
    unrelated = """
        class DeltaModel(PreTrainedModel):
            _supports_sdpa = True
    """
    write_tree(checkout, {"src/transformers/models/delta/modeling_delta.py": unrelated})

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 0)
    assert results == before
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


def test_a_name_a_model_looked_up_in_vain_reevaluates_it_once_defined(checkout, tmp_path):  # noqa: F811
    shutil.rmtree(checkout / "src/transformers/models/gamma")  # beta's base class is nowhere
    _scan(checkout, tmp_path / "cache")
    write_tree(checkout, {"src/transformers/models/gamma/modeling_gamma.py": GAMMA_WITH_EMBEDS})

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


def test_a_copy_of_the_same_tests_elsewhere_is_answered_from_the_snapshot(checkout, tmp_path):  # noqa: F811
    """The PR check exports the base side to a new folder each run: the cache is keyed by content."""
    before, _, _ = _scan(checkout, tmp_path / "cache")
    copy = shutil.copytree(checkout, tmp_path / "elsewhere")

    results, _, stats = _scan(copy, tmp_path / "cache")

    assert stats.answer == "snapshot"
    assert results == before


def test_models_evaluated_in_forked_processes_give_the_serial_answer(tmp_path):
    import random

    from tests.support import synthetic

    spec = synthetic.random_checkout(random.Random(3), 40)
    repo = synthetic.write_checkout(spec, tmp_path / "repo")
    serial = scan_json(repo, use_cache=False, jobs=1)
    forked = scan_json(repo, use_cache=False, jobs=2)
    assert forked == serial
    assert serial[0] == synthetic.expected_results(spec)
