"""Report which models skip each common test of a transformers checkout, and why.

For every test of ``tests/test_modeling_common.py`` and ``tests/generation/test_utils.py`` it reads
the model test files under ``tests/models`` with libcst (nothing is imported or run), resolves each
test class's bases across files and decides what pytest would do: run, skip (decorator, skip call,
flag guard, no-op override, class skip), or not apply (no test class includes the mixin).

Run it from the root of a transformers checkout:

    python /path/to/model-debugging/utils/scan_skipped_tests.py
    python /path/to/model-debugging/utils/scan_skipped_tests.py --test_method_name test_inputs_embeds

or point it at one with ``--repo PATH``. It writes ``all_tests_scan_result.json`` (or
``scan_<test>.json``) and ``all_tests_scan_errors.json`` to ``--output_dir`` (default ``.``).
``--help`` lists every option and the exit codes.
"""

import sys
from pathlib import Path

# Run from a transformers checkout, this project need not be installed: import it from beside us.
PROJECT_ROOT = Path(__file__).resolve().parents[1]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from model_debugging.console import run_entry_point  # noqa: E402
from model_debugging.skips.command import main  # noqa: E402

PROG = "utils/scan_skipped_tests.py"

if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main, prog=PROG))
