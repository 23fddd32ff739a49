"""What calling a model gives in a test: its outputs, and whether they hold ``past_key_values``.

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

from collections.abc import Callable

from model_debugging.skips.interp.values import ModelInstance, Unknown
from model_debugging.skips.models.generation_cache.model_calls import (
    ModelOutputs,
    call_model,
    outputs_contain,
)
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.test_class.context import TestClassFacts


@HANDLERS.call(ModelInstance)
def _model_called(
    facts: TestClassFacts,
    model: ModelInstance,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: Callable[[], list[object]],
    unknown: Unknown,
) -> object:
    """``model(**inputs)``."""
    return call_model(model, keywords, unpacked())


@HANDLERS.contains(ModelOutputs)
def _in_outputs(facts: TestClassFacts, container: ModelOutputs, key: object) -> bool | None:
    return outputs_contain(facts, container, key) if isinstance(key, str) else None


@HANDLERS.explanation(ModelOutputs)
def _outputs_only_the_run_knows(written: str) -> str:
    return f"which outputs `{written}` holds is only known by running the model"
