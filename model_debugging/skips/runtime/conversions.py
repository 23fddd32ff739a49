"""``get_model_conversion_mapping(model)``: whether the model has weight conversions.

The library gives conversions by model type (``_build_checkpoint_conversion_mapping``): to the
model's own type, then to the type of every model it holds. The types of the held models are their
configuration classes' ``model_type``, unless the run's sub-configuration says otherwise: a dict
the tester passes may name another ``model_type`` (Qwen3.5's text part says ``qwen3_vl``), which
the instance then holds. The held models' configurations are not matched to the parts, so such a
part leaves the answer to the run.
"""

from __future__ import annotations

from model_debugging.skips.library.index import MISSING
from model_debugging.skips.library.read import CONVERSION_MAPPING
from model_debugging.skips.runtime import modules
from model_debugging.skips.runtime.attributes import config_value
from model_debugging.skips.runtime.context import ABSENT, TestClassFacts
from model_debugging.skips.runtime.values import Config, ModelInstance, Unknown


def conversions(facts: TestClassFacts, model: object, unknown: Unknown) -> object:
    """The conversions of ``model``: ``[unknown]`` when there is at least one, ``[]`` when none; a
    model without sub-configurations has no other types among its parts."""
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
    return [] if sub_configs in ({}, MISSING) else unknown


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
