"""Blanking out code the scanner never reads leaves every record unchanged."""

import textwrap

import pytest

from model_debugging.skips.parse.elide import elide_unread_code
from model_debugging.skips.parse.test_file import parse_source

TRICKY = textwrap.dedent(
    '''
    import unittest
    from ...test_modeling_common import ModelTesterMixin

    TEXT = "form\\x0cfeed and \\u2028 separators stay on one line"
    ON_CPU = True


    class ToyModelTest(ModelTesterMixin, unittest.TestCase):
        has_attentions = False

        def setUp(self):
            try:
                self.model_tester = ToyTester(self, is_training=False)
            except ImportError:
                pass

        def test_forward(self):
            if not self.has_attentions:
                self.skipTest("no attentions")
                print("after the skip")
            for model_class in self.all_model_classes:
                with torch.no_grad():
                    self.skipTest("decided in the loop")

        @unittest.skip("decorated")
        def test_training(self):
            def helper():
                """nested"""
            pass

        @unittest.skipIf(ON_CPU, "declared global in a loop: not bound once")
        def test_on_cpu(self):
            for device in ("cpu", "cuda"):
                global ON_CPU
                ON_CPU = device == "cpu"

        def test_noop(self):
            # a comment kept as the reason
            pass

        def test_early_return(self):
            if self.supports_it:
                found = super().test_early_return()
                return found
            self.skipTest("read only when the block cannot return")

        def test_loop_return(self):
            for model_class in self.all_model_classes:
                if model_class.ok:
                    return
            self.check_model()

        def test_blocks(self):
            with torch.no_grad():
                try:
                    if not self.has_attentions:
                        self.skipTest("in a try in a with")
                        print("after the skip")
                except ValueError:
                    return
                finally:
                    cleanup()


    @unittest.skip("whole class")
    class ToyIntegrationTest(unittest.TestCase):
        @slow
        def test_generate(self):
            """A long integration test."""
            for _ in range(3):
                run()


    class ToyFollowUp(unittest.TestCase):
        def test_x(self):
            run()


    class ToyDerived(ToyFollowUp):
        pass


    class ToyTester:
        def __init__(self, parent, batch_size=13, use_labels=True):
            self.parent = parent
            self.batch_size = batch_size

        def prepare_config_and_inputs(self):
            config = self.get_config()
            for _ in range(3):
                self.parent.skipTest("never read from this parse")
            return config

        @property
        def hidden_size(self):
            return 2
    '''
)


def test_records_are_the_same_with_and_without_elision():
    full = parse_source(TRICKY, "tests/models/toy/test_modeling_toy.py")
    fast = parse_source(TRICKY, "tests/models/toy/test_modeling_toy.py", elide=True)
    assert [info.name for info in fast.classes if info.elided] == ["ToyIntegrationTest", "ToyTester"]
    kept = [info.name for info in fast.classes if not info.elided]
    assert [info for info in fast.classes if not info.elided] == [
        info for info in full.classes if info.name in kept
    ]
    assert fast.imports == full.imports
    # what is read of a tester from this parse: its constructor's defaults and its methods' names
    tester, whole_tester = fast.class_named("ToyTester"), full.class_named("ToyTester")
    assert tester.init_defaults == whole_tester.init_defaults
    assert ("batch_size", 13) in tester.init_defaults
    assert [method.name for method in tester.methods] == [method.name for method in whole_tester.methods]


ASSIGNMENTS = textwrap.dedent(
    """
    class ToyModelTest(ModelTesterMixin, unittest.TestCase):
        def test_assigns(self):
            config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
            config.use_cache = (
                True  # a comment inside
            )
            assert config is not None
            self.check(config)

        def test_only_an_assignment(self):
            x = 1

        def test_one_line(self): x = 1; return

        def test_shared_line(self):
            x = 1; self.skipTest("after an assignment on the same line")

        def test_in_a_with(self):
            with torch.no_grad():
                outputs = model(**inputs)
                self.skipTest("in a with")
    """
)


