"""A warm scan after a library change evaluates again only the models whose verdicts read the change,
and gives exactly what a cold scan of the changed checkout gives."""

import json
import shutil

from model_debugging.skips.incremental.memory import ScanStats
from tests.skips.conftest import write_tree
from tests.skips.models.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)
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
    # beta's base class is nowhere (its module stays: without it, pytest could not import beta's tests)
    write_tree(checkout, {"src/transformers/models/gamma/modeling_gamma.py": "\n"})
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


def test_library_files_read_in_worker_processes_are_cached_for_the_next_scan(checkout, tmp_path, monkeypatch):  # noqa: F811
    from model_debugging.skips.parse.library import read

    fillers = {  # more files than one batch: the cold scan reads them in worker processes
        f"src/transformers/models/filler{index}/configuration_filler{index}.py": (
            f"class Filler{index}Config(PreTrainedConfig):\n    model_type = 'filler{index}'\n"
        )
        for index in range(30)
    }
    write_tree(checkout, fillers)
    cold = scan_json(checkout, cache_dir=tmp_path / "cache", jobs=2)
    edited = checkout / "tests/test_modeling_common.py"
    edited.write_text(edited.read_text() + "# the common file changed: no memory answers the next scan\n")

    def unread(path, source):
        raise AssertionError(f"{path} was read again instead of taken from the cache")

    monkeypatch.setattr(read, "read_library_file", unread)
    stats = ScanStats()
    assert scan_json(checkout, cache_dir=tmp_path / "cache", jobs=1, stats=stats) == cold
    assert stats.answer == "full"


def test_an_edit_the_records_do_not_see_evaluates_nothing_again(checkout, tmp_path):  # noqa: F811
    """Comments are not part of what the library reader keeps of a file, and beta's evaluation read
    its configuration file only through that record."""
    before, _, _ = _scan(checkout, tmp_path / "cache")
    configuration = checkout / "src/transformers/models/beta/configuration_beta.py"
    configuration.write_text(configuration.read_text().replace("= 4096", "= 4096  # the window") + "# end\n")

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 0)
    assert results == before
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


# A common test that reads the text of the model's file, as the real export test does
TEXT_TEST = """
    def test_reads_the_source(self):
        with open(inspect.getfile(self.all_model_classes[0]), "r") as handle:
            source_code = handle.read()
            if "for expert in" in source_code:
                self.skipTest(reason="eager MoE")
"""


def test_a_model_that_read_a_file_as_text_is_evaluated_again_when_an_answer_changes(checkout, tmp_path):  # noqa: F811
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + TEXT_TEST)
    _scan(checkout, tmp_path / "cache")
    alpha = checkout / "src/transformers/models/alpha/modeling_alpha.py"
    alpha.write_text(alpha.read_text() + "\n# for expert in self.experts: a loop the export cannot trace\n")

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)  # alpha; beta read no changed text
    assert results["test_reads_the_source"]["models_skipped"] == ["alpha"]
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


# A common test that reads a year from the model's file, as the real weight-initialisation test does
YEAR_TEST = """
    def test_reads_the_year(self):
        with open(inspect.getfile(self.all_model_classes[0])) as file:
            source_code = file.read()
        addition_year = 0
        if match_object := re.search(r"^# Copyright (\\d{4})", source_code, re.MULTILINE | re.IGNORECASE):
            addition_year = int(match_object.group(1))
        if addition_year < 2023:
            self.skipTest(reason="Not a prioritized model for now.")
"""


def test_a_pattern_a_test_searches_a_text_for_is_a_fact(checkout, tmp_path):  # noqa: F811
    """A year written at the top of alpha's file changes what the search finds (alpha evaluated
    again, now ran); a comment below changes nothing it finds (nothing evaluated again)."""
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + YEAR_TEST)
    before, _, _ = _scan(checkout, tmp_path / "cache")
    assert before["test_reads_the_year"]["models_skipped"] == ["alpha", "beta"]
    alpha = checkout / "src/transformers/models/alpha/modeling_alpha.py"
    alpha.write_text("# Copyright 2024 the alpha team\n" + alpha.read_text())

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)
    assert results["test_reads_the_year"]["models_ran"] == ["alpha"]
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]
    alpha.write_text(alpha.read_text() + "# Copyright 2019 of a copied helper\n")
    assert _scan(checkout, tmp_path / "cache")[2].models_evaluated == 0


