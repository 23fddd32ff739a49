"""The command line: files written, what is printed, exit codes, errors that say what is wrong."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model_debugging.skips.command import main
from model_debugging.skips.parse import test_file

PROJECT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT / "utils" / "scan_skipped_tests.py"
MODEL = """
import unittest
from ...test_modeling_common import ModelTesterMixin

class NoAttnModelTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
"""


@pytest.fixture
def repo(make_repo):
    return make_repo({"tests/models/noattn/test_modeling_noattn.py": MODEL})


def test_full_scan_writes_result_and_errors_files(repo, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--repo", str(repo), "--output_dir", str(out), "--cache_dir", str(tmp_path / "c")]) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert printed.startswith("Scanning 1 model test files...")
    # not a terminal: one line per phase, with its count and time
    phases = [line.split(":")[0] for line in captured.err.splitlines() if not line.startswith("note:")]
    assert phases == ["parsing test files", "reading the library", "evaluating models"]
    assert "evaluating models: 1 model in " in captured.err
    assert str((out / "all_tests_scan_result.json").resolve()) in printed
    result = json.loads((out / "all_tests_scan_result.json").read_text())
    assert list(result["test_attention_outputs"])[:5] == [
        "origin",
        "models_ran",
        "models_skipped",
        "skipped_proportion",
        "reasons_skipped",
    ]
    assert result["test_attention_outputs"]["reasons_skipped"] == ["noattn: Model does not output attentions"]
    assert json.loads((out / "all_tests_scan_errors.json").read_text()) == []


def test_a_broken_common_file_is_one_error_line_not_one_per_model(make_repo, tmp_path, capsys):
    """A common file left half-edited: pytest can import no model test file. The scan says so in two
    lines (the broken file, then the files importing it), and the errors file lists every one."""
    repo = make_repo({f"tests/models/{name}/test_modeling_{name}.py": MODEL for name in ("a", "b", "c", "d")})
    common = repo / "tests/test_modeling_common.py"
    common.write_text(common.read_text() + "\ndef broken(:\n")
    out = tmp_path / "out"
    assert main(["--repo", str(repo), "--output_dir", str(out), "--cache_dir", str(tmp_path / "c")]) == 0
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "tests/" in line]
    line = len(common.read_text().splitlines())
    assert errors == [
        f"tests/test_modeling_common.py:{line}: syntax error: invalid syntax",
        f"4 file(s) import tests/test_modeling_common.py (line {line}), directly or not, so pytest cannot "
        "import them either: tests/models/a/test_modeling_a.py, tests/models/b/test_modeling_b.py, "
        "tests/models/c/test_modeling_c.py and 1 more",
    ]
    assert "5 file(s) could not be parsed or imported; see all_tests_scan_errors.json" in captured.out
    listed = json.loads((out / "all_tests_scan_errors.json").read_text())
    assert [error["path"] for error in listed] == [
        *(f"tests/models/{name}/test_modeling_{name}.py" for name in "abcd"),
        "tests/test_modeling_common.py",
    ]


def test_summary_table_lists_the_most_skipped_tests(repo, tmp_path, capsys):
    assert main(["--repo", str(repo), "--output_dir", str(tmp_path), "--no_cache"]) == 0
    assert "Most skipped common tests" not in capsys.readouterr().out  # not a terminal: no table
    assert main(["--repo", str(repo), "--output_dir", str(tmp_path), "--no_cache", "--summary"]) == 0
    table = capsys.readouterr().out.split("Most skipped common tests")[1].splitlines()
    assert table[2].split() == [
        "test",
        "origin",
        "ran",
        "skipped",
        "undecided",
        "n/a",
        "skipped",
        "%",
        "needs",
    ]
    assert table[4].split()[:5] == ["test_attention_outputs", "common", "0", "1", "0"]


def test_single_test_prints_a_summary_and_writes_scan_file(repo, tmp_path, capsys):
    code = main(
        [
            "--repo",
            str(repo),
            "--output_dir",
            str(tmp_path),
            "--test_method_name",
            "test_attention_outputs",
            "--no_cache",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "== test_attention_outputs ==" in printed
    assert "Ran     : 0/1" in printed and "Skipped : 1/1 (100.0%)" in printed
    assert " - noattn: Model does not output attentions" in printed
    entry = json.loads((tmp_path / "scan_test_attention_outputs.json").read_text())
    assert entry["models_skipped"] == ["noattn"]


def test_unknown_test_name_suggests_close_names_before_parsing_model_files(
    repo, tmp_path, capsys, monkeypatch
):
    # a typo fails once the common files are parsed, not after every model test file of the checkout
    parsed = []
    parse_bytes = test_file.parse_bytes
    monkeypatch.setattr(
        test_file,
        "parse_bytes",
        lambda data, path, *rest: parsed.append(path) or parse_bytes(data, path, *rest),
    )
    args = ["--repo", str(repo), "--output_dir", str(tmp_path), "--no_cache", "--jobs", "1"]
    code = main([*args, "--test_method_name", "test_trainin"])
    assert code == 2
    assert "unknown common test 'test_trainin'; did you mean test_training" in capsys.readouterr().err
    assert sorted(parsed) == ["tests/generation/test_utils.py", "tests/test_modeling_common.py"]
    parsed.clear()  # a known name goes on to the model files
    assert main([*args, "--test_method_name", "test_training"]) == 0
    assert "tests/models/noattn/test_modeling_noattn.py" in parsed


def test_not_a_checkout_is_a_one_line_error(tmp_path, capsys):
    # unusable input: exit 2, like every command
    assert main(["--repo", str(tmp_path), "--output_dir", str(tmp_path), "--no_cache"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "tests/test_modeling_common.py is missing" in err and str(tmp_path) in err


def test_invalid_config_names_the_key(repo, tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text(
        "common_test_files:\n  - path: tests/test_modeling_common.py\n"
        "models_dir: tests/models\ntest_file_pattern: test_modeling_*.py\n"
    )
    assert main(["--repo", str(repo), "--config", str(config), "--no_cache"]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "common_test_files[0].origin" in err


def test_config_changes_origins(repo, tmp_path):
    config = tmp_path / "scan.yaml"
    config.write_text(
        "common_test_files:\n  - path: tests/test_modeling_common.py\n    origin: mixin\n"
        "models_dir: tests/models\ntest_file_pattern: test_modeling_*.py\n"
    )
    assert (
        main(["--repo", str(repo), "--config", str(config), "--output_dir", str(tmp_path), "--no_cache"]) == 0
    )
    result = json.loads((tmp_path / "all_tests_scan_result.json").read_text())
    assert {entry["origin"] for entry in result.values()} == {"mixin"}


def test_script_runs_from_the_checkout_without_importing_torch(repo, tmp_path):
    probe = (
        "import runpy, sys; sys.argv = ['scan', '--output_dir', sys.argv[1], '--no_cache'];"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='not_main');"
        "from model_debugging.skips.command import main; code = main(sys.argv[1:]);"
        "assert 'torch' not in sys.modules and 'libcst' in sys.modules; print('exit', code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "out")],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "exit 0" in done.stdout
    assert (tmp_path / "out" / "all_tests_scan_result.json").is_file()


def test_script_help_documents_exit_codes():
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "exit codes:" in done.stdout and "--test_method_name" in done.stdout


def test_demo_tree_shows_every_pattern(tmp_path):
    from tests.support.scanning import scan_json

    results, errors = scan_json(PROJECT / "examples" / "mini_transformers", use_cache=False, jobs=1)
    assert [error["path"] for error in errors] == ["tests/models/tiny_broken/test_modeling_tiny_broken.py"]
    kinds = {skip["kind"] for entry in results.values() for skip in entry["skips"]}
    assert kinds == {"decorator", "body", "flag_guard", "noop_override", "class_decorator"}
    assert "tiny_tokenizer" in results["test_forward"]["models_not_applicable"]
    assert results["test_resize_tokens_embeddings"]["models_ran"] == ["tiny_distilbert", "tiny_llama"]


RANKED_COMMON = """
import unittest


