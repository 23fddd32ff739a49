"""The ``model-debugging`` command: one entry point, a subcommand per tool.

Each subcommand lives in its tool's package and is imported only when used, so
``model-debugging scan`` never imports torch.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

# subcommand -> ("module:function", one-line help); the function takes argv and returns an exit code
SUBCOMMANDS = {
    "scan": ("model_debugging.skips.command:main", "report which models skip each common test"),
    "compare": ("model_debugging.debugger.compare_command:main", "find where two debugger traces diverge"),
    "report": ("model_debugging.skips_report.report_command:main", "skip trend between two scan results"),
}


def _usage() -> str:
    lines = ["usage: model-debugging <command> [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_text}" for name, (_, help_text) in SUBCOMMANDS.items()]
    lines += ["", "Run 'model-debugging <command> --help' for the options of a command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in {"-h", "--help"}:
        print(_usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in SUBCOMMANDS:
        print(f"model-debugging: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, function_name = SUBCOMMANDS[command][0].split(":")
    function = getattr(import_module(module_name), function_name)
    try:
        return int(function(rest) or 0)
    except BrokenPipeError:
        # output piped into e.g. `head`, which closed early: files are already written, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
