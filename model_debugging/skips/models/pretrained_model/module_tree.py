"""Which models of the library an instance of a model class holds, from the calls of its ``__init__``.

``model.modules()`` at run time yields every module the instance holds; the common tests filter
it to the library's models (``isinstance(m, PreTrainedModel)``) and read their class flags. This
module answers that statically: it follows ``__init__`` (and the ``super().__init__`` chain along
the MRO) through every class it instantiates, the way the constructor would run.

Only what is certain is answered. A call it cannot follow (a function it does not know, a class
chosen at run time, an auto class) makes the answer None, and so does a model built only under a
condition, since whether the condition holds is not read here. :func:`possible_models` counts such
a model instead: a bound on what the instance holds, for questions that only need "none of them".
"""

from __future__ import annotations

import builtins
import contextvars
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from model_debugging.skips.models.base_classes import BASE_MODEL, is_configuration
from model_debugging.skips.models.pretrained_model.model_configs import auto_choice, is_model, parts_below
from model_debugging.skips.records.library import ASSIGNMENTS, InitCall, LibraryClass
from model_debugging.skips.resolve.library import Library

# Where a constructor's chain ends: these build no submodule that matters (PreTrainedModel's own
# __init__ only stores the config and reads flags).
_CHAIN_ENDS = frozenset({BASE_MODEL, "Module", "GenerationMixin"})
# Calls that build no model of the library: torch's own modules and functions, logging, arithmetic,
# and the helpers of the library that return tensors, activations or numbers.
_SAFE_ROOTS = frozenset(
    {"nn", "torch", "math", "np", "numpy", "logger", "warnings", "init", "copy", "F", "deepspeed"}
)
# Modules whose names, imported into a modeling file, build no model of the library: torch and the
# standard library, the library's activations, torch helpers, integrations and import checks, and
# the generation package (its configuration, mixins, logits processors).
_SAFE_PACKAGES = frozenset({"torch", "functools", "math", "copy", "itertools", "collections", "numpy"})
_SAFE_MODULES = frozenset(
    {"activations", "pytorch_utils", "utils", "import_utils", "generic", "deepspeed", "hub_kernels",
     "integrations", "modeling_rope_utils", "masking_utils", "modeling_flash_attention_utils",
     "time_series_utils", "generation"}
)  # fmt: skip
_SAFE_FUNCTIONS = frozenset(
    {
        "OrderedDict", "partial", "deepcopy", "requires_backends", "rope_init_fn", "get_activation",
        "weight_norm", "make_divisible", "is_deepspeed_zero3_enabled", "flash_attn_supports_top_left_mask",
        "lazy_load_kernel", "resolve_internal_import", "yarn_get_mscale",
    }
)  # fmt: skip
# Methods of the instance under construction that register, rather than build, modules.
_SAFE_SELF = frozenset(
    {
        "post_init", "register_buffer", "register_parameter", "add_module", "eval", "train",
        "_register_load_state_dict_pre_hook", "get_submodule", "rope_init_fn", "parameters",
        "named_parameters", "buffers", "requires_grad_",
    }
)  # fmt: skip
_CLASS_CONSTRUCTORS = frozenset({"from_config", "_from_config"})
_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict"})
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add_module"})
# Bases outside the files read whose constructors build no model: torch's modules and the
# library's layer base (modeling_layers.py) and output records.
_SAFE_BASES = frozenset(
    {
        "ModelOutput", "Embedding", "LayerNorm", "GroupNorm", "Linear",
        "Conv1d", "Conv2d", "MaxPool2d", "ModuleDict", "ModuleList", "Sequential", "Function", "ABC",
        "TypedDict", "OrderedDict", "Generic", "object",
    }
)  # fmt: skip
_AUTO_BACKBONE = "AutoBackbone"
_AUTO_PREFIXES = ("AutoModel", _AUTO_BACKBONE)
# `load_backbone(config)` of the library's backbone_utils: the backbone of `config.backbone_config`
_LOAD_BACKBONE = "load_backbone"
_BACKBONE_PART = "backbone_config"
_BACKBONE_UTILS = ".backbone_utils"
_HEAD = re.compile(r"[A-Za-z_]\w*|")
_VALUE_METHOD = re.compile(r"[)\]]\.(?!from_config$|_from_config$)[a-z_]\w*$")

# Whether a condition of a constructor of the class on its configuration holds for the instance
# (None: unknown).
Decide = Callable[[LibraryClass, str], bool | None] | None
# (parameter, the names of the classes a call passes for it, the class whose file names them)
Passed = tuple[tuple[str, tuple[str, ...], LibraryClass], ...]

