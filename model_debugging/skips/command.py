"""The command line of the skipped-test analyzer (``utils/scan_skipped_tests.py``, ``model-debugging scan``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from model_debugging.command_line import (
    EXIT_OK,
    EXIT_USAGE,
    ArgumentParser,
    InputFile,
    OutputWriteError,
    add_default_config_option,
    fail,
    output_dir_problem,
    outputs_problem,
    positive_int,
    writing_output,
)
from model_debugging.config import ConfigError
from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text
from model_debugging.skips.decide.scope import UnknownTestError
from model_debugging.skips.observed import ReportError
from model_debugging.skips.observed.command import (
    EPILOG,
    add_observed_arguments,
    observed_inputs,
    observed_outputs,
    observed_problem,
    with_static_inert,
    write_observed,
)
from model_debugging.skips.records.test_files import ParseError
from model_debugging.skips.results.environment_needs import needs_accelerator, needs_text, shared_requirements
from model_debugging.skips.results.output_files import (
    ERRORS_FILE,
    RESULT_FILE,
    errors_file_of,
    result_file_name,
    result_json_text,
)
from model_debugging.skips.results.scan_result import ScanResult, TestResult
from model_debugging.skips.scan import scan_repository
from model_debugging.skips.source.checkout import CheckoutError, configured_paths_problem
from model_debugging.skips.source.scanned_paths import scanned_input_folders
from model_debugging.skips.source.settings import (
    BUILT_IN_CONFIG,
    DEFAULT_SETTINGS,
    ScanSettings,
    load_settings,
)
from model_debugging.skips.work.progress import ScanProgress

SUMMARY_ROWS = 10
REASONS_SHOWN = 10

_EPILOG = f"""\
output files (in --output_dir):
  {RESULT_FILE}   full scan: one entry per common test (upstream keys + extras)
  scan_<test>.json              --test_method_name: the entry of that test
  {ERRORS_FILE}   files that could not be parsed, or that pytest cannot import: [{{"path", "line", "message"[, "cause"]}}]
  scan_<test>_errors.json       the same for a single-test scan

exit codes:
  {EXIT_OK}  the result was written (unparsable files, if any, are listed in the errors file)
  {EXIT_USAGE}  unusable input: bad arguments (--jobs < 1, --output_dir not a directory), unknown
     test name, invalid --config, or --repo is not a transformers checkout (the message says what
     is missing); checked before the scan, nothing is written
