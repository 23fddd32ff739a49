"""What a machine needs for a common test to run at all: the environment guards that every model
running the test carries (``@require_torch_accelerator``, ``@require_flash_attn``, ``@slow``, ...).

A test whose needs name an accelerator is skipped everywhere on a CPU machine whatever the model
does, so the tables list such tests apart from those that run on any machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# a decorator of transformers' testing_utils, as a condition line holds it: require_x, require_x("2.6"), slow
_REQUIREMENT = re.compile(r"(?:require_\w+|slow)(?:\(.*\))?", re.DOTALL)
_ACCELERATOR_WORDS = ("gpu", "accelerator", "cuda", "flash_attn", "mps", "xpu", "npu", "hpu", "tpu")


def shared_requirements(conditions: Iterable[str], models_ran: Iterable[str]) -> tuple[str, ...]:
    """The requirement decorators in ``conditions`` (``"<model>: <condition>"`` lines) that every model
    of ``models_ran`` carries, sorted; none when no model runs the test."""
    per_model: dict[str, set[str]] = {model: set() for model in models_ran}
    for line in conditions:
        model, _, condition = line.partition(": ")
        if model in per_model and _REQUIREMENT.fullmatch(condition):
            per_model[model].add(condition)
    if not per_model:
        return ()
    return tuple(sorted(set.intersection(*per_model.values())))


def needs_accelerator(requirements: Iterable[str]) -> bool:
    """Some requirement asks for a GPU or another accelerator (``require_non_hpu`` asks for its absence)."""
    return any(
        not name.startswith("require_non_") and any(word in name for word in _ACCELERATOR_WORDS)
        for name in requirements
    )


def needs_text(requirements: Iterable[str]) -> str:
    """``torch_accelerator, flash_attn, slow``: the requirements without the ``require_`` prefix."""
    return ", ".join(name.removeprefix("require_") for name in requirements)
