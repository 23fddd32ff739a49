"""Sub-configurations (``config.text_config``): their class, and the values the tester passes in them.

A composite configuration declares its parts in ``sub_configs``. The tester usually passes each
part as a dict: when that dict is written as a literal, its items are the part's values and the
class defaults fill the rest. A part declared as ``AutoConfig`` takes its class from the dict's
``model_type`` (through ``CONFIG_MAPPING_NAMES``). When the dict was not read, only whether an
attribute exists is known, never its value.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import Config, Unknown, source_expression
from model_debugging.skips.models.base_classes import BASE_CONFIGS, is_configuration
from model_debugging.skips.models.config.part_classes import part_class
from model_debugging.skips.models.config.texts import default_model_type
from model_debugging.skips.models.tester.config import dict_display
from model_debugging.skips.records.library import ClassName, LibraryClass, Value
from model_debugging.skips.resolve.library import MISSING, Library

_AUTO_CONFIG = "AutoConfig"
# Declared classes that leave the part's class to the dict passed (its `model_type`, through
# `__post_init__`): the auto class, and the base class itself (`{"vlm_config": PreTrainedConfig}`).
_ANY_CONFIG = frozenset({_AUTO_CONFIG, *BASE_CONFIGS})
_TYPE_KEY = "model_type"
_TO_DICT = ".to_dict()"


def sub_config(
    library: Library,
    owner: LibraryClass,
    name: str,
    declared: object,
    passed: object,
    unknown: Unknown,
    *,
    none_given: bool = False,
) -> object:
    """The part ``name`` of the configuration class ``owner``, declared as ``declared`` in its
    ``sub_configs`` and built from ``passed`` (``none_given``: the tester's ``get_config``, read,
    passes None for it or leaves it out)."""
    built = _constructed(library, passed)
    if built is not None:  # ``PartConfig(...)`` passed as an object: its class, whatever is declared
        info, items = built
        if items is None:
            return Config(info, sub="unread")
        return Config(info, items, sub="read")
    items = _literal_items(passed)
    info = library.find(declared.name) if isinstance(declared, ClassName) else None
    if info is not None and info.name in _ANY_CONFIG:
        shape = items if items is not None else _dict_of_unread_items(passed)
        chosen = _auto_part(library, owner, name, shape, none_given)
        # a part declared as the base class keeps it when its dict gives no class
        info = chosen if chosen is not None or info.name == _AUTO_CONFIG else info
    if info is None:
        return unknown.existing()
    if items is None:
        return Config(info, sub="unread")
    # a "model_type" in the dict is kept: the part's instance holds it, even against its class's
    return Config(info, tuple(items), sub="read")


def _auto_part(
    library: Library,
    owner: LibraryClass,
    name: str,
    items: tuple[tuple[str, object], ...] | None,
    none_given: bool,
) -> LibraryClass | None:
    """The class of a part declared ``AutoConfig``: what ``__post_init__`` makes of the dict passed
    (or of None), else the dict's ``model_type``."""
    if items is None:
        none_default = none_given and library.attribute(owner, name) is None
        return part_class(library, owner, name, None) if none_default else None
    built = part_class(library, owner, name, dict(items))
    if built is not None:
        return built
    model_type = dict(items).get("model_type", _default_type(library, owner, name)) if items else None
    return _config_of_type(library, model_type) if isinstance(model_type, str) else None


def sub_config_value(
    config: Config,
    declared: Value,
    init_default: Value,
    computed: bool,
    unknown: Unknown,
    missing: object,
) -> Value:
    """An attribute of a sub-configuration the tester's dict does not set: the class default
    (``"read"``), or only its existence (``"unread"``)."""
    exists = declared is not MISSING or init_default is not MISSING or computed
    if config.sub == "unread" or computed:
        return unknown.existing() if exists else unknown
    if not exists:
        return missing
    return init_default if init_default is not MISSING else declared


def _constructed(
    library: Library, passed: object
) -> tuple[LibraryClass, tuple[tuple[str, object], ...] | None] | None:
    """A part the tester passes as ``PartConfig(key=value, ...)`` or ``CONFIG_MAPPING["<type>"](...)``
    (its source): the configuration class, and its items when it is called with keywords only (None
    otherwise)."""
    node = source_expression(passed)
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Subscript):  # CONFIG_MAPPING["opt"](...): the class of that type
        key = node.func.slice
        info = _config_of_type(library, key.value) if isinstance(key, ast.Constant) else None
        mapped = isinstance(node.func.value, ast.Name) and node.func.value.id == "CONFIG_MAPPING"
        info = info if mapped and isinstance(key.value, str) else None
    elif isinstance(node.func, (ast.Name, ast.Attribute)):
        info = library.find(node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
    else:
        return None
    if info is None or not is_configuration(library, info):
        return None
    # keywords whose values only the run knows (``vocab_size=self.vocab_size``) are there, unknown
    items = tuple((item.arg, _item(item.value)) for item in node.keywords if item.arg)
    if node.args or any(item.arg is None for item in node.keywords) or "model_type" in dict(items):
        items = None
    return info, items


def _literal_items(passed: object) -> tuple[tuple[str, object], ...] | None:
    """The items of a dict passed for a part, also when the tester's attribute holds its source: a
    display whose keys are all literal strings, its values literals or unknown (``self.vocab_size``)."""
    if isinstance(passed, Unknown) and passed.source.lstrip().startswith("{"):
        node = dict_display(passed)
        if node is None:
            return None  # a `**` spread or a computed key: the keys are not known
        items = tuple((key.value, _item(value)) for key, value in zip(node.keys, node.values, strict=True))
        # a model type only the run knows may retype the part: the dict is left unread
        return None if isinstance(dict(items).get(_TYPE_KEY), Unknown) else items
    if not isinstance(passed, dict) or not all(isinstance(key, str) for key in passed):
        return None
    return tuple(passed.items())


def _item(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return Unknown(ast.unparse(node), exists=True)


def _dict_of_unread_items(passed: object) -> tuple[tuple[str, object], ...] | None:
    """``<configuration>.to_dict()`` passed for a part: a dict holding a ``model_type`` only the run
    knows (what ``__post_init__`` makes of it is read when it forces the type); None otherwise."""
    if isinstance(passed, Unknown) and passed.source.endswith(_TO_DICT):
        return ((_TYPE_KEY, Unknown(passed.source, exists=True)),)
    return None


def _default_type(library: Library, owner: LibraryClass, name: str) -> str | None:
    """The model type ``owner``'s ``__post_init__`` gives a dict passed for ``name`` without one:
    the literal of ``self.<name>.get("model_type", "<type>")`` (None unless exactly one)."""
    path = library.path_of(owner)
    if path is None:
        return None
    return library.fact(default_model_type, path, owner.name, name)


def _config_of_type(library: Library, model_type: str) -> LibraryClass | None:
    entries = library.mappings.get("CONFIG_MAPPING_NAMES")
    names = dict(entries).get(model_type) if entries is not None else None
    return library.find(names[0]) if names else None
