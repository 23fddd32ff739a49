"""Scan in the JSON shape the tests compare with (``all_tests_scan_result.json`` and its errors)."""

from model_debugging import scan_repository


def scan_json(repo, **options) -> tuple[dict, list]:
    """``(results, errors)`` of :func:`scan_repository` as ``to_json()`` / ``errors_json()`` give them."""
    result = scan_repository(repo, **options)
    return result.to_json(), result.errors_json()
