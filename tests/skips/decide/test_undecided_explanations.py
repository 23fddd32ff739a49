"""An undecided verdict names the value only the run knows, not only the condition it sits in."""

from tests.skips.conftest import verdicts
from tests.skips.models.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)

GRADIENTS = """

    def test_gradients(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        has_verified_model = False
        for model_class in self.all_model_classes:
            model = model_class(config)
            embedding_param = model.get_input_embeddings().weight
            loss = model(**inputs_dict).loss
            loss.backward()
            baseline_grad = embedding_param.grad
            if baseline_grad is None:
                continue
            has_verified_model = True
        if not has_verified_model:
            self.skipTest(reason="No model with a gradient")

    def test_unfollowed(self):
        size = compute_size(self.model_tester)
        if size > 4:
            self.skipTest(reason="too big")
"""


def test_the_explanation_names_the_value_and_why_it_is_unknown(checkout, scan):  # noqa: F811
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + GRADIENTS)
    results = scan(checkout)
    assert verdicts(results, "test_gradients")["undecided"] == ["alpha", "beta"]
    assert (
        "alpha: undecided: `baseline_grad` (= `embedding_param.grad`) is only known after a backward pass "
        "(if baseline_grad is None: skip)"
    ) in results["test_gradients"]["conditions"]
    assert (
        "beta: undecided: `size` (= `compute_size(self.model_tester)`) is only known at run time "
        "(if size > 4: skip)" in results["test_unfollowed"]["conditions"]
    )
