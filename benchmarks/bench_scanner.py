"""Time the skipped-test scanner on a transformers checkout, beside the checkout's own regex scanner.

    python benchmarks/bench_scanner.py --repo /path/to/transformers [--repeat 3] [--jobs N] [--rescans]

(prefixed with ``benchmarks/top_priority.sh`` on a machine other sessions share.)

Each figure is the wall time of a whole command run as a subprocess (interpreter start included),
the median of ``--repeat`` rounds, with the CPU time used (a busy machine inflates the wall time
much more than the CPU time) and where our scanner spent that CPU time: parsing the test files,
reading the library under ``src/``, evaluating the models (the phase lines the scanner prints; the
rest is starting the interpreter, finding the files and writing the result). Four runs of ours, each set
against the checkout's own ``utils/scan_skipped_tests.py`` doing the same job:

- cold full scan (empty cache) and cold single test (``--test_method_name``, empty cache), against
  the regex scanner's full and single-test runs: targets <= 20x and <= 10x;
- warm full scan (the cache of the cold full scan) and warm single test (the cache of the cold
  single-test scan only: no full scan before it), against the same: targets <= 1x.

A fifth command is the floor of a cold scan: libcst parsing the model test files alone, in one
process, as the scan gives it their text (``libcst_floor.py``), against the regex full scan.

Every round runs each of the eight commands once, ours and the regex scanner alternating, and a
ratio is the median of the rounds' ratios, so a load that changes during the bench reaches both
sides alike. ``--rescans`` adds the earlier rows: a cold scan of the tests alone (no ``src/``) and
warm rescans after one modeling file changed. Without ``--repo`` it runs on the small example tree
(a smoke run for ``make bench``; it has no regex scanner, so no ratio).

The scanners run with bytecode caching on, as after ``pip install`` (the bench first compiles the
package; an exported PYTHONDONTWRITEBYTECODE is not passed on). The snapshot a warm run answers
from is keyed on a digest of the analyzer's own sources: in a tree other people edit while it
runs, run it from a copy of the project (``git archive HEAD``), or the warm rows measure full scans.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from model_debugging.reporting.tables import render_terminal_table  # noqa: E402

SCANNER = PROJECT / "utils" / "scan_skipped_tests.py"
LIBCST_FLOOR = PROJECT / "benchmarks" / "libcst_floor.py"
# The phase lines of the scanner's progress (a line per phase when stderr is not a terminal).
PHASES = {"parsing test files": "parse", "reading the library": "library", "evaluating models": "evaluation"}
_PHASE_LINE = re.compile(r"^(?P<name>[a-z ]+): .* in [0-9.]+ s \(CPU (?P<cpu>[0-9.]+) s\)$", re.MULTILINE)


@dataclass
class Run:
    wall: float
    cpu: float
    phases: dict[str, float] = field(default_factory=dict)


def _environment() -> dict[str, str]:
    """The scanners' environment: bytecode caching on, as an installed package has it (``pip install``
    compiles the modules; a machine exporting PYTHONDONTWRITEBYTECODE would make every run compile them)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _timed(command: list[str], cwd: Path) -> Run:
    """The wall and CPU seconds of ``command`` (with its worker processes) and its phase times."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=cwd,
        check=True,
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    phases = {
        PHASES[match["name"]]: float(match["cpu"])
        for match in _PHASE_LINE.finditer(done.stderr)
        if match["name"] in PHASES
    }
    return Run(wall, cpu, phases)


def _row(name: str, runs: list[Run], target: str, baselines: list[Run] | None = None) -> dict:
    row = {
        "run": name,
        "seconds": f"{statistics.median(run.wall for run in runs):.2f}",
        "cpu seconds": f"{statistics.median(run.cpu for run in runs):.2f}",
    }
    for phase in PHASES.values():
        row[phase] = f"{statistics.median(run.phases.get(phase, 0.0) for run in runs):.1f}"
    row["vs regex (wall, CPU)"] = _ratio_text(runs, baselines) if baselines else ""
    row["target"] = target
    return row


def _ratio_text(runs: list[Run], baselines: list[Run]) -> str:
    """The median over rounds of each round's ratio, for the wall and the CPU time."""
    wall = statistics.median(run.wall / base.wall for run, base in zip(runs, baselines, strict=True))
    cpu = statistics.median(run.cpu / base.cpu for run, base in zip(runs, baselines, strict=True))
    return f"{wall:.2f}x, {cpu:.2f}x"


