"""Worker processes, started safely from any thread (the load's parse and scan pools and the
duplicate search's digest pool start theirs here), and the one place that tells the cyclic garbage
collector when to stay away."""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import get_context
from multiprocessing.context import BaseContext, ForkServerContext

# What a fork server imports once, so that each worker it forks starts with them loaded.
_PRELOAD = [
    "app.core.load.parse_worker",
    "app.core.load.scan_worker",
    "app.core.curate.passages",
    "app.core.curate.set_join",
    "app.core.curate.join_process",
]


def process_context() -> BaseContext:
    """fork is the cheapest start, but forking a process with other threads running (the app runs
    the pipeline in a worker thread) can deadlock the child: then a fork server, started once, is
    used."""
    if threading.active_count() == 1:
        return get_context("fork")
    return fresh_context()


def fresh_context() -> ForkServerContext:
    """For a worker that should start with none of this process's memory (a fork shares every page
    this process has, and counts it in the worker's size): a fork server's, started once."""
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


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading and indexing allocate many objects that all stay alive and form no garbage cycles;
    the cyclic collector would only walk them again and again while they are made."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def frozen_after() -> Iterator[None]:
    """For work whose product lives until the next load or write (the memories, the id map, the
    trusts): the collector is paused while it is made and the product is frozen after, so that no
    collection walks it again. A young list or dict of many references costs each collection that
    walks it, and the collector would walk it at every generation it passes through. What was
    young before is collected first, so only what is made here is frozen and no cycle left over from
    elsewhere is kept for good."""
    gc.collect(1)
    with collector_paused():
        yield
        gc.freeze()


def settle_heap() -> None:
    """Collect what is garbage now and move everything left out of the collector's sight, for data
    that lives until the next load: its full collections then do not walk it on a keypress."""
    gc.collect()
    gc.freeze()


def collect_cycles() -> None:
    """Collect unreachable cycles now, so that what they hold (open files) is released here rather
    than at some later, arbitrary allocation."""
    gc.collect()
