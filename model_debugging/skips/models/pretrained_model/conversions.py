"""``get_model_conversion_mapping(model)``: whether the model has weight conversions.

The library gives conversions by model type (``_build_checkpoint_conversion_mapping``): to the
model's own type, then to the type of every model it holds. The types of the held models are their
configuration classes' ``model_type``, unless the run's sub-configuration says otherwise: a dict
the tester passes may name another ``model_type`` (Qwen3.5's text part says ``qwen3_vl``), which
the instance then holds. The held models' configurations are not matched to the parts, so such a
part leaves the answer to the run. When the module tree cannot be followed with certainty, there
are none only if no model the instance may hold (also under a condition) is of a type that has
some, by its class or by a configuration of the run's it may be built with (every part, at any
depth, of a known class); a model that builds what cannot be followed leaves the answer to the run.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import ABSENT, Config, ModelInstance, Unknown
from model_debugging.skips.models.config.values import config_value
from model_debugging.skips.models.pretrained_model import modules
from model_debugging.skips.models.pretrained_model.model_configs import config_class
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.parse.library.read import CONVERSION_MAPPING
from model_debugging.skips.resolve.library import MISSING

# Parts of parts of parts: deeper configurations are not followed (then: may have conversions).
_DEPTH = 3


def conversions(facts: TestClassFacts, model: object, unknown: Unknown) -> object:
    """The conversions of ``model``: ``[unknown]`` when there is at least one, ``[]`` when none."""
    model_types = facts.library.mapping_keys(CONVERSION_MAPPING)
    if model_types is None or not isinstance(model, ModelInstance) or not isinstance(model.config, Config):
        return unknown
    config = model.config
    model_type = config_value(facts, config, "model_type", unknown, unknown)
    if not isinstance(model_type, str):
        return unknown
    if model_type in model_types:
        return [unknown]  # at least one conversion, whatever it is
    sub_configs = facts.library.attribute(config.info, "sub_configs") if config.info is not None else MISSING
    if _retyped_part(facts, config, sub_configs):
        return unknown
    parts = modules.modules_of(facts, model, unknown)
    if isinstance(parts, tuple):  # the types of the library's models it holds
        nested = [
            config_value(facts, part.config, "model_type", unknown, unknown)
            for part in parts[1:]
            if isinstance(part, ModelInstance) and isinstance(part.config, Config)
        ]
        if any(isinstance(item, str) and item in model_types for item in nested):
            return [unknown]
        if all(isinstance(item, str) for item in nested):
            return []
    return [] if _no_possible_type(facts, model, model_types) else unknown


def _no_possible_type(facts: TestClassFacts, model: ModelInstance, model_types: frozenset[str]) -> bool:
    """No model the instance may hold (counting those built only under a condition) has a type with
    conversions: neither the type its class declares nor that of a configuration it may be built
    with (the instance's own, already asked, or one of its parts, at any depth)."""
    possible = modules.possible_models_of(facts, model)
    if possible is None:
        return False
    library = facts.library
    # a model whose class declares no configuration class is of the type it is built with
    configs = [
        config for config in (config_class(library, info) for info in possible[1:]) if config is not None
    ]
    declared = [library.attribute(config, "model_type") for config in configs]
    given = _part_types(facts, model.config, _DEPTH)
    return given is not None and all(
        isinstance(item, str) and item not in model_types for item in (*declared, *given)
    )


def _part_types(facts: TestClassFacts, config: Config, depth: int) -> list[object] | None:
    """The model types of the parts of ``config`` and of their parts, as the run's instances hold
    them; None when a part's class is not known or the parts go deeper than ``depth``."""
    sub_configs = facts.library.attribute(config.info, "sub_configs") if config.info is not None else None
    if sub_configs in ({}, MISSING):
        return []
    if not isinstance(sub_configs, dict) or depth == 0:
        return None
    found: list[object] = []
    for name in sub_configs:
        part = config_value(facts, config, name, Unknown(name), ABSENT)
        if part is None:
            continue  # a part left None builds no model
        inner = _part_types(facts, part, depth - 1) if isinstance(part, Config) else None
        if inner is None:
            return None
        found += [config_value(facts, part, "model_type", Unknown(name), None), *inner]
    return found


def _retyped_part(facts: TestClassFacts, config: Config, sub_configs: object) -> bool:
    """A sub-configuration whose ``model_type`` the run sets to another than its class's, or may."""
    for name in sub_configs if isinstance(sub_configs, dict) else ():
        part = config_value(facts, config, name, Unknown(name), ABSENT)
        if not isinstance(part, Config) or part.info is None:
            continue
        given = dict(part.overrides).get("model_type", ABSENT)
        if given is not ABSENT and given != facts.library.attribute(part.info, "model_type"):
            return True
    return False
