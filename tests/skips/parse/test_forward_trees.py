"""The forwards a library file defines, parsed alone, are the nodes its whole tree holds, at the same
positions: the cache readings that look at them decide as they would on the whole file."""

import ast

from model_debugging.skips.models.generation_cache.model_outputs import method_definition, parsed_forwards
from model_debugging.skips.parse.library.read import read_library_file
from model_debugging.skips.resolve.library import Library

MODELING = '''
import torch


class Helper:
    def helper(self):
        return 1


@auto_docstring
class ToyModel(
    ToyPreTrainedModel,
):
    """A docstring.
Its second line starts at column 0."""

    def __init__(self, config):
        super().__init__(config)

    @can_return_tuple
    @auto_docstring
    def forward(self, input_ids=None, use_cache: bool | None = None) -> BaseModelOutputWithPast:
        text = """
not code: def forward(self):
"""
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        return BaseModelOutputWithPast(past_key_values=past_key_values)


class ToyForCausalLM(ToyPreTrainedModel):
    def forward(self, **kwargs): return self.model(**kwargs)
    def generate(self):
        pass


if torch.cuda.is_available():
    class Conditional(ToyPreTrainedModel):
        def forward(self):
            pass
'''


def test_each_forward_parsed_alone_is_the_whole_files_node(tmp_path):
    path = "src/toy/modeling_toy.py"
    (tmp_path / "src" / "toy").mkdir(parents=True)
    (tmp_path / path).write_text(MODELING)
    library = Library([read_library_file(path, MODELING)], tmp_path)
    whole = {node.name: node for node in ast.parse(MODELING).body if isinstance(node, ast.ClassDef)}
    for name in ("ToyModel", "ToyForCausalLM"):
        found = method_definition(library, library.find(name), "forward")
        expected = next(item for item in whole[name].body if getattr(item, "name", "") == "forward")
        assert ast.dump(found, include_attributes=True) == ast.dump(expected, include_attributes=True)
    forwards = parsed_forwards(library, path)
    # the classes that define a forward, at their own lines; the one under `if` is not at the top
    assert [(node.name, node.lineno) for node in forwards.body] == [
        ("ToyModel", whole["ToyModel"].lineno),
        ("ToyForCausalLM", whole["ToyForCausalLM"].lineno),
    ]
    assert [item.name for node in forwards.body for item in node.body] == ["forward", "forward"]
