"""How every entry point meets its terminal: a reader that closed the pipe, and Ctrl-C.

``model-debugging scan | head -2`` closes the pipe after two lines while the command still has
its files to write: the rest of what it prints is dropped (the stream is pointed at /dev/null,
the recipe of the Python docs for SIGPIPE) and the command carries on to its usual exit code.
Ctrl-C ends it with one line and exit 130, as shells report a process ended by SIGINT.
The ``model-debugging`` console script and every ``utils/`` script run their ``main`` through
:func:`run_entry_point`.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

EXIT_INTERRUPTED = 128 + signal.SIGINT


def drop_output(fd: int) -> None:
    """Send what is written to ``fd`` from now on to /dev/null: the reader of its pipe is gone."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _DroppedWhenClosed:
    """A text stream whose output, once the reader of its pipe is gone, goes to /dev/null instead."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding, ... of the stream
        return getattr(self._stream, name)

    def _drop(self) -> None:
        drop_output(self._stream.fileno())
        self._stream.flush()  # what the stream still holds goes to /dev/null too


def _has_descriptor(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.fileno() >= 0
    except (AttributeError, OSError, io.UnsupportedOperation):  # a stream in memory (a test's capture)
        return False


@contextlib.contextmanager
def _closed_pipes_dropped() -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (
        _DroppedWhenClosed(stream) if _has_descriptor(stream) else stream for stream in saved
    )
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # now, not at the interpreter's exit where a closed pipe would be an error
        sys.stdout, sys.stderr = saved


def run_entry_point(prog: str, main: Callable[..., int | None], /, *args: Any, **kwargs: Any) -> int:
    """Run ``main(*args, **kwargs)`` as the program ``prog`` and return its exit code.

    Output to a pipe its reader closed is dropped and the command goes on; Ctrl-C is
    ``<prog>: interrupted`` on stderr and :data:`EXIT_INTERRUPTED`.
    """
    with _closed_pipes_dropped():
        try:
            return int(main(*args, **kwargs) or 0)
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
