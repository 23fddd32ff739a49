import json

import pytest


def scan_result(tests: dict[str, tuple[list[str], dict[str, str]]], origin: str = "common") -> dict:
    """An analyzer result from ``{test: (models that ran, {model that skipped: reason})}``."""
    result = {}
    for name, (ran, skipped) in tests.items():
        total = len(ran) + len(skipped)
        result[name] = {
            "origin": origin,
            "models_ran": sorted(ran),
            "models_skipped": sorted(skipped),
            "skipped_proportion": round(len(skipped) / total, 4) if total else 0.0,
            "reasons_skipped": sorted(f"{model}: {reason}" for model, reason in skipped.items()),
        }
    return result


@pytest.fixture
def write_scan(tmp_path):
    """Write a scan result built by :func:`scan_result` to ``tmp_path/<name>.json`` and return its path."""

    def write(name: str, tests: dict) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(scan_result(tests)), encoding="utf-8")
        return str(path)

    return write
