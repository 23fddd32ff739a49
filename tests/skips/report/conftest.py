import json
import textwrap
from pathlib import Path

import pytest

from .git_trees import build_whole_tree, git


def scan_result(tests: dict[str, tuple], origin: str = "common") -> dict:
    """An analyzer result from ``{test: (models that ran, {model that skipped: reason})}``, optionally
    with a third item ``{undecided model: why}`` (then with the analyzer's extra keys)."""
    result = {}
    for name, (ran, skipped, *rest) in tests.items():
        total = len(ran) + len(skipped)
        result[name] = {
            "origin": origin,
            "models_ran": sorted(ran),
            "models_skipped": sorted(skipped),
            "skipped_proportion": round(len(skipped) / total, 4) if total else 0.0,
            "reasons_skipped": sorted(f"{model}: {reason}" for model, reason in skipped.items()),
        }
        if rest:
            (undecided,) = rest
            result[name]["models_undecided"] = sorted(undecided)
            result[name]["conditions"] = sorted(
                f"{model}: undecided: {why}" for model, why in undecided.items()
            )
    return result


def provenance(analyzer: str = "a", commit: str | None = "c" * 40) -> dict:
    """A result's ``provenance`` entry: ``analyzer`` is one hex digit repeated in its digests."""
    return {
        "package_version": "0.1.0",
        "analyzer_digest": analyzer * 64,
        "settings_digest": "5" * 64,
        "commit": commit,
    }


ONE_ANALYZER = provenance()


@pytest.fixture
def write_scan(tmp_path):
    """Write a scan result built by :func:`scan_result` to ``tmp_path/<name>.json`` and return its
    path; each entry records ``made_by`` (default: one analyzer for every result; None: no provenance,
    as results written before they recorded it)."""

    def write(name: str, tests: dict, made_by: dict | None = ONE_ANALYZER) -> str:
        result = scan_result(tests)
        if made_by is not None:
            result = {test: {**entry, "provenance": made_by} for test, entry in result.items()}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(result), encoding="utf-8")
        return str(path)

    return write


COMMON = """
class ModelTesterMixin:
    def test_forward(self):
        self.assertTrue(self.all_model_classes is not None)

    def test_inputs_embeds(self):
        self.assertTrue(self.all_model_classes is not None)

    def test_training(self):
        self.assertTrue(self.all_model_classes is not None)
"""


def model_test(name: str, skips: dict[str, str]) -> str:
    methods = "".join(
        f'\n    @unittest.skip("{reason}")\n    def {test}(self):\n        pass\n'
        for test, reason in skips.items()
    )
    return textwrap.dedent(
        f"""
        import unittest

        from ...test_modeling_common import ModelTesterMixin


        class {name.capitalize()}ModelTest(ModelTesterMixin, unittest.TestCase):
            all_model_classes = ()
        """
    ) + (methods or "    pass\n")


def write_model(repo: Path, name: str, skips: dict[str, str]) -> None:
    folder = repo / "tests" / "models" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("")
    (folder / f"test_modeling_{name}.py").write_text(model_test(name, skips))


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """A tiny transformers-like git repository: 6 models, half of them skip test_inputs_embeds."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # keep the analyzer's parse cache here
    repo = tmp_path / "transformers"
    (repo / "tests" / "models").mkdir(parents=True)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "models" / "__init__.py").write_text("")
    (repo / "tests" / "test_modeling_common.py").write_text(COMMON)
    for index, name in enumerate(["bert", "llama", "vit", "opt", "gpt2", "t5"]):
        write_model(repo, name, {"test_inputs_embeds": f"{name} has no inputs_embeds"} if index % 2 else {})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return repo


@pytest.fixture
def whole_tree(tmp_path, monkeypatch) -> Path:
    """A transformers-like git repository: tests/, src/ and utils/, three models, one commit on ``main``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return build_whole_tree(tmp_path / "transformers")
