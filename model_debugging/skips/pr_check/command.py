"""``utils/check_new_skips.py``: flag the test skips a change to a transformers checkout introduces."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from model_debugging.config import ConfigError
from model_debugging.reporting import ScanResultsError, atomic_write_text, load_scan_results
from model_debugging.skips_report.analyzer import AnalyzerError, scan_checkout
from model_debugging.skips_report.git_snapshot import GitError, export_revision
from model_debugging.skips_report.pr_check import find_introduced_skips
from model_debugging.skips_report.pr_report import build_pr_report
from model_debugging.reporting.report import render_markdown, render_text
from model_debugging.skips_report.settings import load_settings

# exit codes: 0 no rarely-skipped test newly skipped, 1 some are, 2 the check could not run
EXIT_FLAGGED = 1
EXIT_ERROR = 2


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Scan the base revision and the working tree of a transformers checkout and list every "
        "(model, test) skip the change introduces. Exits 1 when a change skips a test that fewer than "
        "pr_check.min_skipped_share of models skipped before.",
    )
    parser.add_argument(
        "--repo", required=True, help="the transformers git checkout; its working tree is the head"
    )
    parser.add_argument(
        "--base", required=True, help="the base revision (branch, tag or commit) to compare with"
    )
    parser.add_argument("--config", help="threshold and row count (default: configs/skip_report.yaml)")
    parser.add_argument("--markdown", help="also write the result as GitHub markdown to this file")
    return parser


def main(argv: list[str] | None = None, prog: str = "check_new_skips.py") -> int:
    args = build_parser(prog).parse_args(argv)
    repo = Path(args.repo)
    try:
        _, settings = load_settings(args.config)
        with tempfile.TemporaryDirectory(prefix="check_new_skips.") as scratch:
            scratch = Path(scratch)
            base_tree = export_revision(repo, args.base, scratch / "base")
            base = load_scan_results(scan_checkout(base_tree, scratch / "base_scan"))
            head = load_scan_results(scan_checkout(repo, scratch / "head_scan"))
    except (ConfigError, GitError, AnalyzerError, ScanResultsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    introduced = find_introduced_skips(base, head, min_skipped_share=settings.min_skipped_share)
    report = build_pr_report(introduced, settings, args.base)
    print(render_text(report), end="")
    if args.markdown:
        print(f"markdown written to {atomic_write_text(args.markdown, render_markdown(report))}")
    return EXIT_FLAGGED if introduced["flagged"].any() else 0
