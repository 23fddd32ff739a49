"""The skipped-test analyzer: parse test files with libcst, resolve classes, aggregate per test.

Never imports torch, nor anything of the scanned checkout::

    from model_debugging.skips import scan_repository

    result = scan_repository("/path/to/transformers", test_method_name="test_training")
    print(result.tests["test_training"].reasons_skipped)
    result.to_json()  # the mapping of all_tests_scan_result.json

The trend report (``trend``, ``report_command``) and the pull-request check (``pr_check``) live
beside the analyzer.
"""

from model_debugging.skips.outcome import Status
from model_debugging.skips.records import SkipKind
from model_debugging.skips.results import ClassVerdict, ScanResult, SkippedPair, TestResult
from model_debugging.skips.scan import CheckoutError, UnknownTestError, scan_repository
from model_debugging.skips.settings import DEFAULT_SETTINGS, ScanSettings, load_settings

__all__ = [
    "DEFAULT_SETTINGS",
    "CheckoutError",
    "ClassVerdict",
    "ScanResult",
    "ScanSettings",
    "SkipKind",
    "SkippedPair",
    "Status",
    "TestResult",
    "UnknownTestError",
    "load_settings",
    "scan_repository",
]
