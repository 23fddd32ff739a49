"""What ``self.<name>`` holds once a library class's constructor has run, from the assignments of
its ``__init__`` chain (``init_calls``: the calls and the ``self.x = ...`` it makes, in order).

Answers are given only when certain. An attribute is **absent** only when no class of the MRO is
left unread, none defines ``__getattr__``, no constructor or ``post_init`` assigns it and the
constructors set no attribute under a name only the run knows (``setattr(self, name, ...)``, a
method of another class that may assign anything). An attribute is **assigned** a module when its
last assignment is a call, made unconditionally; anything else is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from model_debugging.skips.models.pretrained_model.module_tree import constructor_calls
from model_debugging.skips.records.library import (
    OPAQUE_VALUE,
    PLAIN_VALUE,
    UNNAMED_ATTRIBUTES,
    InitCall,
    LibraryClass,
)
from model_debugging.skips.resolve.library import MISSING, Library

# Bases outside the files read whose instance attributes are known: torch's module (its own
# attributes are in TORCH_MODULE_ATTRIBUTES) and the ones that add none.
_KNOWN_BASES = frozenset({"Module", "object", "ABC", "Generic"})
# Calls of the instance's own methods, made by a constructor, that assign no attribute of a name
# the constructor does not show (registration under a literal name is read as an assignment).
_NAMED_ONLY = frozenset(
    {
        "post_init", "register_buffer", "register_parameter", "add_module", "register_module", "eval",
        "train", "_register_load_state_dict_pre_hook", "get_submodule", "rope_init_fn", "parameters",
        "modules", "named_modules", "named_parameters", "apply", "requires_grad_",
    }
)  # fmt: skip
# Functions that only read the instance handed to them.
_READS_SELF = frozenset({"isinstance", "getattr", "hasattr", "type", "id", "str", "repr", "super"})
# Attributes every torch.nn.Module instance has (torch 2.x): never absent, never read here.
TORCH_MODULE_ATTRIBUTES = frozenset(
    {
        "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children",
        "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward",
        "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "ipu",
        "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
        "named_parameters", "parameters", "register_backward_hook", "register_buffer",
        "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
        "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
        "register_load_state_dict_pre_hook", "register_module", "register_parameter",
        "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
        "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
        "training", "type", "xpu", "zero_grad",
    }
)  # fmt: skip

Absent = Literal["absent"]
ABSENT: Absent = "absent"
Plain = Literal["plain"]
PLAIN: Plain = "plain"  # set to a value that is never a module (a number, the configuration, None)


@dataclass(frozen=True)
class Alternatives:
    """``self.<name> = A(...) if <test> else B``: the value under each condition (Python source
    on ``config`` and the constructor's names), one of which holds."""

    choices: tuple[tuple[str, Assigned | Plain | None], ...]


@dataclass(frozen=True)
class Assigned:
    """``self.<name> = <call>``: the call that builds the value, made in ``owner``'s ``__init__``."""

    call: InitCall
    owner: LibraryClass


def instance_attribute(
    library: Library, info: LibraryClass, name: str
) -> Assigned | Alternatives | Plain | Absent | None:
    """What ``name`` holds on an instance of ``info`` besides its class attributes; None: unknown."""
    assigned = _assignments(library, info)
    if assigned is None:
        return None
    values, complete = assigned
    if name in values:
        return values[name]
    if not complete or name in TORCH_MODULE_ATTRIBUTES or name.startswith("__"):
        return None
    if library.attribute(info, name) is not MISSING or not _closed(library, info):
        return None
    if name in library.instance_names(info)[1]:
        return None  # assigned by a constructor that does not run, or by post_init: not followed
    return ABSENT


def assigned_modules(
    library: Library, info: LibraryClass
) -> tuple[tuple[str, Assigned | Alternatives], ...] | None:
    """The attributes the constructors bind to a module (or to one of two values), in the order they
    are first set (the order of ``named_children()``); None when some attribute's value is not known."""
    assigned = _assignments(library, info)
    if assigned is None or not assigned[1]:
        return None
    values = assigned[0]
    if any(value is None for value in values.values()):
        return None
    return tuple((name, value) for name, value in values.items() if value != PLAIN)


def _assignments(library: Library, info: LibraryClass):
    """(attribute -> its value after the constructors (None: unknown), whether every assignment is
    seen), or None when the constructor chain cannot be followed."""

    def compute():
        owners: list[tuple[LibraryClass, list[InitCall]]] = []
        for owner, call in constructor_calls(library, info):
            if owner is None:
                return None
            if not owners or owners[-1][0] is not owner:
                owners.append((owner, []))
            owners[-1][1].append(call)
        values: dict[str, Assigned | Plain | None] = {}
        complete = True
        own_config = _own_configuration(owners)
        for owner, calls in reversed(owners):  # a base's constructor runs first, from super().__init__
            for call in calls:
                complete = complete and _names_shown(call)
                target = _target_name(library, info, call.target)
                if target is None:
                    complete = False
                elif target:
                    values.setdefault(target, None)  # keeps the order of first assignment
                    values[target] = _folded(values[target], call, owner, owner.name in own_config)
        return values, complete

    return library.memoized(("instance_attributes", library.path_of(info), info.name), compute)


def _target_name(library: Library, info: LibraryClass, target: str) -> str | None:
    """The attribute a record sets: ``self.base_model_prefix`` read as the class's literal; None when
    the class attribute is not a literal string."""
    if not target.startswith("self."):
        return target
    name = library.attribute(info, target.removeprefix("self."))
    return name if isinstance(name, str) and name else None


def configuration_copies(library: Library, info: LibraryClass) -> dict[str, str]:
    """Attributes a constructor sets once, unconditionally, to a value of its own configuration
    (``self.num_labels = config.num_labels``): name -> that value's source (``config.num_labels``)."""

    def compute() -> dict[str, str]:
        assigned = _assignments(library, info)
        if assigned is None or not assigned[1]:
            return {}  # some attribute may be set under a name not shown
        owners: list[tuple[LibraryClass, list[InitCall]]] = []
        for owner, call in constructor_calls(library, info):
            if owner is None:
                return {}
            if not owners or owners[-1][0] is not owner:
                owners.append((owner, []))
            owners[-1][1].append(call)
        own_config = _own_configuration(owners)
        records: dict[str, list[InitCall]] = {}
        for owner, calls in owners:
            for call in calls:
                if call.target:
                    records.setdefault(call.target, []).append(call if owner.name in own_config else None)
        return {
            name: found[0].argument
            for name, found in records.items()
            if len(found) == 1
            and found[0] is not None
            and not found[0].conditional
            and found[0].argument
            and found[0].callee == PLAIN_VALUE
        }

    return library.memoized(("configuration_copies", library.path_of(info), info.name), compute)


def _own_configuration(owners: list[tuple[LibraryClass, list[InitCall]]]) -> set[str]:
    """The classes of the chain whose ``config`` is the one the instance is built with: the class's
    own, then each base reached through ``super().__init__(config)``."""
    found: set[str] = set()
    for owner, _ in owners:
        found.add(owner.name)
        passed = [call.argument for call in owner.init_calls or () if call.callee == "super().__init__"]
        if passed != ["config"]:
            break
    return found


def _folded(
    before: object, call: InitCall, owner: LibraryClass, own_config: bool
) -> Assigned | Plain | Alternatives | None:
    """The attribute's value after this record: the two records of one ``A if c else B`` make one
    :class:`Alternatives` (read only where ``config`` is the instance's, ``own_config``)."""
    if not call.condition:
        return _value(call, owner)
    if not own_config:
        return None
    choice = (
        call.condition,
        None
        if call.callee == OPAQUE_VALUE
        else (PLAIN if call.callee == PLAIN_VALUE else Assigned(call, owner)),
    )
    if isinstance(before, Alternatives) and len(before.choices) == 1:
        ((other, _),) = before.choices
        if call.condition in (f"not ({other})",) or other == f"not ({call.condition})":
            return Alternatives((*before.choices, choice))
    return Alternatives((choice,))


def _value(call: InitCall, owner: LibraryClass) -> Assigned | Plain | None:
    if call.conditional or call.callee == OPAQUE_VALUE:
        return None
    if call.callee == PLAIN_VALUE:
        return PLAIN
    return Assigned(call, owner)


def _names_shown(call: InitCall) -> bool:
    """Whether the call sets no attribute under a name the constructor does not show."""
    if call.callee == UNNAMED_ATTRIBUTES:
        return False
    if call.callee == "setattr":
        return True  # recorded as an assignment, or as UNNAMED_ATTRIBUTES when its name is not read
    if call.argument == "self" and call.callee not in _READS_SELF:
        return False  # the instance handed to a function, which may set anything on it
    parts = call.callee.split(".")
    if parts[0] == "self" and len(parts) == 2:
        return parts[1] in _NAMED_ONLY
    return not call.callee.startswith("super().")


def _closed(library: Library, info: LibraryClass) -> bool:
    """Every base along the MRO is read or known, and no class defines ``__getattr__``."""
    for ancestor in library.mro(info):
        if "__getattr__" in ancestor.methods or "__getattribute__" in ancestor.methods:
            return False
        path = library.path_of(ancestor)
        for base in ancestor.bases:
            if base not in _KNOWN_BASES and library.find(base, path) is None:
                return False
    return True
