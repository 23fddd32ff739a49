"""``"past_key_values" in model(...)`` for a model whose cache is kept by a model it builds.

A composite model (``LlavaForConditionalGeneration``) builds its language model with
``AutoModel.from_config(config.text_config)`` and returns that model's cache. The cache is there
exactly when ``use_cache`` is true for the model that keeps it, when: the composite's file neither
builds a cache whatever ``use_cache`` says nor sets ``use_cache`` itself; every part it builds that
way has a known class (the auto class's mapping entry for the part's model type), exactly one of
them takes ``past_key_values``, and that one's file gates its cache on ``use_cache`` and builds no
model of its own from a configuration. Whether the composite hands the ``use_cache`` it was given
on is not read, so the answer is given only when every value it could use agrees: the one passed,
the keeping model's ``forward`` default, the part's ``use_cache`` and the composite configuration's.

When the instance's module tree is known (:func:`held_cache`), the models it holds that take
``past_key_values`` are the cache's path: none of their files may build a cache whatever
``use_cache`` says, none of their forwards may set ``use_cache`` itself (a layer's local one is
not theirs), and one of them must build it under ``use_cache``.
The ``use_cache`` passed then decides when every model on the path hands it on
(``use_cache=use_cache``); otherwise every value they could read must agree: their ``forward``
defaults, and the configuration of each that may fill a None from it (``merge_with_config_defaults``
or a read of ``.use_cache``; Idefics3's composite passes None on to its Llama part, whose
configuration decides). A switch that turns the cache off only matters when the cache would be built.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import ABSENT, Config, ModelInstance, Unknown
from model_debugging.skips.models.config.values import config_value
from model_debugging.skips.models.generation_cache import cache_building, model_outputs
from model_debugging.skips.models.generation_cache.cache_switches import switched_off
from model_debugging.skips.models.pretrained_model import modules
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.records.library import ClassName, LibraryClass
from model_debugging.skips.resolve.library import Library

_CACHE = "past_key_values"


def delegated_cache(facts: TestClassFacts, model: ModelInstance, use_cache: object) -> bool | None:
    """Whether the cache comes back, for a composite ``model`` called with ``use_cache`` (or
    :data:`ABSENT`); None when only the run knows."""
    library, config = facts.library, model.config
    own = cache_building.cache_gating(library, model.info)
    parts = cache_building.delegated_parts(library, model.info)
    if (
        own is None
        or own.ungated
        or own.overridden
        or own.disabled
        or not parts
        or not isinstance(config, Config)
    ):
        return None
    keepers = []
    for auto, part in parts:
        part_config = config_value(facts, config, part, Unknown(part), ABSENT)
        built = _auto_model(library, auto, part_config.info) if isinstance(part_config, Config) else None
        names = library.signature(built, "forward") if built is not None else None
        if names is None:
            return None
        if _CACHE in names:
            keepers.append((built, part_config))
    if len(keepers) != 1:
        return None
    keeper, part_config = keepers[0]
    gating = cache_building.cache_gating(library, keeper)
    fields = model_outputs.output_fields(library, keeper)
    if (
        gating is None
        or not gating.gated
        or gating.ungated
        or gating.overridden
        or gating.disabled
        or _builds_models(library, keeper)
        or fields is None
        or not all(_CACHE in names for names in fields)
    ):
        return None
    return _agreed(
        [
            config_value(facts, part_config, "use_cache", Unknown("use_cache"), ABSENT),
            model_outputs.parameter_default(library, keeper, "forward", "use_cache"),
            config_value(facts, config, "use_cache", Unknown("use_cache"), ABSENT),
            use_cache,
        ]
    )


def held_cache(
    facts: TestClassFacts, model: ModelInstance, use_cache: object, passed: dict[str, object] | None
) -> bool | None:
    """Whether the cache comes back, read along the instance's known module tree; None when only
    the run knows."""
    library = facts.library
    path = _cache_path(facts, model)
    if path is None:
        return None
    gatings = [cache_building.cache_gating(library, part.info) for part in path]
    if any(gating is None or gating.ungated for gating in gatings) or not any(
        gating.gated for gating in gatings
    ):
        return None
    if any(cache_building.forward_sets_use_cache(library, part.info) for part in path):
        return None
    handed = [cache_building.hands_on_use_cache(library, part.info) for part in path]
    if None in handed:
        return None  # a forward passes its own value on
    # the value passed reaches every model on the path when each that holds another hands it on
    reaches = all(
        on or len(_cache_path(facts, part) or ()) == 1 for on, part in zip(handed, path, strict=True)
    )
    if isinstance(use_cache, bool) and reaches:
        value = use_cache
    else:
        value = _agreed(
            [
                use_cache,
                *(
                    model_outputs.parameter_default(library, part.info, "forward", "use_cache")
                    for part in path
                ),
                *(
                    _configured_use_cache(facts, model.config, part)
                    for part in path
                    if cache_building.reads_configured_use_cache(library, part.info)
                ),
            ]
        )
    if value is not True:
        return value  # a switch only turns the cache off: without use_cache there is none
    for gating in dict.fromkeys(gatings):
        if switched_off(facts, model, passed, gating) is not False:
            return None
    return True


def _cache_path(facts: TestClassFacts, model: ModelInstance) -> list[ModelInstance] | None:
    """The models of the instance's module tree (itself first) whose ``forward`` takes
    ``past_key_values``; None when the tree or a signature is not known."""
    held = modules.modules_of(facts, model, Unknown("modules"))
    if not isinstance(held, tuple):
        return None
    path = []
    for part in held:
        names = facts.library.signature(part.info, "forward") if isinstance(part, ModelInstance) else ()
        if names is None:
            return None
        if _CACHE in names:
            path.append(part)
    return path


def _configured_use_cache(facts: TestClassFacts, config: object, part: ModelInstance) -> object:
    """``use_cache`` of the configuration a model of the path is built with: the instance's own
    when of the same class, else the one part of it of that class (unknown when not found)."""
    wanted = part.config.info if isinstance(part.config, Config) else None
    if not isinstance(config, Config) or config.info is None or wanted is None:
        return Unknown("use_cache")
    if config.info is wanted:
        return config_value(facts, config, "use_cache", Unknown("use_cache"), ABSENT)
    declared = facts.library.attribute(config.info, "sub_configs")
    found = []
    for name in declared if isinstance(declared, dict) else ():
        value = config_value(facts, config, name, Unknown(name), ABSENT)
        if isinstance(value, Config) and value.info is wanted:
            found.append(value)
        elif isinstance(value, Unknown):
            return Unknown(name)  # perhaps of that class
    if len(found) != 1:
        return Unknown("use_cache")
    return config_value(facts, found[0], "use_cache", Unknown("use_cache"), ABSENT)


def _agreed(values: list[object]) -> bool | None:
    """The one boolean the known values (absent and None left out) agree on; None when they
    disagree, one is not known, or none is given."""
    values = [value for value in values if value is not ABSENT and value is not None]
    if not values or not all(isinstance(value, bool) for value in values) or len(set(values)) != 1:
        return None
    return values[0]


def _auto_model(library: Library, auto: str, config: LibraryClass | None) -> LibraryClass | None:
    """The class ``<auto>.from_config`` builds for a configuration of class ``config``."""
    auto_class = library.find(auto)
    mapping = library.attribute(auto_class, "_model_mapping") if auto_class is not None else None
    model_type = library.attribute(config, "model_type") if config is not None else None
    if not isinstance(mapping, ClassName) or not isinstance(model_type, str):
        return None
    names = library.mapping_entry(f"{mapping.name}_NAMES", model_type)
    return library.find(names[0]) if len(names) == 1 else None


def _builds_models(library: Library, info: LibraryClass) -> bool:
    """Its constructor (along its MRO) builds a model from a configuration (``from_config``), or is
    not read: its cache might then be kept elsewhere."""
    calls = [ancestor.init_calls for ancestor in library.mro(info) if ancestor.init_calls is not None]
    return not calls or any(call.callee.endswith("from_config") for found in calls for call in found)
