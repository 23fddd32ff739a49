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
