"""``model-debugging debug-port SCRIPT``: trace a reference and a port, compare them, write the page.

``SCRIPT`` is a Python file (or an importable module) that defines three functions::

    def build_reference():        # the model the port must reproduce, in eval mode
        ...
    def build_port(reference):    # the port with the converted weights (the argument is optional)
        ...
    def build_inputs():           # a dict (model(**inputs)), a tuple (model(*inputs)) or one value
        ...

and optionally ``build_port_inputs()`` when the port takes other inputs. The file is imported as a
module of its own (registered in ``sys.modules``), with its folder importable for the whole run, so
it can import its neighbours (the port's own files).

Exit codes: 0 the port is equivalent (every compared call and the returned outputs agree), 1 it
is not, 2 unusable input (one line naming the file, the function and what went wrong).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

from model_debugging.command_line import EXIT_FINDING, EXIT_OK, ArgumentParser, fail
from model_debugging.porting.api import DebugPortError, debug_port

PROG = "model-debugging debug-port"


class ScriptError(ValueError):
    """The script is missing, raised, or lacks a function; the message says which."""


def _pattern(text: str) -> str:
    try:
        re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"invalid regular expression {text!r}: {error}") from None
    return text


def _tolerance(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


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
        "--atol", type=_tolerance, default=1e-5, help="absolute tolerance (default: %(default)g)"
    )
    parser.add_argument(
        "--rtol", type=_tolerance, default=1e-4, help="relative tolerance (default: %(default)g)"
    )
    parser.add_argument("--boundaries", action="store_true", help="compare block boundaries only")
    parser.add_argument("--ignore", action="append", default=[], type=_pattern, metavar="REGEX",
                        help="do not list calls on one side only whose path matches REGEX; repeatable")  # fmt: skip
    parser.add_argument("--record_function", action="append", default=[], dest="functions", metavar="NAME",
                        help="record calls of this function in both models, e.g. torch.nn.functional.gelu")  # fmt: skip
    return parser


def load_script(spec: str) -> ModuleType:
    """The module ``spec`` names: a ``.py`` file (imported under its own name, its folder on
    ``sys.path`` for the rest of the run) or a dotted module name."""
    if spec.endswith(".py"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise ScriptError(f"{spec}: no such file")
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module  # so that functions and classes defined there can be found by name
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[path.stem]
            raise ScriptError(f"{spec}: importing it raised {type(error).__name__}: {error}") from None
        return module
    try:
        return importlib.import_module(spec)
    except Exception as error:
        raise ScriptError(f"cannot import {spec!r}: {type(error).__name__}: {error}") from None


def _called(module: ModuleType, name: str, *arguments, required: bool = True):
    function = getattr(module, name, None)
    if function is None:
        if required:
            raise ScriptError(f"{module.__name__} defines no {name!r}")
        return None
    if not callable(function):
        raise ScriptError(f"{module.__name__}.{name} is a {type(function).__name__}, not a function")
    parameters = [
        parameter
        for parameter in inspect.signature(function).parameters.values()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    try:
        return function(*arguments[: len(parameters)])
    except Exception as error:
        raise ScriptError(f"{module.__name__}.{name}() raised {type(error).__name__}: {error}") from None


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_request:  # --help, or a usage error argparse already printed
        return int(exit_request.code or 0)
    try:
        module = load_script(args.script)
        reference = _called(module, args.reference)
        port = _called(module, args.port, reference)
        inputs = _called(module, args.inputs)
        port_inputs = _called(module, "build_port_inputs", required=False)
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
        )
    except (ScriptError, DebugPortError) as error:
        return fail(prog, str(error))
    return EXIT_OK if result.equivalent else EXIT_FINDING
