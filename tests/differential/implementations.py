"""The two implementations the differential tests run every scenario through: transformers' and ours."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import pytest

transformers = pytest.importorskip("transformers")

from transformers import monkey_patching as upstream_patching  # noqa: E402
from transformers.utils import generic as upstream_generic  # noqa: E402
from transformers.utils import output_capturing as upstream_capturing  # noqa: E402

from model_debugging import monkey_patching as our_patching  # noqa: E402
from model_debugging import output_capturing as our_capturing  # noqa: E402


@dataclass(frozen=True)
class Implementation:
    """One implementation's public entry points, under the names both share."""

    name: str
    patching: ModuleType
    capturing: ModuleType
    merge_with_config_defaults: Callable
    # transformers looks a model's declaration up in a registry PreTrainedModel fills; toy models fill it here
    register_declaration: Callable

    def __repr__(self) -> str:
        return self.name


def _register_upstream(model) -> None:
    upstream_capturing._CAN_RECORD_REGISTRY[model] = type(model)._can_record_outputs


UPSTREAM = Implementation(
    "transformers",
    upstream_patching,
    upstream_capturing,
    upstream_generic.merge_with_config_defaults,
    _register_upstream,
)
OURS = Implementation(
    "model_debugging",
    our_patching,
    our_capturing,
    our_capturing.merge_with_config_defaults,
    lambda model: None,
)
BOTH = (UPSTREAM, OURS)


def run_both(scenario: Callable[[Implementation], object]) -> tuple[object, object]:
    """The scenario's observable result through transformers, then through ours."""
    return scenario(UPSTREAM), scenario(OURS)