def test_assignments_in_methods_are_left_out_and_the_records_stay():
    text = elide_unread_code(ASSIGNMENTS).text
    assert "prepare_config_and_inputs_for_common" not in text
    assert "use_cache" not in text and "outputs" not in text and "assert" not in text
    assert "x = 1; self.skipTest" in text and "def test_one_line(self): x = 1; return" in text
    full = parse_source(ASSIGNMENTS, "tests/models/toy/test_modeling_toy.py")
    fast = parse_source(ASSIGNMENTS, "tests/models/toy/test_modeling_toy.py", elide=True)
    assert fast.classes == full.classes
    methods = {method.name: method for method in fast.class_named("ToyModelTest").methods}
    assert methods["test_only_an_assignment"].skip is None  # still no no-op
    assert methods["test_in_a_with"].skip is not None
    old_mac = ASSIGNMENTS.replace("\n", "\r")  # lines Python ends at "\r" alone
    assert parse_source(old_mac, "a.py", elide=True).classes == parse_source(old_mac, "a.py").classes


# A test class inheriting, from another model's file, a class shaped like a tester whose helper
# skips: the elided file is parsed in full before the model's verdicts are made.
COMMON_CALLING_A_HELPER = """
import unittest


class ModelTesterMixin:
    def test_attention_outputs(self):
        self.check_attentions()

    def check_attentions(self):
        pass
"""

INHERITED_TESTER = {
    "tests/test_modeling_common.py": COMMON_CALLING_A_HELPER,
    "tests/models/bar/test_modeling_bar.py": """
        class BarAttentionTester:
            def check_attentions(self):
                self.skipTest(reason="bar computes no attentions")
    """,
    "tests/models/foo/test_modeling_foo.py": """
        import unittest

        from ...test_modeling_common import ModelTesterMixin
        from ..bar.test_modeling_bar import BarAttentionTester


        class FooModelTest(BarAttentionTester, ModelTesterMixin, unittest.TestCase):
            pass
    """,
}


def test_a_test_class_inheriting_an_elided_tester_reads_its_methods(make_repo, scan):
    repo = make_repo(INHERITED_TESTER, with_common=False)
    found = scan(repo, use_cache=False)["test_attention_outputs"]
    assert found["models_skipped"] == ["foo"]
    assert "bar computes no attentions" in str(found["skips"])


@pytest.mark.parametrize("source", ["x = (", "class A(Mixin):\n    def f(self): pass\n"])
def test_unparsable_or_one_line_code_comes_back_unchanged(source):
    assert elide_unread_code(source).text == source


OTHER_TESTS = textwrap.dedent(
    '''
    class ToyModelTest(ModelTesterMixin, unittest.TestCase):
        def test_training(self):
            self.test_training_alone()
            getattr(self, "test_named_in_a_string")()
            getattr(self, f"test_built_{self.kind}")()

        def test_training_alone(self):
            run()

        def test_named_in_a_string(self):
            run()

        def test_built_fast(self):
            run()

        def test_training_0_small(self):
            run()

        def test_reads_its_name(self):
            if self._testMethodName == "test_training":
                run()

        # test_left_out: named in a comment only
        def test_left_out(self):
            super().test_left_out()

        def test_also_left_out(self):
            """No code names it."""
            self.test_left_out()

        def check_training(self):
            run()
    '''
)


def test_a_scan_of_one_test_leaves_out_the_tests_no_code_names():
    full = parse_source(OTHER_TESTS, "tests/models/toy/test_modeling_toy.py", elide=True)
    one = parse_source(OTHER_TESTS, "tests/models/toy/test_modeling_toy.py", elide=True, test="test_training")
    assert one.tests_left_out == ("test_also_left_out", "test_left_out")
    assert full.tests_left_out == () and full.tests_named is None
    # what another file's parse looks for: the attributes the rest of the file names
    assert one.tests_named.names == {"test_training_alone"}
    (toy,), (whole_toy,) = one.classes, full.classes
    assert [method for method in toy.methods if method.name not in one.tests_left_out] == [
        method for method in whole_toy.methods if method.name not in one.tests_left_out
    ]
    assert [method.name for method in toy.methods] == [method.name for method in whole_toy.methods]
