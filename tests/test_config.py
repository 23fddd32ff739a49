import logging

import pytest

from model_debugging.config import ConfigError, Field, load_yaml, validate_mapping

FIELDS = {"models_dir": Field(str, required=True), "origins": Field(dict, default={}, item_types=str)}


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: 1\nb: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load_yaml(path)
    assert str(path) in str(info.value)
    assert info.value.line is not None


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml(tmp_path / "nope.yaml")


def test_wrong_type_names_key_and_value(tmp_path):
    with pytest.raises(ConfigError, match=r"key 'origins.common': expected str, got int 3"):
        validate_mapping({"models_dir": "x", "origins": {"common": 3}}, FIELDS, path="c.yaml")


def test_missing_required_key():
    with pytest.raises(ConfigError, match="key 'models_dir': missing required key"):
        validate_mapping({}, FIELDS, path="c.yaml")


def test_defaults_and_unknown_key_warning(caplog):
    with caplog.at_level(logging.WARNING):
        result = validate_mapping({"models_dir": "m", "typo": 1}, FIELDS, path="c.yaml")
    assert result == {"models_dir": "m", "origins": {}}
    assert "unknown key 'typo'" in caplog.text


def test_an_unknown_key_close_to_a_known_one_names_it(caplog):
    """`prcheck:` for `pr_check:` would leave the user's settings unused, with only a warning."""
    with caplog.at_level(logging.WARNING):
        validate_mapping({"models_dir": "m", "origin": {}}, FIELDS, path="c.yaml")
    assert "c.yaml: unknown key 'origin' ignored (did you mean 'origins'?)" in caplog.text


SCAN_SETTINGS = """\
# edited from `model-debugging scan --print_default_config`
common_test_files:
  - path: tests/test_modeling_common.py
    origin: common
  - path: tests/generation/test_utils.py
    origin: {origin}
{models_dir}: tests/models
test_file_pattern: "*modeling*.py"
"""


def scan_settings_error(tmp_path, origin: str = "GenerationMixin", models_dir: str = "models_dir") -> str:
    from model_debugging.skips.source.settings import load_settings

    path = tmp_path / "scan.yaml"
    path.write_text(SCAN_SETTINGS.format(origin=origin, models_dir=models_dir), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    return str(info.value).removeprefix(f"{path}")


def test_a_wrong_value_in_a_settings_file_names_its_line(tmp_path):
    assert scan_settings_error(tmp_path, origin="[a, b]") == (
        ":6: key 'common_test_files[1].origin': expected str, got list ['a', 'b']"
    )


def test_a_misspelt_required_key_is_named_with_its_line(tmp_path):
    """`model_dir:` for `models_dir:` said only that models_dir was missing."""
    assert scan_settings_error(tmp_path, models_dir="model_dir") == (
        ":7: key 'models_dir': missing required key (found 'model_dir': a typo?)"
    )


def test_a_key_given_twice_is_an_error_naming_both_lines(tmp_path):
    """YAML keeps the second silently: the user edits the first and nothing changes."""
    path = tmp_path / "skip_report.yaml"
    path.write_text("report:\n  changed_rows: 5\n  headline_rows: 3\n  changed_rows: 6\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_yaml(path)
    assert str(info.value) == f"{path}:4: key 'report.changed_rows': given twice (lines 2 and 4); keep one"


def test_an_unknown_key_warning_names_its_line(tmp_path, caplog):
    path = tmp_path / "c.yaml"
    path.write_text("models_dir: m\n\norigin: {}\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        validate_mapping(load_yaml(path), FIELDS, path=path)
    assert f"{path}:3: unknown key 'origin' ignored (did you mean 'origins'?)" in caplog.text
