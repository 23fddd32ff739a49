"""``model(**inputs)`` in a common test: which keys its output holds, decided from the library.

A ``ModelOutput`` drops its None fields from its keys. ``"past_key_values" in outputs`` is False
when no output class the forward returns has that field; when they all have it, and the model's
file builds its cache exactly when ``use_cache`` is true, it is the value of ``use_cache``: the
one passed to the call, else the forward's literal default, else the configuration's. A model
whose cache is kept by a part it builds from its configuration is answered by
:mod:`delegated_cache`.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_debugging.skips.interp.values import ABSENT, Config, ModelInstance, Unknown
from model_debugging.skips.models.config.methods import text_config
from model_debugging.skips.models.config.values import config_value
from model_debugging.skips.models.generation_cache import cache_building, model_outputs
from model_debugging.skips.models.generation_cache.cache_switches import switched_off
from model_debugging.skips.models.generation_cache.delegated_cache import delegated_cache, held_cache
from model_debugging.skips.models.pretrained_model import modules
from model_debugging.skips.models.test_class.context import TestClassFacts

_CACHE = "past_key_values"


@dataclass(frozen=True)
class ModelOutputs:
    """What ``model(...)`` returned: the model, and the ``use_cache`` passed (:data:`ABSENT` if none)."""

    model: ModelInstance
    use_cache: object
    passed: dict[str, object] | None = None  # every argument of the call by name, when all are known


def call_model(model: ModelInstance, keywords: dict[str, object], unpacked: list[object]) -> object:
    """``model(**unpacked, **keywords)``: an unknown ``**`` leaves ``use_cache`` unknown."""
    use_cache = keywords.get("use_cache", ABSENT)
    arguments: dict[str, object] = {}
    for passed in unpacked:
        if not isinstance(passed, dict):
            return ModelOutputs(model, Unknown("use_cache"))
        if _CACHE in passed:  # a cache passed in comes back whatever use_cache says
            return ModelOutputs(model, Unknown(_CACHE))
        use_cache = passed.get("use_cache", use_cache)
        arguments.update(passed)
    return ModelOutputs(model, use_cache, {**arguments, **keywords})


def outputs_contain(facts: TestClassFacts, outputs: ModelOutputs, key: str) -> bool | None:
    """``key in outputs``, or None when only the run knows."""
    library, info = facts.library, outputs.model.info
    outputs_fields = model_outputs.output_fields(library, info)
    if outputs_fields is None:
        return None
    fields = [key in names for names in outputs_fields]
    if not any(fields):
        return False
    if key != _CACHE or not all(fields):
        return None
    found = _own_cache(facts, outputs)
    return found if found is not None else held_cache(facts, outputs.model, outputs.use_cache, outputs.passed)


def _own_cache(facts: TestClassFacts, outputs: ModelOutputs) -> bool | None:
    """Whether the cache comes back, read from the file of the called ``forward`` (and the parts
    it builds from its configuration); None when that file does not tell."""
    library, info = facts.library, outputs.model.info
    gating = cache_building.cache_gating(library, info)
    if gating is not None and not (gating.gated or gating.ungated or gating.delegated):
        return False if _never_built(facts, outputs) else None
    if gating is not None and gating.delegated:
        return delegated_cache(facts, outputs.model, outputs.use_cache)
    if gating is None or not gating.follows_use_cache:
        return None
    off = switched_off(facts, outputs.model, outputs.passed, gating)
    if off is True:
        return False  # the file turns the cache off for this call
    use_cache = outputs.use_cache
    if use_cache is ABSENT or use_cache is None:
        use_cache = model_outputs.parameter_default(library, info, "forward", "use_cache")
    if use_cache is None:
        config = outputs.model.config
        if not isinstance(config, Config) or text_config(facts, config, None, None, Unknown()) != config:
            return None  # a composite model reads the flag of its text part
        use_cache = config_value(facts, config, "use_cache", Unknown("use_cache"), ABSENT)
    if use_cache is False:
        return False  # whether a switch runs does not matter: it only turns the cache off
    return True if use_cache is True and off is False else None


def _never_built(facts: TestClassFacts, outputs: ModelOutputs) -> bool:
    """No cache is passed and none can be built: the file builds none outside generation-only
    methods, and every model the instance holds (its module tree, known) is of that file."""
    library, model = facts.library, outputs.model
    if (
        outputs.passed is None
        or _CACHE in outputs.passed
        or not cache_building.builds_no_cache(library, model.info)
    ):
        return False
    parts = modules.modules_of(facts, model, Unknown("modules"))
    if not isinstance(parts, tuple):
        return False
    called = library.defines(model.info, "forward")
    path = library.path_of(called) if called is not None else None
    for part in parts:
        owner = library.defines(part.info, "forward") if isinstance(part, ModelInstance) else None
        if isinstance(part, ModelInstance) and (
            owner is None or path is None or library.path_of(owner) != path
        ):
            return False
    return True