def measure(repo: Path, repeat: int, jobs: int | None, test_name: str, rescans: bool) -> list[dict]:
    """The rows of the table; within a round, ours and the regex scanner alternate (ABAB)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PROJECT / "model_debugging")], check=True)
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        jobs_option = ["--jobs", str(jobs)] if jobs else []
        scan = [sys.executable, str(SCANNER), "--output_dir", str(scratch / "out"), *jobs_option]
        full = [*scan, "--repo", str(repo)]
        single = ["--test_method_name", test_name]
        baseline = repo / "utils" / "scan_skipped_tests.py"
        regex = [sys.executable, str(baseline), "--output_dir", str(scratch / "baseline")]
        has_regex = baseline.is_file()
        (scratch / "baseline").mkdir()

        runs: dict[str, list[Run]] = {name: [] for name in ("cold", "cold single", "warm", "warm single")}
        regex_runs: dict[str, list[Run]] = {"full": [], "single": [], "floor": []}
        floor_runs: list[Run] = []
        for index in range(repeat):
            full_cache = ["--cache_dir", str(scratch / f"full{index}")]
            single_cache = ["--cache_dir", str(scratch / f"single{index}")]
            steps = [
                ("cold", [*full, *full_cache], "full"),
                ("cold single", [*full, *single_cache, *single], "single"),
                ("warm", [*full, *full_cache], "full"),
                ("warm single", [*full, *single_cache, *single], "single"),
            ]
            for name, command, regex_kind in steps:
                if has_regex:
                    regex_runs[regex_kind].append(
                        _timed([*regex, *(single if regex_kind == "single" else [])], repo)
                    )
                runs[name].append(_timed(command, repo))
            if has_regex:
                regex_runs["floor"].append(_timed(regex, repo))
                floor_runs.append(_timed([sys.executable, str(LIBCST_FLOOR), str(repo)], repo))
        regex_full, regex_single = regex_runs["full"], regex_runs["single"]
        # each of our runs against the regex run of the same kind just before it
        paired = {
            "cold": regex_full[0::2],
            "warm": regex_full[1::2],
            "cold single": regex_single[0::2],
            "warm single": regex_single[1::2],
        }
        rows = [
            _row("cold full scan", runs["cold"], "<= 20x", paired["cold"]),
            _row(f"cold single test ({test_name})", runs["cold single"], "<= 10x", paired["cold single"]),
            _row("warm full scan", runs["warm"], "<= 1x", paired["warm"]),
            _row(
                f"warm single test, no full scan before ({test_name})",
                runs["warm single"],
                "<= 1x",
                paired["warm single"],
            ),
        ]
        if has_regex:
            rows.append(
                _row("floor: libcst alone on the model test files", floor_runs, "", regex_runs["floor"])
            )
            rows.append(_row("regex scanner, full", regex_full, ""))
            rows.append(_row(f"regex scanner, {test_name}", regex_single, ""))
        if rescans and (repo / "src").is_dir():
            rows += _tests_only_rows(repo, scratch, scan, repeat)
            rows += _rescan_rows(repo, scratch, scan, repeat)
    return rows


def _tests_only_rows(repo: Path, scratch: Path, scan: list[str], repeat: int) -> list[dict]:
    """A cold scan of the same tests without the library sources."""
    tests_only = scratch / "tests_only"
    tests_only.mkdir()
    shutil.copytree(repo / "tests", tests_only / "tests")  # the scanner refuses paths leading outside
    runs = [
        _timed(
            [*scan, "--repo", str(tests_only), "--cache_dir", str(scratch / f"tests_only{index}")], tests_only
        )
        for index in range(repeat)
    ]
    return [_row("cold full scan, tests only (no src/)", runs, "")]


def _rescan_rows(repo: Path, scratch: Path, scan: list[str], repeat: int) -> list[dict]:
    """Warm rescans after one modeling file changed (on a copy of ``src/``)."""
    rows = []
    copy = scratch / "copy"
    copy.mkdir()
    shutil.copytree(repo / "tests", copy / "tests")
    shutil.copytree(repo / "src", copy / "src")
    modeling = sorted((copy / "src").glob("*/models/llama/modeling_llama.py")) or sorted(
        (copy / "src").glob("*/models/*/modeling_*.py")
    )
    # The cache of the first cold full scan: its snapshot is found by the content of the test files
    command = [*scan, "--repo", str(copy), "--cache_dir", str(scratch / "full0")]
    _timed(command, copy)
    edits = {
        "a comment appended": "\n# benchmark edit {index}\n",
        "a class appended": "\n\nclass BenchmarkEdit{index}:\n    pass\n",
    }
    for what, text in edits.items():
        runs = []
        for index in range(repeat):
            with open(modeling[0], "a", encoding="utf-8") as handle:
                handle.write(text.format(index=index))
            runs.append(_timed(command, copy))
        rows.append(_row(f"warm rescan, {modeling[0].name}: {what}", runs, "<= 1 s"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(PROJECT / "examples" / "mini_transformers"))
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the median is shown")
    parser.add_argument("--jobs", type=int, help="parsing processes (default: CPU count)")
    parser.add_argument("--test_method_name", default="test_inputs_embeds")
    parser.add_argument(
        "--rescans", action="store_true", help="also a tests-only scan and rescans after an edit"
    )
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    rows = measure(repo, args.repeat, args.jobs, args.test_method_name, args.rescans)
    print(
        f"repo: {repo}  (median of {args.repeat} rounds, ours and the regex scanner alternating; "
        "CPU seconds include the worker processes; parse / library / evaluation: our phases, CPU seconds)"
    )
    print(render_terminal_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
