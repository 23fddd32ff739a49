"""``model-debugging view TRACE_DIR``: write one self-contained HTML page to explore a trace.

Exit codes: 0 the page was written, 2 an input was unusable or the page could not be written (the
message names the file and why; an existing page is left as it was).
"""

from __future__ import annotations

from pathlib import Path

from model_debugging.command_line import (
    EXIT_OK,
    ArgumentParser,
    InputFile,
    OutputWriteError,
    fail,
    outputs_problem,
    writing_output,
)
from model_debugging.compare.renames import RenameRuleError, command_line_rules
from model_debugging.config import ConfigError
from model_debugging.debugger.trace_format.reading import trace_files
from model_debugging.debugger.trace_format.records import TraceError
from model_debugging.explorer.view import DEFAULT_PAGE_NAME, default_page_path, write_view

PROG = "model-debugging view"
# what a user whose trace folder takes no new file (read-only, a mounted share) can do
_ELSEWHERE = "; write the page elsewhere with --output PATH"


def build_parser(prog: str = PROG) -> ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Write one self-contained HTML page (no network access needed) to explore a "
        "model addition debugger trace, or where it diverges from a candidate trace.",
        epilog="exit status: 0 page written, 2 unusable input",
    )
    parser.add_argument(
        "trace",
        type=Path,
        metavar="TRACE",
        help="a debugger output directory or its _SUMMARY/_FULL_TENSORS.json",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="CAND_TRACE",
        help="a candidate trace: colour the calls that diverge from it",
    )
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="REGEX=REPLACEMENT",
        help="with --compare: rewrite module paths (relative to the model) before matching; repeatable",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="with --compare: a YAML file with a 'renames' list, as for compare (applied first)",
    )
    parser.add_argument(
        "--no_align",
        dest="align",
        action="store_false",
        help="with --compare: pair calls by path and rename rules only, as compare --no_align",
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="OUT.html",
        help=f"the page to write (default: TRACE_DIR/{DEFAULT_PAGE_NAME})",
    )
    return parser


def _output_problem(args) -> str | None:
    """Why the page cannot be written (checked before any trace is read), or None."""
    inputs = [InputFile(path, "a file of the trace") for path in trace_files(args.trace)]
    if args.compare is not None:
        inputs += [InputFile(path, "a file of the --compare trace") for path in trace_files(args.compare)]
    if args.config is not None:
        inputs.append(InputFile(args.config, "the --config file"))
    if args.output is None:  # the default page beside the trace cannot be one of its files but through a link
        problem = outputs_problem([("the page", default_page_path(args.trace))], inputs)
        return problem and f"{problem}{_ELSEWHERE}"
    return outputs_problem([("--output", args.output)], inputs, directory_must_exist=True)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    if (args.rename or args.config or not args.align) and args.compare is None:
        return fail(prog, "--rename, --config and --no_align need --compare")
    problem = _output_problem(args)
    if problem:
        return fail(prog, problem)
    try:
        rules = command_line_rules(args.config, args.rename)
        with writing_output("--output" if args.output is not None else "the page"):
            page = write_view(args.trace, args.output, compare=args.compare, rename=rules, align=args.align)
    except OutputWriteError as error:
        return fail(prog, str(error) + ("" if args.output is not None else _ELSEWHERE))
    except (TraceError, ConfigError, RenameRuleError) as error:
        return fail(prog, str(error))
    print(f"wrote {page} ({page.stat().st_size / 1e6:.1f} MB); open it in a browser")
    return EXIT_OK
