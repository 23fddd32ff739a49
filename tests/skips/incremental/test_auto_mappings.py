"""A pull request that adds a model registers it in the auto mappings: a warm scan evaluates again
only the models whose answers read the entries that changed (the new one), and gives, byte for
byte, what a cold scan gives; an existing model whose own entry changes is evaluated again."""

import json

from model_debugging.skips.incremental.memory import ScanStats
from model_debugging.skips.records.library import LibraryFile
from model_debugging.skips.resolve.library import Library
from tests.skips.conftest import write_tree
from tests.skips.models.test_runtime_skips import (
    MODEL_TEST,
    checkout,  # noqa: F401  (the fixture: alpha and beta)
)
from tests.support.scanning import scan_json

CONFIGURATION_AUTO = "src/transformers/models/auto/configuration_auto.py"
MODELING_AUTO = "src/transformers/models/auto/modeling_auto.py"

# delta, as transformers' add-new-model-like makes it: its folders, its entries in the mappings
DELTA = {
    "src/transformers/models/delta/configuration_delta.py": """
        class DeltaConfig(PreTrainedConfig):
            model_type = "delta"
    """,
    "src/transformers/models/delta/modeling_delta.py": """
        class DeltaPreTrainedModel(PreTrainedModel):
            config: DeltaConfig
            _supports_sdpa = True

        class DeltaModel(DeltaPreTrainedModel):
            def forward(self, input_ids=None, inputs_embeds=None):
                pass

        class DeltaForCausalLM(DeltaPreTrainedModel, GenerationMixin):
            def forward(self, input_ids=None, inputs_embeds=None, labels=None):
                pass
    """,
    "tests/models/delta/__init__.py": "",
    "tests/models/delta/test_modeling_delta.py": MODEL_TEST.format(name="Delta", bos=1),
}


def _scan(repo, cache_dir):
    stats = ScanStats()
    results, errors = scan_json(repo, cache_dir=cache_dir, jobs=1, stats=stats)
    return results, errors, stats


def _edit(repo, path, old, new):
    text = (repo / path).read_text()
    assert old in text
    (repo / path).write_text(text.replace(old, new))


def _cold(repo):
    return json.dumps(list(scan_json(repo, use_cache=False, jobs=1)))


def test_a_model_added_to_the_mappings_evaluates_only_the_new_model(checkout, tmp_path):  # noqa: F811
    _scan(checkout, tmp_path / "cache")
    write_tree(checkout, DELTA)
    _edit(
        checkout,
        CONFIGURATION_AUTO,
        '("beta", "BetaConfig")',
        '("beta", "BetaConfig"), ("delta", "DeltaConfig")',
    )
    _edit(
        checkout, MODELING_AUTO, '("alpha", "AlphaModel")', '("alpha", "AlphaModel"), ("delta", "DeltaModel")'
    )

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)  # delta; alpha and beta read no new entry
    assert results["test_in_mapping"]["models_ran"] == ["alpha", "delta"]
    assert json.dumps([results, errors]) == _cold(checkout)


def test_an_existing_models_entry_that_changes_evaluates_that_model_again(checkout, tmp_path):  # noqa: F811
    before, _, _ = _scan(checkout, tmp_path / "cache")
    assert "beta" in before["test_in_mapping"]["models_skipped"]
    _edit(
        checkout, MODELING_AUTO, '("alpha", "AlphaModel")', '("alpha", "AlphaModel"), ("beta", "BetaModel")'
    )

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 1)  # beta: BetaConfig is now in MODEL_MAPPING
    assert results["test_in_mapping"]["models_ran"] == ["alpha", "beta"]
    assert json.dumps([results, errors]) == _cold(checkout)


def test_an_entry_of_a_mapping_a_model_reads_whole_evaluates_it_again(checkout, tmp_path):  # noqa: F811
    """``get_values(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)`` reads every entry: a new one concerns every
    model that asked for it (here both, in test_decoder_only)."""
    _scan(checkout, tmp_path / "cache")
    _edit(
        checkout,
        MODELING_AUTO,
        '("alpha", "AlphaForCausalLM")',
        '("alpha", "AlphaForCausalLM"), ("beta", "BetaForCausalLM")',
    )

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 2)
    assert json.dumps([results, errors]) == _cold(checkout)


def test_an_edit_of_a_module_a_test_imports_that_keeps_it_evaluates_nothing_again(checkout, tmp_path):  # noqa: F811
    """Whether the module a test file imports exists is what its import reads, not its text."""
    before, _, _ = _scan(checkout, tmp_path / "cache")
    _edit(
        checkout,
        MODELING_AUTO,
        "def get_values(model_mapping):",
        "def get_values(model_mapping):  # the values",
    )

    results, errors, stats = _scan(checkout, tmp_path / "cache")

    assert (stats.answer, stats.models_evaluated) == ("rescan", 0)
    assert results == before
    assert json.dumps([results, errors]) == _cold(checkout)


def test_an_entry_looked_up_by_its_key_is_a_fact_not_a_read_of_the_mapping():
    """``Auto*.from_config`` parts look one model type up: its entry's value is what they depend on."""
    entries = (("alpha", ("AlphaModel",)), ("beta", ("BetaModel",)))
    library = Library([LibraryFile(MODELING_AUTO, mappings=(("MODEL_MAPPING_NAMES", entries),))])

    with library.recording() as reads:
        assert library.mapping_entry("MODEL_MAPPING_NAMES", "beta") == ("BetaModel",)
        assert library.mapping_entry("MODEL_MAPPING_NAMES", "gamma") == ()

    assert not reads.mappings and not reads.files
    assert sorted(reads.facts.values()) == [(), ("BetaModel",)]
    assert all(fact.mappings == {"MODEL_MAPPING_NAMES"} for fact in reads.fact_reads.values())
