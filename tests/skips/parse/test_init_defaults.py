"""What a tester's constructor leaves on ``self`` is read from Python's tree, so that libcst never
parses the constructor; the values are those libcst's reading gave, non-literal code included."""

import textwrap

import pytest

from model_debugging.skips.parse.elide import elide_unread_code
from model_debugging.skips.parse.test_file import parse_source
from model_debugging.skips.records.literals import NonLiteral
from tests.skips.conftest import verdicts

PATH = "tests/models/toy/test_modeling_toy.py"

TOY = textwrap.dedent(
    '''
    import unittest

    import torch

    from ...test_modeling_common import ModelTesterMixin


    class ToyModelTester:
        """Builds a tiny Toy configuration and inputs."""

        def __init__(
            self,
            parent,
            batch_size=13,
            seq_length=7,
            use_labels=False,
            hidden_act="gelu",
            dropout=-0.5,
            layer_sizes=(4, 8),
            dtype=torch.float32,
            text_config={
                "hidden_size": 32,
                # a comment kept in the code
                "num_layers": 2,
            },
            *,
            scope=None,
            **kwargs,
        ):
            super().__init__(parent, is_training=False, vocab_size=99, activation=hidden_act)
            self.parent = parent
            self.batch_size = batch_size
            self.use_labels = use_labels
            self.text_config = text_config
            self.dtype = dtype
            self.has_mask = False
            kwargs.setdefault("pad_token_id", 0)
            kwargs.setdefault("head_dim", (
                self.hidden_size // 2
            ))
            if torch.cuda.is_available():
                self.device_count = 2
                self.on_gpu = True
            else:
                self.device_count = 0
            self.num_labels = compute_labels(
                batch_size,
                seq_length,
            )
            self.seq_length = (seq_length)

        def get_config(self):
            return ToyConfig(hidden_act=self.hidden_act)


    class ToyModelTest(ModelTesterMixin, unittest.TestCase):
        def setUp(self):
            self.model_tester = ToyModelTester(self)
    '''
)

# what libcst's reading of the constructor gave: the code of a value that is not a literal is the
# text libcst writes for its node (continuation lines without the indentation of the block)
TOY_DEFAULTS = (
    ("is_training", False),
    ("vocab_size", 99),
    ("activation", "gelu"),
    ("parent", NonLiteral("parent")),
    ("batch_size", 13),
    ("use_labels", False),
    (
        "text_config",
        NonLiteral(
            '{\n        "hidden_size": 32,\n        # a comment kept in the code\n        "num_layers": 2,\n    }'
        ),
    ),
    ("dtype", NonLiteral("torch.float32")),
    ("has_mask", False),
    ("pad_token_id", 0),
    ("head_dim", NonLiteral("(\n    self.hidden_size // 2\n)")),
    ("device_count", 2),
    ("on_gpu", True),
    ("num_labels", NonLiteral("compute_labels(\n    batch_size,\n    seq_length,\n)")),
    ("seq_length", 7),
)


@pytest.mark.parametrize("elide", [False, True])
def test_a_testers_constructor_gives_what_it_leaves_on_self(elide):
    tester = parse_source(TOY, PATH, elide=elide).class_named("ToyModelTester")
    assert tester.init_defaults == TOY_DEFAULTS
    assert [method.name for method in tester.methods] == ["__init__", "get_config"]


def test_libcst_is_not_given_a_testers_methods():
    text = elide_unread_code(TOY).text
    assert (
        "    def __init__(self):\n        pass\n" in text
        and "    def get_config(self):\n        pass\n" in text
    )
    assert "batch_size" not in text and "ToyConfig" not in text
    assert "self.model_tester = ToyModelTester(self)" in text  # the test class's setUp is kept


CORNERS = textwrap.dedent(
    '''
    class EdgeTester:
        def __init__(self, parent, size=4, /, depth=2, mode=MODE, *, kind=("a", "b",)):
            if parent: self.inline = 1
            self.size = size
            self.depth = depth
            self.kind = kind
            self.mode = mode
            self.pair = 1, depth,
            self.sum = 1 + \\
                depth
            self.neg, self.skip = -1, 2
            self.first = self.second = (  # both
                [1, -2.5, "x", b"y", None]
            )
            self.text = """a
        b"""
            try:
                self.tried = not 0
            except ImportError:
                self.tried = False
            kwargs.setdefault(
                "late", depth)
            kwargs.setdefault(name, 3)
            Base.__init__(self, extra=(
                depth
            ), other=size, **rest)


    class OneLineTester:
        def __init__(self): self.never = 1
    '''
)


def test_constructor_corners_read_as_libcst_read_them():
    """A positional-only default is not a keyword's; statements after a colon, tuple targets, a
    ``setdefault`` of a key that is not a string and an ``else`` are not read; a continuation after
    ``\\`` keeps its indentation."""
    edge, one_line = parse_source(CORNERS, PATH, elide=True).classes
    assert edge.init_defaults == (
        ("size", NonLiteral("size")),
        ("depth", 2),
        ("kind", ("a", "b")),
        ("mode", NonLiteral("MODE")),
        ("pair", NonLiteral("1, depth,")),
        ("sum", NonLiteral("1 + \\\n            depth")),
        ("first", [1, -2.5, "x", b"y", None]),
        ("second", [1, -2.5, "x", b"y", None]),
        ("text", "a\n    b"),
        ("tried", True),
        ("late", NonLiteral("depth")),
        ("extra", 2),
        ("other", NonLiteral("size")),
    )
    assert one_line.init_defaults == ()


def test_a_file_in_newer_syntax_than_python_reads_is_read_from_the_constructors_own_text():
    source = "type Sizes = list[int]\n\n\nclass NewTester:\n    def __init__(self, size=4):\n        self.size = size\n"
    (tester,) = parse_source(source, PATH, elide=True).classes
    assert tester.init_defaults == (("size", 4),)


COMMON = """
import unittest


class ModelTesterMixin:
    def test_training(self):
        if not self.model_tester.is_training:
            self.skipTest(reason="not training")

    def test_labels(self):
        if not self.model_tester.use_labels:
            self.skipTest(reason="no labels")

    def test_mask(self):
        if self.model_tester.has_mask:
            self.skipTest(reason="masked")

    def test_padding(self):
        if not self.model_tester.pad_token_id:
            self.skipTest(reason="no padding token")

    def test_gpus(self):
        if self.model_tester.device_count == 2:
            self.skipTest(reason="two devices")

    def test_dtype(self):
        if not self.model_tester.dtype:
            self.skipTest(reason="no dtype")
"""


def test_verdicts_on_what_the_constructor_sets(make_repo, scan):
    repo = make_repo({"tests/test_modeling_common.py": COMMON, PATH: TOY})
    results = scan(repo, use_cache=False)
    found = {
        test: verdicts(results, test)
        for test in ("test_training", "test_labels", "test_padding", "test_gpus")
    }
    assert all(found == {"ran": [], "skipped": ["toy"], "undecided": []} for found in found.values()), found
    assert verdicts(results, "test_mask")["ran"] == ["toy"]
    assert verdicts(results, "test_dtype")["undecided"] == ["toy"]
