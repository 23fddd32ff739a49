"""A tiny fake transformers checkout built in ``tmp_path``, one file per mapping entry."""

import textwrap
from pathlib import Path

import pytest

COMMON = """
import unittest


class ModelTesterMixin:
    model_tester = None
    test_resize_embeddings = True
    has_attentions = True

    def test_forward(self):
        run()

    def test_training(self):
        if not self.model_tester.is_training:
            self.skipTest(reason="ModelTester is not configured to run training tests")
        run()

    def test_resize_tokens_embeddings(self):
        if not self.test_resize_embeddings:
            self.skipTest(reason="test_resize_embeddings is set to `False`")
        run()

    def test_attention_outputs(self):
        if not self.has_attentions:
            self.skipTest(reason="Model does not output attentions")
        run()
"""

GENERATION = """
class GenerationTesterMixin:
    def test_greedy_generate(self):
        run()
"""


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def verdicts(results: dict, test: str) -> dict[str, list[str]]:
    """The models one test ran, skipped and left undecided, from a scan's JSON."""
    entry = results[test]
    return {key: entry[f"models_{key}"] for key in ("ran", "skipped", "undecided")}


def add_package_markers(root: Path) -> Path:
    """An empty ``__init__.py`` in every folder under ``tests/`` that holds a Python file and has
    none, as in a real checkout (pytest's relative imports need them)."""
    for folder in {path.parent for path in (root / "tests").rglob("*.py")}:
        while folder != root and not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("")
            folder = folder.parent
    return root


@pytest.fixture
def make_repo(tmp_path):
    """``make_repo({"tests/models/x/test_modeling_x.py": "..."})`` -> the checkout's root (with the
    ``__init__.py`` files a real checkout has; ``packages=False`` leaves them out)."""

    def make(files: dict[str, str], *, with_common: bool = True, packages: bool = True) -> Path:
        base = {"tests/test_modeling_common.py": COMMON, "tests/generation/test_utils.py": GENERATION}
        root = write_tree(tmp_path / "repo", {**(base if with_common else {}), **files})
        return add_package_markers(root) if packages and (root / "tests").is_dir() else root

    return make


@pytest.fixture
def scan(tmp_path):
    """Scan a checkout with a private cache; returns the result mapping (errors in ``.errors``)."""
    from tests.support.scanning import scan_json

    def run(repo: Path, **options):
        options.setdefault("cache_dir", tmp_path / "cache")
        options.setdefault("jobs", 1)
        results, errors = scan_json(repo, **options)
        run.errors = errors
        return results

    return run
