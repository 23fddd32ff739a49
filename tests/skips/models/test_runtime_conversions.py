"""Weight conversions of a model whose part the tester's dict gives another model type."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_module_tree import COMMON, LIBRARY, MODEL_TEST


def test_a_part_the_tester_gives_another_model_type_leaves_the_conversions_to_the_run(make_repo, scan):
    """Both hold a TextModel, whose class type (text) has conversions; theta's dict names "text",
    iota's names "other", which the part's instance then holds (as Qwen3.5's text part does)."""
    files = {"tests/test_modeling_common.py": COMMON}
    for name, model_type in (("Theta", "text"), ("Iota", "other")):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = (
            MODEL_TEST.format(name="Alpha")
            .replace("class AlphaModelTest(", f"class {name}ModelTest(")
            .replace(
                "self.parent = parent",
                f'self.parent = parent\n        self.text_config = {{"model_type": "{model_type}"}}',
            )
        )
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_nested_conversions") == {
        "ran": ["theta"],
        "skipped": [],
        "undecided": ["iota"],
    }
