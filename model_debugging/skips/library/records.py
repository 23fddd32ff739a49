"""Frozen records of what the library's own sources say about their classes (read with ``ast``).

They are what the library cache stores, one :class:`LibraryFile` per source file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Opaque:
    """A value that is not a literal (a call, an expression); ``code`` is its source text."""

    code: str


@dataclass(frozen=True)
class ClassName:
    """A bare or dotted name used as a value (``config_class = LlamaConfig``): the last component."""

    name: str


@dataclass(frozen=True)
class EnvironmentValue:
    """A value that depends on the machine (``is_grouped_mm_available()``): taken as available,
    the way environment guards never make a test skipped."""

    code: str


@dataclass(frozen=True)
class MethodValue:
    """An attribute that is a method of ``owner``: it exists, and is never a literal."""

    owner: str
    name: str


# A class attribute's value as read: a Python literal, a name, or something opaque.
Value = object


@dataclass(frozen=True)
class InitCall:
    """A call ``__init__`` makes: ``callee`` as written (``nn.Linear``, ``AutoModel.from_config``;
    ``x().clone`` for a method of a local ``x`` that holds a call's result), ``conditional`` when it
    runs only under a condition, ``argument`` the first argument's source."""

    callee: str
    conditional: bool = False
    argument: str = ""


@dataclass(frozen=True)
class LibraryClass:
    """One class of the library.

    ``attributes`` are class-level assignments (annotated dataclass fields included, a field with no
    default maps to an :class:`Opaque`); ``signatures`` the parameter names of the methods the common
    tests inspect; ``assigned_in_init`` the names ``__init__`` / ``__post_init__`` assign on ``self``
    (their value is then decided at run time); ``init_defaults`` the defaults of ``__init__``'s
    parameters (configuration classes written before dataclass fields).
    """

    name: str
    line: int
    bases: tuple[str, ...]
    attributes: tuple[tuple[str, Value], ...] = ()
    methods: tuple[str, ...] = ()
    signatures: tuple[tuple[str, tuple[str, ...]], ...] = ()
    assigned_in_init: tuple[str, ...] = ()
    init_defaults: tuple[tuple[str, Value], ...] = ()
    decorators: tuple[str, ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()  # `config: LlamaConfig` with no value: name -> class name
    init_as_set: tuple[str, ...] = ()  # `self.x = set(self.x or [])` in __init__: the class value, as a set
    init_calls: tuple[InitCall, ...] | None = None  # the calls of its own __init__; None: it defines none
    class_vars: tuple[str, ...] = ()  # annotated `ClassVar[...]`: class-level facts, not instance values


@dataclass(frozen=True)
class LibraryFile:
    """Everything read from one library file (``path`` relative to the checkout).

    ``mappings`` holds the ``*_NAMES`` ordered dicts of the auto modules: name -> ((key, class names), ...).
    ``imports`` maps a local name to the module path it comes from (``from ..x.modeling_x import A``).
    """

    path: str
    classes: tuple[LibraryClass, ...] = ()
    mappings: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = ()
    imports: tuple[tuple[str, str], ...] = ()
    error: str | None = None
