"""The skipped-test analyzer: parse test files with libcst, resolve classes, aggregate per test.

Never imports torch, nor anything of the scanned checkout::

    from model_debugging.skips import scan_repository

    result = scan_repository("/path/to/transformers", test_method_name="test_training")
    print(result.tests["test_training"].reasons_skipped)
    result.to_json()  # the mapping of all_tests_scan_result.json

The trend report and the pull-request check live beside the analyzer, in ``report/``.
"""

from model_debugging.skips.decide.scope import UnknownTestError
from model_debugging.skips.records.outcome import Status
from model_debugging.skips.records.test_files import SkipKind
from model_debugging.skips.results.scan_result import ClassVerdict, ScanResult, SkippedPair, TestResult
from model_debugging.skips.scan import scan_repository
from model_debugging.skips.source.checkout import CheckoutError
from model_debugging.skips.source.settings import DEFAULT_SETTINGS, ScanSettings, load_settings

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