"""


def build_parser(prog: str = "model-debugging scan") -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Report, for each common test, which models run it and which skip it (and why), "
        "by reading the test files and the library sources under src/; nothing in the checkout is imported or run.",
        epilog=_EPILOG + EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--repo", default=".", metavar="DIR", help="root of the transformers checkout (default: %(default)s)"
    )
    parser.add_argument(
        "--output_dir", default=".", metavar="DIR", help="directory for JSON output (default: %(default)s)"
    )
    parser.add_argument(
        "--test_method_name", metavar="NAME", help="scan only this test method (single-test mode)"
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="settings YAML (default: the built-in settings, printed by --print_default_config)",
    )
    parser.add_argument(
        "--jobs", type=positive_int, metavar="N", help="parallel parsing processes, >= 1 (default: CPU count)"
    )
    parser.add_argument(
        "--cache_dir",
        metavar="DIR",
        help="parse cache (default: $XDG_CACHE_HOME/model-debugging/scan or ~/.cache/model-debugging/scan)",
    )
    parser.add_argument("--no_cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument(
        "--summary",
        action="store_true",
        help="after a full scan, print a table of the most skipped tests (default: only when stdout is a terminal)",
    )
    add_default_config_option(parser, BUILT_IN_CONFIG)
    add_observed_arguments(parser)
    return parser


def _print_errors(errors: tuple[ParseError, ...]) -> None:
    """Each file that could not be read, parsed or imported, as ``path:line: message``; the files
    whose import fails in another one (a broken common file: hundreds) once per that file."""
    importing: dict[ParseError, list[str]] = {}
    for error in errors:
        if error.cause is None:
            print(f"{error.path}:{error.line}: {error.message}", file=sys.stderr)
        else:
            importing.setdefault(error.cause, []).append(error.path)
    for cause, paths in importing.items():
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        print(
            f"{len(paths)} file(s) import {cause.path} (line {cause.line}), directly or not, so pytest "
            f"cannot import them either: {shown}",
            file=sys.stderr,
        )


def _share(result: TestResult) -> float | None:
    """Skipped over decided models, from the counts: ``skipped_proportion`` is rounded to 4 digits,
    and rounding it again for printing gives 19.1% for 4 of 21; None when no model is decided."""
    decided = len(result.models_ran) + len(result.skips)
    return len(result.skips) / decided if decided else None


def _print_single(name: str, result: TestResult) -> None:
    ran, skipped = len(result.models_ran), len(result.skips)
    total = ran + skipped
    share = f"{_share(result):.1%}" if total else "n/a: no model is decided"
    lines = [
        f"\n== {name} ==",
        f"Ran     : {ran}/{total}",
        f"Skipped : {skipped}/{total} ({share})",
    ]
    # The reasons go right under the skipped count they explain (as upstream prints them), not
    # under the not-applicable line, where they read as the models the test does not apply to.
    reasons = result.reasons_skipped
    lines += [f" - {reason}" for reason in reasons[:REASONS_SHOWN]]
    if len(reasons) > REASONS_SHOWN:
        lines.append(" - ...")
    if result.models_undecided:
        lines.append(f"Undecided: {len(result.models_undecided)} models (see conditions)")
    if result.models_not_applicable:
        count = len(result.models_not_applicable)
        lines.append(
            f"Not applicable: {count} models (none of their test classes includes the class defining it)"
        )
    print("\n".join(lines))


def _print_summary(result: ScanResult) -> None:
    # Imported here: the report needs pandas, whose import costs more than a whole warm scan.
    import pandas as pd

    from model_debugging.reporting.report import Report, Section, render_text

    rows, accelerator_rows = [], []
    for name, test in result.tests.items():
        if not (test.models_ran or test.skips or test.models_undecided):
            continue
        needs = shared_requirements(test.conditions, test.models_ran)
        row = {
            "test": name,
            "origin": test.origin,
            "ran": len(test.models_ran),
            "skipped": len(test.skips),
            "undecided": len(test.models_undecided),
            "n/a": len(test.models_not_applicable),
            "skipped %": f"{share:.1%}" if (share := _share(test)) is not None else "n/a",
            "needs": needs_text(needs),
        }
        row["share"] = share if share is not None else -1.0
        (accelerator_rows if needs_accelerator(needs) else rows).append(row)
    sections = [
        Section(
            title,
            # ranked as the trend report ranks them: by share of the decided models
            pd.DataFrame(sorted(found, key=lambda row: (-row["share"], row["test"]))).drop(columns="share"),
            limit=SUMMARY_ROWS,
        )
        for title, found in (
            ("Most skipped common tests", rows),
            ("Most skipped common tests that need an accelerator", accelerator_rows),
        )
        if found
    ]
    if sections:
        print("\n" + render_text(Report("Scan summary", [], sections)), end="")


def _outputs_problem(args: argparse.Namespace, settings: ScanSettings) -> str | None:
    """Why the files the scan writes into --output_dir would replace a file it reads, or None."""
    output_dir = Path(args.output_dir).expanduser()
    result = output_dir / result_file_name(args.test_method_name)
    written = [result, errors_file_of(result), *observed_outputs(args, output_dir)]
    inputs = observed_inputs(args)
    if args.config:
        inputs.append(InputFile(Path(args.config), "the --config file"))
    return outputs_problem(
        [("--output_dir", file) for file in written],
        inputs,
        input_folders=scanned_input_folders(args.repo, settings),
    )


def main(argv: list[str] | None = None, prog: str = "model-debugging scan") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        settings = load_settings(args.config) if args.config else DEFAULT_SETTINGS
    except ConfigError as error:
        return fail(prog, str(error))
    problem = (
        (configured_paths_problem(Path(args.repo), settings, args.config) if args.config else None)
        or output_dir_problem(args.output_dir)
        or _outputs_problem(args, settings)
        or observed_problem(args)
    )
    if problem is not None:  # before the scan, not after it
        return fail(prog, problem)

    def announce(count: int) -> None:
        print(f"Scanning {count} model test files...", flush=True)

    try:
        result = scan_repository(
            args.repo,
            config=settings,
            test_method_name=args.test_method_name,
            jobs=args.jobs,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
            progress=ScanProgress(),
            on_start=announce,
            observed=args.observed,
        )
    except (CheckoutError, UnknownTestError, ReportError) as error:
        return fail(prog, str(error))
    _print_errors(result.errors)
    for note in result.notes:
        print(note, file=sys.stderr)
    result = with_static_inert(args, result, settings)

    output_dir = Path(args.output_dir).expanduser()
    name = args.test_method_name
    if name:
        _print_single(name, result.tests[name])
    elif args.summary or sys.stdout.isatty():
        _print_summary(result)
    try:
        with writing_output("--output_dir"):
            result_path = output_dir / result_file_name(name)
            if name:
                atomic_write_json(result_path, result.to_json()[name])
            else:
                atomic_write_text(result_path, result_json_text(result))
            atomic_write_json(errors_file_of(result_path), result.errors_json())
            write_observed(args, result, settings, output_dir)
    except OutputWriteError as error:  # the disk filled up during the scan, ...
        return fail(prog, str(error))
    print(f"\nJSON saved to {result_path.resolve()}")
    if result.errors:
        print(
            f"{len(result.errors)} file(s) could not be parsed or imported; see {errors_file_of(result_path).name}"
        )
    return EXIT_OK