# Classes whose tree is being followed: one met again builds itself, which is not followed.
_IN_PROGRESS: set[tuple[int, str, str]] = set()
# Set by possible_models: a model built only under a condition counts instead of making the answer None.
_CONDITIONAL_COUNTED = contextvars.ContextVar("conditional_counted", default=False)
_DECIDING: set[tuple[int, str, str]] = set()  # the same, for decided_models


def following() -> bool:
    """Whether some class's tree is being followed: an answer given now may be cut short by the
    guards above, so it is not one to keep."""
    return bool(_IN_PROGRESS or _DECIDING or _CONDITIONAL_COUNTED.get())


def built_models(
    library: Library, info: LibraryClass, parts: Mapping[str, LibraryClass] | None = None, passed: Passed = ()
) -> tuple[LibraryClass, ...] | None:
    """The library's models an instance of ``info`` holds, itself first when it is one, each once;
    None when its construction cannot be followed with certainty.

    ``parts`` gives the class of the instance's sub-configurations declared ``AutoConfig``
    (``{"text_config": LlamaConfig}``), as the run's configuration has them; ``passed`` the classes
    the call building it passes by keyword (``downsample=PatchMerging if c else None``).
    """
    path = library.path_of(info) or ""
    guard = (id(library), path, info.name)
    if guard in _IN_PROGRESS:
        return None
    chosen = tuple(sorted((key, value.name) for key, value in (parts or {}).items()))
    given = tuple((name, choices, library.path_of(site)) for name, choices, site in passed)
    _IN_PROGRESS.add(guard)
    try:
        return library.memoized(
            ("built_models", path, info.name, chosen, given, _CONDITIONAL_COUNTED.get()),
            lambda: _built_models(library, info, parts or {}, passed),
        )
    finally:
        _IN_PROGRESS.discard(guard)


def possible_models(
    library: Library, info: LibraryClass, parts: Mapping[str, LibraryClass] | None = None
) -> tuple[LibraryClass, ...] | None:
    """Every model of the library an instance of ``info`` may hold: those of :func:`built_models`
    and those built only under a condition, which is not read (so a model may be listed that the
    run does not build, never the other way round); None when a call cannot be followed."""
    token = _CONDITIONAL_COUNTED.set(True)
    try:
        return built_models(library, info, parts)
    finally:
        _CONDITIONAL_COUNTED.reset(token)


def _built_models(
    library: Library, info: LibraryClass, parts: Mapping[str, LibraryClass], passed: Passed
) -> tuple[LibraryClass, ...] | None:
    models = _follow(library, info, parts, passed)
    if models is not None and is_model(library, info):
        models = (info, *[model for model in models if model is not info])
    return models


def decided_models(
    library: Library,
    info: LibraryClass,
    parts: Mapping[str, LibraryClass],
    decide: Decide,
    passed: Passed = (),
) -> tuple[LibraryClass, ...] | None:
    """:func:`built_models`, with the branches of ``info``'s own ``__init__`` that test its
    configuration (``if config.is_encoder_decoder: self.model = A(config) else: ...``) taken as
    ``decide`` says (None: not known), and so in the models it builds from the same configuration
    (``self.model = XModel(config)``). Not memoized: the answer depends on the run's configuration."""
    guard = (id(library), library.path_of(info) or "", info.name)
    if guard in _DECIDING:
        return None
    _DECIDING.add(guard)
    try:
        models = _follow(library, info, parts, passed, decide)
    finally:
        _DECIDING.discard(guard)
    if models is not None and is_model(library, info):
        models = (info, *[model for model in models if model is not info])
    return models


def _follow(
    library: Library,
    info: LibraryClass,
    parts: Mapping[str, LibraryClass],
    passed: Passed,
    decide: Decide = None,
) -> tuple[LibraryClass, ...] | None:
    models: list[LibraryClass] = []
    for owner, call in _taken(info, constructor_calls(library, info), decide):
        if owner is None:
            return None
        if call.callee in ASSIGNMENTS:
            continue
        # the keywords passed bind the parameters of the class's own __init__, not of its bases'
        built = _models_of_call(
            library, info, owner, call, parts, passed=passed if owner is info else (), decide=decide
        )
        if built is None or (built and call.conditional and not _CONDITIONAL_COUNTED.get()):
            return None
        models += [model for model in built if model not in models]
    return tuple(models)


