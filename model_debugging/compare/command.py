"""``model-debugging compare REF CAND``: find where two debugger traces diverge.

Exit codes: 0 the traces are equivalent within tolerance, 1 they diverge (or a module is found on
one side only), 2 an input is unusable (the message names the file and why).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from model_debugging.config import ConfigError
from model_debugging.debugger.compare import TraceComparison, compare_traces
from model_debugging.debugger.renames import RenameRuleError, load_rename_rules, parse_rename_rule
from model_debugging.reporting import (
    atomic_write_json,
    atomic_write_text,
    render_markdown_table,
    render_terminal_table,
)
from model_debugging.reporting.traces import TraceError

PROG = "model-debugging compare"
# Terminal output lists at most this many differing module calls; the markdown and JSON hold all.
TERMINAL_ROWS = 20
TABLE_COLUMNS = [
    "index",
    "module_path",
    "call_index",
    "status",
    "max_abs_diff",
    "max_rel_diff",
    "mean_abs_diff",
    "details",
]


def _tolerance(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find where two model addition debugger traces diverge.",
        epilog="exit status: 0 equivalent within tolerance, 1 diverged, 2 unusable input",
    )
    parser.add_argument(
        "reference", help="reference trace: a debugger output directory or its _SUMMARY/_FULL_TENSORS.json"
    )
    parser.add_argument("candidate", help="candidate trace, same forms")
    parser.add_argument(
        "--atol", type=_tolerance, default=1e-5, help="absolute tolerance (default: %(default)g)"
    )
    parser.add_argument(
        "--rtol", type=_tolerance, default=1e-4, help="relative tolerance (default: %(default)g)"
    )
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="REGEX=REPLACEMENT",
        help="rewrite module paths (relative to the model) before matching; repeatable, applied in order",
    )
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="YAML file with a 'renames' list (applied first)"
    )
    parser.add_argument("--markdown", type=Path, metavar="OUT.md", help="write the full report as markdown")
    parser.add_argument(
        "--plot", type=Path, metavar="OUT.png", help="plot max abs diff along execution order"
    )
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the result as JSON")
    return parser


def render_terminal(result: TraceComparison) -> str:
    lines = result.summary_lines()
    differing = result.to_frame().query("status != 'equal'")[TABLE_COLUMNS]
    if len(differing):
        lines += [
            "",
            f"module calls that differ ({len(differing)}):",
            render_terminal_table(differing.head(TERMINAL_ROWS)),
        ]
        if len(differing) > TERMINAL_ROWS:
            lines.append(
                f"... {len(differing) - TERMINAL_ROWS} more (write them all with --markdown or --json)"
            )
    return "\n".join(lines)


def render_markdown(result: TraceComparison) -> str:
    parts = ["# Trace comparison", "", *(f"- {line}" for line in result.summary_lines()), ""]
    parts += ["## Module calls", "", render_markdown_table(result.to_frame()[TABLE_COLUMNS]), ""]
    for side, unmatched in (
        ("reference", result.unmatched_reference),
        ("candidate", result.unmatched_candidate),
    ):
        if unmatched:
            parts += [f"## Only in the {side}", "", *(f"- `{path}`" for path in unmatched), ""]
    return "\n".join(parts)


def write_plot(result: TraceComparison, path: Path) -> None:
    from model_debugging.reporting.divergence_plot import plot_divergence

    if result.divergence_origin is not None:
        marked, label = result.divergence_origin, "divergence origin"
    else:
        marked, label = result.first_input_divergence, "inputs first differ"
    plot_divergence(
        [module.module_path for module in result.modules],
        [module.max_abs_diff for module in result.modules],
        path,
        marked=None if marked is None else marked.index,
        marked_label=label,
        tolerance=result.atol,
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    try:
        rules = load_rename_rules(args.config) if args.config else ()
        rules += tuple(parse_rename_rule(text) for text in args.rename)
        result = compare_traces(args.reference, args.candidate, atol=args.atol, rtol=args.rtol, rename=rules)
    except (TraceError, ConfigError, RenameRuleError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        atomic_write_json(args.json, result.to_dict())
    if args.markdown:
        atomic_write_text(args.markdown, render_markdown(result))
    if args.plot:
        try:
            write_plot(result, args.plot)
        except ImportError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 2
    print(render_terminal(result))
    return 0 if result.equivalent else 1
