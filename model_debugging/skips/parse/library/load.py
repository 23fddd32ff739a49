"""Find the library sources of a checkout and read them: cached records first, the rest in parallel."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from model_debugging.skips.records.library import LibraryFile
from model_debugging.skips.source.scanned_paths import LIBRARY_FOLDER
from model_debugging.skips.work.collector import collector_paused
from model_debugging.skips.work.entries import ParseCache, cache_key, entry_for_parent, entry_value
from model_debugging.skips.work.pool import worker_pool
from model_debugging.skips.work.progress import Phase

# Files outside models/ whose classes and mappings the common tests consult.
_SHARED_FILES = (
    "modeling_utils.py",
    "configuration_utils.py",
    "generation/utils.py",
    "conversion_mapping.py",
    "modeling_layers.py",  # the generic task heads, whose constructors build the base model
    # the other bases of PreTrainedModel and GenerationMixin: an attribute a model lacks is known
    # absent only when every class of its MRO is read
    "utils/hub.py",
    "integrations/peft.py",
    "generation/continuous_batching/continuous_api.py",
    "backbone_utils.py",  # BackboneMixin, a base of every backbone class
)
_MODEL_FILE_PREFIXES = ("modeling_", "configuration_")
# Files of a model's folder that hold no part of a model (processors, conversion scripts, the
# modular sources the modeling files are generated from): not looked for among the imports.
_NEVER_IMPORTED_BY_MODELING = (
    "_", "modular_", "convert_", "tokenization_", "processing_", "image_processing", "feature_extraction_",
    "video_processing_",
)  # fmt: skip
_SIBLING_IMPORT = re.compile(r"^\s*from \.(\w+) import", re.MULTILINE)
_BATCH = 24  # files per worker task: fewer round trips than one file each
# Bump when the library records or their reader change meaning: old cache entries then stop matching.
LIBRARY_FORMAT = "library-29"


def library_root(repo: Path) -> Path | None:
    """``src/<package>`` holding ``models/`` (``src/transformers`` in a transformers checkout), or None."""
    source = repo / LIBRARY_FOLDER
    if not source.is_dir():
        return None
    for package in sorted(source.iterdir()):
        if (package / "models").is_dir() and (package / "modeling_utils.py").is_file():
            return package
    return None


def library_paths(repo: Path, root: Path) -> list[str]:
    """Repository-relative paths of the files the facts come from, sorted (a warm scan lists them
    before anything else: ``os.scandir`` and strings, not ``pathlib``)."""
    prefix = root.relative_to(repo).as_posix()
    found = [f"{prefix}/{name}" for name in _SHARED_FILES if (root / name).is_file()]
    models = os.path.join(root, "models")
    with os.scandir(models) as entries:
        folders = sorted(entry.name for entry in entries if entry.is_dir())
    for folder in folders:
        with os.scandir(os.path.join(models, folder)) as entries:  # as glob("*.py"): no hidden names
            names = sorted(e.name for e in entries if e.name.endswith(".py") and not e.name.startswith("."))
        modeling = [name for name in names if _is_model_file(name)]
        chosen = modeling + _imported_siblings(os.path.join(models, folder), names, modeling)
        found += [f"{prefix}/models/{folder}/{name}" for name in chosen]
    return found


def _is_model_file(name: str) -> bool:
    return name.startswith(_MODEL_FILE_PREFIXES) and not name.startswith("modeling_flax_")


def listed_when_present(path: str, root: str) -> bool:
    """Whether :func:`library_paths` lists ``path`` whenever the file exists, by its name alone: a
    shared file, or a modeling or configuration file of a model's folder (``root`` is the library's
    folder, ``src/transformers``; the siblings the modeling files import are left aside)."""
    inside = path.removeprefix(f"{root}/")
    if inside == path:
        return False
    if inside in _SHARED_FILES:
        return True
    parts = inside.split("/")
    return len(parts) == 3 and parts[0] == "models" and _is_model_file(parts[2]) and parts[2].endswith(".py")


def listed_as_sibling(path: str, root: str, importer: str) -> bool:
    """Whether :func:`library_paths` lists ``path`` whenever the file exists because the modeling
    file ``importer`` of the same model's folder imports it as ``from .<name> import ...``."""
    folder, _, name = path.rpartition("/")
    importer_folder, _, importer_name = importer.rpartition("/")
    return (
        folder == importer_folder
        and listed_when_present(importer, root)
        and importer_name.startswith("modeling_")
        and not _is_model_file(name)
        and not name.startswith(_NEVER_IMPORTED_BY_MODELING)
    )


