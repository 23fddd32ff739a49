"""Turn per-model outcomes of one test into the upstream result entry (plus extras)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_debugging.skips.analyze import Outcome


def summarize(origin: str, outcomes: Mapping[str, Outcome]) -> dict[str, Any]:
    """The entry for one test: upstream keys first, then ``models_not_applicable``, ``skips``, ``conditions``.

    ``skipped_proportion`` is over the models the test applies to (ran + skipped), rounded to 4.
    """
    ran = sorted(model for model, outcome in outcomes.items() if outcome.status == "ran")
    skipped = sorted(model for model, outcome in outcomes.items() if outcome.status == "skipped")
    applicable = len(ran) + len(skipped)
    skips = [
        {
            "model": model,
            "reason": outcomes[model].skip.reason,
            "kind": outcomes[model].skip.kind,
            "test_class": outcomes[model].test_class,
            "file": outcomes[model].file,
            "line": outcomes[model].skip.line,
        }
        for model in skipped
    ]
    return {
        "origin": origin,
        "models_ran": ran,
        "models_skipped": skipped,
        "skipped_proportion": round(len(skipped) / applicable, 4) if applicable else 0.0,
        "reasons_skipped": sorted(f"{entry['model']}: {entry['reason']}" for entry in skips),
        "models_not_applicable": sorted(
            model for model, outcome in outcomes.items() if outcome.status == "not_applicable"
        ),
        "skips": skips,
        "conditions": sorted(
            f"{model}: {text}" for model, outcome in outcomes.items() for text in outcome.conditions
        ),
    }
