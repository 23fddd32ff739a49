"""The machine a common test is evaluated for: one that has everything (an accelerator, every
optional package and kernel, and the newest torch and Python).

Skips that depend on the machine are environment conditions, never a model's skip (the analyzer's
contract): evaluating them as if the machine had everything leaves only the model's own skips. A
version guard (``version.parse(torch.__version__) < version.parse("2.3")``, ``sys.version_info >=
(3, 10)``, ``is_torch_greater_or_equal("2.6")``) is one of them: on that machine every installed
version is newer than any version a test names.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# `torch_device` and `get_device_properties()` as on a recent CUDA GPU (compute capability 9.0).
DEVICE = "cuda"
DEVICE_PROPERTIES = ("cuda", 9, 0)


@dataclass(frozen=True)
class Release:
    """A version: the ``numbers`` of a release a test names, or None for one installed on the machine
    (newer than any named release)."""

    numbers: tuple[int, ...] | None = None


INSTALLED = Release()


@dataclass(frozen=True)
class Namespace:
    """A module whose environment attributes a test reads: ``torch``, ``torch.version``, ``torch.cuda``,
    ``sys``, ``version`` (``from packaging import version``)."""

    name: str


@dataclass(frozen=True)
class Function:
    """A function of the environment: ``version.parse``, ``torch.cuda.get_device_capability``,
    ``is_torch_greater_or_equal``, ..."""

    name: str


TORCH = Namespace("torch")
ENVIRONMENT_NAMES = {
    "torch_device": DEVICE,
    "torch": TORCH,
    "sys": Namespace("sys"),
    "version": Namespace("version"),
}
# namespace -> attribute -> value; an attribute not listed is only known at run time
_ATTRIBUTES: dict[str, dict[str, object]] = {
    "torch": {
        "__version__": INSTALLED,
        "version": Namespace("torch.version"),
        "cuda": Namespace("torch.cuda"),
    },
    "torch.version": {"cuda": INSTALLED, "__version__": INSTALLED},
    "torch.cuda": {
        "get_device_capability": Function("get_device_capability"),
        "get_device_properties": Function("get_device_properties"),
        "is_available": Function("is_available"),
    },
    "sys": {"version_info": INSTALLED},
    "version": {"parse": Function("version.parse")},
}
_ORDER = {ast.Lt: -1, ast.LtE: -1, ast.Gt: 1, ast.GtE: 1}
_NUMBERS = re.compile(r"\d+(?:\.\d+)*")


def is_availability_check(name: str) -> bool:
    """``is_flash_attn_2_available``, ``is_torch_bf16_available_on_device``, ...: true on that machine."""
    return name.startswith("is_") and "available" in name


def name_value(name: str) -> object | None:
    """What a module-level name of the environment is on that machine; None for another name.

    ``is_torch_greater_or_equal_than_2_4`` (a constant of ``transformers.pytorch_utils``) is true, as
    is every availability check once called; ``is_torch_greater_or_equal`` is a function."""
    if name in ENVIRONMENT_NAMES:
        return ENVIRONMENT_NAMES[name]
    if name.startswith("is_torch_greater_or_equal_than_"):
        return True
    if name.startswith("is_torch_less_than_"):
        return False
    if is_availability_check(name) or name in ("is_torch_greater_or_equal", "get_device_properties"):
        return Function(name)
    return None


def attribute(owner: Namespace | Release, name: str) -> object | None:
    """``owner.name`` on that machine; None when only the run knows it."""
    if isinstance(owner, Release):  # `.release`, `.base_version`: the same version, as comparable
        return owner if name in ("release", "base_version") else None
    return _ATTRIBUTES.get(owner.name, {}).get(name)


def call(function: Function, arguments: list[object]) -> object | None:
    """What calling ``function`` gives on that machine; None when only the run knows it."""
    name = function.name
    if is_availability_check(name) or name == "is_torch_greater_or_equal":
        return True
    if name == "get_device_properties":
        return DEVICE_PROPERTIES
    if name == "get_device_capability":
        return DEVICE_PROPERTIES[1:]
    if name == "version.parse" and len(arguments) == 1:
        (written,) = arguments
        if isinstance(written, Release):
            return written
        found = _NUMBERS.match(written) if isinstance(written, str) else None
        return Release(tuple(int(part) for part in found[0].split("."))) if found else None
    return None


def compare(operator: ast.cmpop, left: object, right: object) -> bool | None:
    """``left <op> right`` when one side is a :class:`Release` and the other a version (a tuple of
    numbers is one, as ``sys.version_info`` compares with it); None otherwise."""
    left, right = _release(left), _release(right)
    if left is None or right is None or not isinstance(operator, (*_ORDER, ast.Eq, ast.NotEq)):
        return None
    if left.numbers is None or right.numbers is None:
        # the installed version is newer than every named one, and equal only to itself
        order = 0 if left == right else (1 if left.numbers is None else -1)
    else:
        padded = max(len(left.numbers), len(right.numbers))
        ours, theirs = (numbers + (0,) * (padded - len(numbers)) for numbers in (left.numbers, right.numbers))
        order = (ours > theirs) - (ours < theirs)
    if isinstance(operator, ast.Eq):
        return order == 0
    if isinstance(operator, ast.NotEq):
        return order != 0
    wanted = _ORDER[type(operator)]
    return order == wanted or (order == 0 and isinstance(operator, (ast.LtE, ast.GtE)))


def _release(value: object) -> Release | None:
    if isinstance(value, Release):
        return value
    if isinstance(value, tuple) and value and all(type(item) is int for item in value):
        return Release(value)
    return None


def installed_branch(node: ast.expr) -> ast.expr:
    """The branch ``A if is_torch_available() else B`` takes on that machine (``A``); ``node`` itself
    when it is no conditional on an availability check."""
    while (
        isinstance(node, ast.IfExp)
        and isinstance(node.test, ast.Call)
        and isinstance(node.test.func, ast.Name)
        and is_availability_check(node.test.func.id)
    ):
        node = node.body
    return node