def _taken(info: LibraryClass, calls: Iterator[tuple], decide: Decide) -> Iterator[tuple]:
    """The calls of the constructor chain the run makes: a call of ``info``'s own ``__init__`` under
    a condition ``decide`` answers runs unconditionally when it holds and not at all otherwise."""
    for owner, call in calls:
        condition = call.condition if decide is not None and owner is info else ""
        holds = decide(info, condition) if condition else None
        if holds is None:
            yield owner, call
        elif holds:
            yield owner, replace(call, conditional=False, condition="")


def constructor_calls(library: Library, info: LibraryClass):
    """(class, call) for every call of the ``__init__`` that runs, following ``super().__init__``;
    (None, None) when the chain reaches a class outside the library that is not a known end."""
    mro = library.mro(info)
    index = 0
    while True:
        while index < len(mro) and mro[index].init_calls is None and mro[index].name not in _CHAIN_ENDS:
            index += 1
        if index == len(mro):
            if any(
                not _builds_nothing(library, base, ancestor) for ancestor in mro for base in ancestor.bases
            ):
                yield None, None  # the constructor is inherited from a class not read
            return
        owner = mro[index]
        if owner.name in _CHAIN_ENDS:
            return
        calls = owner.init_calls or ()
        for call in calls:
            if call.callee != "super().__init__":
                yield owner, call
        if not any(call.callee == "super().__init__" for call in calls):
            return
        if not all(_builds_nothing(library, base, owner) for base in owner.bases):
            yield None, None  # super().__init__ may reach a constructor not read
            return
        index += 1


def _builds_nothing(library: Library, base: str, owner: LibraryClass) -> bool:
    """Whether the constructor of base class ``base`` (of ``owner``) is read, or known to build no
    model: also a base ``owner``'s file imports from a package other than the library (xLSTM's
    ``mLSTMBlock``), which cannot build one."""
    if library.find(base) is not None or base in _CHAIN_ENDS or base in _SAFE_BASES or base.endswith("Mixin"):
        return True
    module = library.imported_from(library.path_of(owner) or "", base)
    return module is not None and not module.startswith(".") and _builds_no_model(module)


def _models_of_call(
    library: Library,
    info: LibraryClass,
    owner: LibraryClass,
    call: InitCall,
    parts: Mapping[str, LibraryClass],
    function: str = "",
    passed: Passed = (),
    decide: Decide = None,
) -> tuple[LibraryClass, ...] | None:
    """The models one call of ``owner``'s ``__init__`` (run for an instance of ``info``) builds:
    () for a call that builds none, None when it cannot be told. ``function`` names the module-level
    function of ``owner``'s file the call is made in, if any; ``passed`` the classes the call that
    built the instance passed to that ``__init__``'s parameters; ``decide`` as for :func:`decided_models`."""
    if _VALUE_METHOD.search(call.callee):
        return ()  # a method of a computed value (`A.expand(n).contiguous()`, `x[:-1].repeat(2)`)
    names = call.callee.split(".")
    head = _HEAD.match(call.callee).group()
    if head != names[0]:  # a table entry (`ACT2CLS[name](...)`): only an imported table is known
        module = library.imported_from(library.path_of(owner) or "", head)
        return () if module is not None and _builds_no_model(module) else None
    if head.startswith(_AUTO_PREFIXES):
        if function:  # its configuration is the function's argument, not the model's
            return None
        chosen = auto_choice(library, info, head, call, parts) if names[1:] == ["from_config"] else None
        return None if chosen is None else built_models(library, chosen, parts_below(parts, call.argument))
    if head == "self":
        if len(names) == 2 and names[1] in _CONTAINER_METHODS and set(owner.bases) & _CONTAINERS:
            return ()  # a ModuleList of its own registers what it is given, it builds nothing
        return () if len(names) > 2 or names[1] in _SAFE_SELF else None
    if head in _SAFE_ROOTS or head in _SAFE_FUNCTIONS or head in ("config", "super"):
        return ()
    path = library.path_of(owner)
    if names == [_LOAD_BACKBONE] and (library.imported_from(path or "", head) or "").endswith(
        _BACKBONE_UTILS
    ):
        return None if function else _loaded_backbone(library, info, call, parts)
    if call.parameter:  # a class the constructor was handed, if the call building it passed one
        given = next((entry for entry in passed if entry[0] == head), None)
        return None if given is None else _models_of_passed(library, owner, call, given)
    found = library.find(head, path)
    if found is None:
        if len(names) == 1 and hasattr(builtins, head):
            return ()
        module = library.imported_from(path, head) if path is not None else None
        if module is not None and _builds_no_model(module):
            return ()
        calls = library.function_calls(path, head) if path is not None and len(names) == 1 else None
        if calls is not None:
            return _models_of_function(library, info, owner, head, calls, parts)
        if (
            module is None
            and len(names) > 1
            and not head[:1].isupper()
            and names[-1] not in _CLASS_CONSTRUCTORS
        ):
            return ()  # a method of a local value (`layers.append`, `new_module.weight.copy_`)
        return None
    if is_configuration(library, found):
        return ()  # a configuration (`XConfig(...)`, `XConfig.from_dict(...)`), not a module
    if len(names) > 1 and names[1] not in _CLASS_CONSTRUCTORS:
        return None
    # the same configuration handed on (`XModel(config)`): its parts are the run's choice there too,
    # and so are a part's own parts where that part is handed on (`XModel(config.vision_config)`)
    shared = None
    if not function:
        shared = parts if call.argument == "config" else parts_below(parts, call.argument)
    built = built_models(library, found, shared, _passed_by(call, owner))
    if built is None and decide is not None and call.argument == "config" and not function:
        built = decided_models(library, found, shared or {}, decide, _passed_by(call, owner))
    return built