def test_an_edit_of_a_text_that_changes_no_answer_evaluates_nothing_again(checkout, tmp_path):  # noqa: F811
    """The test asks whether a phrase is in the file: a comment without it changes no answer."""
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + TEXT_TEST)
    before, _, _ = _scan(checkout, tmp_path / "cache")
    alpha = checkout / "src/transformers/models/alpha/modeling_alpha.py"
    alpha.write_text(alpha.read_text() + "\n# a loop over the experts, written out\n")

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 0)
    assert results == before
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


def test_an_edit_of_a_forward_that_changes_no_fact_evaluates_nothing_again(checkout, tmp_path):  # noqa: F811
    """alpha's generation test reads its forwards from the file's text (what they return, how they
    build a cache): a new statement in one, moving the classes below it, changes none of that."""
    before, _, _ = _scan(checkout, tmp_path / "cache")
    alpha = checkout / "src/transformers/models/alpha/modeling_alpha.py"
    body = "**kwargs):\n        pass\n"
    assert body in alpha.read_text()
    alpha.write_text(
        alpha.read_text().replace(body, "**kwargs):\n        hidden = input_ids\n        return hidden\n")
    )

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 0)
    assert results == before
    assert (results, errors) == _scan(checkout, tmp_path / "cold")[:2]


# alpha's causal LM builds a cache when asked (the cache gating read from the forwards changes), then
# says it returns an output without one (the output fields change)
ALPHA_CACHE = """labels=None, use_cache=None, past_key_values=None):
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache()"""
ALPHA_OUTPUT = """labels=None) -> CausalLMOutput:
        pass"""


def test_after_each_of_a_sequence_of_edits_the_warm_scan_is_the_cold_one(checkout, tmp_path):  # noqa: F811
    """Library, configuration and test files edited in turn (and one edit undone): after each, the
    scan answered from the cache gives, byte for byte, what a scan without cache gives."""
    modeling = "src/transformers/models/beta/modeling_beta.py"
    configuration = "src/transformers/models/beta/configuration_beta.py"
    tester = "tests/models/alpha/test_modeling_alpha.py"
    alpha = "src/transformers/models/alpha/modeling_alpha.py"  # its forward's text: facts by value
    original = (checkout / modeling).read_text()
    edits = [
        (modeling, original.replace("supports_gradient_checkpointing = True", "_supports_sdpa = True")),
        (configuration, (checkout / configuration).read_text().replace("4096", "None")),
        (tester, (checkout / tester).read_text().replace("bos_token_id=1", "bos_token_id=None")),
        (modeling, original),
        ("src/transformers/models/auto/modeling_auto.py", 'MODEL_MAPPING_NAMES = {"beta": "BetaModel"}\n'),
        (alpha, (checkout / alpha).read_text().replace("labels=None):\n        pass", ALPHA_CACHE)),
        (alpha, (checkout / alpha).read_text().replace("labels=None):\n        pass", ALPHA_OUTPUT)),
    ]
    _scan(checkout, tmp_path / "cache")
    answers = []
    for number, (path, text) in enumerate(edits):
        (checkout / path).write_text(text)
        warm, warm_errors, stats = _scan(checkout, tmp_path / "cache")
        cold = scan_json(checkout, use_cache=False, jobs=1)
        assert json.dumps([warm, warm_errors]) == json.dumps(list(cold)), number
        answers.append(stats.answer)
    assert answers == ["rescan"] * len(edits)


def test_a_scan_leaves_the_garbage_collector_as_it_found_it(checkout, tmp_path):  # noqa: F811
    """The evaluation freezes the objects it starts with and collects between models only: a process
    that goes on after the scan (a notebook, a service) must get its collector back."""
    import gc

    _scan(checkout, tmp_path / "cache")

    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
