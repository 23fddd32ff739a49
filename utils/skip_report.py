"""Skip trend report between two scans of the skipped-test analyzer.

Lists the common tests whose skipped proportion changed, the models that newly skip or stopped
skipping a test (with the reason), new and removed common tests, and the most skipped tests.
Its first line says whether one analyzer made both results; when not, --previous_rescanned (the
previous result's commit scanned by the current analyzer) lists the analyzer's changes apart from
the tree's. Thresholds and row counts come from the built-in config (--print_default_config prints
it) or --config.

    python utils/skip_report.py --previous OLD.json --current NEW.json [--previous_rescanned RESCAN.json]
        [--markdown OUT.md] [--config FILE]
"""

import sys

from model_debugging.console import run_entry_point
from model_debugging.skips.report.command import main

PROG = "utils/skip_report.py"

if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main, prog=PROG))