def _models_of_function(
    library: Library,
    info: LibraryClass,
    owner: LibraryClass,
    name: str,
    calls: tuple[InitCall, ...],
    parts: Mapping[str, LibraryClass],
) -> tuple[LibraryClass, ...] | None:
    """The models a call of module-level function ``name`` (of ``owner``'s file) builds."""
    guard = (id(library), library.path_of(owner) or "", f"{name}()")
    if guard in _IN_PROGRESS:
        return ()  # a recursive call builds what the call in progress builds, counted there
    _IN_PROGRESS.add(guard)
    try:
        models: list[LibraryClass] = []
        for call in calls:
            if call.callee in ASSIGNMENTS:
                continue
            built = _models_of_call(library, info, owner, call, parts, function=name)
            if built is None or (built and call.conditional and not _CONDITIONAL_COUNTED.get()):
                return None
            models += [model for model in built if model not in models]
        return tuple(models)
    finally:
        _IN_PROGRESS.discard(guard)


def _passed_by(call: InitCall, owner: LibraryClass) -> Passed:
    return tuple((name, choices, owner) for name, choices in call.classes)


def _models_of_passed(
    library: Library, owner: LibraryClass, call: InitCall, given: tuple[str, tuple[str, ...], LibraryClass]
) -> tuple[LibraryClass, ...] | None:
    """The models a call of a constructor parameter builds: what each class passed for it builds
    (named in the file of the call that passed it; None passed builds nothing)."""
    _, choices, site = given
    models: list[LibraryClass] = []
    for choice in choices:
        root = choice.split(".")[0]
        found = library.find(choice, library.path_of(site)) if "." not in choice else None
        if root in _SAFE_ROOTS:
            continue
        if found is None:
            return None
        built = built_models(library, found, None, _passed_by(call, owner))
        if built is None:
            return None
        models += [model for model in built if model not in models]
    return tuple(models)


def _loaded_backbone(
    library: Library, info: LibraryClass, call: InitCall, parts: Mapping[str, LibraryClass]
) -> tuple[LibraryClass, ...] | None:
    """The models ``load_backbone(config)`` builds: ``AutoBackbone.from_config`` of the part
    ``backbone_config`` when the run's configuration gives its class. (Without that part the library
    builds the backbone from the configuration itself, which is left to the run.)"""
    if call.argument != "config" or _BACKBONE_PART not in parts:
        return None
    built_from = InitCall(f"{_AUTO_BACKBONE}.from_config", argument=f"config.{_BACKBONE_PART}")
    chosen = auto_choice(library, info, _AUTO_BACKBONE, built_from, parts)
    return None if chosen is None else built_models(library, chosen, parts_below(parts, built_from.argument))


def _builds_no_model(module: str) -> bool:
    """Whether names imported from ``module`` (``..activations``, ``torch.nn``, a package other than
    the library, such as a kernel's) never build a model of the library."""
    parts = module.lstrip(".").split(".")
    if not module.startswith("."):
        return parts[0] in _SAFE_PACKAGES or parts[0] != "transformers"
    return parts[-1] in _SAFE_MODULES
