"""A scan of one test answers what a full scan answers for it, though it reads the library only when
one of its verdicts may."""

import pytest

from tests.skips.conftest import write_tree
from tests.skips.fixture_sources import ATTENTION_SETTING_BASE

COMMON = """
import unittest


class ModelTesterMixin:
    test_resize_embeddings = True

    def test_forward(self):
        run()

    def test_training(self):
        run()

    def test_resize_tokens_embeddings(self):
        if not self.test_resize_embeddings:
            self.skipTest(reason="test_resize_embeddings is set to `False`")
        run()

    def test_resize_tokens_embeddings_with_deepspeed(self):
        with deepspeed_context():
            self.test_resize_tokens_embeddings()

    def test_attention_outputs(self):
        self.check_attentions()
        run()

    def check_attentions(self):
        pass
"""

# A model whose tests call one another and helpers, the way model test files do.
CALLING = """
import unittest

from ...test_modeling_common import ModelTesterMixin


class CallingModelTester:
    def __init__(self, parent, batch_size=13):
        self.parent = parent
        self.batch_size = batch_size

    def create_and_check_model(self):
        self.parent.skipTest(reason="never reached from a common test")


class CallingModelTest(ModelTesterMixin, unittest.TestCase):
    def setUp(self):
        self.model_tester = CallingModelTester(self)

    def test_model(self):
        self.model_tester.create_and_check_model()

    def test_resize_tokens_embeddings(self):
        self.skipTest(reason="no resizing")

    def test_training(self):
        with torch.no_grad():
            self.test_training_of_this_model()

    def test_training_of_this_model(self):
        self.skipTest(reason="training is not supported")

    def check_attentions(self):
        self._no_attentions()

    def _no_attentions(self):
        self.skipTest(reason="no attentions")


class CallingChecksMixin:
    def forward_helper(self):
        self.skipTest(reason="forward is checked elsewhere")
"""

# Its test class inherits a mixin of another model's file and calls a helper written there; its own
# definition of a common test is named by no other file.
INHERITING = """
import unittest

from ...test_modeling_common import ModelTesterMixin
from ..calling.test_modeling_calling import CallingChecksMixin


def forward_helper():
    pass


class InheritingModelTest(CallingChecksMixin, ModelTesterMixin, unittest.TestCase):
    def test_forward(self):
        self.forward_helper()

    def test_resize_tokens_embeddings(self):
        self.test_training_of_this_model()

    def test_training_of_this_model(self):
        pass

    def test_attention_outputs(self):
        self.skipTest(reason="no attentions here")
"""

# A mixin outside the model folders (read only because a model file imports it) calls a test that
# only the model file defines.
MIXIN = """
class ShapesMixin:
    def test_forward(self):
        self.test_shapes_alone()
"""

SHAPED = """
import unittest

from ...test_modeling_common import ModelTesterMixin
from ...test_shapes_mixin import ShapesMixin


class ShapedModelTest(ShapesMixin, ModelTesterMixin, unittest.TestCase):
    def test_shapes_alone(self):
        self.skipTest(reason="no shapes to check")
"""

FILES = {
    "tests/test_modeling_common.py": COMMON,
    "tests/test_shapes_mixin.py": MIXIN,
    "tests/models/calling/test_modeling_calling.py": CALLING,
    "tests/models/inheriting/test_modeling_inheriting.py": INHERITING,
    "tests/models/shaped/test_modeling_shaped.py": SHAPED,
}

TESTS = [
    "test_forward",
    "test_training",
    "test_resize_tokens_embeddings",
    "test_resize_tokens_embeddings_with_deepspeed",
    "test_attention_outputs",
]


@pytest.fixture
def repo(make_repo):
    return make_repo(FILES)


def test_the_calls_are_followed_as_a_full_scan_follows_them(repo, scan):
    full = scan(repo, use_cache=False)
    skipped = {test: full[test]["models_skipped"] for test in TESTS}
    assert skipped == {
        "test_forward": ["inheriting", "shaped"],  # a helper of another file; a test a mixin calls
        "test_training": ["calling"],  # another test, called inside a `with`
        "test_resize_tokens_embeddings": ["calling"],
        "test_resize_tokens_embeddings_with_deepspeed": ["calling"],
        "test_attention_outputs": ["calling", "inheriting"],  # a helper calling a helper; an override
    }


def test_a_single_test_scan_answers_what_the_full_scan_does(repo, scan, tmp_path):
    full = scan(repo, use_cache=False)
    for test in TESTS:
        assert scan(repo, use_cache=False, test_method_name=test) == {test: full[test]}
    # one cache for all: what a scan of one test kept never answers for another test, nor for all
    for test in TESTS:
        assert scan(repo, cache_dir=tmp_path / "cache", test_method_name=test) == {test: full[test]}
    assert scan(repo, cache_dir=tmp_path / "cache") == full


# The library is read only for a test whose verdicts may read it: the common definition may skip
# at run time, or a model's own definition of it is evaluated.
LIBRARY_COMMON = """
import unittest


class ModelTesterMixin:
    def test_attention_setting(self):
        for model_class in self.all_model_classes:
            if not model_class._can_set_attn_implementation():
                self.skipTest(reason="cannot set attention")

    def test_forward(self):
        run()
"""

LIBRARY_MODEL_TEST = """
import unittest
from transformers import {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()
"""

