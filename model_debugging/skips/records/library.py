"""Frozen records of what the library's own sources say about their classes (read with ``ast``).

They are what the library cache stores, one :class:`LibraryFile` per source file.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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


# Callees of the :class:`InitCall` records that stand for an assignment rather than a call: a value
# that is never a module (a literal, arithmetic, the configuration or one of its values), a value
# only the run knows (a parameter, a local variable, an item), and ``setattr(self, ...)`` or
# ``self.add_module(<not a literal>, ...)``: attributes whose names only the run knows.
PLAIN_VALUE = "<plain>"
OPAQUE_VALUE = "<opaque>"
UNNAMED_ATTRIBUTES = "<setattr>"
ASSIGNMENTS = frozenset({PLAIN_VALUE, OPAQUE_VALUE, UNNAMED_ATTRIBUTES})


@dataclass(frozen=True)
class InitCall:
    """A call ``__init__`` makes: ``callee`` as written (``nn.Linear``, ``AutoModel.from_config``;
    ``x().clone`` for a method of a local ``x`` that holds a call's result), ``conditional`` when it
    runs only under a condition, ``argument`` the first argument's source, ``target`` the attribute
    ``self.<target> = <the call>`` binds (``self.<x>`` when it is the attribute class attribute ``x``
    names: ``setattr(self, self.base_model_prefix, ...)``). A callee of :data:`ASSIGNMENTS` records an
    assignment to ``self.<target>`` of a value that is not a call. ``condition`` is the test under
    which this is the value of ``self.<target> = A(...) if <test> else B`` (``not (<test>)`` for B);
    such a record is ``conditional`` and its statement runs unconditionally. ``classes`` are the
    keywords that may pass a class, ``parameter`` says the callee is a parameter of the constructor."""

    callee: str
    conditional: bool = False
    argument: str = ""
    target: str = ""
    condition: str = ""
    # keyword -> the names of the classes it may pass (``downsample=PatchMerging if c else None``)
    classes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    parameter: bool = False  # the callee is a parameter of the constructor (a class it is handed)


@dataclass(frozen=True)
class LibraryClass:
    """One class of the library.

    ``attributes`` are class-level assignments (annotated dataclass fields included, a field with no
    default maps to an :class:`~model_debugging.skips.records.literals.NonLiteral`); ``signatures`` the parameter names of the methods the common
    tests inspect; ``assigned_in_init`` the names ``__init__`` / ``__post_init__`` assign on ``self``
    (their value is then decided at run time); ``init_defaults`` the defaults of ``__init__``'s
    parameters (configuration classes written before dataclass fields).
    """

    name: str
    line: int = field(compare=False)  # where it starts, not what it is: an edit above moves it
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
    # methods of read.RETURNING_METHODS whose body is one `return x`: (method, x's source)
    returns: tuple[tuple[str, str], ...] = ()
    # `@classmethod`s whose body is one `return x`: (method, its first parameter, x's source)
    class_returns: tuple[tuple[str, str, str], ...] = ()
    # the first and last lines of its own `forward` (decorators included) when the class is written
    # at the top of its module: where its text is, not what it is (an edit above moves it)
    forward_lines: tuple[int, int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LibraryFile:
    """Everything read from one library file (``path`` relative to the checkout).

    ``mappings`` holds the ``*_NAMES`` ordered dicts of the auto modules: name -> ((key, class names), ...).
    ``imports`` maps a local name to the module path it comes from (``from ..x.modeling_x import A``).
    ``always_imports`` lists (absolute module, line) of each module the file imports whenever it is
    imported (:mod:`~model_debugging.skips.parse.always_imports`), in order, with the names a ``from``
    import takes from it; ``names`` the names the module binds (:mod:`~model_debugging.skips.parse.bound_names`),
    None when not told.
    ``functions`` holds the calls of each module-level function (``def round_filters(...)``) and of
    each module-level alias of a class (``XLayerNorm = nn.LayerNorm``: one call of that class).
    """

    path: str
    classes: tuple[LibraryClass, ...] = ()
    mappings: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = ()
    imports: tuple[tuple[str, str], ...] = ()
    error: str | None = None
    always_imports: tuple[tuple[str, int, tuple[str, ...]], ...] = ()
    names: tuple[str, ...] | None = None
    functions: tuple[tuple[str, tuple[InitCall, ...]], ...] = ()
