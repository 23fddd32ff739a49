"""The skipped-test analyzer: parse test files with libcst, resolve classes, aggregate per test.

Never imports torch, nor anything of the scanned checkout::

    from model_debugging.skips import scan_repository

    results, errors = scan_repository("/path/to/transformers", test_method_name="test_training")
    print(results["test_training"]["reasons_skipped"])
"""

from model_debugging.skips.scan import CheckoutError, UnknownTestError, scan_repository
from model_debugging.skips.settings import DEFAULT_SETTINGS, ScanSettings, load_settings

__all__ = [
    "DEFAULT_SETTINGS",
    "CheckoutError",
    "ScanSettings",
    "UnknownTestError",
    "load_settings",
    "scan_repository",
]
