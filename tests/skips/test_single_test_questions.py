"""`scan` asked what a maintainer asks, on a whole checkout: a test of an integration class of a
common file (no model includes it), a test of another file (tests/utils/), whose name is close to
no common test, a typo; and `--repo` given a folder inside the checkout."""

import pytest

from model_debugging.skips.command import main as scan

from .report.git_trees import build_whole_tree, write


@pytest.fixture
def whole_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = build_whole_tree(tmp_path / "transformers")
    write(
        repo,
        {
            "tests/utils/test_modeling_utils.py": "class ModelUtilsTest:\n    def test_model_from_pretrained(self):\n        pass\n"
        },
    )
    return repo


def ask(repo, name, tmp_path, capsys) -> tuple[int, str, str]:
    code = scan(["--repo", str(repo), "--test_method_name", name, "--output_dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("scanned_before", [False, True], ids=["cold", "answered from the last scan"])
def test_a_test_of_another_file_says_where_common_tests_are_looked_for(
    whole_tree, tmp_path, capsys, scanned_before
):
    if scanned_before:
        assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "out")]) == 0
    code, _, err = ask(whole_tree, "test_model_from_pretrained", tmp_path, capsys)
    assert code == 2
    assert err.splitlines()[-1] == (
        "model-debugging scan: error: unknown common test 'test_model_from_pretrained': no test of that name in "
        "tests/test_modeling_common.py, tests/generation/test_utils.py (common_test_files of the settings)"
    )
    _, _, err = ask(whole_tree, "test_greedy_generat", tmp_path, capsys)  # a typo: the closest names
    assert err.splitlines()[-1].endswith(
        "unknown common test 'test_greedy_generat'; did you mean test_greedy_generate?"
    )


def test_an_integration_test_of_a_common_file_applies_to_no_model(whole_tree, tmp_path, capsys):
    code, out, _ = ask(whole_tree, "test_stopping_criteria", tmp_path, capsys)
    assert code == 0
    assert "Not applicable: 3 models (none of their test classes includes the class defining it)" in out


@pytest.mark.parametrize("inside", ["src", "tests", "tests/models"])
def test_a_folder_inside_the_checkout_names_the_root(whole_tree, tmp_path, capsys, inside):
    code, _, err = ask(whole_tree / inside, "test_forward", tmp_path, capsys)
    assert code == 2
    assert err.splitlines()[-1].endswith(f"; pass --repo {whole_tree.resolve()}, the checkout's root")


def test_the_skip_reasons_follow_the_skipped_count_not_the_not_applicable_one(whole_tree, tmp_path, capsys):
    # printed after "Not applicable: N models", the reasons read as the models the test does not apply to
    write(
        whole_tree,
        {
            "tests/models/delta/__init__.py": "",
            "tests/models/delta/test_modeling_delta.py": (
                "import unittest\n\n\nclass DeltaTest(unittest.TestCase):\n    def test_other(self):\n        pass\n"
            ),
        },
    )
    code, out, _ = ask(whole_tree, "test_sdpa", tmp_path, capsys)
    assert code == 0
    assert out.split("== test_sdpa ==\n")[1].splitlines()[:4] == [
        "Ran     : 2/3",
        "Skipped : 1/3 (33.3%)",
        " - beta: BetaModel does not support SDPA",
        "Not applicable: 1 models (none of their test classes includes the class defining it)",
    ]
