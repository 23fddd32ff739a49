"""Which configuration class a model class declares, and which class an auto class builds from it.

Both are read from the library's records: ``config: LlamaConfig`` or ``config_class`` on the model,
the configuration's ``model_type`` and the auto class's mapping of names. The module tree
(:mod:`.module_tree`) asks them for every ``Auto*.from_config`` it follows; the run-time checks
ask them for a model's configuration.
"""

from __future__ import annotations

from collections.abc import Mapping

from model_debugging.skips.models.base_classes import BASE_MODEL
from model_debugging.skips.models.config.properties import property_part
from model_debugging.skips.records.library import ClassName, InitCall, LibraryClass
from model_debugging.skips.resolve.library import Library

_AUTO_CONFIG = "AutoConfig"


def is_model(library: Library, info: LibraryClass) -> bool:
    """Whether ``info`` is a model of the library (``PreTrainedModel`` among its ancestors)."""
    return any(ancestor.name == BASE_MODEL for ancestor in library.mro(info))


def parts_below(parts: Mapping[str, LibraryClass], argument: str) -> dict[str, LibraryClass]:
    """The classes chosen for the parts of part ``argument`` (``config.vlm_config``): the entries
    ``vlm_config.<name>`` of ``parts``, under ``<name>``."""
    if not argument.startswith("config."):
        return {}
    prefix = f"{argument.removeprefix('config.')}."
    return {key.removeprefix(prefix): value for key, value in parts.items() if key.startswith(prefix)}


def auto_choice(
    library: Library, info: LibraryClass, auto: str, call: InitCall, parts: Mapping[str, LibraryClass]
) -> LibraryClass | None:
    """The class ``Auto<...>.from_config(config[.<sub-config>])`` builds: the auto class's mapping
    entry for the model type of that configuration, when its class is written in the library."""
    config = _argument_config(library, info, call.argument, parts)
    model_type = library.attribute(config, "model_type") if config is not None else None
    auto_class = library.find(auto)
    mapping = library.attribute(auto_class, "_model_mapping") if auto_class is not None else None
    if not isinstance(model_type, str) or not isinstance(mapping, ClassName):
        return None
    names = library.mapping_entry(f"{mapping.name}_NAMES", model_type)
    return library.find(names[0]) if len(names) == 1 else None


def _argument_config(
    library: Library, info: LibraryClass, argument: str, parts: Mapping[str, LibraryClass]
) -> LibraryClass | None:
    """The configuration class of ``argument`` (``config``, ``config.<part>``) in a constructor of
    ``info``: the run's choice for a part in ``parts`` (also where the configuration was handed
    down to a module that is no model), else what ``info``'s configuration class declares."""
    part = argument.removeprefix("config.") if argument.startswith("config.") else None
    if part in parts:
        return parts[part]
    own = config_class(library, info) if is_model(library, info) else None
    if own is None or argument == "config" or part is None:
        return own if argument == "config" else None
    sub_configs = library.attribute(own, "sub_configs")
    declared = sub_configs.get(part) if isinstance(sub_configs, dict) else None
    if declared is None:  # not a declared part: maybe one a property builds (`config.encoder_config`)
        return property_part(library, own, part)
    if not isinstance(declared, ClassName) or declared.name == _AUTO_CONFIG:
        return None  # a part declared AutoConfig whose class the run's configuration does not give
    return library.find(declared.name)


def config_class(library: Library, info: LibraryClass) -> LibraryClass | None:
    """The configuration class a model class declares (``config: LlamaConfig`` or ``config_class``)."""
    annotated = library.annotation(info, "config")
    if annotated is not None:
        return annotated
    declared = library.attribute(info, "config_class")
    return library.find(declared.name) if isinstance(declared, ClassName) else None
