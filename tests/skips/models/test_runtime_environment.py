"""Version guards and ``X if is_torch_available() else None`` are environment conditions: the test
is evaluated for a machine with the newest torch and Python, as for a GPU or an optional package."""

from tests.skips.conftest import verdicts
from tests.skips.models.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)

GUARDS = """

    def test_old_torch(self):
        if version.parse(torch.__version__) < version.parse("2.3"):
            self.skipTest(reason="This test requires torch >= 2.3 to run.")
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                self.skipTest("no SDPA")

    def test_release(self):
        if version.parse(torch.__version__).release < version.parse("2.3").release:
            self.skipTest(reason="old torch")

    def test_new_torch_only(self):
        if version.parse(torch.__version__) >= version.parse("2.6"):
            self.skipTest(reason="broken since torch 2.6")

    def test_python(self):
        if sys.version_info < (3, 10):
            self.skipTest(reason="needs Python 3.10")

    def test_cuda_capability(self):
        major, _ = torch.cuda.get_device_capability()
        if not torch.version.cuda or major < 8:
            self.skipTest(reason="needs an Ampere GPU")

    def test_greater_or_equal(self):
        if not is_torch_greater_or_equal("2.6.0"):
            self.skipTest(reason="needs torch 2.6")
        if not is_torch_greater_or_equal_than_2_4:
            self.skipTest(reason="needs torch 2.4")

    def test_compile_training_class(self):
        if getattr(self, "_torch_compile_train_cls", None) is None:
            self.skipTest(f"{self.__class__.__name__} doesn't have the attribute `_torch_compile_train_cls`.")
"""


def test_version_guards_are_decided_for_the_newest_torch_and_python(checkout, scan):  # noqa: F811
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + GUARDS)
    results = scan(checkout)
    assert verdicts(results, "test_old_torch") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    assert results["test_old_torch"]["reasons_skipped"] == ["beta: no SDPA"]
    for test in ("test_release", "test_python", "test_cuda_capability", "test_greater_or_equal"):
        assert verdicts(results, test) == {"ran": ["alpha", "beta"], "skipped": [], "undecided": []}, test
    assert verdicts(results, "test_new_torch_only")["skipped"] == ["alpha", "beta"]


def test_a_class_set_only_when_torch_is_available_is_that_class(checkout, scan):  # noqa: F811
    common = checkout / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + GUARDS)
    alpha = checkout / "tests/models/alpha/test_modeling_alpha.py"
    alpha.write_text(
        alpha.read_text().replace(
            "    def setUp(self):",
            "    _torch_compile_train_cls = AlphaForCausalLM if is_torch_available() else None\n\n"
            "    def setUp(self):",
        )
    )
    results = scan(checkout)
    assert verdicts(results, "test_compile_training_class") == {
        "ran": ["alpha"],
        "skipped": ["beta"],
        "undecided": [],
    }
