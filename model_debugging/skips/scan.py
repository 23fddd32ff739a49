"""The programmatic entry point: scan a checkout and return the result mapping and the errors."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import fnmatch
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_debugging.command_line import shorten
from model_debugging.skips.aggregate import TestSummary
from model_debugging.skips.cache import ParseCache, ScanSnapshot, ScratchCache, cache_key, default_cache_dir
from model_debugging.skips.conftest_notes import conftest_notes
from model_debugging.skips.library.load import load_library
from model_debugging.skips.observed import read_reports, with_observations
from model_debugging.skips.progress import ScanProgress, phase_of
from model_debugging.skips.pytest_settings import PytestSettings, PytestSettingsError, read_pytest_settings
from model_debugging.skips.records import ParsedFile
from model_debugging.skips.rescan import (
    Checkout,
    ModelEntry,
    Reads,
    ScanMemory,
    ScanStats,
    changed_library_files,
    keep_memory,
    library_records,
    snapshot_library_keys,
    valid_snapshot,
    with_outcomes,
)
from model_debugging.skips.rescan_plan import (
    RecordsAt,
    causes_of,
    files_to_load,
    library_changes,
    models_to_evaluate,
    name_index,
    recomputed_facts,
    refolded,
)
from model_debugging.skips.resolve import ClassRef, module_name
from model_debugging.skips.results import ScanResult
from model_debugging.skips.scanned_paths import TESTS_FOLDER
from model_debugging.skips.settings import DEFAULT_SETTINGS, ScanSettings
from model_debugging.skips.store import RecordStore

# Imports are followed into files under these top-level folders only (never into src/).
_FOLLOW_IMPORTS_UNDER = (TESTS_FOLDER,)


class CheckoutError(Exception):
    """The folder is not a transformers checkout: the message says what is missing and where."""


class UnknownTestError(Exception):
    """``test_method_name`` is not a common test; ``suggestions`` holds the closest names."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name, self.suggestions = name, suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown common test {shorten(repr(name))}{hint}")


def checkout_pytest_settings(repo: Path) -> PytestSettings:
    """The checkout's pytest settings (what pytest collects); a malformed file is a CheckoutError."""
    try:
        return read_pytest_settings(repo)
    except PytestSettingsError as error:
        raise CheckoutError(str(error)) from None


def find_model_test_files(repo: Path, settings: ScanSettings, pytest: PytestSettings) -> list[str]:
    """Relative paths of model test files, sorted (their folder name is the model name): the files
    pytest collects (its ``python_files``) whose name matches the settings' pattern."""
    models_dir = repo / settings.models_dir
    found = []
    for root, dirs, files in os.walk(models_dir):
        dirs[:] = [name for name in dirs if not name.startswith((".", "__pycache__"))]
        for name in files:
            if fnmatch.fnmatch(name, settings.test_file_pattern) and pytest.collects_file(name):
                found.append(Path(root, name).relative_to(repo).as_posix())
    return sorted(found)


def check_checkout(repo: Path, settings: ScanSettings) -> None:
    root = repo.resolve()
    for relative in (settings.models_dir, *(common.path for common in settings.common_test_files)):
        if not (root / relative).resolve().is_relative_to(root):  # also through symlinks
            raise CheckoutError(
                f"{shorten(relative)} leads outside the checkout {root}; settings paths must stay inside it"
            )
    first_common = settings.common_test_files[0].path
    for relative, kind in ((first_common, "file"), (settings.models_dir, "folder")):
        target = repo / relative
        if not (target.is_file() if kind == "file" else target.is_dir()):
            raise CheckoutError(
                f"not a transformers checkout: {kind} {relative} is missing (looked for {target.resolve()}); "
                "run from the checkout root or pass --repo PATH"
            )


def _module_path(repo: Path, module: str) -> str | None:
    relative = module.replace(".", "/")
    for candidate in (f"{relative}.py", f"{relative}/__init__.py"):
        if (repo / candidate).is_file():
            return candidate
    return None


