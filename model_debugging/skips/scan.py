"""The programmatic entry point: scan a checkout and return the result (with the files that could
not be read).

``scan_repository`` checks the checkout, then runs the scan itself (``decide/scan.py``), through the
cache (``incremental/``) unless told not to.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from model_debugging.skips.decide.scope import ScanScope, check_test_name
from model_debugging.skips.incremental.answer import cached_scan
from model_debugging.skips.incremental.memory import ScanStats
from model_debugging.skips.observed import read_reports, with_observations
from model_debugging.skips.results.provenance import this_analyzer
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.checkout import (
    check_checkout,
    checkout_pytest_settings,
    find_model_test_files,
)
from model_debugging.skips.source.conftest_notes import conftest_notes
from model_debugging.skips.source.scanned_commit import scanned_commit
from model_debugging.skips.source.scanned_paths import scanned_folders
from model_debugging.skips.source.settings import DEFAULT_SETTINGS, ScanSettings
from model_debugging.skips.work.entries import ParseCache, ScratchCache, default_cache_dir
from model_debugging.skips.work.progress import ScanProgress


def scan_repository(
    repo: str | os.PathLike = ".",
    *,
    config: ScanSettings | None = None,
    test_method_name: str | None = None,
    jobs: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    progress: ScanProgress | None = None,
    on_start: Callable[[int], None] | None = None,
    stats: ScanStats | None = None,
    observed: Iterable[str | os.PathLike] | None = None,
) -> ScanResult:
    """Scan a transformers checkout statically (nothing in it is imported or run).

    Args:
        repo (`str` or `os.PathLike`, *optional*, defaults to `"."`): the checkout's root.
        config (`ScanSettings`, *optional*): which files hold the common tests; built-in defaults if None.
        test_method_name (`str`, *optional*): scan only this test (raises `UnknownTestError` if unknown).
        jobs (`int`, *optional*): parallel parsing processes; defaults to the CPU count.
        cache_dir (`str`, *optional*): the parse cache; defaults to `$XDG_CACHE_HOME/model-debugging/scan`.
        use_cache (`bool`, *optional*, defaults to `True`): read and write the parse cache.
        progress (`ScanProgress`, *optional*): shows each phase (parsing, the library, the evaluation)
            with its count: a bar on a terminal, else a line with its time when it ends.
        on_start (`callable`, *optional*): called with the number of model test files before parsing.
        stats (`ScanStats`, *optional*): filled with what the scan did (where its answer came from,
            how many models it evaluated).
        observed (`list`, *optional*): reports of test runs (junit XML, ``--make-reports`` folders,
            collated reports, our pytest plugin's records, or folders of them) to join with the
            verdicts: ``result.combined`` (raises `ReportError` for a file that is not one, before scanning).

    Returns:
        `ScanResult`: ``tests`` maps each common test name to its
        :class:`~model_debugging.skips.results.scan_result.TestResult` (every model ran, skipped, undecided or not
        applicable), ``errors`` lists the files that could not be parsed or imported, ``provenance`` the
        analyzer and the commit scanned. ``to_json()`` gives the ``all_tests_scan_result.json`` mapping.
    """
    if observed is not None:  # every report is read before the scan: a bad one fails first
        reports = read_reports(observed)
        result = scan_repository(
            repo,
            config=config,
            test_method_name=test_method_name,
            jobs=jobs,
            cache_dir=cache_dir,
            use_cache=use_cache,
            progress=progress,
            on_start=on_start,
            stats=stats,
        )
        return with_observations(result, reports, Path(repo), config or DEFAULT_SETTINGS)
    repo = Path(repo)
    stats = stats if stats is not None else ScanStats()
    settings = config or DEFAULT_SETTINGS
    check_checkout(repo, settings)
    # what the scan reads, taken before it reads it
    provenance = this_analyzer(settings, scanned_commit(repo, scanned_folders(settings)))
    pytest = checkout_pytest_settings(repo)
    model_files = find_model_test_files(repo, settings, pytest)
    notes = conftest_notes(repo, model_files)
    common_paths = [common.path for common in settings.common_test_files if (repo / common.path).is_file()]
    scope = ScanScope(repo, settings, pytest, model_files, common_paths, jobs)
    with _entries(cache_dir, use_cache) as entries:
        if test_method_name is not None:  # a mistyped name fails before the scan starts, not after it
            check_test_name(scope, entries, test_method_name)
        if on_start is not None:
            on_start(len(model_files))
        if use_cache:
            result = cached_scan(
                scope, entries, test_method_name=test_method_name, progress=progress, stats=stats
            )
            return dataclasses.replace(_selected(result, test_method_name, notes), provenance=provenance)
        from model_debugging.skips.decide.scan import scan  # see cached_scan: only when it runs

        full = scan(scope, entries, test_method_name=test_method_name, progress=progress)
    stats.models_evaluated = full.evaluated
    return dataclasses.replace(full.result, notes=notes, provenance=provenance)


@contextlib.contextmanager
def _entries(cache_dir: str | os.PathLike | None, use_cache: bool) -> Iterator[ParseCache]:
    """Where a scan's records go: the parse cache, or for a scan run without cache a scratch folder
    (read back when their model is evaluated)."""
    if use_cache:
        yield ParseCache(cache_dir or default_cache_dir())
        return
    with tempfile.TemporaryDirectory(prefix="model-debugging-scan-") as scratch:
        yield ScratchCache(scratch)


def _selected(result: ScanResult, name: str | None, notes: tuple[str, ...]) -> ScanResult:
    """``result`` whole, or with only the test ``name`` (a common test: ``check_test_name`` said so);
    with this scan's ``notes``."""
    if name is None:
        return dataclasses.replace(result, notes=notes)
    return ScanResult({name: result.tests[name]}, result.errors, notes)
