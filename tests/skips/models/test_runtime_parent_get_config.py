"""A tester's ``get_config`` that starts from ``config = super().get_config()``: the
parent tester's ``get_config``, in another file, is followed and what the override sets goes on top;
the conventional loop over the tester's attributes stands for them as when it is not overridden; a
parent that cannot be read leaves its values unknown, never the configuration class's defaults."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import generation_test_class
from tests.skips.models.test_runtime_post_init_values import GENERATION, LIBRARY

PARENT = """
class WindowModelTester:
    def __init__(self, parent, hidden_size=4):
        self.parent = parent
        self.hidden_size = hidden_size

    def get_config(self):
        return self.config_class(sliding_window=8, hidden_size=self.hidden_size)


class ConventionalModelTester:
    forced_config_args = []

    def __init__(self, parent, hidden_size=4, sliding_window=8):
        self.parent = parent
        self.hidden_size = hidden_size
        self.sliding_window = sliding_window

    def get_config(self):
        kwargs = {}
        for k in self.config_args + self.forced_config_args:
            kwargs[k] = getattr(self, k)
        return self.config_class(**kwargs)


class ForwardingModelTester:
    def __init__(self, parent, hidden_size=4):
        self.parent = parent
        self.hidden_size = hidden_size

    def get_config(self, **kwargs):
        return self.config_class(hidden_size=self.hidden_size, **kwargs)


class NamedModelTester:
    def get_config(self, window=8, **kwargs):
        return self.config_class(sliding_window=window, **kwargs)


class LoopModelTester:
    def __init__(self, parent, hidden_size=4):
        self.parent = parent
        self.hidden_size = hidden_size

    def get_config(self):
        kwargs = {}
        for name in self.chosen:
            kwargs[name] = getattr(self, name)
        return self.config_class(**kwargs)
"""

CHILD = """
import unittest
from transformers import {title}Config, {title}Model
from ...window_tester import {parent}
from ...generation.test_utils import GenerationTesterMixin


class {title}ModelTester({parent}):
    config_class = {title}Config

    def get_config(self):
        {body}
"""
SET_ON_PARENT = "config = super().get_config()\n        config.{name} = {value}\n        return config"
HANDED_TO_PARENT = "return super().get_config({name}={value})"

# model -> (parent tester, how the override starts from it, what it sets)
CASES = {
    "alpha": ("WindowModelTester", SET_ON_PARENT, "hidden_size", "2"),  # the parent's window stays: skipped
    "beta": ("WindowModelTester", SET_ON_PARENT, "sliding_window", "None"),  # the override drops it: ran
    "gamma": ("LoopModelTester", SET_ON_PARENT, "hidden_size", "2"),  # the parent is not read: undecided
    # the conventional loop passes the tester's attributes: its window of 8 stays, skipped
    "delta": ("ConventionalModelTester", SET_ON_PARENT, "hidden_size", "2"),
    # a keyword handed to a parent passing its **kwargs on: skipped
    "epsilon": ("ForwardingModelTester", HANDED_TO_PARENT, "sliding_window", "8"),
    # handed to a parent that does not pass keywords on: undecided
    "zeta": ("WindowModelTester", HANDED_TO_PARENT, "hidden_size", "2"),
    # handed to a parameter of the parent's own, not to its **kwargs: undecided
    "eta": ("NamedModelTester", HANDED_TO_PARENT, "window", "None"),
}


def test_an_override_calling_super_get_config_keeps_what_the_parent_sets(make_repo, scan):
    files = {"tests/generation/test_utils.py": GENERATION, "tests/window_tester.py": PARENT}
    library = dict(LIBRARY)
    for model, (parent, body, name, value) in CASES.items():
        title = model.title()
        child = CHILD.format(title=title, parent=parent, body=body.format(name=name, value=value))
        files[f"tests/models/{model}/test_modeling_{model}.py"] = child + generation_test_class(title)
        library[f"src/transformers/models/{model}/configuration_{model}.py"] = (
            f'class {title}Config(PreTrainedConfig):\n    model_type = "{model}"\n'
            "    sliding_window: int | None = None\n    hidden_size: int = 8\n"
        )
        library[f"src/transformers/models/{model}/modeling_{model}.py"] = (
            f"class {title}Model(PreTrainedModel):\n    config: {title}Config\n"
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_sliding_window") == {
        "ran": ["beta"],
        "skipped": ["alpha", "delta", "epsilon"],
        "undecided": ["eta", "gamma", "zeta"],
    }
