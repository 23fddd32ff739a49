"""Methods of a configuration the generation tests call: ``get_text_config`` and ``to_dict``.

``get_text_config(decoder=..., encoder=...)`` returns the one sub-configuration found under the
names its arguments allow (``decoder``, ``generator``, ``text_config`` on the decoder side,
``text_encoder`` on the encoder side, all of them when both or neither argument is set), the
configuration itself when there is none, and fails when there are several. A legacy flat
encoder-decoder configuration asked for one side is a renamed copy: left to the run. An override
is read when it only returns a part of the configuration, or that part's own ``get_text_config``.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import ABSENT, Config, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS, is_configuration
from model_debugging.skips.models.config.values import config_value
from model_debugging.skips.models.generation_cache.model_outputs import method_definition
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.records.library import LibraryClass

CONFIG_METHODS = frozenset({"get_text_config", "to_dict"})
_DECODER_NAMES = ("decoder", "generator", "text_config")
_ENCODER_NAMES = ("text_encoder",)
# Class-level names of a configuration that are not per-instance values (never in ``to_dict``
# beside ``model_type``, which it adds itself).
_CLASS_ONLY = frozenset(
    {
        "attribute_map", "sub_configs", "base_config_key", "keys_to_ignore_at_inference",
        "base_model_tp_plan", "base_model_pp_plan", "base_model_ep_plan", "has_no_defaults_at_init",
    }
)  # fmt: skip


def call_config_method(
    facts: TestClassFacts, config: Config, name: str, keywords: dict[str, object], unknown: Unknown
) -> object:
    """``config.<name>(**keywords)`` for the methods read here; ``unknown`` for any other."""
    if name == "get_text_config":
        return text_config(facts, config, keywords.get("decoder"), keywords.get("encoder"), unknown)
    if name == "to_dict" and not keywords:
        return config_keys(facts, config, unknown)
    return unknown


def text_config(
    facts: TestClassFacts, config: Config, decoder: object, encoder: object, unknown: Unknown
) -> object:
    """``config.get_text_config(decoder=decoder, encoder=encoder)``, or ``unknown``."""
    library, info = facts.library, config.info
    if (
        info is None
        or not isinstance(decoder, (bool, type(None)))
        or not isinstance(encoder, (bool, type(None)))
    ):
        return unknown
    owner = library.defines(info, "get_text_config")
    if owner is None:
        return unknown  # the base class is not in the library read
    if owner.name not in BASE_CONFIGS:
        return _overridden_text_config(facts, config, owner, decoder, encoder, unknown)
    both = decoder == encoder
    names = _ENCODER_NAMES + _DECODER_NAMES if both else (_DECODER_NAMES if decoder else _ENCODER_NAMES)
    found = []
    for name in names:
        value = config_value(facts, config, name, unknown, ABSENT)
        if value is ABSENT or value is None:
            continue
        if isinstance(value, Unknown) and not value.exists:
            return unknown
        found.append(value)
    if len(found) > 1:
        return unknown  # the library raises: the test fails, which this module does not follow
    if found:
        return found[0]
    if not both:
        flat = config_value(facts, config, "is_encoder_decoder", unknown, ABSENT)
        if flat is True:
            return _one_side(facts, config, "decoder" if decoder else "encoder", unknown)
        if flat is not False:
            return unknown
    return config


def _overridden_text_config(
    facts: TestClassFacts,
    config: Config,
    owner: LibraryClass,
    decoder: object,
    encoder: object,
    unknown: Unknown,
) -> object:
    """An override of ``get_text_config`` whose body is one ``return self.<part>`` (Dia's decoder
    part), or ``return self.<part>.get_text_config(*args, **kwargs)`` (ColQwen2's VLM part, asked in
    turn with the same arguments); ``unknown`` for any other body."""
    definition = method_definition(facts.library, owner, "get_text_config")
    body = definition.body if definition is not None else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    returned = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    delegated = (
        isinstance(returned, ast.Call)
        and isinstance(returned.func, ast.Attribute)
        and returned.func.attr == "get_text_config"
        and _passes_all_arguments(definition, returned)
    )
    part = returned.func.value if delegated else returned
    if not (isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self"):
        return unknown
    value = config_value(facts, config, part.attr, unknown, ABSENT)
    if not delegated:
        return unknown if value is ABSENT else value
    return text_config(facts, value, decoder, encoder, unknown) if isinstance(value, Config) else unknown


def _passes_all_arguments(definition: ast.FunctionDef, call: ast.Call) -> bool:
    """``def m(self, *args, **kwargs): ... m(*args, **kwargs)``: the call hands on whatever was given."""
    arguments = definition.args
    if arguments.vararg is None or arguments.kwarg is None or len(arguments.args) != 1:
        return False
    return (
        len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and ast.unparse(call.args[0].value) == arguments.vararg.arg
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and ast.unparse(call.keywords[0].value) == arguments.kwarg.arg
    )


def _one_side(facts: TestClassFacts, config: Config, prefix: str, unknown: Unknown) -> object:
    """A flat encoder-decoder configuration seen from one side: a copy where ``<prefix>_x`` is
    renamed ``x`` (``_layers`` and ``_attention_heads`` to the ``num_*`` names, through the
    class's ``attribute_map``)."""
    keys = config_keys(facts, config, unknown)
    if not isinstance(keys, dict):
        return unknown
    aliases = facts.library.attribute(config.info, "attribute_map")
    aliases = aliases if isinstance(aliases, dict) else {}
    renamed = config
    for key in keys:
        if not key.startswith(f"{prefix}_"):
            continue
        new_key = {
            f"{prefix}_layers": "num_hidden_layers",
            f"{prefix}_attention_heads": "num_attention_heads",
        }.get(key, key[len(prefix) + 1 :])
        new_key = aliases.get(new_key, new_key)
        renamed = renamed.with_value(new_key, config_value(facts, config, key, unknown, ABSENT))
        renamed = renamed.with_value(key, ABSENT)  # moved: the copy no longer has it
    return renamed


def config_keys(facts: TestClassFacts, config: Config, unknown: Unknown) -> object:
    """``config.to_dict()``: the names it holds (values left to the run), or ``unknown`` when
    what the tester passes to the configuration is not known."""
    library, info = facts.library, config.info
    if info is None or facts.passed_config_names is None or not is_configuration(facts.library, info):
        return unknown
    names: dict[str, object] = {"model_type": unknown}
    for ancestor in library.mro(info):
        for key, _ in (*ancestor.attributes, *ancestor.init_defaults):
            if key not in _CLASS_ONLY and not key.startswith("_"):
                names.setdefault(key, unknown)
        for key in ancestor.assigned_in_init:
            if not key.startswith("_"):
                names.setdefault(key, unknown)
    for key in (*facts.passed_config_names, *(key for key, _ in config.overrides)):
        if not key.startswith("_"):
            names.setdefault(key, unknown)
    return names
