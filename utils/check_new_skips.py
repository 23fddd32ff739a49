"""Pull-request skip check for a transformers-style checkout.

Scans the base revision (exported with git archive; the working tree and index are left alone)
and the working tree with the skipped-test analyzer, then lists every (model, test) skip the
change introduces with its reason and the test's repo-wide skipped proportion. Exits 1 when a
change skips a test that fewer than pr_check.min_skipped_share (see --print_default_config) of
models skipped before, 2 when the check could not run.

    python utils/check_new_skips.py --repo PATH --base REF [--config FILE] [--markdown OUT.md]
"""

import sys

from model_debugging.console import run_entry_point
from model_debugging.skips.report.pr_check.command import main

PROG = "utils/check_new_skips.py"

if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main, prog=PROG))
