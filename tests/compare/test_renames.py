from pathlib import Path

import pytest

from model_debugging.compare.renames import (
    RenameRule,
    RenameRuleError,
    apply_rename_rules,
    coerce_rename_rules,
    command_line_rules,
    load_rename_rules,
    parse_rename_rule,
)
from model_debugging.config import ConfigError


def test_rule_string_rewrites_paths_with_groups():
    rule = parse_rename_rule(r"transformer\.h\.(\d+)=model.layers.\1")
    assert rule.apply("transformer.h.11.attn") == "model.layers.11.attn"
    assert str(rule) == r"transformer\.h\.(\d+)=model.layers.\1"


def test_rule_string_splits_at_the_last_equals_sign():
    rule = parse_rename_rule(r"attn(?=\.c_proj)=self_attn")
    assert rule.apply("h.0.attn.c_proj") == "h.0.self_attn.c_proj"
    assert rule.apply("h.0.attn") == "h.0.attn"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no_separator", "not of the form 'REGEX=REPLACEMENT'"),
        ("=x", "not of the form"),
        ("a(=b", r"rename rule 'a\(=b': invalid regular expression 'a\('"),
        (r"a=\1", r"invalid replacement '\\\\1'"),
    ],
)
def test_bad_rule_strings_are_clear_errors(text, message):
    with pytest.raises(RenameRuleError, match=message):
        parse_rename_rule(text)


def test_rules_apply_in_order():
    rules = coerce_rename_rules(["a=b", "b=c"])
    assert apply_rename_rules(rules, "a") == "c"


def test_coerce_accepts_a_mapping_a_string_and_rules():
    rule = RenameRule.compile("x", "y")
    assert [str(r) for r in coerce_rename_rules({"a": "b"})] == ["a=b"]
    assert [str(r) for r in coerce_rename_rules("a=b")] == ["a=b"]
    assert coerce_rename_rules([rule]) == (rule,)
    assert coerce_rename_rules(None) == ()


def test_yaml_file(tmp_path):
    path = tmp_path / "renames.yaml"
    path.write_text("renames:\n  - pattern: 'h\\.(\\d+)'\n    replacement: 'layers.\\1'\n")
    assert [rule.apply("h.3") for rule in load_rename_rules(path)] == ["layers.3"]
    assert [rule.apply("h.3") for rule in coerce_rename_rules(path)] == ["layers.3"]


@pytest.mark.parametrize("name", ["renames.yaml", "renames.yml", "RENAMES.YAML"])
def test_a_string_ending_in_yaml_is_a_rules_file_like_a_path(tmp_path, monkeypatch, name):
    (tmp_path / name).write_text("renames:\n  - pattern: h\n    replacement: layers\n")
    monkeypatch.chdir(tmp_path)
    assert coerce_rename_rules(name) == coerce_rename_rules(tmp_path / name)
    assert [str(rule) for rule in coerce_rename_rules([name, "layers=blocks"])] == [
        "h=layers",
        "layers=blocks",
    ]


def test_a_missing_rules_file_is_an_error_naming_it_never_a_rule(tmp_path):
    with pytest.raises(ConfigError, match="missing.yaml: file not found"):
        coerce_rename_rules(str(tmp_path / "missing.yaml"))


def test_a_rule_whose_replacement_ends_in_yaml_is_given_as_a_mapping():
    assert [str(rule) for rule in coerce_rename_rules({"config": "config.yaml"})] == ["config=config.yaml"]


def test_the_command_line_takes_rules_files_with_config_only(tmp_path):
    with pytest.raises(
        RenameRuleError, match="--rename 'renames.yaml' names a rules file: give rules files with --config"
    ):
        command_line_rules(None, ["renames.yaml"])


def test_shipped_example_config_maps_gpt2_paths():
    rules = load_rename_rules(Path(__file__).parents[2] / "examples" / "compare_renames.yaml")
    assert apply_rename_rules(rules, "transformer.h.3.mlp.c_fc") == "model.layers.3.mlp.up_proj"
    assert apply_rename_rules(rules, "transformer.h.3.attn.c_proj") == "model.layers.3.self_attn.o_proj"


@pytest.mark.parametrize(
    ("content", "key", "message"),
    [
        ("{}", "renames", "missing required key"),
        ("renames: x", "renames", "expected list"),
        (
            "renames:\n  - pattern: 'a('\n    replacement: b\n",
            "renames[0].pattern",
            "invalid regular expression 'a\\('",
        ),
        (
            "renames:\n  - pattern: a\n    replacement: '\\2'\n",
            "renames[0].replacement",
            "invalid replacement",
        ),
        ("renames:\n  - pattern: a\n", "renames[0].replacement", "missing required key"),
        ("renames:\n  - pattern: 3\n    replacement: b\n", "renames[0].pattern", "expected str, got int 3"),
    ],
)
def test_bad_yaml_names_file_key_and_value(tmp_path, content, key, message):
    path = tmp_path / "renames.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as caught:
        load_rename_rules(path)
    assert caught.value.path == str(path)
    assert caught.value.key == key
