"""``model-debugging debug-port SCRIPT``: trace a reference and a port, compare them, write the page.

``SCRIPT`` is a Python file (or an importable module) that defines three functions::

    def build_reference():        # the model the port must reproduce, in eval mode
        ...
    def build_port(reference):    # the port with the converted weights (the argument is optional)
        ...
    def build_inputs():           # a dict (model(**inputs)), a tuple (model(*inputs)) or one value
        ...

and optionally ``build_port_inputs()`` when the port takes other inputs. The file is loaded by
:mod:`model_debugging.script_loading`: a module of its own (registered in ``sys.modules``), with its
folder importable for the whole run, so it can import its neighbours (the port's own files).

Exit codes: 0 the port is equivalent (every compared call and the returned outputs agree), 1 it
is not, 2 unusable input (one line naming the file, the function and what went wrong).
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from types import ModuleType

from model_debugging.command_line import (
    EXIT_FINDING,
    EXIT_OK,
    ArgumentParser,
    fail,
    output_dir_problem,
    regular_expression,
    tolerance,
)
from model_debugging.porting.api import DebugPortError, debug_port
from model_debugging.porting.output_dir import output_dir_refusal
from model_debugging.script_loading import ScriptError, loaded_script, raised_by

PROG = "model-debugging debug-port"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Trace a reference model and its port on the same inputs, compare the traces, "
        "write the comparison page and print the verdict.",
        epilog="exit status: 0 equivalent, 1 not equivalent, 2 unusable input",
    )
    parser.add_argument("script", metavar="SCRIPT", help="a .py file or an importable module defining build_reference, "
                        "build_port and build_inputs")  # fmt: skip
    parser.add_argument("--reference", default="build_reference", metavar="NAME", help="default: %(default)s")
    parser.add_argument("--port", default="build_port", metavar="NAME", help="default: %(default)s")
    parser.add_argument("--inputs", default="build_inputs", metavar="NAME", help="default: %(default)s")
    parser.add_argument(
        "--output_dir", type=Path, default=Path("debug_port"), metavar="DIR", help="default: %(default)s"
    )
    parser.add_argument(
        "--atol", type=tolerance, help="absolute tolerance (default: 1e-05, or derived for float16/bfloat16)"
    )
    parser.add_argument(
        "--rtol", type=tolerance, help="relative tolerance (default: 1e-04, or derived for float16/bfloat16)"
    )
    parser.add_argument("--boundaries", action="store_true", help="compare block boundaries only")
    parser.add_argument("--ignore", action="append", default=[], type=regular_expression, metavar="REGEX",
                        help="do not list calls on one side only whose path matches REGEX; repeatable")  # fmt: skip
    parser.add_argument("--record_function", action="append", default=[], dest="functions", metavar="NAME",
                        help="record calls of this function in both models, e.g. torch.nn.functional.gelu")  # fmt: skip
    parser.add_argument("--no_float32_noise", dest="float32_noise", action="store_false", default=None,
                        help="for a float16/bfloat16 reference: do not trace a float32 copy of it (which "
                        "holds its parameters in float32, twice a bfloat16 model's memory) to measure its "
                        "own rounding per call")  # fmt: skip
    return parser


def _called(module: ModuleType, shown: str, name: str, *arguments, required: bool = True):
    """``module.name(*arguments)`` (as many arguments as it requires); ``shown``: the script as given."""
    function = getattr(module, name, None)
    if function is None:
        if required:
            raise ScriptError(f"{shown} defines no {name!r}")
        return None
    if not callable(function):
        raise ScriptError(f"{shown}:{name} is a {type(function).__name__}, not a function")
    parameters = [
        parameter
        for parameter in inspect.signature(function).parameters.values()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    try:
        return function(*arguments[: len(parameters)])
    except Exception as error:
        where = raised_by(function, error, shown)
        raise ScriptError(f"{where}: {name}() raised {type(error).__name__}: {error}") from None


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    # before the models are built and run; a directory debug_port refuses is not probed either
    directory = Path(args.output_dir).expanduser()
    problem = (output_dir_refusal(directory) if directory.is_dir() else None) or output_dir_problem(directory)
    if problem is not None:
        return fail(prog, problem)
    try:
        with loaded_script(args.script) as module:
            reference = _called(module, args.script, args.reference)
            port = _called(module, args.script, args.port, reference)
            inputs = _called(module, args.script, args.inputs)
            port_inputs = _called(module, args.script, "build_port_inputs", required=False)
            result = debug_port(
                reference,
                port,
                inputs,
                port_inputs=port_inputs,
                output_dir=args.output_dir,
                atol=args.atol,
                rtol=args.rtol,
                boundaries=args.boundaries,
                ignore=args.ignore,
                record_functions=args.functions,
                float32_noise=args.float32_noise,
            )
    except (ScriptError, DebugPortError) as error:
        return fail(prog, str(error))
    return EXIT_OK if result.equivalent else EXIT_FINDING
