"""``model-debugging check-skips`` / ``utils/check_new_skips.py``: the skips a change introduces.

The base revision is exported with ``git archive`` (the working tree and index are left alone) and
both sides are scanned in this process; the parse cache makes the second scan warm for every file
the change did not touch.
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
    fail,
    outputs_problem,
    write_error,
)
from model_debugging.config import ConfigError
from model_debugging.reporting import ScanResultsError, atomic_write_text, scan_results_frame
from model_debugging.reporting.report import render_markdown, render_text
from model_debugging.skips.pr_check.git_snapshot import GitError, export_revision
from model_debugging.skips.pr_check.introduced import find_introduced_skips
from model_debugging.skips.pr_check.report import build_pr_report
from model_debugging.skips.report_settings import load_settings
from model_debugging.skips.scan import CheckoutError, scan_repository


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Scan the base revision and the working tree of a transformers checkout and list every "
        "(model, test) skip the change introduces. Exit codes: 0 nothing to flag, 1 the change skips a "
        "test that fewer than pr_check.min_skipped_share of models skipped before, 2 the check could not run.",
    )
    parser.add_argument(
        "--repo", required=True, help="the transformers git checkout; its working tree is the head"
    )
    parser.add_argument(
        "--base", required=True, help="the base revision (branch, tag or commit) to compare with"
    )
    parser.add_argument(
        "--config", help="threshold and row count (default: built-in, the same as configs/skip_report.yaml)"
    )
    parser.add_argument("--markdown", help="also write the result as GitHub markdown to this file")
    return parser


def main(argv: list[str] | None = None, prog: str = "model-debugging check-skips") -> int:
    args = build_parser(prog).parse_args(argv)
    inputs = [InputFile(Path(args.config), "the --config file")] if args.config else []
    problem = outputs_problem([("--markdown", args.markdown)], inputs)
    if problem is not None:  # before two scans, not after them
        return fail(prog, problem)
    repo = Path(args.repo)
    try:
        _, settings = load_settings(args.config)
        with tempfile.TemporaryDirectory(prefix="check_new_skips.") as scratch:
            base_tree = export_revision(repo, args.base, Path(scratch) / "base")
            base = scan_results_frame(scan_repository(base_tree).to_json(), f"{args.base} (base)")
        head = scan_results_frame(scan_repository(repo).to_json(), f"{repo} (working tree)")
    except (ConfigError, GitError, CheckoutError, ScanResultsError) as error:
        return fail(prog, str(error))
    introduced = find_introduced_skips(base, head, min_skipped_share=settings.min_skipped_share)
    report = build_pr_report(introduced, settings, args.base)
    print(render_text(report), end="")
    if args.markdown:
        try:
            print(f"markdown written to {atomic_write_text(args.markdown, render_markdown(report))}")
        except OSError as error:  # e.g. a FIFO nobody reads
            return fail(prog, write_error(error))
    return EXIT_FINDING if introduced["flagged"].any() else EXIT_OK
