"""Fetch the scan result of the last successful scheduled skip report, for the trend.

Used by .github/workflows/skip-report.yml with GH_TOKEN set and `actions: read`. Writes
`found=true|false` and `path=<file>` to $GITHUB_OUTPUT; a missing previous result is not an error.
With --current (this run's result), also `rescan_commit=<commit>`: the previous result's commit when
the analyzer changed since (the job scans it again with this week's analyzer, so that the trend
compares like with like), empty otherwise.

    python utils/fetch_previous_scan.py --repo OWNER/NAME --workflow skip-report.yml \
        --artifact skip-scan-result --output_dir previous [--current scan/all_tests_scan_result.json]
"""

import os
import sys

from model_debugging.command_line import EXIT_OK, EXIT_USAGE, ArgumentParser
from model_debugging.console import run_entry_point
from model_debugging.skips.report.analyzers import commit_to_rescan
from model_debugging.skips.report.previous_run import GitHubCLIError, fetch_previous_result
from model_debugging.skips.report.scan_results import ScanResultsError, load_provenance

PROG = "utils/fetch_previous_scan.py"


def main(argv=None) -> int:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="OWNER/NAME of the repository running the workflow")
    parser.add_argument("--workflow", required=True, help="workflow file name, e.g. skip-report.yml")
    parser.add_argument("--artifact", required=True, help="name of the artifact holding the scan result")
    parser.add_argument("--output_dir", required=True, help="where to download the artifact")
    parser.add_argument("--current", help="this run's scan result: say whether to rescan the previous commit")
    parser.add_argument(
        "--github_output", default=os.environ.get("GITHUB_OUTPUT"), help="default: $GITHUB_OUTPUT"
    )
    args = parser.parse_args(argv)
    try:
        path, why = fetch_previous_result(args.repo, args.workflow, args.artifact, args.output_dir)
    except GitHubCLIError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(why)
    lines = f"found={'true' if path else 'false'}\npath={path or ''}\n"
    if args.current:
        try:
            rescan, because = (
                commit_to_rescan(load_provenance(path), load_provenance(args.current))
                if path
                else (None, why)
            )
        except ScanResultsError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"rescan: {because}")
        lines += f"rescan_commit={rescan or ''}\n"
    if args.github_output:
        # the runner's protocol: append key=value lines
        with open(args.github_output, "a", encoding="utf-8") as output:
            output.write(lines)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main))
