"""Process pools whose workers end with the scan that started them."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext


def _exit_with_parent(parent_pid: int) -> None:
    """Worker initializer: end this worker once the scan that started it is gone (e.g. killed with -9).

    A killed parent cannot shut its pool down, and forked workers keep their task pipe open
    themselves, so without this they would wait for work forever. Ctrl-C, sent to the whole
    process group, is left to the scan: it stops its pool, and no worker prints a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class _WorkerPool(ProcessPoolExecutor):
    """A pool shut down before its work is done (Ctrl-C, an error, a consumer that stopped early) drops
    the tasks not yet started instead of running them all first."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = True) -> None:
        super().shutdown(wait=wait, cancel_futures=cancel_futures)


def worker_pool(max_workers: int, mp_context: BaseContext | None = None) -> ProcessPoolExecutor:
    """A :class:`ProcessPoolExecutor` whose workers exit when this process ends, however it ends."""
    return _WorkerPool(
        max_workers=max_workers, mp_context=mp_context, initializer=_exit_with_parent, initargs=(os.getpid(),)
    )
