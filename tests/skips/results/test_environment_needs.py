"""Tests that only run on an accelerator are listed apart, in the scan summary and the trend report,
from a checkout whose common test carries transformers' own decorators."""

import json

from model_debugging.skips.command import main
from model_debugging.skips.report.scan_results import load_scan_results
from model_debugging.skips.report.trend import compute_trend
from model_debugging.skips.results.environment_needs import needs_accelerator, shared_requirements

COMMON = """
import unittest
from transformers.testing_utils import require_flash_attn, require_non_hpu, require_torch_gpu, slow


class ModelTesterMixin:
    supports_flash = True

    @require_torch_gpu
    @require_flash_attn
    def test_flash_attn_2_inference(self):
        if not self.supports_flash:
            self.skipTest(reason="no flash attention")
        run()

    @require_non_hpu
    @slow
    def test_save_load(self):
        if not self.supports_flash:
            self.skipTest(reason="no saving either")
        run()
"""
MODEL = """
import unittest
from ...test_modeling_common import ModelTesterMixin

class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    supports_flash = {flag}
"""


def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name, flag in (("Llama", True), ("Bert", False), ("Gpt", True)):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL.format(
            name=name, flag=flag
        )
    return make_repo(files, with_common=False)


def test_summary_lists_tests_that_need_an_accelerator_apart(make_repo, tmp_path, capsys):
    repo = checkout(make_repo)
    assert main(["--repo", str(repo), "--output_dir", str(tmp_path / "out"), "--no_cache", "--summary"]) == 0
    printed = capsys.readouterr().out
    any_machine, _, accelerator = printed.partition("Most skipped common tests that need an accelerator")
    assert "test_save_load" in any_machine and "test_flash_attn_2_inference" not in any_machine
    row = next(line for line in accelerator.splitlines() if line.startswith("test_flash_attn_2_inference"))
    assert row.split()[1:4] == ["common", "2", "1"]
    assert row.endswith("flash_attn, torch_gpu")
    assert next(line for line in any_machine.splitlines() if line.startswith("test_save_load")).endswith(
        "non_hpu, slow"
    )


def test_trend_headline_lists_tests_that_need_an_accelerator_apart(make_repo, tmp_path, capsys):
    repo = checkout(make_repo)
    assert main(["--repo", str(repo), "--output_dir", str(tmp_path / "out"), "--no_cache"]) == 0
    current = load_scan_results(tmp_path / "out" / "all_tests_scan_result.json")
    trend = compute_trend(None, current)
    assert trend.most_skipped["test"].tolist() == ["test_save_load"]
    assert trend.most_skipped_on_accelerators.to_dict("records") == [
        {
            "test": "test_flash_attn_2_inference",
            "origin": "common",
            "skipped": "1/3",
            "undecided": 0,
            "skipped_proportion": 1 / 3,
            "needs": "flash_attn, torch_gpu",
        }
    ]


def test_a_result_without_conditions_has_no_needs(tmp_path):
    path = tmp_path / "upstream.json"
    entry = {"origin": "common", "models_ran": ["bert"], "models_skipped": [], "skipped_proportion": 0.0}
    path.write_text(json.dumps({"test_x": {**entry, "reasons_skipped": []}}))
    trend = compute_trend(None, load_scan_results(path))
    assert trend.most_skipped["needs"].tolist() == [""]
    assert trend.most_skipped_on_accelerators.empty


def test_only_requirements_every_running_model_has_count():
    conditions = ["a: require_torch_gpu", "a: slow", "b: slow", "b: if flag: skip", "c: require_torch_gpu"]
    assert shared_requirements(conditions, ["a", "b"]) == ("slow",)
    assert shared_requirements(conditions, ["a"]) == ("require_torch_gpu", "slow")
    assert shared_requirements(conditions, []) == ()
    assert needs_accelerator(("require_torch_multi_accelerator",))
    assert not needs_accelerator(("require_non_hpu", "slow", 'require_torch_greater_or_equal("2.6")'))
