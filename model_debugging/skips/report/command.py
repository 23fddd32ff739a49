"""``model-debugging report`` / ``utils/skip_report.py``: the skip trend between two scan results."""

from __future__ import annotations

import argparse
from pathlib import Path

from model_debugging.command_line import (
    EXIT_OK,
    ArgumentParser,
    InputFile,
    OutputWriteError,
    add_default_config_option,
    fail,
    outputs_problem,
    writing_output,
)
from model_debugging.config import ConfigError
from model_debugging.reporting.atomic import atomic_write_text
from model_debugging.reporting.csv_output import write_csv
from model_debugging.reporting.figures import plot_option_problem
from model_debugging.reporting.report import render_markdown, render_text
from model_debugging.skips.report.analyzers import compare_analyzers, rescan_problem
from model_debugging.skips.report.scan_errors import load_scan_errors
from model_debugging.skips.report.scan_results import ScanResultsError, load_scan_results
from model_debugging.skips.report.settings import BUILT_IN_CONFIG, load_settings
from model_debugging.skips.report.skip_plot import plot_skipped_proportion
from model_debugging.skips.report.trend import compute_trend
from model_debugging.skips.report.trend_report import build_trend_report
from model_debugging.skips.results.output_files import errors_file_of


def build_parser(prog: str = "model-debugging report") -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Compare two all_tests_scan_result.json files: skipped proportions that changed, "
        "models that newly skip or stopped skipping a test, new and removed common tests, most skipped tests.",
    )
    parser.add_argument(
        "--previous",
        metavar="SCAN.json",
        help="the older scan result; without it only the current scan is shown",
    )
    parser.add_argument("--current", required=True, metavar="SCAN.json", help="the newer scan result")
    parser.add_argument(
        "--previous_rescanned",
        metavar="SCAN.json",
        help="the --previous result's commit scanned again by the --current result's analyzer: when the "
        "analyzer changed between the two, the tree's changes are taken from it and the analyzer's listed apart",
    )
    parser.add_argument(
        "--markdown", metavar="OUT.md", help="also write the report as GitHub markdown to this file"
    )
    parser.add_argument(
        "--csv", metavar="OUT.csv", help="also write the current scan, one row per test, as CSV to this file"
    )
    parser.add_argument(
        "--plot",
        metavar="OUT.png",
        help="also draw the most skipped tests as a bar chart (needs the plot extra)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="thresholds and row counts (default: built-in, printed by --print_default_config)",
    )
    add_default_config_option(parser, BUILT_IN_CONFIG)
    return parser


def main(argv: list[str] | None = None, prog: str = "model-debugging report") -> int:
    args = build_parser(prog).parse_args(argv)
    # checked before any work, not after it
    inputs = [
        InputFile(Path(path), f"the --{option} file")
        for option, path in (
            ("previous", args.previous),
            ("current", args.current),
            ("previous_rescanned", args.previous_rescanned),
            ("config", args.config),
        )
        if path
    ]
    inputs += [  # read beside the results too
        InputFile(errors_file_of(Path(path)), f"the errors file beside --{option}")
        for option, path in (("previous", args.previous), ("current", args.current))
        if path and not Path(path).is_dir() and errors_file_of(Path(path)).exists()
    ]
    outputs = [(f"--{option}", getattr(args, option)) for option in ("markdown", "csv", "plot")]
    problem = outputs_problem(outputs, inputs) or plot_option_problem("--plot", args.plot)
    if args.previous_rescanned and not args.previous:
        problem = "--previous_rescanned needs --previous (the result whose commit it scanned again)"
    if problem is not None:
        return fail(prog, problem)
    try:
        report_settings, _ = load_settings(args.config)
        previous = load_scan_results(args.previous) if args.previous else None
        current = load_scan_results(args.current)
        rescanned = load_scan_results(args.previous_rescanned) if args.previous_rescanned else None
        # like with like: the files the tree broke, seen by one analyzer (the rescan's, when given)
        before = args.previous_rescanned or args.previous
        errors = (load_scan_errors(before) if before else None, load_scan_errors(args.current))
    except (ConfigError, ScanResultsError) as error:
        return fail(prog, str(error))
    if rescanned is not None:
        sides = (previous.attrs["provenance"], current.attrs["provenance"], rescanned.attrs["provenance"])
        if (problem := rescan_problem(*sides)) is not None:
            return fail(prog, f"--previous_rescanned {args.previous_rescanned} {problem}")
    change = report_settings.min_proportion_change
    if previous is None:
        trend, analyzers = compute_trend(None, current, min_proportion_change=change), None
    else:
        trend, analyzers = compare_analyzers(previous, current, rescanned, min_proportion_change=change)
    notes = (previous.attrs["combined"] if previous is not None else None, current.attrs["combined"])
    report = build_trend_report(trend, report_settings, notes, errors, analyzers)
    print(render_text(report), end="")
    try:
        if args.markdown:
            with writing_output("--markdown"):
                markdown = atomic_write_text(args.markdown, render_markdown(report))
            print(f"markdown written to {markdown}")
        if args.csv:
            with writing_output("--csv"):
                csv = write_csv(current, args.csv, index=True)
            print(f"CSV written to {csv}")
        if args.plot:
            # the first headline's tests: those that apply to a model and run on any machine
            shown = current.loc[trend.most_skipped["test"]]
            with writing_output("--plot"):
                plot = plot_skipped_proportion(shown, args.plot, top=report_settings.headline_rows)
            print(f"plot written to {plot}")
    except OutputWriteError as error:  # e.g. a FIFO nobody reads
        return fail(prog, str(error))
    return EXIT_OK
