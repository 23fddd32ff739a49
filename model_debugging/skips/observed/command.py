"""The scan command's options for test runs and what they show: ``--observed``, ``--inert``,
``--stale_skips``, ``--skip_age``."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from pathlib import Path

from model_debugging.command_line import InputFile
from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text
from model_debugging.skips.observed import with_observations
from model_debugging.skips.observed.stale import (
    rerun_selection,
    stale_skip_candidates,
    with_ages,
    with_reruns,
)
from model_debugging.skips.observed.summary import (
    OBSERVED_FILE,
    RERUN_ARGS_FILE,
    RERUN_RECORD,
    RERUN_SELECT_FILE,
    STALE_FILE,
    observed_lines,
    stale_lines,
)
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.settings import ScanSettings

EPILOG = f"""\
with --observed (reports of test runs joined with the verdicts):
  {OBSERVED_FILE}       every pair a run saw: static and observed verdicts, combined status and its
                               source, disagreements, inert passes; each test of the scan result gets an
                               "combined" entry with the combined lists
with --stale_skips:
  {STALE_FILE}            written skips whose reason names no machine (with --skip_age, their age from git)
  {RERUN_ARGS_FILE}    pytest's arguments to rerun them with their skip decorators ignored
  {RERUN_SELECT_FILE}  the tests that run takes (file::Class::test)
"""


def add_observed_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--observed",
        nargs="+",
        metavar="PATH",
        help="reports of test runs to join with the verdicts: junit XML, --make-reports folders, "
        "collated_reports JSON, `pytest --observed_json` records, or folders of them",
    )
    parser.add_argument(
        "--inert",
        action="store_true",
        help="also find, statically, the pairs whose test can pass without reaching an assertion "
        "(evaluates every model again: about the time of a scan without cache)",
    )
    parser.add_argument(
        "--stale_skips",
        action="store_true",
        help=f"list written skips whose reason names no machine in {STALE_FILE}, and how to rerun them",
    )
    parser.add_argument(
        "--skip_age",
        action="store_true",
        help="with --stale_skips: the age of each skip's line from git blame (slow; needs a git checkout)",
    )


def observed_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with these options together (checked before the scan), or None."""
    if args.skip_age and not args.stale_skips:
        return "--skip_age needs --stale_skips"
    if args.skip_age and not (Path(args.repo) / ".git").exists():
        return f"--skip_age reads the skips' ages from git: {args.repo} is not a git checkout (no .git)"
    if args.stale_skips and args.test_method_name:
        return "--stale_skips lists the skips of a full scan: drop --test_method_name"
    return None


def observed_outputs(args: argparse.Namespace, output_dir: Path) -> list[Path]:
    """The files :func:`write_observed` may write into ``output_dir`` for these options."""
    outputs = [output_dir / OBSERVED_FILE] if args.observed or args.inert else []
    if args.stale_skips:
        outputs += [output_dir / name for name in (STALE_FILE, RERUN_SELECT_FILE, RERUN_ARGS_FILE)]
    return outputs


def observed_inputs(args: argparse.Namespace) -> list[InputFile]:
    """The report files ``--observed`` reads (every file under a folder it names): no output may
    replace one, as a symlinked ``all_tests_observed.json`` would have replaced a junit XML."""
    inputs = []
    for given in args.observed or ():
        path = Path(given).expanduser()
        if path.is_dir():
            inputs += [
                InputFile(Path(folder) / name, f"a report under --observed {given}")
                for folder, _, names in os.walk(path)
                for name in names
            ]
        else:
            inputs.append(InputFile(path, "an --observed report"))
    return inputs


def with_static_inert(args: argparse.Namespace, result: ScanResult, settings: ScanSettings) -> ScanResult:
    """``result`` joined again with the pairs found inert statically, when ``--inert`` asks."""
    if not args.inert:
        return result
    # The evaluator is most of the analyzer's code: a scan answered from the cache never imports it.
    from model_debugging.skips.inert import find_static_inert

    print("Finding inert tests (every model is evaluated again)...", flush=True)
    inert = find_static_inert(
        args.repo,
        result.tests,
        config=settings,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        jobs=args.jobs,
    )
    reports = [tally.report for tally in result.combined.tallies] if result.combined is not None else []
    return with_observations(
        dataclasses.replace(result, combined=None), reports, Path(args.repo), settings, inert
    )


def write_observed(
    args: argparse.Namespace, result: ScanResult, settings: ScanSettings, output_dir: Path
) -> None:
    """Print and write what the options asked for, beside the scan result."""
    join = result.combined
    if join is not None:
        for warning in join.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        print("\n".join(observed_lines(join)))
        atomic_write_json(output_dir / OBSERVED_FILE, join.to_json())
    if not args.stale_skips:
        return
    repo = Path(args.repo)
    candidates = stale_skip_candidates(result.tests)
    if join is not None:
        candidates = with_reruns(candidates, join.stale_runs)
    if args.skip_age:
        candidates = with_ages(candidates, repo)
    selection = rerun_selection(candidates, repo, settings)
    command = None
    if selection:
        select_path = atomic_write_text(output_dir / RERUN_SELECT_FILE, "\n".join(selection) + "\n")
        files = sorted({line.split("::", 1)[0] for line in selection})
        arguments = [
            *files,
            f"--observed_select={select_path.resolve()}",
            "--observed_ignore_skips",
            f"--observed_json={(output_dir / RERUN_RECORD).resolve()}",
            "-o",
            "enable_assertion_pass_hook=true",
        ]
        args_path = atomic_write_text(output_dir / RERUN_ARGS_FILE, "\n".join(arguments) + "\n")
        command = f"cd {shlex.quote(str(repo.resolve()))} && python -m pytest @{shlex.quote(str(args_path.resolve()))}"
    print("\n".join(stale_lines(candidates, command)))
    atomic_write_json(output_dir / STALE_FILE, [candidate.to_json() for candidate in candidates])
