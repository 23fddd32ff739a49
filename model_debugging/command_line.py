"""The conventions every ``model-debugging`` subcommand and ``utils/`` script follows.

- Exit codes: :data:`EXIT_OK` (0) the work was done and found nothing to flag, :data:`EXIT_FINDING`
  (1) it found something to flag (new skips, a divergence), :data:`EXIT_USAGE` (2) the input was
  unusable (bad arguments, config, checkout or file); nothing was written then.
- Errors are one line on stderr, ``<prog>: error: <what was wrong>``, never a traceback.
- Program names: ``model-debugging <command>``, or the script's path for a ``utils/`` wrapper.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_OK, EXIT_FINDING, EXIT_USAGE = 0, 1, 2
# values quoted in messages are cut to this many characters (a 10 KB test name is not echoed whole)
MAX_SHOWN = 80


def shorten(value: object, limit: int = MAX_SHOWN) -> str:
    """``repr(value)``, or its first ``limit`` characters and how many more there were."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit :data:`EXIT_USAGE`."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {shorten(message, 300)}\n")


def fail(prog: str, message: str) -> int:
    """Print ``message`` as the one-line error of ``prog`` and return :data:`EXIT_USAGE`."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
