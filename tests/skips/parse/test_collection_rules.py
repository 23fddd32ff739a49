"""What a class body and the statements after it make of a test, where the answer is not a plain
run or skip that pytest could confirm (those are in ``test_agreement_with_pytest.py``): a value the
scanner cannot read is undecided, and a lambda that does nothing is a no-op like ``pass``."""

from tests.skips.conftest import verdicts

HEADER = "import functools\nimport unittest\n\nfrom ...test_modeling_common import ModelTesterMixin\n\n\n"
BASES = "(ModelTesterMixin, unittest.TestCase)"


def test_what_a_class_binds_to_a_test_name(make_repo, scan):
    files = {
        "tests/models/unread_after/test_modeling_unread_after.py": (
            f"{HEADER}def helper(self):\n    run()\n\n\nclass UnreadModelTest{BASES}:\n    pass\n\n\n"
            "UnreadModelTest.test_forward = helper\n"
        ),
        "tests/models/unread_body/test_modeling_unread_body.py": (
            f"{HEADER}def helper(self):\n    run()\n\n\nclass UnreadBodyModelTest{BASES}:\n    test_forward = helper\n"
        ),
        "tests/models/noop_lambda/test_modeling_noop_lambda.py": (
            f"{HEADER}class NoopModelTest{BASES}:\n    test_forward = lambda self: None  # noqa: E731\n"
        ),
        "tests/models/cached/test_modeling_cached.py": (
            f"{HEADER}class CachedModelTest{BASES}:\n    @functools.cached_property\n    def test_forward(self):\n"
            "        return 1\n\n    @staticmethod\n    def test_training():\n        run()\n"
        ),
        "tests/models/no_why/test_modeling_no_why.py": (
            f"{HEADER}class NoWhyModelTest{BASES}:\n    __unittest_skip__ = True\n"
        ),
        "tests/models/unknown_skip/test_modeling_unknown_skip.py": (
            f"{HEADER}class UnknownSkipModelTest{BASES}:\n    __unittest_skip__ = not has_gpu()\n"
        ),
    }
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward") == {
        "ran": [],
        "skipped": ["no_why", "noop_lambda"],
        "undecided": ["unknown_skip", "unread_after", "unread_body"],
    }
    assert results["test_forward"]["models_not_applicable"] == ["cached"]
    assert results["test_forward"]["reasons_skipped"] == [
        "no_why: unconditional skip",
        "noop_lambda: no-op override",
    ]
    assert results["test_training"]["models_ran"] == ["cached"]  # a staticmethod is collected
    assert sorted(results["test_forward"]["conditions"]) == [
        "unknown_skip: undecided: __unittest_skip__ = not has_gpu()",
        "unread_after: undecided: test_forward is bound after the class to `helper`, which is not read",
        "unread_body: undecided: test_forward is bound in the class body to `helper`, which is not read",
    ]


def test_a_module_skip_under_a_condition_is_a_condition(make_repo, scan):
    files = {
        "tests/models/maybe/test_modeling_maybe.py": (
            "import os\nimport unittest\n\nimport pytest\n\nfrom ...test_modeling_common import ModelTesterMixin\n\n"
            'if not os.environ.get("HAS_X"):\n    pytest.skip("needs X", allow_module_level=True)\n\n\n'
            f"class MaybeModelTest{BASES}:\n    pass\n"
        )
    }
    results = scan(make_repo(files))
    assert results["test_forward"]["models_ran"] == ["maybe"]
    assert results["test_forward"]["conditions"] == [
        'maybe: if not os.environ.get("HAS_X"): the module may skip itself'
    ]


def test_a_folder_made_a_package_is_seen_by_a_warm_scan(make_repo, scan, tmp_path):
    """Whether a relative import works depends on the folders, not on the file: the snapshot of an
    earlier scan must not answer once an __init__.py is added."""
    files = {
        "tests/__init__.py": "",
        "tests/models/__init__.py": "",
        "tests/models/loose/test_modeling_loose.py": f"{HEADER}class LooseModelTest{BASES}:\n    pass\n",
    }
    repo = make_repo(files, packages=False)
    cache = tmp_path / "warm"
    results = scan(repo, cache_dir=cache)
    assert results["test_forward"]["models_not_applicable"] == ["loose"]
    assert scan.errors == [
        {
            "path": "tests/models/loose/test_modeling_loose.py",
            "line": 4,
            "message": "pytest cannot import this file: attempted relative import with no known parent package",
        }
    ]
    (repo / "tests/models/loose/__init__.py").write_text("")
    results = scan(repo, cache_dir=cache)
    assert (results["test_forward"]["models_ran"], scan.errors) == (["loose"], [])