def parse_with_imports(store: RecordStore, repo: Path, paths: list[str], **options: Any) -> set[str]:
    """Parse ``paths`` and, transitively, the repository files they import from.

    Returns the names of the modules (under the followed folders) that some parsed file imports.
    """
    imported = new = store.parse(paths, _FOLLOW_IMPORTS_UNDER, **options)
    looked_up: set[str] = set()
    while new:
        wanted = set()
        for module in new - looked_up:
            looked_up.add(module)
            if store.path_of_module(module) is None:
                path = _module_path(repo, module)
                if path is not None and path not in store:
                    wanted.add(path)
        new = store.parse(sorted(wanted), _FOLLOW_IMPORTS_UNDER, **options) if wanted else set()
        imported = imported | new
    return imported


def common_tests(files: Mapping[str, ParsedFile], settings: ScanSettings) -> dict[str, tuple[str, frozenset]]:
    """test name -> (origin, classes of the common files that define it), in file order."""
    tests: dict[str, tuple[str, set[ClassRef]]] = {}
    for common in settings.common_test_files:
        parsed = files.get(common.path)
        if parsed is None or parsed.error is not None:
            continue
        for info in parsed.classes:
            for method in info.methods:
                if method.name.startswith("test_"):
                    _, refs = tests.setdefault(method.name, (common.origin, set()))
                    tests[method.name] = (
                        common.origin,
                        refs | {ClassRef(module_name(common.path), info.name)},
                    )
        for name in parsed.test_functions:
            tests.setdefault(name, (common.origin, set()))
    return {name: (origin, frozenset(refs)) for name, (origin, refs) in tests.items()}


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
        :class:`~model_debugging.skips.results.TestResult` (every model ran, skipped, undecided or not
        applicable), ``errors`` lists the files that could not be parsed or imported. ``to_json()`` gives the
        upstream ``all_tests_scan_result.json`` mapping.
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
    pytest = checkout_pytest_settings(repo)
    model_files = find_model_test_files(repo, settings, pytest)
    notes = conftest_notes(repo, model_files)
    if on_start is not None:
        on_start(len(model_files))
    cache = ParseCache(cache_dir or default_cache_dir()) if use_cache else None
    common_paths = [common.path for common in settings.common_test_files if (repo / common.path).is_file()]
    paths = sorted(set(common_paths + model_files))
    checkout = Checkout.read(repo, paths, settings, pytest) if cache is not None else None
    if cache is not None:
        snapshot = valid_snapshot(repo, cache.get_snapshot(checkout.lookup), checkout)
        if snapshot is not None:
            changed = changed_library_files(repo, snapshot, checkout)
            if not changed:
                stats.answer = "snapshot"
                if progress is not None:
                    progress.line("no scanned file changed since a scan of the same files: its result stands")
                return _selected(snapshot.result, test_method_name, notes)
            scope = _Scope(repo, settings, model_files, common_paths, jobs, pytest)
            result = _rescan(scope, cache, snapshot, checkout, changed, stats, progress)
            if result is not None:
                return _selected(result, test_method_name, notes)

    # The evaluator is most of the analyzer's code: a scan answered from its snapshot never imports it.
    from model_debugging.skips.evaluation import evaluate_models
    from model_debugging.skips.runtime.checks import load_runtime_checks

    keys: dict[str, str] = {}
    record_keys: dict[str, str] = {}
    with _records_cache(cache) as records_cache:
        store = RecordStore(repo, records_cache, elide=model_files, jobs=jobs, pytest=pytest)
        with phase_of(progress, "parsing test files", "file") as phase:
            imported = parse_with_imports(store, repo, paths, phase=phase, keys=keys)
        # Records that other files import stay in memory; the others are read again for their model.
        store.pin(common_paths)
        store.pin(sorted(filter(None, map(store.path_of_module, imported))))
        tests = common_tests({path: store.get(path) for path in common_paths if path in store}, settings)
        full_scan = test_method_name is None
        if not full_scan:  # an unknown name fails before the work
            _check_known(tests, test_method_name)
            tests = {test_method_name: tests[test_method_name]}

        with phase_of(progress, "reading the library", "file") as phase:
            runtime = load_runtime_checks(
                repo, common_paths, records_cache, jobs=jobs, keys=keys, record_keys=record_keys, phase=phase
            )
        remember = full_scan and cache is not None
        # One model at a time: its records, resolved classes and outcomes go once folded into the summaries.
        summaries = {name: TestSummary(origin) for name, (origin, _) in tests.items()}
        entries = []
        model_paths = by_model(model_files)
        with phase_of(progress, "evaluating models", "model") as phase:
            phase.add(len(model_paths))
            for model, outcomes, reads in evaluate_models(store, runtime, model_paths, tests, jobs=jobs):
                for summary, outcome in zip(summaries.values(), outcomes, strict=True):
                    summary.add(model, outcome)
                stats.models_evaluated += 1
                phase.advance()
                if remember:
                    entries.append((model, ModelEntry(outcomes, reads)))
        errors = store.errors()
    result = ScanResult({name: summaries.pop(name).result() for name in tests}, errors)
    if remember:
        library_keys = checkout.library_keys or {}
        test_keys = tuple(sorted(item for item in keys.items() if item[0] not in library_keys))
        memory = ScanMemory.of(
            tuple(tests),
            tuple(entries),
            Reads.of(runtime.shared_reads),
            runtime.library.defined_in(),
            record_keys,
        )
        _remember(cache, repo, checkout, ScanSnapshot(test_keys, None, result, ""), memory)
        if runtime.definitions_key is not None:  # again, with the notes the evaluation left on their nodes
            cache.put_entry(runtime.definitions_key, runtime.definitions)
    return dataclasses.replace(result, notes=notes)


