import pytest

from model_debugging.config import ConfigError
from model_debugging.skips.report.settings import (
    BUILT_IN_CONFIG,
    PRCheckSettings,
    ReportSettings,
    load_settings,
)


def test_the_built_in_config_holds_the_defaults():
    assert load_settings() == load_settings(BUILT_IN_CONFIG) == (ReportSettings(), PRCheckSettings())


def test_partial_config_keeps_other_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("pr_check:\n  min_skipped_share: 0.25\n", encoding="utf-8")
    report, pr_check = load_settings(path)
    assert report == ReportSettings() and pr_check == PRCheckSettings(min_skipped_share=0.25)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("report:\n  headline_rows: many\n", "key 'report.headline_rows': expected int, got str 'many'"),
        ("report:\n  changed_rows: -1\n", "key 'report.changed_rows': must be a row count >= 0, got -1"),
        (
            "pr_check:\n  min_skipped_share: 1.5\n",
            "key 'pr_check.min_skipped_share': must be a share between 0 and 1",
        ),
        ("pr_check: [1]\n", "key 'pr_check': expected dict, got list"),
        ("report:\n  headline_rows: [\n", "invalid YAML"),
    ],
)
def test_errors_name_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_settings(path)
    assert str(error.value).startswith(str(path)) and message in str(error.value)
