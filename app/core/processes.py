"""Worker processes, started safely from any thread: the load's parse and scan pools and the
duplicate search's digest pool start theirs here."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import get_context
from multiprocessing.context import BaseContext

# What a fork server imports once, so that each worker it forks starts with them loaded.
_PRELOAD = [
    "app.core.load.parse_worker",
    "app.core.load.scan_worker",
    "app.core.curate.passages",
    "app.core.curate.set_join",
]


def process_context() -> BaseContext:
    """fork is the cheapest start, but forking a process with other threads running (the app runs
    the pipeline in a worker thread) can deadlock the child: then a fork server, started once, is
    used."""
    if threading.active_count() == 1:
        return get_context("fork")
    context = get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


@contextmanager
def real_stderr() -> Iterator[None]:
    """multiprocessing hands `sys.stderr.fileno()` to the helper processes it starts (the fork
    server, the resource tracker); a terminal UI replaces sys.stderr with an object whose fileno is
    -1 (Textual's), and the start then fails with `bad value(s) in fds_to_keep`. While the pool
    starts, sys.stderr is then /dev/null: not the terminal, whose screen the UI owns."""
    try:
        valid = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        valid = False
    if valid:
        yield
        return
    saved = sys.stderr
    with open(os.devnull, "w", encoding="utf-8") as devnull:
        sys.stderr = devnull
        try:
            yield
        finally:
            sys.stderr = saved