OVERRIDE = """
    def test_forward(self):
        for model_class in self.all_model_classes:
            if not model_class._can_set_attn_implementation():
                self.skipTest(reason="forward needs attention setting")
"""

# a model whose file defines an attention module without the interface cannot set its attention
# (beta), one with no attention module can (alpha)
LIBRARY = {
    "src/transformers/modeling_utils.py": ATTENTION_SETTING_BASE.format(
        phrase="ALL_ATTENTION_FUNCTIONS.get_interface("
    ),
    "src/transformers/models/alpha/modeling_alpha.py": """
        class AlphaModel(PreTrainedModel):
            pass
    """,
    "src/transformers/models/beta/modeling_beta.py": """
        class BetaAttention(nn.Module):
            def forward(self, query):
                return query

        class BetaModel(PreTrainedModel):
            pass
    """,
}


def test_a_single_test_scan_reads_the_library_when_a_verdict_may_read_it(make_repo, scan):
    files = {"tests/test_modeling_common.py": LIBRARY_COMMON}
    for name in ("alpha", "beta"):
        files[f"tests/models/{name}/test_modeling_{name}.py"] = LIBRARY_MODEL_TEST.format(name=name.title())
    files["tests/models/beta/test_modeling_beta.py"] += OVERRIDE
    repo = write_tree(make_repo(files), LIBRARY)
    full = scan(repo, use_cache=False)
    assert full["test_attention_setting"]["models_skipped"] == ["beta"]
    assert full["test_forward"]["models_skipped"] == ["beta"]  # its own definition reads the library
    for test in ("test_attention_setting", "test_forward"):
        assert scan(repo, use_cache=False, test_method_name=test) == {test: full[test]}


# A model test file written the way model files are: a tester, tests a scan of one test never reads
# (left out of its parse), and tests whose verdicts read other methods: a helper, another test
# called by name, setUp skipping by test name; a parameterized test of its own overriding the common
# one, and a case of the common one written out (test_sizes_1_large, which the verdict does not read).
PARAMETERIZED_COMMON = """
import unittest

from parameterized import parameterized


class ModelTesterMixin:
    def test_forward(self):
        run()

    def test_training(self):
        run()

    def test_attention_outputs(self):
        run()

    def test_resize_tokens_embeddings(self):
        run()

    @parameterized.expand([("small",), ("large",)])
    def test_sizes(self, size):
        run(size)

    def test_headmasking(self):
        run()
"""

WRITTEN_AS_USERS_DO = """
import unittest

from parameterized import parameterized

from ...test_modeling_common import ModelTesterMixin


class ToyModelTester:
    def __init__(self, parent, batch_size=13, is_training=True):
        self.parent = parent
        self.batch_size = batch_size

    def create_and_check_model(self):
        self.parent.skipTest(reason="read only from the tester")


class ToyModelTest(ModelTesterMixin, unittest.TestCase):
    def setUp(self):
        self.model_tester = ToyModelTester(self)
        if self._testMethodName == "test_headmasking":
            self.skipTest(reason="no head masking")

    def test_model(self):
        self.model_tester.create_and_check_model()

    def test_forward(self):
        self._check_forward()

    def _check_forward(self):
        self.skipTest(reason="forward needs two devices")

    def test_training(self):
        self.test_training_of_this_model()

    def test_training_of_this_model(self):
        self.skipTest(reason="training is not supported")

    @parameterized.expand([("tiny",)])
    def test_attention_outputs(self, size):
        self.test_attention_of_this_model()

    def test_attention_of_this_model(self):
        self.skipTest(reason="no attentions")

    def test_sizes_1_large(self):
        self.skipTest(reason="too large")

    def test_resize_tokens_embeddings(self):
        super().test_resize_tokens_embeddings()

    def test_unrelated(self):
        self.skipTest(reason="read by no other test")
"""


def test_a_single_test_scan_of_a_model_file_written_as_users_do(make_repo, scan, tmp_path):
    repo = make_repo(
        {
            "tests/test_modeling_common.py": PARAMETERIZED_COMMON,
            "tests/models/toy/test_modeling_toy.py": WRITTEN_AS_USERS_DO,
            "tests/models/other/test_modeling_other.py": CALLING.replace("Calling", "Other"),
        },
        with_common=False,
    )
    full = scan(repo, use_cache=False)
    assert {test: full[test]["models_skipped"] for test in full} == {
        "test_forward": ["toy"],  # its override calls a helper
        "test_training": ["other", "toy"],  # another test, called by name
        "test_attention_outputs": ["toy"],  # its own cases call another test
        "test_resize_tokens_embeddings": ["other"],
        "test_sizes": [],
        "test_headmasking": ["toy"],  # setUp skips it by name
    }
    # one cache for all: what a scan of one test kept never answers for another test, nor for all
    for test in full:
        assert scan(repo, cache_dir=tmp_path / "cache", test_method_name=test) == {test: full[test]}
    assert scan(repo, cache_dir=tmp_path / "cache") == full
    # after an edit, a scan of one test reads the full scan's parses of the files that did not change
    with open(repo / "tests/models/other/test_modeling_other.py", "a") as model_file:
        model_file.write("# edited\n")
    for test in ("test_training", "test_attention_outputs"):
        assert scan(repo, cache_dir=tmp_path / "cache", test_method_name=test) == {test: full[test]}
