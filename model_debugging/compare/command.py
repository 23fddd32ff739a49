"""``model-debugging compare REF CAND``: find where two debugger traces diverge.

Exit codes: 0 the traces are equivalent within tolerance, 1 they diverge (or the final outputs
could not be compared), 2 an input or an output path is unusable (one line naming the file and why;
output paths are checked before any trace is read, and nothing is written then).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from model_debugging.command_line import (
    EXIT_FINDING,
    EXIT_OK,
    ArgumentParser,
    InputFile,
    OutputWriteError,
    fail,
    outputs_problem,
    regular_expression,
    tolerance,
    writing_output,
)
from model_debugging.compare.engine import compare_traces
from model_debugging.compare.rank_runs import rank_directories
from model_debugging.compare.renames import RenameRuleError, command_line_rules
from model_debugging.compare.rendering import render_markdown, render_terminal, write_plot
from model_debugging.config import ConfigError
from model_debugging.debugger.trace_format.reading import trace_files
from model_debugging.debugger.trace_format.records import TraceError
from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text
from model_debugging.reporting.figures import plot_option_problem

PROG = "model-debugging compare"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Find where two model addition debugger traces diverge.",
        epilog="exit status: 0 equivalent within tolerance, 1 diverged or not confirmed, 2 unusable input",
    )
    parser.add_argument(
        "reference",
        metavar="REF_TRACE",
        help="reference trace: a debugger output directory or its _SUMMARY/_FULL_TENSORS.json",
    )
    parser.add_argument("candidate", metavar="CAND_TRACE", help="candidate trace, same forms")
    parser.add_argument(
        "--atol",
        type=tolerance,
        help="absolute tolerance (default: 1e-05, or derived from the dtype and reduction length for a "
        "trace recorded in float16/bfloat16 or sharded over several ranks)",
    )
    parser.add_argument(
        "--rtol", type=tolerance, help="relative tolerance (default: 1e-04, or derived likewise)"
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
    parser.add_argument(
        "--no_align",
        dest="align",
        action="store_false",
        help="pair calls by path and rename rules only (no automatic alignment)",
    )
    parser.add_argument(
        "--boundaries",
        action="store_true",
        help="compare block boundaries only (numbered layers, final norm, final output): for a port "
        "that moves logic between modules",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        type=regular_expression,
        metavar="REGEX",
        help="do not list calls on one side only whose path matches REGEX (they are counted); repeatable",
    )
    parser.add_argument(
        "--save_renames",
        type=Path,
        metavar="OUT.yaml",
        help="write the given and inferred rename rules as a --config file to edit and pass back",
    )
    parser.add_argument(
        "--noise_from",
        type=Path,
        metavar="F32_TRACE",
        help="a float32 trace of the same reference on the same inputs, for a float16/bfloat16 REF_TRACE: "
        "each tensor is compared within 4x the reference's own rounding there instead of the derived tolerance",
    )
    parser.add_argument("--markdown", type=Path, metavar="OUT.md", help="write the full report as markdown")
    parser.add_argument(
        "--plot", type=Path, metavar="OUT.png", help="plot max abs diff along execution order"
    )
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the result as JSON")
    return parser


def _input_files(path: Path) -> list[Path]:
    """The files of the trace at ``path``, or of every rank's trace of a per-rank run."""
    directories = rank_directories(path)
    if directories is None:
        return trace_files(path)
    return [file for directory in directories for file in trace_files(directory)]


def _check_outputs(args: argparse.Namespace) -> str | None:
    """Why an output option cannot be written, before any trace is read; None when all can."""
    outputs = ("--json", args.json), ("--markdown", args.markdown), ("--plot", args.plot)
    inputs = [InputFile(path, "a file of the reference trace") for path in _input_files(args.reference)]
    inputs += [InputFile(path, "a file of the candidate trace") for path in _input_files(args.candidate)]
    if args.noise_from is not None:
        inputs += [
            InputFile(path, "a file of the --noise_from trace") for path in trace_files(args.noise_from)
        ]
    if args.config is not None:
        inputs.append(InputFile(args.config, "the --config file"))
    problem = outputs_problem(
        [*outputs, ("--save_renames", args.save_renames)], inputs, directory_must_exist=True
    )
    return problem or plot_option_problem("--plot", args.plot)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    problem = _check_outputs(args)
    if problem:
        return fail(prog, problem)
    try:
        rules = command_line_rules(args.config, args.rename)
        result = compare_traces(
            args.reference,
            args.candidate,
            atol=args.atol,
            rtol=args.rtol,
            rename=rules,
            align=args.align,
            boundaries=args.boundaries,
            ignore=args.ignore,
            noise_from=args.noise_from,
        )
        if args.save_renames:
            with writing_output("--save_renames"):
                atomic_write_text(args.save_renames, result.alignment.rename_rules_yaml)
        if args.json:
            with writing_output("--json"):
                atomic_write_json(args.json, result.to_dict())
        if args.markdown:
            with writing_output("--markdown"):
                atomic_write_text(args.markdown, render_markdown(result))
        if args.plot:
            with writing_output("--plot"):
                write_plot(result, args.plot)
    except (TraceError, ConfigError, RenameRuleError, OutputWriteError) as error:
        return fail(prog, str(error))
    print(render_terminal(result))
    if result.final_output_note is not None and result.calls_agree:  # NOT CONFIRMED
        print(
            "The traces cannot confirm the final outputs; debug_port(reference, port, inputs) also "
            "compares what the two models return (docs/compare.md)."
        )
    return EXIT_OK if result.equivalent else EXIT_FINDING
