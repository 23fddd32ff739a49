"""``model-debugging replay REF_TRACE --model MODEL``: run the candidate's modules on the reference's inputs.

Exit codes: 0 every replayed call is correct on identical inputs, 1 a call is wrong on identical
inputs (a real bug there), 2 an input is unusable (one line naming the file, value or module path),
or no call could be replayed at all (the report says why for each; the last line sums it up).
"""

from __future__ import annotations

from pathlib import Path

from model_debugging.command_line import (
    EXIT_FINDING,
    EXIT_OK,
    ArgumentParser,
    InputFile,
    OutputWriteError,
    fail,
    outputs_problem,
    tolerance,
    writing_output,
)
from model_debugging.compare.engine import compare_traces
from model_debugging.compare.renames import RenameRuleError, command_line_rules
from model_debugging.config import ConfigError
from model_debugging.debugger.trace_format.reading import trace_files
from model_debugging.debugger.trace_format.records import TraceError
from model_debugging.replay.api import replay_trace
from model_debugging.replay.candidate import loaded_candidate, script_of
from model_debugging.replay.rendering import render_terminal
from model_debugging.reporting.atomic import atomic_write_json
from model_debugging.script_loading import ScriptError

PROG = "model-debugging replay"


def build_parser(prog: str = PROG) -> ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Run modules of a candidate model alone on the inputs recorded in a reference trace "
        "(use_repr=False) and say, per module, whether it is wrong on identical inputs.",
        epilog="exit status: 0 all correct on identical inputs, 1 a call is wrong on identical inputs, "
        "2 unusable input or nothing could be replayed",
    )
    parser.add_argument(
        "reference",
        type=Path,
        metavar="REF_TRACE",
        help="reference trace directory or its _FULL_TENSORS.json",
    )
    parser.add_argument(
        "--model",
        required=True,
        metavar="PYTHON_CALLABLE_OR_SCRIPT",
        help="the candidate: 'package.module:name', 'script.py:name' or 'script.py' (which defines "
        "build_model); name is a torch.nn.Module or a function returning one; the module may define "
        "REPLAY_ADAPTERS (argument adapters for modules with other signatures)",
    )
    parser.add_argument(
        "--module",
        action="append",
        metavar="PATH",
        help="reference module path to replay (relative to the model); repeatable; default: every call; "
        "with --bisect, where the search starts",
    )
    parser.add_argument(
        "--bisect",
        action="store_true",
        help="search top-down for the smallest module that is wrong on identical inputs",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="CAND_TRACE",
        help="the candidate's own trace: compare's alignment maps module paths (before --rename), "
        "and --bisect replays only calls compare finds different",
    )
    parser.add_argument(
        "--noise_from",
        type=Path,
        metavar="REF_TRACE_2",
        help="a second trace of the reference run another way (bf16 vs fp32, eager vs SDPA): judge "
        "differences against the spread between the two reference runs",
    )
    parser.add_argument("--atol", type=tolerance, help="absolute tolerance (default: by dtype)")
    parser.add_argument("--rtol", type=tolerance, help="relative tolerance (default: by dtype)")
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="REGEX=REPLACEMENT",
        help="rewrite module paths (relative to the model) before matching, as in compare; repeatable",
    )
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="YAML file with a 'renames' list (applied first)"
    )
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the result as JSON")
    return parser


def _inputs(args) -> list[InputFile]:
    """The files replay reads: the traces, the rename config and the candidate's script."""
    traces = (("reference", args.reference), ("--compare", args.compare), ("--noise_from", args.noise_from))
    inputs = [
        InputFile(path, f"a file of the {role} trace")
        for role, trace in traces
        if trace is not None
        for path in trace_files(trace)
    ]
    if args.config is not None:
        inputs.append(InputFile(args.config, "the --config file"))
    script = script_of(args.model)
    if script.endswith(".py"):
        inputs.append(InputFile(Path(script), "the --model script"))
    return inputs


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    problem = outputs_problem([("--json", args.json)], _inputs(args), directory_must_exist=True)
    if problem:
        return fail(prog, problem)
    try:
        rules = command_line_rules(args.config, args.rename)
        comparison = compare_traces(args.reference, args.compare, rename=rules) if args.compare else None
        with loaded_candidate(args.model) as candidate:
            result = replay_trace(
                args.reference,
                candidate.model,
                args.module,
                rename=rules,
                atol=args.atol,
                rtol=args.rtol,
                noise_from=args.noise_from,
                bisect=args.bisect,
                comparison=comparison,
                adapters=candidate.adapters,
            )
        if args.json:
            with writing_output("--json"):
                atomic_write_json(args.json, result.to_dict())
    except (TraceError, ConfigError, RenameRuleError, ScriptError, ValueError, OutputWriteError) as error:
        return fail(prog, str(error))
    except OSError as error:
        return fail(prog, f"{error.filename or ''}: {error.strerror or error}".lstrip(": "))
    print(render_terminal(result, comparison))
    if not result.replayed:
        return fail(
            prog, f"no call could be replayed on the candidate ({len(result.modules)} tried; reasons above)"
        )
    return EXIT_FINDING if result.wrong else EXIT_OK
