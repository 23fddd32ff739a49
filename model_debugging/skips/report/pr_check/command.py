"""``model-debugging check-skips`` / ``utils/check_new_skips.py``: the skips a change introduces.

The base is where HEAD forked from the revision named (``git merge-base``, as a pull request's
diff is taken), exported with ``git archive`` (the working tree and index are left alone)
and both sides are scanned in this process (see ``scans.py``); the parse cache makes every scan
after the first warm for the files the change did not touch.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from model_debugging.command_line import (
    EXIT_FINDING,
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
from model_debugging.reporting.report import render_markdown, render_text
from model_debugging.skips.observed import ReportError, read_reports
from model_debugging.skips.report.pr_check.git_snapshot import GitError, fork_point, resolve_commit
from model_debugging.skips.report.pr_check.introduced import find_introduced_skips
from model_debugging.skips.report.pr_check.removed import find_removed_skips
from model_debugging.skips.report.pr_check.report import build_pr_report
from model_debugging.skips.report.pr_check.scans import scan_sides
from model_debugging.skips.report.settings import BUILT_IN_CONFIG, load_settings
from model_debugging.skips.source.checkout import CheckoutError, check_checkout
from model_debugging.skips.source.scanned_paths import scanned_input_folders
from model_debugging.skips.source.settings import DEFAULT_SETTINGS
from model_debugging.skips.work.progress import ScanProgress


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Scan the base revision and the working tree of a transformers checkout and list every "
        "(model, test class, test) skip the change introduces, with why it is new. Exit codes: 0 nothing to "
        "flag, 1 a flagged skip (a test fewer than pr_check.min_skipped_share of models skipped before, a test "
        "more than pr_check.max_newly_skipped_share of the models newly skip, or a skip only a library change "
        "explains while pr_check.flag_library_skips is on), a scanned file "
        "pytest can no longer parse or import, or a conftest.py the change adds or edits that may skip or drop "
        "tests, 2 the check could not run.",
    )
    parser.add_argument(
        "--repo",
        required=True,
        metavar="DIR",
        help="the transformers git checkout; its working tree is the head",
    )
    parser.add_argument(
        "--base",
        required=True,
        metavar="REV",
        help="the base revision (branch, tag or commit); the working tree is compared with the commit where "
        "HEAD forked from it (git merge-base), so the commits REV gained since are not counted as the change",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="thresholds and row count (default: built-in, printed by --print_default_config)",
    )
    parser.add_argument(
        "--markdown",
        action="append",
        default=[],
        metavar="OUT.md",
        help="also write the result as GitHub markdown to this file (repeat for several files)",
    )
    parser.add_argument(
        "--fetch_base_from",
        metavar="REMOTE",
        help="fetch the base from this remote when the checkout lacks it (that commit alone, no history)",
    )
    parser.add_argument(
        "--observed",
        nargs="+",
        metavar="PATH",
        help="reports of test runs (as for scan --observed) joined with both sides: the rows use the combined status",
    )
    parser.add_argument(
        "--inert",
        action="store_true",
        help="also find the tests that run without reaching an assertion in each side's sources; a pair "
        "the change makes inert is a row like a new skip (evaluates every model again on each side)",
    )
    add_default_config_option(parser, BUILT_IN_CONFIG)
    return parser


def main(argv: list[str] | None = None, prog: str = "model-debugging check-skips") -> int:
    args = build_parser(prog).parse_args(argv)
    inputs = [InputFile(Path(args.config), "the --config file")] if args.config else []
    repo = Path(args.repo)
    problem = outputs_problem(
        [("--markdown", target) for target in args.markdown],
        inputs,
        input_folders=scanned_input_folders(repo, DEFAULT_SETTINGS),
    )
    if problem is not None:  # before the scans, not after them
        return fail(prog, problem)
    try:
        _, settings = load_settings(args.config)
        observed = read_reports(args.observed) if args.observed else None  # before the scans
        base = fork_point(repo, args.base, resolve_commit(repo, args.base, fetch_from=args.fetch_base_from))
        check_checkout(repo, DEFAULT_SETTINGS)  # the head, as given: before the base is exported and scanned
        with tempfile.TemporaryDirectory(prefix="check_new_skips.") as scratch:
            scans = scan_sides(
                repo, base.commit, Path(scratch), progress=ScanProgress(), observed=observed, inert=args.inert
            )
    except (ConfigError, GitError, CheckoutError, ReportError) as error:
        return fail(prog, str(error))
    introduced = find_introduced_skips(scans, settings)
    report = build_pr_report(introduced, find_removed_skips(scans), scans, settings, base)
    print(render_text(report), end="")
    markdown = render_markdown(report)
    try:
        for target in args.markdown:
            with writing_output("--markdown"):
                written = atomic_write_text(target, markdown)
            print(f"markdown written to {written}")
    except OutputWriteError as error:  # e.g. a FIFO nobody reads
        return fail(prog, str(error))
    finding = (
        introduced["flagged"].ne("").any()
        or scans.new_parse_errors
        or scans.conftest_notes
        or scans.edited_guards
    )
    return EXIT_FINDING if finding else EXIT_OK
