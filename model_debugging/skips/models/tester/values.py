"""The values a model tester's methods compute with, beside the interpreter's own (literals,
:class:`~model_debugging.skips.interp.values.Tensor` facts, unknowns), and the frame of a method run.

The tester reader (:mod:`~model_debugging.skips.models.tester.reader`) runs the methods on the
interpreter; what these values do is answered by the tester's handlers
(:mod:`~model_debugging.skips.models.tester.reader_handlers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model_debugging.skips.interp.values import Tensor, Unknown

# Methods of a dict that read it (a call of one of them changes nothing).
DICT_READS = frozenset({"get", "keys", "values", "items", "copy"})


@dataclass(frozen=True)
class BoundMethod:
    """``self.<name>`` / ``super().<name>``: a method of the tester, looked up after ``after`` (an
    index along the tester's MRO; -1 for ``self``)."""

    name: str
    after: int


@dataclass(frozen=True)
class ModuleFunction:
    """A function defined at the top of the file of the class whose method is running."""

    name: str


@dataclass(frozen=True)
class KnownFunction:
    """A function whose result the reader knows: a tensor factory, or a ``torch`` function (``torch``)."""

    name: str
    torch: bool


@dataclass(frozen=True)
class TorchModule:
    """The name ``torch``."""


@dataclass(frozen=True)
class TensorMethod:
    """``tensor.<name>``, a method of a tensor the tester built."""

    tensor: Tensor
    name: str


@dataclass(frozen=True)
class TesterConfig:
    """The configuration ``self.get_config()`` returned, or a ``<built>(key=value, ...)`` call built
    (its keywords first), with what was set on it since."""

    overrides: tuple[tuple[str, object], ...] = ()
    built: str | None = None


@dataclass(frozen=True)
class ConfigPart(Unknown):
    """A value read from the configuration (``config.text_config``): changing it changes the
    configuration."""


@dataclass
class Frame:
    """One method of the tester being run."""

    variables: dict[str, object]
    owner: int  # the index, along the tester's MRO, of the class defining the running method
    self_values: dict[str, object] = field(default_factory=dict)
    parameters: frozenset[str] = frozenset()  # names bound by the call: the caller holds them too
    loops: int = 0  # loops over known items the method is running (where break / continue go)
