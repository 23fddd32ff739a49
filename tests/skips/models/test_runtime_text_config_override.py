"""``config.get_text_config()`` through a configuration's own override: one that returns a
part (Dia's decoder), or asks a part in turn (ColQwen2's VLM part), is followed; any other body is
left to the run."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_generation_skips import GENERATION, LIBRARY, MODEL_TEST

OVERRIDES = {
    "delta": "return self.decoder_config",  # a part with use_cache: ran
    "epsilon": '"""The encoder part."""\n        return self.encoder_config',  # no use_cache: skipped
    "zeta": "return self.vlm_config.get_text_config(*args, **kwargs)",  # that part caches: ran
    "eta": "return self.decoder_config if args else self.encoder_config",  # not read: undecided
}

CONFIGURATION = """
class PartDecoderConfig(PreTrainedConfig):
    use_cache: bool = True


class PartEncoderConfig(PreTrainedConfig):
    hidden_size: int = 8


class PartVlmConfig(PreTrainedConfig):
    use_cache: bool = True


class {name}Config(PreTrainedConfig):
    model_type = "{model}"
    sub_configs = {{"decoder_config": PartDecoderConfig, "encoder_config": PartEncoderConfig, "vlm_config": PartVlmConfig}}

    def get_text_config(self, *args, **kwargs):
        {body}
"""


def test_an_override_returning_a_part_decides_whether_the_text_part_caches(make_repo, scan):
    files = {"tests/generation/test_utils.py": GENERATION}
    library = dict(LIBRARY)
    for model, body in OVERRIDES.items():
        name = model.capitalize()
        files[f"tests/models/{model}/test_modeling_{model}.py"] = MODEL_TEST.format(
            name=name,
            pad="0",
            text_config="None",
            passed=", decoder_config={}, encoder_config={}, vlm_config={}",
            override="",
            inputs='{"input_ids": input_ids}',
        )
        library[f"src/transformers/models/{model}/configuration_{model}.py"] = CONFIGURATION.format(
            name=name, model=model, body=body
        )
        library[f"src/transformers/models/{model}/modeling_{model}.py"] = (
            f"class {name}Model(PreTrainedModel):\n    config: {name}Config\n"
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_text_part_caches") == {
        "ran": ["delta", "zeta"],
        "skipped": ["epsilon"],
        "undecided": ["eta"],
    }
