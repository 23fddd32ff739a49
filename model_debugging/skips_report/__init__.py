"""Skip trend report between two analyzer results, and the pull-request check for new skips."""

from model_debugging.skips_report.pr_check import find_introduced_skips
from model_debugging.skips_report.trend import SkipTrend, compute_trend

__all__ = ["SkipTrend", "compute_trend", "find_introduced_skips"]