@dataclass(frozen=True)
class _Scope:
    """What one scan covers: the checkout, its settings, its model and common test files."""

    repo: Path
    settings: ScanSettings
    model_files: list[str]
    common_paths: list[str]
    jobs: int | None
    pytest: PytestSettings


def by_model(model_files: list[str]) -> dict[str, list[str]]:
    """Model name (the folder) -> its test files."""
    model_paths: dict[str, list[str]] = {}
    for path in model_files:
        model_paths.setdefault(Path(path).parent.name, []).append(path)
    return model_paths


def _remember(
    cache: ParseCache,
    repo: Path,
    checkout: Checkout,
    snapshot: ScanSnapshot,
    memory: ScanMemory,
    outcomes_key: str | None = None,
) -> None:
    """Keep the snapshot (with the library's keys), and the memory a later rescan re-evaluates from
    (``outcomes_key``: its outcomes are the ones kept there)."""
    memory_key = cache_key("memory", checkout.lookup.encode())
    keep_memory(cache, memory_key, memory, outcomes_key)
    library_keys = snapshot_library_keys(repo, checkout, memory.all_reads())
    cache.put_snapshot(
        checkout.lookup, dataclasses.replace(snapshot, library_keys=library_keys, memory_key=memory_key)
    )


def _rescan(
    scope: _Scope,
    cache: ParseCache,
    snapshot: ScanSnapshot,
    checkout: Checkout,
    changed: set[str],
    stats: ScanStats,
    progress: ScanProgress | None,
) -> ScanResult | None:
    """The snapshot's result with the models a library change concerns evaluated again; None when the
    memory to do so is gone (the caller then scans in full)."""
    memory = cache.get_entry(snapshot.memory_key, ScanMemory)
    if memory is None or checkout.library_keys is None:
        return None
    order = list(checkout.library_keys)
    record_keys = {path: key for path, key in memory.record_keys.items() if path not in changed}
    new_records = library_records(scope.repo, cache, [path for path in order if path in changed], record_keys)
    index = name_index(memory, changed, new_records, order)
    records = RecordsAt(scope.repo, cache, order, dict(new_records))
    changes = library_changes(cache, memory, changed, new_records)
    changes, facts = recomputed_facts(memory, changes, records, index)
    dirty = models_to_evaluate(memory, changes)
    stats.library_causes = causes_of(memory, changes, dirty, facts, index)
    result, outcomes_key, shared = snapshot.result, memory.outcomes_key, memory.shared
    if dirty:
        memory = with_outcomes(cache, memory)
        if memory is None:
            return None
        outcomes_key = None
        from model_debugging.skips.evaluation import evaluate_models  # see scan_repository
        from model_debugging.skips.runtime.checks import runtime_checks

        model_paths = {model: paths for model, paths in by_model(scope.model_files).items() if model in dirty}
        store = RecordStore(scope.repo, cache, elide=scope.model_files, jobs=scope.jobs, pytest=scope.pytest)
        wanted = sorted({*scope.common_paths, *(path for paths in model_paths.values() for path in paths)})
        parse_with_imports(store, scope.repo, wanted)
        store.pin(scope.common_paths)
        tests = common_tests(
            {path: store.get(path) for path in scope.common_paths if path in store}, scope.settings
        )
        if tuple(tests) != memory.tests:
            return None
        library, loaded = records.library(files_to_load(memory, dirty, changed, index))
        stats.library_files_loaded = len(loaded)
        runtime = runtime_checks(scope.repo, library, scope.common_paths, cache)
        with phase_of(
            progress, f"evaluating the models {len(changed)} changed library file(s) concern", "model"
        ) as phase:
            phase.add(len(model_paths))
            evaluated = []
            for found in evaluate_models(store, runtime, model_paths, tests, jobs=scope.jobs):
                evaluated.append(found)
                phase.advance()
        reads = [Reads.of(runtime.shared_reads), *(reads for _, _, reads in evaluated)]
        reads += [fact for read in reads for _, fact in read.fact_reads]
        if not all(
            read.within(loaded, checkout.library_keys, index) for read in reads
        ):  # it read beyond the files it read before: the whole library
            library, _ = load_library(scope.repo, cache, jobs=scope.jobs)
            stats.library_files_loaded = len(checkout.library_keys)
            runtime = runtime_checks(scope.repo, library, scope.common_paths, cache)
            with phase_of(progress, "evaluating them again on the whole library", "model") as phase:
                phase.add(len(model_paths))
                evaluated = []
                for found in evaluate_models(store, runtime, model_paths, tests, jobs=scope.jobs):
                    evaluated.append(found)
                    phase.advance()
        shared = Reads.of(runtime.shared_reads)
        stats.answer, stats.models_evaluated = "rescan", len(evaluated)
        entries = dict(memory.models)
        for model, outcomes, reads in evaluated:
            entries[model] = ModelEntry(outcomes, reads)
        result = refolded(snapshot.result, memory, entries)
        models = entries.items()
    else:
        models = memory.models
    stats.answer = "rescan"
    memory = ScanMemory.of(memory.tests, models, shared, index, record_keys, {**memory.facts, **facts})
    _remember(cache, scope.repo, checkout, dataclasses.replace(snapshot, result=result), memory, outcomes_key)
    return result


@contextlib.contextmanager
def _records_cache(cache: ParseCache | None) -> Iterator[ParseCache]:
    """The parse cache, or a scratch one for this scan when it runs without cache."""
    if cache is not None:
        yield cache
        return
    with tempfile.TemporaryDirectory(prefix="model-debugging-scan-") as scratch:
        yield ScratchCache(scratch)


def _check_known(tests: Mapping[str, object], name: str) -> None:
    """Raise :class:`UnknownTestError` (with the closest names) when ``name`` is not in ``tests``."""
    if name not in tests:
        raise UnknownTestError(name, difflib.get_close_matches(name, tests, n=3))


def _selected(result: ScanResult, name: str | None, notes: tuple[str, ...]) -> ScanResult:
    """``result`` whole, or with only the test ``name``; with this scan's ``notes``."""
    if name is None:
        return dataclasses.replace(result, notes=notes)
    _check_known(result.tests, name)
    return ScanResult({name: result.tests[name]}, result.errors, notes)
