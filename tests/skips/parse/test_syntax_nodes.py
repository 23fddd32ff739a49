"""The library reader's fast tree walks visit what the standard library's do, in the same order, and
its dotted names read as ``ast.unparse`` writes them."""

import ast

from model_debugging.skips.parse.ast_nodes import child_nodes, dotted_text, walk
from model_debugging.skips.parse.library.function_nodes import FunctionNodes

SOURCE = '''
class Model(PreTrainedModel, GenerationMixin):
    """Docstring."""

    attention_classes = {"eager": Attention, "sdpa": SdpaAttention}

    def __init__(self, config, *layers, norm=nn.LayerNorm, **kwargs):
        super().__init__(config)
        self.layers = nn.ModuleList([Layer(config, i) for i in range(config.n) if i % 2 or not i])
        self.head = Head(config) if self.config.text_config.tie else None
        for name, value in kwargs.items():
            setattr(self, name, lambda x=value: x * -1)
        with torch.no_grad(), self.lock as held:
            del self.cache[0:2], held
        match config.kind:
            case {"a": 1, **rest} | [1, *_]:
                pass
        print(f"{self.head!r:>10}", a < b <= c, not d, e @ f)
'''


def test_walk_visits_every_node_in_the_order_of_ast_walk():
    tree = ast.parse(SOURCE)
    expected = list(ast.walk(tree))
    found = walk(tree)
    assert len(found) == len(expected) > 150
    assert all(mine is theirs for mine, theirs in zip(found, expected, strict=True))


def test_child_nodes_are_those_of_iter_child_nodes():
    for node in ast.walk(ast.parse(SOURCE)):
        expected = list(ast.iter_child_nodes(node))
        assert [id(child) for child in child_nodes(node)] == [id(child) for child in expected]


def test_dotted_text_is_the_unparsed_text_of_any_expression():
    expressions = [node for node in ast.walk(ast.parse(SOURCE)) if isinstance(node, ast.expr)]
    assert any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) for node in expressions
    )
    for node in expressions:
        assert dotted_text(node) == ast.unparse(node)


def test_the_nodes_of_a_function_by_kind_are_those_of_ast_walk_in_its_order():
    (function,) = [node for node in ast.walk(ast.parse(SOURCE)) if isinstance(node, ast.FunctionDef)]
    nodes = FunctionNodes(function)
    walked = list(ast.walk(function))
    for kind in {node.__class__ for node in walked}:
        expected = [node for node in walked if node.__class__ is kind]
        if issubclass(kind, (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)):
            expected = []  # contexts and operators: no reading looks at them
        assert nodes.of(kind) == expected, kind
    assert nodes.of(ast.ClassDef) == []
