"""The command line of the skipped-test analyzer (``utils/scan_skipped_tests.py``, ``model-debugging scan``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from model_debugging.config import ConfigError
from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text
from model_debugging.skips.scan import CheckoutError, UnknownTestError, scan_repository
from model_debugging.skips.settings import DEFAULT_SETTINGS, load_settings

RESULT_FILE = "all_tests_scan_result.json"
ERRORS_FILE = "all_tests_scan_errors.json"
EXIT_OK, EXIT_USAGE, EXIT_NOT_A_CHECKOUT = 0, 2, 3
_PROJECT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "scan_skipped_tests.yaml"
SUMMARY_ROWS = 10
REASONS_SHOWN = 10

_EPILOG = f"""\
output files (in --output_dir):
  {RESULT_FILE}   full scan: one entry per common test (upstream keys + extras)
  scan_<test>.json              --test_method_name: the entry of that test
  {ERRORS_FILE}   files that could not be parsed: [{{"path", "line", "message"}}]
  scan_<test>_errors.json       the same for a single-test scan

exit codes:
  {EXIT_OK}  the result was written (unparsable files, if any, are listed in the errors file)
  {EXIT_USAGE}  bad arguments: unknown test name, invalid --config
  {EXIT_NOT_A_CHECKOUT}  --repo is not a transformers checkout (the message says what is missing)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scan_skipped_tests.py",
        description="Report, for each common test, which models run it and which skip it (and why), "
        "by reading the test sources with libcst; nothing in the checkout is imported or run.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--repo", default=".", help="root of the transformers checkout (default: %(default)s)"
    )
    parser.add_argument(
        "--output_dir", "--output-dir", default=".", help="directory for JSON output (default: %(default)s)"
    )
    parser.add_argument(
        "--test_method_name", "--test-method-name", help="scan only this test method (single-test mode)"
    )
    parser.add_argument(
        "--config",
        help="settings YAML (default: configs/scan_skipped_tests.yaml of this project, else built-in defaults)",
    )
    parser.add_argument("--jobs", type=int, help="parallel parsing processes (default: CPU count)")
    parser.add_argument(
        "--cache_dir",
        "--cache-dir",
        help="parse cache (default: $XDG_CACHE_HOME/model-debugging/scan or ~/.cache/model-debugging/scan)",
    )
    parser.add_argument(
        "--no_cache", "--no-cache", action="store_true", help="neither read nor write the cache"
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="after a full scan, print a table of the most skipped tests (default: only when stdout is a terminal)",
    )
    return parser


def _print_single(name: str, entry: dict) -> None:
    ran, skipped = len(entry["models_ran"]), len(entry["models_skipped"])
    total = ran + skipped
    print(f"\n== {name} ==")
    print(f"Ran     : {ran}/{total}")
    print(f"Skipped : {skipped}/{total} ({entry['skipped_proportion']:.1%})")
    if entry["models_not_applicable"]:
        print(
            f"Not applicable: {len(entry['models_not_applicable'])} models (no test class includes the mixin)"
        )
    for reason in entry["reasons_skipped"][:REASONS_SHOWN]:
        print(f" - {reason}")
    if len(entry["reasons_skipped"]) > REASONS_SHOWN:
        print(" - ...")


def _print_summary(results: dict) -> None:
    # Imported here: the table needs pandas, whose import costs more than a whole warm scan.
    from model_debugging.reporting import render_terminal_table

    rows = [
        {
            "test": name,
            "origin": entry["origin"],
            "ran": len(entry["models_ran"]),
            "skipped": len(entry["models_skipped"]),
            "n/a": len(entry["models_not_applicable"]),
            "skipped %": f"{entry['skipped_proportion']:.1%}",
        }
        for name, entry in results.items()
        if entry["models_ran"] or entry["models_skipped"]
    ]
    rows.sort(key=lambda row: (-row["skipped"], row["test"]))
    if rows:
        print(f"\nMost skipped common tests (top {min(SUMMARY_ROWS, len(rows))} of {len(rows)}):")
        print(render_terminal_table(rows[:SUMMARY_ROWS]))


def _one_test_per_line(results: dict) -> str:
    """The result as JSON with one test per line: readable, diffable, and 10x faster than ``indent=2``."""
    lines = [
        f"  {json.dumps(name)}: {json.dumps(entry, ensure_ascii=False)}" for name, entry in results.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.config:
            settings = load_settings(args.config)
        elif _PROJECT_CONFIG.is_file():
            settings = load_settings(_PROJECT_CONFIG)
        else:
            settings = DEFAULT_SETTINGS
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE

    def announce(count: int) -> None:
        print(f"Parsing {count} model test files...", flush=True)

    try:
        results, errors = scan_repository(
            args.repo,
            config=settings,
            test_method_name=args.test_method_name,
            jobs=args.jobs,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
            progress=sys.stderr.isatty(),
            on_start=announce,
        )
    except CheckoutError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_NOT_A_CHECKOUT
    except UnknownTestError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    for error in errors:
        print(f"{error['path']}:{error['line']}: {error['message']}", file=sys.stderr)

    output_dir = Path(args.output_dir).expanduser()
    name = args.test_method_name
    if name:
        _print_single(name, results[name])
        result_path = atomic_write_json(output_dir / f"scan_{name}.json", results[name])
        atomic_write_json(output_dir / f"scan_{name}_errors.json", errors)
    else:
        if args.summary or sys.stdout.isatty():
            _print_summary(results)
        result_path = atomic_write_text(output_dir / RESULT_FILE, _one_test_per_line(results))
        atomic_write_json(output_dir / ERRORS_FILE, errors)
    print(f"\nJSON saved to {result_path.resolve()}")
    if errors:
        print(
            f"{len(errors)} file(s) could not be parsed; see {ERRORS_FILE if not name else result_path.stem + '_errors.json'}"
        )
    return EXIT_OK
