"""What produced a scan result: the analyzer (this package's version, a digest of the analyzer's
sources, a digest of the scan settings) and, where known, the commit scanned.

Every test's entry of a result carries it under the extra key ``provenance`` (the same value in each:
``pd.read_json(path).T`` and upstream's keys are unchanged). The trend report compares two results'
analyzers before it compares their verdicts: a verdict the analyzer moved is no change of the tree.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from model_debugging import __version__
from model_debugging.skips.source.settings import ScanSettings
from model_debugging.skips.work.entries import analyzer_version

PROVENANCE_KEY = "provenance"
_DIGEST = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256 object names
_SHOWN = 12  # digest characters shown in reports, as git shortens commits


@dataclass(frozen=True)
class Provenance:
    """The analyzer that made a result, and the commit it read (None: not a clean git checkout)."""

    package_version: str
    analyzer_digest: str
    settings_digest: str
    commit: str | None

    @property
    def analyzer(self) -> str:
        """The analyzer as a reader is shown it: ``model-debugging 0.1.0, sources 1a2b3c4d5e6f, settings 9f8e7d6c5b4a``."""
        return (
            f"model-debugging {self.package_version}, sources {self.analyzer_digest[:_SHOWN]}, "
            f"settings {self.settings_digest[:_SHOWN]}"
        )

    def same_analyzer(self, other: Provenance) -> bool:
        return (self.package_version, self.analyzer_digest, self.settings_digest) == (
            other.package_version,
            other.analyzer_digest,
            other.settings_digest,
        )

    def to_json(self) -> dict[str, str | None]:
        return {
            "package_version": self.package_version,
            "analyzer_digest": self.analyzer_digest,
            "settings_digest": self.settings_digest,
            "commit": self.commit,
        }


def settings_digest(settings: ScanSettings) -> str:
    """A digest of the scan settings (which files hold the common tests, where the models are)."""
    return hashlib.sha256(repr(settings).encode()).hexdigest()


def this_analyzer(settings: ScanSettings, commit: str | None) -> Provenance:
    """The provenance of a scan made now, by this installation, with ``settings``, of ``commit``."""
    return Provenance(__version__, analyzer_version(), settings_digest(settings), commit)


def provenance_problem(value: object) -> str | None:
    """Why ``value`` (a ``provenance`` entry as JSON gives it) is no provenance, or None."""
    if not isinstance(value, dict):
        return f"must be an object, got {type(value).__name__}"
    for key in ("package_version", "analyzer_digest", "settings_digest", "commit"):
        if key not in value:
            return f"misses '{key}'"
    if not isinstance(value["package_version"], str) or not value["package_version"]:
        return f"'package_version' must be a version, got {value['package_version']!r}"
    for key in ("analyzer_digest", "settings_digest"):
        if not isinstance(value[key], str) or not _DIGEST.fullmatch(value[key]):
            return f"'{key}' must be 64 hex digits, got {value[key]!r}"
    commit = value["commit"]
    if commit is not None and not (isinstance(commit, str) and _COMMIT.fullmatch(commit)):
        return f"'commit' must be a commit id or null, got {commit!r}"
    return None


def provenance_from_json(value: dict) -> Provenance:
    """The provenance of an entry :func:`provenance_problem` accepted."""
    return Provenance(
        value["package_version"], value["analyzer_digest"], value["settings_digest"], value["commit"]
    )
