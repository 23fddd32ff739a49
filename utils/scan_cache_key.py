"""The key of the analyzer's parse cache for a checkout: a digest of every file a scan reads.

Used by action.yml and the weekly workflow: the folders hashed are those the analyzer reads
(model_debugging.skips.source.scanned_paths names them once), so the cache key changes exactly when a
scan's inputs do. Writes `version=<installed model-debugging version>` (a cache of another version
is never restored) and `key=<digest>` to $GITHUB_OUTPUT, and prints them.

    python utils/scan_cache_key.py --repo PATH [--github_output FILE]
"""

import os
import sys
from pathlib import Path

from model_debugging import __version__
from model_debugging.command_line import EXIT_OK, ArgumentParser, fail
from model_debugging.console import run_entry_point
from model_debugging.skips.source.scanned_paths import scanned_files_digest
from model_debugging.skips.source.settings import DEFAULT_SETTINGS

PROG = "utils/scan_cache_key.py"


def main(argv=None) -> int:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the transformers checkout")
    parser.add_argument(
        "--github_output", default=os.environ.get("GITHUB_OUTPUT"), help="default: $GITHUB_OUTPUT"
    )
    args = parser.parse_args(argv)
    if not Path(args.repo).is_dir():
        return fail(PROG, f"--repo {args.repo} is not a directory")
    lines = f"version={__version__}\nkey={scanned_files_digest(args.repo, DEFAULT_SETTINGS)}\n"
    print(lines, end="")
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as output:  # the runner's key=value protocol
            output.write(lines)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main))
