"""Time the skipped-test scanner on a transformers checkout, beside the checkout's own regex scanner.

    python benchmarks/bench_scanner.py --repo /path/to/transformers [--repeat 3] [--jobs N]

Each figure is the wall time of a whole command run as a subprocess (interpreter start included),
the median of ``--repeat`` runs, with the CPU time used (a busy machine inflates the wall time
much more than the CPU time): a cold full scan (empty cache), a warm full scan, a warm
single-test scan, and the checkout's own ``utils/scan_skipped_tests.py`` run from its root when
present. With a ``src/`` folder (the library the run-time skips are decided from), also a cold
scan of the tests alone (a tree without ``src/``; the ratio of the cold full scan to it is printed
for the wall and for the CPU time, the steadier one on a loaded machine) and warm rescans after one
modeling file changed: a comment appended (no record and no fact read from its text changes) and a
class appended (a new class: only a model that looked its name up would be evaluated again).
Targets (437 model test files, 2 cores): cold <= 8 s, cold full / cold tests-only <= 1.5, warm full
< baseline, warm single <= 0.5 s, warm rescan after a modeling change <= 1 s.
Without ``--repo`` it runs on the small example tree (a smoke run for ``make bench``).

The runs a ratio compares alternate round by round (cold full, cold tests-only, cold full, ...;
warm ours, regex, warm ours, ...) and a ratio is the median of the rounds' ratios, so a load that
changes during the bench reaches both sides alike. The scanners run with bytecode caching on, as
after ``pip install`` (the bench first compiles the package; an exported PYTHONDONTWRITEBYTECODE
is not passed on).

The snapshot a warm run answers from is keyed on a digest of the analyzer's own sources: in a tree
other people edit while it runs, run it from a copy of the project (``git archive HEAD``), or the
warm rows measure full scans.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from model_debugging.reporting.tables import render_terminal_table  # noqa: E402

SCANNER = PROJECT / "utils" / "scan_skipped_tests.py"


def _environment() -> dict[str, str]:
    """The scanners' environment: bytecode caching on, as an installed package has it (``pip install``
    compiles the modules; a machine exporting PYTHONDONTWRITEBYTECODE would make every run compile them)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its worker processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, check=True, env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _row(name: str, runs: list[tuple[float, float]], target: str) -> dict:
    return {
        "run": name,
        "seconds": statistics.median(wall for wall, _ in runs),
        "cpu seconds": statistics.median(cpu for _, cpu in runs),
        "target": target,
    }


def _ratio_text(runs: list[tuple[float, float]], baselines: list[tuple[float, float]], target: str) -> str:
    """The median over rounds of each round's ratio, for the wall and the CPU time."""
    wall = statistics.median(run[0] / base[0] for run, base in zip(runs, baselines, strict=True))
    cpu = statistics.median(run[1] / base[1] for run, base in zip(runs, baselines, strict=True))
    return f"{wall:.2f} wall, {cpu:.2f} CPU ({target})"


def measure(repo: Path, repeat: int, jobs: int | None, test_name: str) -> list[dict]:
    """The rows of the table. Runs compared with each other alternate, round by round (ABAB), so a
    change of the machine's load during the bench reaches both sides of a ratio alike."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PROJECT / "model_debugging")], check=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        jobs_option = ["--jobs", str(jobs)] if jobs else []
        scan = [sys.executable, str(SCANNER), "--output_dir", str(scratch / "out"), *jobs_option]
        full = [*scan, "--repo", str(repo)]
        tests_only = None
        if (repo / "src").is_dir():  # the same tests without the library sources
            tests_only = scratch / "tests_only"
            tests_only.mkdir()
            shutil.copytree(repo / "tests", tests_only / "tests")  # the scanner refuses paths leading outside

        cold, cold_tests = [], []
        for index in range(repeat):
            cold.append(_timed([*full, "--cache_dir", str(scratch / f"cold{index}")], repo))
            if tests_only is not None:
                command = [
                    *scan,
                    "--repo",
                    str(tests_only),
                    "--cache_dir",
                    str(scratch / f"tests_only{index}"),
                ]
                cold_tests.append(_timed(command, tests_only))
        rows.append(_row("cold full scan", cold, "<= 8 s"))
        if tests_only is not None:
            ratio = _ratio_text(cold, cold_tests, "<= 1.5")
            rows.append(
                _row("cold full scan, tests only (no src/)", cold_tests, f"full/tests-only = {ratio}")
            )

        warm_command = [*full, "--cache_dir", str(scratch / "cold0")]  # the first cold run filled it
        baseline = repo / "utils" / "scan_skipped_tests.py"
        regex_command = [sys.executable, str(baseline), "--output_dir", str(scratch / "baseline")]
        warm, regex = [], []
        for _ in range(repeat):
            warm.append(_timed(warm_command, repo))
            if baseline.is_file():
                regex.append(_timed(regex_command, repo))
        warm_row = _row("warm full scan", warm, "< baseline")
        if regex:
            warm_row["target"] = f"ours/baseline = {_ratio_text(warm, regex, '< 1')}"
        rows.append(warm_row)
        single = [_timed([*warm_command, "--test_method_name", test_name], repo) for _ in range(repeat)]
        rows.append(_row(f"warm single test ({test_name})", single, "<= 0.5 s"))

        if (repo / "src").is_dir():
            rows += _rescan_rows(repo, scratch, scan, repeat)
        if regex:
            rows.append(_row("baseline: checkout's regex scanner", regex, ""))
    return rows


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
    # The cache of the first cold run: its snapshot is found by the content of the test files
    command = [*scan, "--repo", str(copy), "--cache_dir", str(scratch / "cold0")]
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
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is shown")
    parser.add_argument("--jobs", type=int, help="parsing processes (default: CPU count)")
    parser.add_argument("--test_method_name", default="test_training")
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    rows = measure(repo, args.repeat, args.jobs, args.test_method_name)
    baseline = next((row["seconds"] for row in rows if row["run"].startswith("baseline")), None)
    for row in rows:
        row["vs baseline"] = f"{row['seconds'] / baseline:.2f}x" if baseline else ""
        row["seconds"] = f"{row['seconds']:.2f}"
        row["cpu seconds"] = f"{row['cpu seconds']:.2f}"
    print(
        f"repo: {repo}  (median of {args.repeat} runs, compared runs alternating; "
        "CPU seconds include the parsing processes)"
    )
    print(render_terminal_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
