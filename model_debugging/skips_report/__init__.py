"""Deprecated: the trend report and the PR check moved to :mod:`model_debugging.skips`.

The old module paths (``model_debugging.skips_report.trend``, ``.pr_check_command``, ...) keep
working for one release: importing this package warns and maps each of them to its new module.
"""

import importlib
import sys
import warnings

# old submodule -> the module that replaced it
_MOVED = {
    "git_snapshot": "model_debugging.skips.report.pr_check.git_snapshot",
    "pr_check": "model_debugging.skips.report.pr_check.introduced",
    "pr_check_command": "model_debugging.skips.report.pr_check.command",
    "pr_report": "model_debugging.skips.report.pr_check.report",
    "previous_run": "model_debugging.skips.report.previous_run",
    "report_command": "model_debugging.skips.report.command",
    "settings": "model_debugging.skips.report.settings",
    "trend": "model_debugging.skips.report.trend",
    "trend_report": "model_debugging.skips.report.trend_report",
}

warnings.warn(
    "model_debugging.skips_report is deprecated and will be removed in the next release; "
    "import from model_debugging.skips (trend, report_command, pr_check) instead",
    DeprecationWarning,
    stacklevel=2,
)
for _old, _new in _MOVED.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(_new)

from model_debugging.skips.report.pr_check import find_introduced_skips  # noqa: E402
from model_debugging.skips.report.trend import SkipTrend, compute_trend  # noqa: E402

__all__ = ["SkipTrend", "compute_trend", "find_introduced_skips"]
