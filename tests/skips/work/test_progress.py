"""A long scan shows every phase with its count: a bar on a terminal, a line with its time in a CI log."""

import io
import re
import subprocess
import sys

from model_debugging import scan_repository
from model_debugging.skips.work.progress import ScanProgress
from tests.skips.models.test_runtime_skips import checkout  # noqa: F401  (the fixture: alpha and beta)


def test_a_terminal_gets_a_bar_per_phase_with_its_count(checkout, tmp_path):  # noqa: F811
    shown = io.StringIO()
    scan_repository(
        checkout, cache_dir=tmp_path / "cache", jobs=1, progress=ScanProgress(shown, interactive=True)
    )
    bars = shown.getvalue()
    for phase, count in (
        ("parsing test files", "4/4"),
        ("reading the library", "11/11"),
        ("evaluating models", "2/2"),
    ):
        assert phase in bars and count in bars, phase


def test_a_log_gets_one_line_per_phase_and_says_how_a_warm_scan_was_answered(checkout, tmp_path):  # noqa: F811
    lines = io.StringIO()
    scan_repository(
        checkout, cache_dir=tmp_path / "cache", jobs=1, progress=ScanProgress(lines, interactive=False)
    )
    first = lines.getvalue().splitlines()
    assert [line.split(" in ")[0] for line in first] == [
        "parsing test files: 4 files",
        "reading the library: 11 files",
        "evaluating models: 2 models",
    ]
    assert all(re.search(r" in [0-9.]+ s \(CPU [0-9.]+ s\)$", line) for line in first), first
    again = io.StringIO()
    scan_repository(
        checkout, cache_dir=tmp_path / "cache", jobs=1, progress=ScanProgress(again, interactive=False)
    )
    assert again.getvalue() == "no scanned file changed since a scan of the same files: its result stands\n"


def test_a_phase_line_counts_the_cpu_of_the_worker_processes_it_ended():
    lines = io.StringIO()
    with ScanProgress(lines, interactive=False).phase("working", "job") as phase:
        subprocess.run([sys.executable, "-c", "sum(range(3 * 10**7))"], check=True)  # the parent only waits
        phase.advance()
    found = re.fullmatch(r"working: 1 job in ([0-9.]+) s \(CPU ([0-9.]+) s\)\n", lines.getvalue())
    assert found is not None, lines.getvalue()
    assert float(found[2]) >= 0.3