def test_a_file_that_imports_a_broken_file_is_not_collected_and_says_why(make_repo, scan):
    """pytest imports a test file's imports first: one that does not parse, directly or through
    another test file, leaves the importing file uncollected (a collection error), generation's
    tests included. The errors file gives each such file its import line and the broken file."""
    generation = "from ...generation.test_utils import GenerationTesterMixin\n"
    files = {
        "tests/models/shared/test_modeling_shared.py": f"{HEADER}def check(self):\n    run(\n",
        "tests/models/user/test_modeling_user.py": (
            f"import unittest\n\n{generation}from ..shared.test_modeling_shared import check\n\n\n"
            "class UserModelTest(GenerationTesterMixin, unittest.TestCase):\n    pass\n"
        ),
        "tests/models/clean/test_modeling_clean.py": (
            f"import unittest\n\n{generation}\n\nclass CleanModelTest(GenerationTesterMixin, unittest.TestCase):\n"
            "    pass\n"
        ),
    }
    results = scan(make_repo(files))
    generation_test = next(name for name, entry in results.items() if entry["origin"] == "GenerationMixin")
    assert results[generation_test]["models_ran"] == ["clean"]
    broken = {
        "path": "tests/models/shared/test_modeling_shared.py",
        "line": 8,
        "message": "syntax error: '(' was never closed",
    }
    assert scan.errors == [
        broken,
        {
            "path": "tests/models/user/test_modeling_user.py",
            "line": 4,
            "message": "pytest cannot import this file: importing tests.models.shared.test_modeling_shared fails: "
            "tests/models/shared/test_modeling_shared.py, line 8: syntax error: '(' was never closed",
            "cause": broken,
        },
    ]


def test_what_pytest_collects_follows_the_checkouts_pytest_settings(make_repo, scan):
    """python_files and python_classes narrow what pytest collects; --import-mode=importlib imports
    a module with relative imports outside any package."""
    files = {
        "tests/models/suffix/modeling_suffix_test.py": f"{HEADER}class SuffixModelTest{BASES}:\n    pass\n",
        "tests/models/plain/test_modeling_plain.py": f"{HEADER}class CheckPlain(ModelTesterMixin):\n    pass\n",
        "tests/models/loose/test_modeling_loose.py": f"{HEADER}class LooseModelTest{BASES}:\n    pass\n",
    }
    repo = make_repo(files)
    (repo / "tests/models/loose/__init__.py").unlink()
    default = scan(repo)
    assert (default["test_forward"]["models_ran"], len(scan.errors)) == (["suffix"], 1)
    assert default["test_forward"]["models_not_applicable"] == ["loose", "plain"]
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npython_files = "test_*.py"\npython_classes = ["Check", "Test"]\n'
        'addopts = "-ra --import-mode=importlib"\n'
    )
    configured = scan(repo)
    assert (configured["test_forward"]["models_ran"], scan.errors) == (["loose", "plain"], [])
    (repo / "pyproject.toml").unlink()
    (repo / "setup.cfg").write_text("[tool:pytest]\npython_files = *_test.py\n")
    assert scan(repo)["test_forward"]["models_ran"] == ["suffix"]


def test_a_conftest_that_skips_or_drops_tests_is_named_in_a_note(make_repo, capsys):
    from model_debugging.skips.command import main as scan_main

    files = {
        "tests/models/plain/test_modeling_plain.py": f"{HEADER}class PlainModelTest{BASES}:\n    pass\n",
        "tests/conftest.py": (
            "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n"
            "        item.add_marker(pytest.mark.not_device_test)\n"
        ),
        "tests/models/conftest.py": 'collect_ignore = ["plain"]\n',
        "tests/models/plain/conftest.py": (
            "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
            '    items[:] = [item for item in items if "forward" not in item.name]\n'
        ),
        "tests/cli/conftest.py": 'import pytest\n\npytest.skip("not a folder of a model test", allow_module_level=True)\n',
    }
    repo = make_repo(files)
    assert scan_main(["--repo", str(repo), "--no_cache", "--output_dir", str(repo)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: tests/")]
    assert notes == [
        "note: tests/models/conftest.py:1 sets collect_ignore: conftest.py files are not modelled, the tests "
        "it skips or drops are read as if it did not",
        "note: tests/models/plain/conftest.py:4 drops collected tests in pytest_collection_modifyitems: "
        "conftest.py files are not modelled, the tests it skips or drops are read as if it did not",
    ]
