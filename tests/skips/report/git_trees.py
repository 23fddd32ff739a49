"""Git checkouts for the PR check's tests: ``git`` in a repository, and a whole transformers-like
checkout (tests/, src/, utils/ in one repository) with three models: alpha has two test classes, as
whisper has; gamma's model is built on alpha's classes.
"""

import re
import subprocess
import textwrap
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


COMMON = """
import inspect
import unittest


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()

    def test_forward(self):
        run()

    def test_sdpa(self):
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                self.skipTest(f"{model_class.__name__} does not support SDPA")

    def test_inputs_embeds(self):
        for model_class in self.all_model_classes:
            if "inputs_embeds" not in inspect.signature(model_class.forward).parameters:
                self.skipTest(reason="This model doesn't use `inputs_embeds`")
"""

GENERATION = """
import unittest


class GenerationTesterMixin:
    def test_greedy_generate(self):
        run()


class GenerationIntegrationTests(unittest.TestCase):
    def test_stopping_criteria(self):
        run()
"""

ALPHA = """
import unittest

from transformers import AlphaForCausalLM, AlphaModel

from ...test_modeling_common import ModelTesterMixin


def check_outputs(test):
    test.assertTrue(True)


class AlphaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (AlphaModel, AlphaForCausalLM) if is_torch_available() else ()

    def test_forward(self):
        check_outputs(self)


class AlphaEncoderModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (AlphaModel,) if is_torch_available() else ()

    @unittest.skip("the encoder takes no embeddings")
    def test_inputs_embeds(self):
        pass
"""

MODEL_TEST = """
import unittest

from transformers import {name}Model

from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _supports_sdpa = False
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            pass
    """,
    "src/transformers/models/alpha/modeling_alpha.py": """
        class AlphaPreTrainedModel(PreTrainedModel):
            base_model_prefix = "alpha"
            _supports_sdpa = True

        class AlphaModel(AlphaPreTrainedModel):
            def forward(self, input_ids=None, inputs_embeds=None):
                pass

        class AlphaForCausalLM(AlphaPreTrainedModel):
            def forward(self, input_ids=None, inputs_embeds=None, labels=None):
                pass
    """,
    "src/transformers/models/beta/modeling_beta.py": """
        class BetaModel(PreTrainedModel):
            def forward(self, input_ids=None):
                pass
    """,
    "src/transformers/models/gamma/modeling_gamma.py": """
        from ..alpha.modeling_alpha import AlphaPreTrainedModel

        class GammaModel(AlphaPreTrainedModel):
            def forward(self, input_ids=None, inputs_embeds=None):
                pass
    """,
}


def write(repo, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def edit(repo, relative: str, old: str, new: str) -> None:
    path = repo / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def build_whole_tree(repo: Path) -> Path:
    """A transformers-like git repository at ``repo``: tests/, src/ and utils/, three models, one commit
    on ``main``."""
    write(
        repo,
        {
            "tests/__init__.py": "",
            "tests/models/__init__.py": "",
            "tests/generation/__init__.py": "",
            **{f"tests/models/{name}/__init__.py": "" for name in ("alpha", "beta", "gamma")},
            "tests/test_modeling_common.py": COMMON,
            "tests/generation/test_utils.py": GENERATION,
            "tests/models/alpha/test_modeling_alpha.py": ALPHA,
            "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta"),
            "tests/models/gamma/test_modeling_gamma.py": MODEL_TEST.format(name="Gamma"),
            # two files of gamma define a class of the same name (as dpt's do); the second skips a test
            "tests/models/gamma/test_modeling_gamma_backbone.py": MODEL_TEST.format(name="Gamma")
            + '\n    @unittest.skip("no backbone output")\n    def test_forward(self):\n        pass\n',
            "utils/check_repo.py": "print('checked')\n",
            "README.md": "transformers\n",
            **LIBRARY,
        },
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return repo


def rows(output: str) -> list[list[str]]:
    """The rows of the terminal table, split on runs of two or more spaces."""
    return [re.split(r" {2,}", line.strip()) for line in output.splitlines() if line.startswith("test_")]


def markdown_rows(markdown) -> list[str]:
    """The rows of the markdown table the check wrote to ``markdown``, as written."""
    return [line for line in markdown.read_text(encoding="utf-8").splitlines() if line.startswith("| test_")]
