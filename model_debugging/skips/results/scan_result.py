"""What a scan returns: frozen records per common test, turned into the JSON shape only at output.

:meth:`ScanResult.to_json` gives upstream's ``all_tests_scan_result.json`` mapping (its keys keep
their meaning) plus the extras: ``models_not_applicable``, ``models_undecided``, ``skips`` (one
record per skipped model), ``conditions`` and ``classes`` (the verdict of each test class of the
models with several classes the test applies to, unless they all run it), and ``provenance`` (what
made the result, see :mod:`~model_debugging.skips.results.provenance`; the same in every entry).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from model_debugging.skips.records.outcome import Status
from model_debugging.skips.records.test_files import ParseError, SkipKind
from model_debugging.skips.results.provenance import PROVENANCE_KEY, Provenance


@dataclass(frozen=True)
class SkippedPair:
    """One model that skips the test: the reason written in the source and where."""

    model: str
    reason: str
    kind: SkipKind
    test_class: str | None
    file: str | None
    line: int

    def to_json(self) -> dict[str, str | int | None]:
        return {
            "model": self.model,
            "reason": self.reason,
            "kind": self.kind.value,
            "test_class": self.test_class,
            "file": self.file,
            "line": self.line,
        }


@dataclass(frozen=True)
class ClassVerdict:
    """One test class's verdict, for a model with several test classes the test applies to (not all
    of which run it): ``class_file`` collects the class, ``skip`` is set when it skips, ``because``
    when it is undecided."""

    model: str
    test_class: str
    class_file: str
    status: Status
    skip: SkippedPair | None = None
    because: str | None = None

    def to_json(self) -> dict[str, str | int | None]:
        entry: dict[str, str | int | None] = {
            "model": self.model,
            "test_class": self.test_class,
            "class_file": self.class_file,
            "status": self.status.value,
        }
        if self.skip is not None:
            entry.update({key: value for key, value in self.skip.to_json().items() if key != "model"})
        if self.because is not None:
            entry["because"] = self.because
        return entry


@dataclass(frozen=True)
class TestResult:
    """Every model's verdict on one common test; each model is in exactly one of the four groups.

    ``conditions`` holds ``"<model>: <condition>"`` lines: environment guards of models that run
    the test, and what keeps an undecided model undecided.
    """

    __test__ = False  # not a pytest test class

    origin: str
    models_ran: tuple[str, ...]
    skips: tuple[SkippedPair, ...]  # sorted by model
    models_undecided: tuple[str, ...]
    models_not_applicable: tuple[str, ...]
    conditions: tuple[str, ...]
    classes: tuple[ClassVerdict, ...] = ()  # sorted by model, then class

    @property
    def models_skipped(self) -> tuple[str, ...]:
        return tuple(skip.model for skip in self.skips)

    @property
    def skipped_proportion(self) -> float:
        """Skipped over the models the test is decided for (ran + skipped), rounded to 4 digits."""
        decided = len(self.models_ran) + len(self.skips)
        return round(len(self.skips) / decided, 4) if decided else 0.0

    @property
    def reasons_skipped(self) -> list[str]:
        return sorted(f"{skip.model}: {skip.reason}" for skip in self.skips)

    def class_skips(self) -> dict[tuple[str, str | None, str | None], SkippedPair]:
        """Every test class that skips the test, ``(model, class, file collecting it) -> skip``: those
        of the models with several classes (a class skips even when another runs; their files are
        known), and the one of each other model (its file None)."""
        found = {
            (verdict.model, verdict.test_class, verdict.class_file): verdict.skip
            for verdict in self.classes
            if verdict.skip is not None
        }
        several = {verdict.model for verdict in self.classes}
        found.update(
            {(skip.model, skip.test_class, None): skip for skip in self.skips if skip.model not in several}
        )
        return dict(sorted(found.items(), key=lambda item: tuple(part or "" for part in item[0])))

    @functools.cached_property
    def json_text(self) -> str:
        """:meth:`to_json` as one line of JSON, encoded once: a result kept in the cache keeps it too
        (see :meth:`ScanResult.encoded`), so a result answered from there is written without encoding."""
        return json.dumps(self.to_json(), ensure_ascii=False)

    def to_json(self) -> dict[str, object]:
        """Upstream keys first (same order), then the extras."""
        return {
            "origin": self.origin,
            "models_ran": list(self.models_ran),
            "models_skipped": list(self.models_skipped),
            "skipped_proportion": self.skipped_proportion,
            "reasons_skipped": self.reasons_skipped,
            "models_not_applicable": list(self.models_not_applicable),
            "models_undecided": list(self.models_undecided),
            "skips": [skip.to_json() for skip in self.skips],
            "conditions": list(self.conditions),
            "classes": [verdict.to_json() for verdict in self.classes],
        }


class CombinedStatus(Protocol):
    """The scan joined with test runs and inert findings (``skips/observed``): what each test's JSON
    entry gets of it."""

    def test_json(self, name: str) -> dict[str, object] | None: ...


@dataclass(frozen=True)
class ScanResult:
    """A whole scan: ``tests`` in the common files' order, the files that could not be read or
    imported, and ``notes`` on what the scan does not model (a ``conftest.py`` that skips tests);
    ``combined``: the scan joined with test runs and inert findings, when given (each test's JSON
    entry then has a ``combined`` entry: every model by combined status); ``provenance``: what made
    the result (set by ``scan_repository`` on each scan, never kept in a cache: the commit may differ)."""

    tests: Mapping[str, TestResult]
    errors: tuple[ParseError, ...]
    notes: tuple[str, ...] = ()
    combined: CombinedStatus | None = None
    provenance: Provenance | None = None

    def to_json(self) -> dict[str, dict[str, object]]:
        found = {}
        for name, result in self.tests.items():
            entry = result.to_json()
            if self.combined is not None:
                entry["combined"] = self.combined.test_json(name)
            if self.provenance is not None:
                entry[PROVENANCE_KEY] = self.provenance.to_json()
            found[name] = entry
        return found

    def encoded(self) -> ScanResult:
        """This result, each test's :attr:`TestResult.json_text` worked out (and pickled with it)."""
        for test in self.tests.values():
            _ = test.json_text
        return self

    def errors_json(self) -> list[dict[str, str | int]]:
        return [error.as_dict() for error in self.errors]
