"""Run the skipped-test analyzer (``utils/scan_skipped_tests.py`` of this project) in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from model_debugging.skips_report.settings import PROJECT_ROOT

ANALYZER_SCRIPT = PROJECT_ROOT / "utils" / "scan_skipped_tests.py"
RESULT_NAME = "all_tests_scan_result.json"


class AnalyzerError(RuntimeError):
    """The analyzer is missing or failed; the message carries the end of its error output."""


def scan_checkout(repo: str | os.PathLike, output_dir: str | os.PathLike) -> Path:
    """Scan the transformers-style checkout ``repo`` and return the path of its result JSON."""
    if not ANALYZER_SCRIPT.is_file():
        raise AnalyzerError(f"the analyzer script {ANALYZER_SCRIPT} is missing; run from a project checkout")
    command = [sys.executable, str(ANALYZER_SCRIPT), "--repo", str(repo), "--output_dir", str(output_dir)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-20:])
        raise AnalyzerError(f"scanning {repo} failed (exit {result.returncode}):\n{tail}")
    return Path(output_dir) / RESULT_NAME
