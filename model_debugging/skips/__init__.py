"""The skipped-test analyzer: parse test files with libcst, resolve classes, aggregate per test.

Never imports torch, nor anything of the scanned checkout::

    from model_debugging import scan_repository

    result = scan_repository("/path/to/transformers", test_method_name="test_training")
    print(result.tests["test_training"].reasons_skipped)
    result.to_json()  # the mapping of all_tests_scan_result.json

The trend report and the pull-request check live beside the analyzer, in ``report/``.
"""
