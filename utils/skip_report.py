"""Skip trend report between two scans of the skipped-test analyzer.

Lists the common tests whose skipped proportion changed, the models that newly skip or stopped
skipping a test (with the reason), new and removed common tests, and the most skipped tests.
Thresholds and row counts come from the built-in config (--print_default_config prints it) or --config.

    python utils/skip_report.py --previous OLD.json --current NEW.json [--markdown OUT.md] [--config FILE]
"""

import sys

from model_debugging.skips.report_command import main

if __name__ == "__main__":
    sys.exit(main(prog="utils/skip_report.py"))
