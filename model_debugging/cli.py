"""The ``model-debugging`` console script: it picks the subcommand and hands it the rest of the line.

This module only dispatches; each subcommand's parser and work live in its tool's package and are
imported only when used, so ``model-debugging scan`` never imports torch and runs in the base
install. The conventions every subcommand follows (exit codes, one-line errors, output checks) are
in :mod:`model_debugging.command_line`; a closed pipe and Ctrl-C are handled by
:mod:`model_debugging.console`.
"""

from __future__ import annotations

import sys
from importlib import import_module

from model_debugging.command_line import DEBUGGER_EXTRA_MODULES, EXIT_USAGE, fail, missing_extra
from model_debugging.console import run_entry_point

PROG = "model-debugging"
# subcommand -> ("module:function", one-line help); the function takes (argv, prog) and returns an exit code
SUBCOMMANDS = {
    "scan": ("model_debugging.skips.command:main", "report which models skip each common test"),
    "report": ("model_debugging.skips.report.command:main", "skip trend between two scan results"),
    "check-skips": (
        "model_debugging.skips.report.pr_check.command:main",
        "list the test skips a change introduces (exit 1 on a rarely skipped test)",
    ),
    "compare": ("model_debugging.compare.command:main", "find where two debugger traces diverge"),
    "view": ("model_debugging.explorer.command:main", "write an HTML page to explore a trace or a diff"),
    "replay": ("model_debugging.replay.command:main", "run a port's modules on a trace's recorded inputs"),
    "debug-port": (
        "model_debugging.porting.command:main",
        "trace a reference and its port, compare them, write the page",
    ),
}


def _usage() -> str:
    lines = [f"usage: {PROG} <command> [options]", "", "commands:"]
    lines += [f"  {name:<12} {help_text}" for name, (_, help_text) in SUBCOMMANDS.items()]
    lines += [
        "",
        f"Run '{PROG} <command> --help' for the options of a command.",
        "Exit codes: 0 ok, 1 a finding (new skips, a divergence), 2 unusable input, 130 interrupted (Ctrl-C).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(_usage(), file=sys.stderr)
        return EXIT_USAGE
    if argv[0] in {"-h", "--help"}:
        return run_entry_point(PROG, print, _usage())
    command, rest = argv[0], argv[1:]
    if command not in SUBCOMMANDS:
        print(
            f"{PROG}: error: unknown command {command!r} (choose from {', '.join(SUBCOMMANDS)})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return run_entry_point(f"{PROG} {command}", _run_command, command, rest)


def _run_command(command: str, argv: list[str]) -> int:
    """Import the subcommand's module (only now: scan never imports torch) and run it on ``argv``."""
    module_name, function_name = SUBCOMMANDS[command][0].split(":")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name not in DEBUGGER_EXTRA_MODULES:  # not what the extra adds: a real error
            raise
        return fail(f"{PROG} {command}", missing_extra(error.name))
    return getattr(module, function_name)(argv)


if __name__ == "__main__":
    sys.exit(main())