def _imported_siblings(folder: str, names: list[str], modeling: list[str]) -> list[str]:
    """The other files of a model's folder that its modeling files import from (``from .vision
    import ...``): their classes are part of the models' trees. Only folders holding such files are
    read for this."""
    others = {
        name.removesuffix(".py"): name
        for name in names
        if name not in modeling and not name.startswith(_NEVER_IMPORTED_BY_MODELING)
    }
    if not others:
        return []
    imported: set[str] = set()
    for name in modeling:
        if name.startswith("modeling_"):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                imported.update(_SIBLING_IMPORT.findall(Path(folder, name).read_text(encoding="utf-8")))
    return [name for stem, name in sorted(others.items()) if stem in imported]


def _library_key(path: str, data: bytes) -> str:
    return cache_key(f"{path}\0{LIBRARY_FORMAT}", data)


def _read_batch_pickled(repo: Path, batch: list[tuple[str, str]], cache: ParseCache | None) -> list[bytes]:
    """In a worker process: the records of ``batch`` ((path, cache key) pairs) as cache entries,
    each also written to ``cache`` when readable: the parent only unpickles them."""
    records = _read_batch(repo, [path for path, _ in batch])
    return [entry_for_parent(cache, key, record) for (_, key), record in zip(batch, records, strict=True)]


def _read_batch(repo: Path, paths: list[str]) -> list[LibraryFile]:
    from model_debugging.skips.parse.library.read import read_library_file  # not needed to find the files

    records = []
    with collector_paused():  # syntax trees and records hold no cycles
        for path in paths:
            try:
                source = (repo / path).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as error:
                records.append(LibraryFile(path, error=f"{path}:1: cannot read: {error}"))
                continue
            records.append(read_library_file(path, source))
    return records


def read_library(
    repo: Path,
    cache: ParseCache | None,
    *,
    jobs: int | None = None,
    keys: dict[str, str] | None = None,
    record_keys: dict[str, str] | None = None,
    phase: Phase | None = None,
) -> tuple[list[LibraryFile] | None, list[str]]:
    """The records of the checkout's library files (None without ``src/``) and the files that could
    not be read.

    The content key of every file read goes to ``keys`` (the scan snapshot checks them next time),
    the cache key of its record to ``record_keys`` (a rescan compares the old record with the new).
    ``phase`` counts the files read and those taken from the cache.
    """
    root = library_root(repo)
    if root is None:
        return None, []
    with collector_paused():  # the records and the index built from them all live on
        return _load(repo, root, cache, jobs, keys, record_keys, phase)


def _load(
    repo: Path,
    root: Path,
    cache: ParseCache | None,
    jobs: int | None,
    keys: dict[str, str] | None,
    record_keys: dict[str, str] | None,
    phase: Phase | None,
) -> tuple[list[LibraryFile], list[str]]:
    records: list[LibraryFile] = []
    cold: list[tuple[str, str]] = []
    for path in library_paths(repo, root):
        data = (repo / path).read_bytes()
        key = _library_key(path, data)
        if keys is not None:
            keys[path] = cache_key(path, data)
        if record_keys is not None:
            record_keys[path] = key
        hit = cache._load(key, LibraryFile) if cache is not None else None
        if hit is not None:
            records.append(hit)
        else:
            cold.append((path, key))
    if phase is not None:
        phase.tally("from the cache", len(records))
        phase.add(len(cold))
    if cold:
        batches = [cold[start : start + _BATCH] for start in range(0, len(cold), _BATCH)]
        jobs = jobs or os.cpu_count() or 1
        if jobs > 1 and len(batches) > 1:
            with worker_pool(min(jobs, len(batches))) as executor:
                arguments = ([repo] * len(batches), batches, [cache] * len(batches))
                for entries in executor.map(_read_batch_pickled, *arguments):
                    records += map(entry_value, entries)
                    if phase is not None:
                        phase.advance(len(entries))
        else:
            for path, key in cold:
                (record,) = _read_batch(repo, [path])
                if cache is not None and record.error is None:
                    cache.put_entry(key, record)
                records.append(record)
                if phase is not None:
                    phase.advance()
    errors = [record.error for record in records if record.error is not None]
    return records, errors