class ModelTesterMixin:
    def test_x(self):
        self.assertTrue(True)


class RarelyUsedMixin:
    def test_y(self):
        self.assertTrue(True)
"""


def ranked_model(name: str, mixins: str, skips: tuple[str, ...]) -> str:
    methods = "".join(f'\n    @unittest.skip("no")\n    def {test}(self):\n        pass\n' for test in skips)
    return (
        f"import unittest\nfrom ...test_modeling_common import {mixins}\n\n"
        f"class {name.capitalize()}ModelTest({mixins}, unittest.TestCase):\n" + (methods or "    pass\n")
    )


def test_summary_ranks_tests_by_share_of_the_models_decided(make_repo, tmp_path, capsys):
    """As the trend report does: test_y, skipped by the one model it applies to (100%), comes before
    test_x, skipped by two of five (40%)."""
    models = {
        "a": ("ModelTesterMixin", ("test_x",)),
        "b": ("ModelTesterMixin", ("test_x",)),
        "c": ("ModelTesterMixin", ()),
        "d": ("ModelTesterMixin", ()),
        "e": ("ModelTesterMixin, RarelyUsedMixin", ("test_y",)),
    }
    repo = make_repo(
        {
            "tests/test_modeling_common.py": RANKED_COMMON,
            **{
                f"tests/models/{name}/test_modeling_{name}.py": ranked_model(name, mixins, skips)
                for name, (mixins, skips) in models.items()
            },
        },
        with_common=False,
    )
    assert main(["--repo", str(repo), "--output_dir", str(tmp_path), "--no_cache", "--summary"]) == 0
    table = capsys.readouterr().out.split("Most skipped common tests")[1].splitlines()
    assert [line.split()[0] for line in table[4:6]] == ["test_y", "test_x"]
