"""The pull-request check: scan the base revision and the working tree, list the skips the change introduces."""

from model_debugging.skips.pr_check.introduced import find_introduced_skips

__all__ = ["find_introduced_skips"]
