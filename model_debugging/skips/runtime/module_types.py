"""Module values that are not models of the library (torch modules and the rest of an instance's
modules together), and ``isinstance`` questions on module values."""

from __future__ import annotations

from dataclasses import dataclass

from model_debugging.skips.library.model_configs import is_model
from model_debugging.skips.runtime.context import TestClassFacts
from model_debugging.skips.runtime.values import Builtin, ModelClass, ModelInstance, Unknown


@dataclass(frozen=True)
class OtherModules:
    """Every module of an instance that is not a model of the library (layers, torch modules)."""


@dataclass(frozen=True)
class TorchNamespace:
    """``nn`` (``torch.nn``) in a common file."""


@dataclass(frozen=True)
class TorchClass:
    """``nn.<name>``, a module class of torch."""

    name: str


@dataclass(frozen=True)
class TorchModule:
    """An instance of ``torch.nn.<name>`` a constructor built."""

    name: str


@dataclass(frozen=True)
class TorchTensor:
    """A tensor a torch module always holds (the ``weight`` of an ``nn.Linear``): never None."""


TORCH_NN = TorchNamespace()
# torch.nn module classes whose `weight` is always a parameter.
_WEIGHTED = frozenset(
    {
        "Linear", "NonDynamicallyQuantizableLinear", "Bilinear", "Embedding", "EmbeddingBag", "Conv1d",
        "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    }
)  # fmt: skip
# torch.nn module classes the constructors build, with their torch ancestors below Module: an
# instance of a class not listed here answers no isinstance() question.
_TORCH_ANCESTORS: dict[str, tuple[str, ...]] = {
    "Linear": (), "NonDynamicallyQuantizableLinear": ("Linear",), "Bilinear": (), "Identity": (),
    "Embedding": (), "EmbeddingBag": (), "Sequential": (), "ModuleList": (), "ModuleDict": (),
    "ParameterList": (), "ParameterDict": (), "Dropout": ("_DropoutNd",), "Dropout1d": ("_DropoutNd",),
    "Dropout2d": ("_DropoutNd",), "LayerNorm": (), "GroupNorm": (), "RMSNorm": (),
    "BatchNorm1d": ("_BatchNorm", "_NormBase"), "BatchNorm2d": ("_BatchNorm", "_NormBase"),
    "Conv1d": ("_ConvNd",), "Conv2d": ("_ConvNd",), "Conv3d": ("_ConvNd",),
    "ConvTranspose1d": ("_ConvTransposeNd", "_ConvNd"), "ConvTranspose2d": ("_ConvTransposeNd", "_ConvNd"),
    "MaxPool1d": ("_MaxPoolNd",), "MaxPool2d": ("_MaxPoolNd",), "AvgPool1d": ("_AvgPoolNd",),
    "AvgPool2d": ("_AvgPoolNd",), "AdaptiveAvgPool1d": ("_AdaptiveAvgPoolNd",),
    "AdaptiveAvgPool2d": ("_AdaptiveAvgPoolNd",), "Flatten": (), "Tanh": (), "ReLU": (), "GELU": (),
    "SiLU": (), "Sigmoid": (), "Softmax": (), "LogSoftmax": (), "Mish": (), "LeakyReLU": (),
    "Hardswish": (), "Hardtanh": (), "CrossEntropyLoss": ("_WeightedLoss", "_Loss"),
    "MSELoss": ("_Loss",), "BCEWithLogitsLoss": ("_Loss",), "LSTM": ("RNNBase",), "GRU": ("RNNBase",),
}  # fmt: skip
# Builtin types no module is an instance of.
_PLAIN_TYPES = frozenset({"tuple", "list", "dict", "set", "str", "int", "float", "bool"})
# Bases outside the library that make no torch module class of their own.
_NOT_MODULES = frozenset({"object", "ABC", "Generic"})


def is_instance(facts: TestClassFacts, value: object, kind: object) -> bool | None:
    """``isinstance(value, kind)`` for a module and a class of the library or of torch, or None."""
    if isinstance(kind, tuple):  # isinstance(x, (A, B))
        verdicts = [is_instance(facts, value, item) for item in kind]
        return True if True in verdicts else (None if None in verdicts else False)
    if isinstance(kind, Builtin) and kind.name in _PLAIN_TYPES:
        return False if isinstance(value, (ModelInstance, TorchModule, OtherModules)) else None
    if isinstance(kind, TorchClass):
        return is_torch_instance(facts, value, kind.name)
    if not isinstance(kind, ModelClass):
        return None
    if isinstance(value, TorchModule):
        return False
    if isinstance(value, OtherModules):
        return False if is_model(facts.library, kind.info) else None
    if isinstance(value, ModelInstance):
        return kind.info in facts.library.mro(value.info)
    return None


def is_torch_instance(facts: TestClassFacts, value: object, kind: str) -> bool | None:
    """``isinstance(value, nn.<kind>)``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return False
    if isinstance(value, TorchModule):
        return _torch_subclass(value.name, kind)
    if isinstance(value, TorchTensor):  # a module's weight: a parameter, so a tensor
        return kind in ("Tensor", "Parameter")
    if not isinstance(value, ModelInstance):
        return None
    library, verdicts = facts.library, []
    for ancestor in library.mro(value.info):
        path = library.path_of(ancestor)
        for base in ancestor.bases:
            if library.find(base, path) is None and base not in _NOT_MODULES:
                verdicts.append(_torch_subclass(base, kind))
    if True in verdicts:
        return True
    return None if None in verdicts else False


def _torch_subclass(name: str, kind: str) -> bool | None:
    """Whether torch class ``name`` is ``kind`` or derives from it; None for a class not listed."""
    if name == kind:
        return True
    if name != "Module" and name not in _TORCH_ANCESTORS:
        return None
    return kind == "Module" or (name != "Module" and kind in _TORCH_ANCESTORS[name])


def is_module(value: object) -> bool:
    """A model, a module of the library or of torch, or a tensor one always holds: never None."""
    return isinstance(value, (ModelInstance, TorchModule, TorchTensor, OtherModules))


def torch_package_attribute(name: str) -> object | None:
    """``torch.nn`` and ``torch.Tensor``; None for another attribute of ``torch``."""
    if name == "nn":
        return TORCH_NN
    return TorchClass(name) if name == "Tensor" else None


def torch_attribute(owner: object, name: str, unknown: Unknown) -> object:
    """``nn.<name>``, and what a torch module's class is."""
    if isinstance(owner, TorchNamespace):
        return TorchClass(name)
    if isinstance(owner, TorchModule) and name == "__class__":
        return TorchClass(owner.name)
    if isinstance(owner, TorchModule) and name == "weight" and owner.name in _WEIGHTED:
        return TorchTensor()
    if isinstance(owner, TorchClass) and name == "__name__":
        return owner.name
    return unknown
