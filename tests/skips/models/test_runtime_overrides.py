"""A model's own override shaped like a common test (a loop over the model classes) with a skip
under a condition: it is run on the same facts as a common definition, so the skip is decided (or
the pair is undecided), never taken as ran.

Found against pytest: higgs_audio_v2 overrides ``test_generate_continue_from_past_key_values`` with
``if "past_key_values" not in outputs: self.skipTest(...)``; the scanner called it ran.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_skips import COMMON, LIBRARY, MODEL_TEST

# Overrides added to each model's test class (the common file also defines these tests).
OVERRIDES = """

    def test_sdpa(self):
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                self.skipTest(f"{model_class.__name__} has no SDPA, says the override")
            run(model_class)

    def test_outputs(self):
        for model_class in self.all_model_classes:
            outputs = model_class(self.model_tester.get_config())()
            if "past_key_values" not in outputs:
                self.skipTest("no cache in the outputs")

    def test_environment(self):
        for model_class in self.all_model_classes:
            if not is_torch_bf16_available_on_device(torch_device):
                self.skipTest("needs bf16")
            run(model_class)

    def test_conversions(self, check_keys=False):
        super().test_conversions()
"""


@pytest.fixture
def checkout(make_repo):
    files = {
        "tests/test_modeling_common.py": COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1) + OVERRIDES,
        "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=None) + OVERRIDES,
    }
    return write_tree(make_repo(files), LIBRARY)


def test_a_skip_in_an_override_is_decided_from_the_library(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_sdpa") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    skip = results["test_sdpa"]["skips"][0]
    assert skip["reason"] == "BetaModel has no SDPA, says the override"
    assert (skip["kind"], skip["file"]) == ("runtime", "tests/models/beta/test_modeling_beta.py")


def test_an_override_skip_only_the_run_knows_is_undecided(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_outputs") == {"ran": [], "skipped": [], "undecided": ["alpha", "beta"]}


def test_an_environment_check_in_an_override_does_not_skip(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_environment")["ran"] == ["alpha", "beta"]


def test_an_override_that_only_calls_the_common_test_is_decided_by_it(checkout, scan):
    """gpt_oss overrides test_reverse_loading_mapping only to call super() with an argument: the
    common definition's skip still applies (the scanner called it ran)."""
    results = scan(checkout)
    assert verdicts(results, "test_conversions") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    assert results["test_conversions"]["reasons_skipped"] == [
        "beta: No conversion found for <class 'BetaModel'>"
    ]


EARLY_RETURN = """
    supports_it = {value}

    def test_gradient_checkpointing(self):
        if self.supports_it:
            return super().test_gradient_checkpointing()
        self.skipTest("not supported by this model")
"""


def test_a_skip_after_an_early_return_is_reached_only_when_it_does_not_return(make_repo, scan):
    """The skip after `if self.supports_it: return super().test_x()` skips only when the flag is
    false; when it is true the common test decides, and with the flag unknown the pair is
    undecided (it was called skipped whatever the flag)."""
    files = {"tests/test_modeling_common.py": COMMON}
    for folder, name, value in (
        ("alpha_on", "Alpha", "True"),  # AlphaModel supports gradient checkpointing, BetaModel not
        ("beta_on", "Beta", "True"),
        ("alpha_off", "Alpha", "False"),
        ("alpha_unknown", "Alpha", "is_supported()"),
    ):
        source = MODEL_TEST.format(name=name, bos=1) + EARLY_RETURN.format(value=value)
        files[f"tests/models/{folder}/test_modeling_{folder}.py"] = source
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_gradient_checkpointing") == {
        "ran": ["alpha_on"],
        "skipped": ["alpha_off", "beta_on"],
        "undecided": ["alpha_unknown"],
    }
    assert results["test_gradient_checkpointing"]["reasons_skipped"] == [
        "alpha_off: not supported by this model",
        "beta_on: BetaForCausalLM does not support gradient checkpointing",
    ]
