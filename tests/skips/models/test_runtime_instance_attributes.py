"""Run-time skips that depend on what a model instance's constructors assign (``model.model``,
``hasattr(model, ...)``, ``model.named_children()``), read from the library's ``__init__`` methods
on a tiny fake checkout.

``rope`` holds a model whose class has ``get_rope_index``; ``flat`` holds one without it and has a
``nn.Linear`` head when ``config.num_labels > 0``; ``stacked`` has its head in an ``nn.Sequential``
and no input embeddings; ``pooled`` has neither head (its norm is a module-level alias of
``nn.LayerNorm``, its pooler a class of the library) and gives that pooler, which has no weight, as
its input embeddings; ``branchy`` holds its base model under the name ``base_model_prefix`` gives
(``setattr``) and builds its head in an ``if`` on ``self.num_labels``, a copy of the configuration's;
``bare`` holds only an embedding under another name than the one its ``_input_embed_layer`` gives;
``gated`` builds its head under a condition on a value the analyzer does not
know and sets attributes through ``setattr``, so its answers stay undecided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

COMMON = """
import unittest

from torch import nn


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()

    def test_positions(self):
        ran_any_model = False
        for model_class in self.all_model_classes:
            config, _ = self.model_tester.prepare_config_and_inputs_for_common()
            model = model_class(config)
            has_3d_rope_positions = any(
                hasattr(module, "get_rope_index")
                for module in (model, getattr(model, "model", None), getattr(model, "language_model", None))
            )
            if has_3d_rope_positions:
                continue
            ran_any_model = True
        if not ran_any_model:
            self.skipTest("All model classes use 3D RoPE positions")

    def test_embeddings(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        has_verified_model = False
        for model_class in self.all_model_classes:
            model = model_class(config)
            try:
                embeddings_module = model.get_input_embeddings()
            except NotImplementedError:
                continue
            if embeddings_module is None:
                continue
            embedding_param = getattr(embeddings_module, "weight", None)
            if embedding_param is None and isinstance(embeddings_module, (tuple, list)):
                embedding_param = embeddings_module[0].weight
            if embedding_param is None:
                continue
            has_verified_model = True
        if not has_verified_model:
            self.skipTest(reason="No model with input embeddings")

    def test_embeddings_first(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            embeddings = model_class(config).get_input_embeddings()
            if embeddings is not None:
                self.skipTest("only the embeddings are looked up")

    def test_embeddings_in_subtests(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            with self.subTest(model_class.__name__):
                embeddings = model_class(config).get_input_embeddings()
            if embeddings is not None:
                self.skipTest("only the embeddings are looked up")

    def test_head(self):
        for model_class in self.all_model_classes:
            new_model = model_class.from_pretrained("checkpoint", num_labels=42)
            top_linear_modules = [
                (name, module) for name, module in new_model.named_children() if isinstance(module, nn.Linear)
            ]
            if len(top_linear_modules) == 0:
                if any(module.__class__.__name__.endswith("ClassificationHead") for module in new_model.children()):
                    head = "classification head"
                elif any(isinstance(module, nn.Sequential) for module in new_model.children()):
                    head = "sequential"
                else:
                    self.skipTest("Could not locate the classification Linear layer.")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        import torch
        from torch import nn

        class EmbeddingAccessMixin:
            _input_embed_layer = "embed_tokens"

            def get_input_embeddings(self):
                name = getattr(self, "_input_embed_layer", "embed_tokens")
                if (found := getattr(self, name, None)) is not None:
                    return found
                raise NotImplementedError

        class PreTrainedModel(nn.Module, EmbeddingAccessMixin):
            base_model_prefix = ""

            @property
            def base_model(self):
                return getattr(self, self.base_model_prefix, self)

            def __init__(self, config):
                super().__init__()
                self.config = config
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs = {}
    """,
    "src/transformers/models/rope/modeling_rope.py": """
        from torch import nn

        class RopeConfig(PreTrainedConfig):
            model_type = "rope"

        class RopeInnerModel(PreTrainedModel):
            config: RopeConfig

            def __init__(self, config):
                super().__init__(config)
                self.embed_tokens = nn.Embedding(10, 4)

            def get_rope_index(self, input_ids):
                return input_ids

        class RopeModel(PreTrainedModel):
            config: RopeConfig

            def __init__(self, config):
                super().__init__(config)
                self.model = RopeInnerModel(config)
                self.lm_head = nn.Linear(4, 10)
    """,
    "src/transformers/models/flat/modeling_flat.py": """
        from torch import nn

        class FlatConfig(PreTrainedConfig):
            model_type = "flat"

        class FlatInnerModel(PreTrainedModel):
            config: FlatConfig

            def __init__(self, config):
                super().__init__(config)
                self.embed_tokens = nn.Embedding(10, 4)

        class FlatModel(PreTrainedModel):
            config: FlatConfig

            def __init__(self, config):
                super().__init__(config)
                self.num_labels = config.num_labels
                self.model = FlatInnerModel(config)
                self.dropout = nn.Dropout(0.1)
                self.classifier = nn.Linear(4, config.num_labels) if config.num_labels > 0 else nn.Identity()
    """,
    "src/transformers/models/stacked/modeling_stacked.py": """
        from torch import nn

        class StackedConfig(PreTrainedConfig):
            model_type = "stacked"

        class StackedModel(PreTrainedModel):
            config: StackedConfig

            def get_input_embeddings(self):
                return None

            def __init__(self, config):
                super().__init__(config)
                self.encoder = nn.Embedding(10, 4)
                self.head = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, config.num_labels))
    """,
    "src/transformers/models/pooled/modeling_pooled.py": """
        from torch import nn

        PooledLayerNorm = nn.LayerNorm

        class PooledConfig(PreTrainedConfig):
            model_type = "pooled"

        class PooledPooler(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.dense = nn.Linear(4, 4)

        class PooledModel(PreTrainedModel):
            config: PooledConfig

            def __init__(self, config):
                super().__init__(config)
                self.norm = PooledLayerNorm(4)
                self.pooler = PooledPooler(config)

            def get_input_embeddings(self):
                # the pooler stands for the embeddings (it has no weight of its own)
                return self.pooler
    """,
    # branchy holds its base model under the name its class attribute gives, and chooses its head
    # in an `if` on the number of labels it copied from its configuration
    "src/transformers/models/branchy/modeling_branchy.py": """
        import torch.nn as nn

        class BranchyConfig(PreTrainedConfig):
            model_type = "branchy"

        class BranchyModel(PreTrainedModel):
            config: BranchyConfig
            base_model_prefix = "backbone"

            def __init__(self, config):
                super().__init__(config)
                self.num_labels = config.num_labels
                setattr(self, self.base_model_prefix, FlatInnerModel(config))
                if self.num_labels > 0:
                    self.head = nn.Linear(4, self.num_labels)
                else:
                    self.head = nn.Identity()
    """,
    "src/transformers/models/bare/modeling_bare.py": """
        from torch import nn

        class BareConfig(PreTrainedConfig):
            model_type = "bare"
            vocab_size = 10

        class BareModel(PreTrainedModel):
            config: BareConfig
            _input_embed_layer = "word_embeddings"

            def __init__(self, config):
                super().__init__(config)
                self.scale = 2.0
                self.encoder = nn.Embedding(config.vocab_size, 4)
    """,
    "src/transformers/models/gated/modeling_gated.py": """
        from torch import nn

        class GatedConfig(PreTrainedConfig):
            model_type = "gated"

        class GatedModel(PreTrainedModel):
            config: GatedConfig

            def __init__(self, config):
                super().__init__(config)
                for name in config.part_names:
                    setattr(self, name, nn.Identity())
                self.head = nn.Linear(4, 2) if config.use_head else nn.Identity()
    """,
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name in ("Rope", "Flat", "Stacked", "Pooled", "Gated", "Branchy", "Bare"):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(name=name)
    return write_tree(make_repo(files), LIBRARY)


def test_a_method_of_the_model_an_attribute_holds_decides_the_skip(checkout, scan):
    """rope's `model` is a class with get_rope_index: skipped; flat's has none, and no class has a
    `language_model` (branchy's base model is its `backbone`): ran; gated may set any attribute
    (setattr under a name only the run knows): undecided."""
    assert verdicts(scan(checkout), "test_positions") == {
        "ran": ["bare", "branchy", "flat", "pooled", "stacked"],
        "skipped": ["rope"],
        "undecided": ["gated"],
    }


def test_the_direct_submodules_decide_where_the_classification_layer_is(checkout, scan):
    """flat's classifier is an nn.Linear when `config.num_labels > 0` (42 in the loaded model), so is
    branchy's head, and stacked's head is an nn.Sequential: ran; pooled holds a
    LayerNorm (through an alias) and a pooler of the library, neither of them: skipped; gated's head
    is built under a condition the analyzer does not evaluate: undecided."""
    results = scan(checkout)
    assert verdicts(results, "test_head") == {
        "ran": ["branchy", "flat", "rope", "stacked"],
        "skipped": ["bare", "pooled"],
        "undecided": ["gated"],
    }
    assert results["test_head"]["reasons_skipped"] == [
        "bare: Could not locate the classification Linear layer.",
        "pooled: Could not locate the classification Linear layer.",
    ]


def test_the_input_embeddings_are_followed_to_the_module_an_attribute_holds(checkout, scan):
    """stacked's embeddings are None, pooled's have no weight, bare's search finds none and raises
    NotImplementedError, which the test catches: skipped; rope and flat find theirs
    through the base class's search (the `model` they hold), branchy through its base model (the
    attribute `base_model_prefix` names), an nn.Embedding: ran; gated may hold any attribute
    (setattr under a computed name), so its search is not followed: undecided."""
    assert verdicts(scan(checkout), "test_embeddings") == {
        "ran": ["branchy", "flat", "rope"],
        "skipped": ["bare", "pooled", "stacked"],
        "undecided": ["gated"],
    }


def test_an_exception_the_library_raises_ends_the_test_unless_a_subtest_holds_it(checkout, scan):
    """bare's get_input_embeddings raises NotImplementedError: uncaught, the test fails before its
    skip (ran); inside `self.subTest` unittest goes on to the skip, which is left undecided. The
    models whose search finds their embeddings reach the skip: skipped."""
    results = scan(checkout)
    first, in_subtests = (
        verdicts(results, "test_embeddings_first"),
        verdicts(results, "test_embeddings_in_subtests"),
    )
    assert "bare" in first["ran"] and "bare" in in_subtests["undecided"]
    assert {"flat", "rope", "branchy"} <= set(first["skipped"]) & set(in_subtests["skipped"])
    condition = "bare: undecided: if NotImplementedError raised inside a subTest: skip (decided at run time)"
    assert condition in results["test_embeddings_in_subtests"]["conditions"]
