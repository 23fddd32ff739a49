"""The library reader parses a modeling file without the bodies of the methods it never reads, and
records exactly what the whole file gives."""

import ast

import pytest

from model_debugging.skips.parse.library import read
from model_debugging.skips.parse.library.unread_bodies import parse_library_source, without_unread_bodies

PATH = "src/toy/modeling_toy.py"

MODELING = '''
import torch
from torch import nn


class ToyAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self._build_projections(config)

    def _build_projections(self, config):
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size)
        self._build_output(config)

    def _build_output(self, config):
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def _shape(self, tensor):
        return tensor.view(-1)  # MARK_SHAPE

    def forward(self, hidden_states):
        return self.o_proj(self._shape(self.q_proj(hidden_states)))  # MARK_ATTENTION_FORWARD


class ToyPreTrainedModel(PreTrainedModel):
    config_class = ToyConfig

    @classmethod
    def _supports_default_dynamic_cache(cls):
        return not cls._is_stateful  # MARK_CLASS_METHOD

    @property
    def dummy_inputs(self):
        return {"input_ids": torch.zeros(1)}  # MARK_PROPERTY


@auto_docstring
class ToyModel(
    ToyPreTrainedModel,
):
    def __init__(self, config):
        super().__init__(config)
        self.layers = nn.ModuleList([ToyAttention(config) for _ in range(config.num_layers)])
        self.post_init()

    def get_input_embeddings(self):
        return self.embed_tokens

    @can_return_tuple
    @auto_docstring(
        custom_intro="Runs the layers.",
    )
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        use_cache: bool | None = None,
    ) -> BaseModelOutputWithPast:
        """Runs the model. # MARK_FORWARD_DOCSTRING"""
        for layer in self.layers:
            input_ids = layer(input_ids)
        # a comment closing the body
        return BaseModelOutputWithPast(last_hidden_state=input_ids)  # MARK_MODEL_FORWARD
        # a trailing comment


    # a comment between methods
    def generate(self, *args):
        text = """
column 0 inside a string: its body is kept # MARK_UNPAIRED_QUOTES
"""
        return text

    def one_line(self): return 1  # MARK_ONE_LINE


def module_function(config):
    return ToyModel(config)  # MARK_MODULE_FUNCTION
'''


def _whole_file(source: str, path: str, read_bodies: frozenset[str]):
    return ast.parse(source, filename=path), {}


def test_the_records_are_those_of_the_whole_file(monkeypatch):
    elided = read.read_library_file(PATH, MODELING)
    monkeypatch.setattr(read, "parse_library_source", _whole_file)
    whole = read.read_library_file(PATH, MODELING)
    assert elided.error is None
    assert elided == whole
    # compared apart: where a forward is written is not part of what a class is
    assert [info.forward_lines for info in elided.classes] == [info.forward_lines for info in whole.classes]
    model = next(info for info in elided.classes if info.name == "ToyModel")
    lines = MODELING.split("\n")
    first = next(number for number, line in enumerate(lines, 1) if "@can_return_tuple" in line)
    last = next(number for number, line in enumerate(lines, 1) if "MARK_MODEL_FORWARD" in line)
    assert model.forward_lines == (first, last)  # from its first decorator to its last line of code


def test_only_the_bodies_the_reader_never_reads_are_elided():
    elided = without_unread_bodies(MODELING, read.BODIES_READ)
    assert elided is not None
    assert elided.text.count("\n") == MODELING.count("\n")  # every line keeps its number
    for gone in ("MARK_SHAPE", "MARK_ATTENTION_FORWARD", "MARK_PROPERTY", "MARK_MODEL_FORWARD"):
        assert gone not in elided.text
    kept = (
        "self.q_proj = nn.Linear",  # called by the constructor
        "self.o_proj = nn.Linear",  # called by what the constructor calls
        "MARK_CLASS_METHOD",
        "MARK_UNPAIRED_QUOTES",  # a line at column 0 inside the body: its extent is not sure
        "MARK_ONE_LINE",
        "MARK_MODULE_FUNCTION",
        "return self.embed_tokens",
    )
    for text in kept:
        assert text in elided.text


@pytest.mark.parametrize(
    "source",
    [
        # a method written inside a class's docstring, indented like one
        'class Toy(Base):\n    """An example:\n\n    def forward(self):\n        return 1\n    """\n\n    x = 1\n',
        # a call whose argument line sits at column 0: the body's extent ends early
        "class Toy(Base):\n    def forward(self):\n        return f(\n1)\n",
        # a line at column 0 in a docstring hides the constructor below it from the class, and the
        # helper the constructor calls looks unread: the parse shows the constructor calls it
        "class Toy(Base):\n    def _build(self, config):\n        self.proj = nn.Linear(config.hidden_size, 2)\n\n"
        '    def forward(self, x):\n        """A docstring\nat column 0."""\n        return x\n\n'
        "    def __init__(self, config):\n        super().__init__(config)\n        self._build(config)\n",
    ],
    ids=["def-in-docstring", "argument-at-column-0", "constructor-hidden-by-a-docstring"],
)
def test_text_whose_lines_mislead_is_read_as_written(source):
    tree, elided_ends = parse_library_source(source, PATH, read.BODIES_READ)
    assert elided_ends == {}
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(source), include_attributes=True)


def test_a_file_that_does_not_parse_is_reported_as_before():
    record = read.read_library_file(PATH, "class Toy(Base):\n    def forward(self):\n        return (\n")
    assert record.error is not None and record.error.startswith(f"{PATH}:")
